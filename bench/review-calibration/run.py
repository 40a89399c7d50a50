"""Calibrate `niwa review`'s inaccuracy and mistake thresholds on positions whose values
are exact.

    python bench/review-calibration/run.py --dir DIR --table-positions 400 --small-positions 300

Positions (Lotus, two players, basic rule, optional trampoline):
  table  random games on the standard board, followed from the moment both players have
         at most k stones outside the goal (inside the endgame table of --dir, built with
         `niwa tables build lotus --stones K --dir DIR` if missing); each position of the
         rest of the game is kept with probability 1/3;
  small  random games of small set-ups (SMALL below) where the df-pn proof search decides
         every position in milliseconds; each position kept with probability 1/3.
For every kept position where the mover has a choice (not forced) and for every legal move:
the exact value of the position and of the position after the move (table or proof), and
the searcher's values of both, as `niwa review` computes them (analysis.arena.review.Judge:
a fresh alpha-beta per position, the mean of its last two depths), plus the deepest depth
alone for comparison. A move *keeps* the value when the exact value after it, for the
mover, equals the exact value before; it *loses* it otherwise (Lotus has no draws: a win
thrown away). Pairs where alpha-beta proved both values are left out of the thresholds
(the review treats those as exact and never asks the thresholds).

Thresholds: for each way of valuing (mean of two depths, deepest depth alone), the
smallest drop that at most 1% (mistake) and at most 5% (inaccuracy) of value-keeping moves
exceed, with the share of value-losing moves each flags. Outputs in results/ (--results):
drops.csv (every move), thresholds.csv (per valuation and verdict: the threshold from
all sets together, then each set's flag rates with it, and the AUC of the drop).
"""

from __future__ import annotations

import argparse
import bisect
import csv
import math
import random
import sys
import time
from pathlib import Path

from niwa.analysis.arena.review import Judge, is_forced
from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch
from niwa.solver.tables import build_table, find_table, table_value

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from campaign import command_line, guarded  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
STANDARD = dict(players=2, rule="basic", trampoline="optional")
SMALL = {"tiny": dict(towers=2, lane=1, shared=3, trampoline_at=3),
         "small": dict(towers=3, lane=2, shared=5, trampoline_at=4)}
RATES = {"mistake": 0.01, "inaccuracy": 0.05}
FIELDS = ["set", "position", "move", "exact_before", "exact_after", "kind", "ab_proven",
          "before_mean", "after_mean", "drop_mean", "before_deep", "after_deep", "drop_deep"]


def game_positions(variant: dict, rng: random.Random, keep, share: float = 1 / 3):
    """Positions of one random game of `variant` for which keep(state) holds (from the
    first such on), each kept with probability `share`."""
    state = LotusState(**variant)
    inside = False
    out = []
    while not state.is_terminal():
        inside = inside or keep(state)
        if inside and rng.random() < share:
            out.append(state.clone())
        state.apply(rng.choice(state.legal_actions()))
    return out


def searcher_values(judge: Judge, state, seat: int):
    """(mean of the last two depths, deepest alone, proven) for `seat`; a finished game
    gives its returns."""
    if state.is_terminal():
        v = float(state.returns()[seat])
        return v, v, True
    deep, prev, proven = judge.alphabeta_depths(state, seat)
    return (deep if prev is None else 0.5 * (deep + prev)), deep, proven


def measure(label: str, positions, exact_value, judge: Judge, writer) -> int:
    """Write one row per legal move of every unforced position; the number of rows."""
    rows = 0
    for state in positions:
        if state.is_terminal() or is_forced(state):
            continue
        mover = state.current_player()
        before = exact_value(state, mover)
        if before is None:
            continue
        b_mean, b_deep, b_proven = searcher_values(judge, state, mover)
        for a in state.legal_actions():
            child = state.child(a)
            after = exact_value(child, mover)
            if after is None:
                continue
            a_mean, a_deep, a_proven = searcher_values(judge, child, mover)
            kind = "keep" if after == before else "lose"
            writer.writerow([label, state.to_notation(), state.action_to_string(a), before,
                             after, kind, int(b_proven and a_proven), f"{b_mean:.6f}",
                             f"{a_mean:.6f}", f"{max(0.0, b_mean - a_mean):.6f}",
                             f"{b_deep:.6f}", f"{a_deep:.6f}",
                             f"{max(0.0, b_deep - a_deep):.6f}"])
            rows += 1
    return rows


def threshold_for(drops: list[float], rate: float) -> float:
    """The smallest t (2 decimals, rounded up) with at most `rate` of `drops` above t."""
    if not drops:
        return math.nan
    ordered = sorted(drops)
    allowed = int(math.floor(rate * len(ordered)))
    t = ordered[len(ordered) - 1 - allowed]
    return math.ceil(t * 100 - 1e-9) / 100


def auc(keep: list[float], lose: list[float]) -> float:
    """P(a value-losing move's drop > a value-keeping move's), ties counted half: how well
    the drop separates the two kinds (0.5 = not at all, 1 = perfectly)."""
    ordered = sorted(keep)
    above = sum(bisect.bisect_left(ordered, x)
                + 0.5 * (bisect.bisect_right(ordered, x) - bisect.bisect_left(ordered, x))
                for x in lose)
    return above / (len(keep) * len(lose)) if keep and lose else math.nan


def summarise(drops_csv: Path, out_csv: Path, searcher: str) -> list[dict]:
    """thresholds.csv from drops.csv: per valuation and verdict, the threshold for its
    false-flag rate (on all sets together), then how each set fares with it."""
    with open(drops_csv) as f:
        rows = [r for r in csv.DictReader(f) if r["ab_proven"] == "0"]
    out = []
    for valuation in ("mean", "deep"):
        keep = [float(r[f"drop_{valuation}"]) for r in rows if r["kind"] == "keep"]
        for verdict, rate in RATES.items():
            t = threshold_for(keep, rate)
            for label in ["all", *sorted({r["set"] for r in rows})]:
                part = [r for r in rows if label in ("all", r["set"])]
                k = [float(r[f"drop_{valuation}"]) for r in part if r["kind"] == "keep"]
                lo = [float(r[f"drop_{valuation}"]) for r in part if r["kind"] == "lose"]
                out.append({
                    "searcher": searcher, "valuation": valuation, "verdict": verdict,
                    "set": label, "target_false_flag_rate": rate, "threshold": t,
                    "keep_moves": len(k), "lose_moves": len(lo),
                    "keep_flagged": round(sum(d > t for d in k) / max(1, len(k)), 4),
                    "lose_flagged": round(sum(d > t for d in lo) / max(1, len(lo)), 4),
                    "keep_mean_drop": round(sum(k) / max(1, len(k)), 4),
                    "lose_mean_drop": round(sum(lo) / max(1, len(lo)), 4),
                    "auc": round(auc(k, lo), 4)})
    with open(out_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", required=True, help="endgame tables folder (built if missing)")
    p.add_argument("--stones", type=int, default=3, help="the table's k")
    p.add_argument("--table-positions", type=int, default=400)
    p.add_argument("--small-positions", type=int, default=300)
    p.add_argument("--searcher", default="alphabeta:depth=6")
    p.add_argument("--proof-time", type=float, default=2.0,
                   help="seconds of df-pn per small-set-up position (none is left unproven "
                        "in the published run)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--results", default=str(RESULTS))
    p.add_argument("--summarise-only", action="store_true",
                   help="rebuild thresholds.csv from the drops.csv already in --results")
    args = p.parse_args(argv)
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    if args.summarise_only:
        report(summarise(results / "drops.csv", results / "thresholds.csv", args.searcher))
        return 0
    rng = random.Random(args.seed)
    judge = Judge(args.searcher, 2, tables=None, prove_time=0)
    t0 = time.perf_counter()

    table = find_table(LotusState(**STANDARD), args.dir)
    if table is None or table.k < args.stones:
        build_table(STANDARD, args.stones, args.dir, progress=False, force=table is not None)
        table = find_table(LotusState(**STANDARD), args.dir)

    def from_table(state, seat):
        if state.is_terminal():
            return float(state.returns()[seat])
        known = table_value(table, state)
        if known is None:
            return None
        return known[0] if state.current_player() == seat else 1.0 - known[0]

    proof = ProofSearch(tt_mb=64)

    def from_proof(state, seat):
        if state.is_terminal():
            return float(state.returns()[seat])
        return proof.prove_value(state, seat, time_limit=args.proof_time)

    counts = {}
    with open(results / "drops.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(FIELDS)
        positions = []
        while len(positions) < args.table_positions:
            positions += game_positions(STANDARD, rng, lambda s: table.index(s) >= 0)
        counts["table"] = measure(f"table-k{table.k}", positions[:args.table_positions],
                                  from_table, judge, writer)
        for name, variant in SMALL.items():
            positions = []
            want = args.small_positions // len(SMALL)
            while len(positions) < want:
                positions += game_positions(dict(players=2, **variant), rng, lambda s: True)
            counts[name] = measure(name, positions[:want], from_proof, judge, writer)
    summary = summarise(results / "drops.csv", results / "thresholds.csv", args.searcher)
    print(command_line(__file__, argv))
    print(f"moves measured: {counts}; {time.perf_counter() - t0:.0f} s")
    report(summary)
    return 0


def report(summary: list[dict]) -> None:
    for row in summary:
        print(f"{row['valuation']:>5} {row['verdict']:<10} {row['set']:<9} threshold "
              f"{row['threshold']:.2f}: keep moves flagged {row['keep_flagged']:.2%} of "
              f"{row['keep_moves']}, lose moves flagged {row['lose_flagged']:.2%} of "
              f"{row['lose_moves']} (AUC {row['auc']:.3f})")


if __name__ == "__main__":
    sys.exit(guarded(main))
