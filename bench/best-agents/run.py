"""The `best` agent per game: one measured candidate-vs-baseline match per experiment,
each appended as one row to results/<game>-experiments.csv.

    python bench/best-agents/run.py match haru "mcts:time=0.01,c=0.7" "mcts:time=0.01" \\
        --games 100 --note "c=0.7"
    python bench/best-agents/run.py match haru CANDIDATE BASELINE --combine DIR1 DIR2
    python bench/best-agents/run.py plot haru          # results/haru-experiments.png
    python bench/best-agents/run.py lotus --candidate "best:time=0.05,cpu=1" \\
        --reference "mcts:playout=heuristic,time=0.05,cpu=1" --games 400 --seed 5
    python bench/best-agents/run.py table              # the Lotus rows as a Markdown table

`match` (Haru, Bonsai): the match runs through niwa's tournament engine (seats swapped,
one deal per round, one worker); the score is the candidate's mean points (win 1, draw
0.5) with the normal-approximation 95% interval (observed per-game variance) and the Elo
difference with its margin. `--combine` records one row for matches already played in
several folders (e.g. two seeds run side by side).

`lotus`: the same kind of match on two-player Lotus, a proven win for seat 1, so its row
also counts the candidate's games and wins in each seat (score with a Wilson 95%
interval), and where the candidate's moves came from (mcts, book, tables, proof).

Every match is its own tournament folder under runs/ beside this file (or --out), named
from its settings, so repeating a command finishes an interrupted match.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from campaign import append_row, command_line, guarded, match_score, play_match  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
FIELDS = ["game", "candidate", "baseline", "games", "wins", "draws", "losses", "score",
          "score_low", "score_high", "elo", "elo_margin", "seed", "note", "out"]
LOTUS_FIELDS = ["candidate", "reference", "games", "wins", "losses", "draws", "score_pct",
                "score_low", "score_high", "elo", "elo_margin", "note", "out",
                "seat0_games", "seat0_wins", "seat1_games", "seat1_wins"]
BARS = {"haru": 0.65, "bonsai": 0.58}     # the bar `best` at 50 ms had to reach


def experiments_csv(game: str) -> Path:
    return RESULTS / f"{game}-experiments.csv"


def match_folder(runs: Path, game: str, *key) -> Path:
    return runs / f"{game}-{hashlib.sha1(repr(key).encode()).hexdigest()[:10]}"


# ---- match (any game) ------------------------------------------------------------------
def plot(path: Path) -> Path:
    """One line per recorded experiment: the candidate's score with its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = pd.read_csv(path)
    labels = [f"{r.candidate}  vs  {r.baseline}  ({r.games} g)" for r in df.itertuples()]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(df) + 1.5))
    y = list(range(len(df)))[::-1]
    ax.errorbar(df.score, y, xerr=[df.score - df.score_low, df.score_high - df.score],
                fmt="o", capsize=3)
    ax.axvline(0.5, color="grey", lw=0.8)
    game = df.game.iloc[0]
    if game in BARS:
        ax.axvline(BARS[game], color="tab:red", ls="--", lw=0.8, label=f"bar {BARS[game]:.0%}")
        ax.legend(loc="best")
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlabel("candidate's score (95% interval)")
    ax.set_title(f"{game}: best-agent experiments")
    fig.tight_layout()
    out = path.with_suffix(".png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def record_match(args, games_csvs, out: str, results: Path) -> dict:
    row = {"game": args.game, "candidate": args.candidate, "baseline": args.baseline,
           **match_score(games_csvs, args.candidate), "seed": args.seed,
           "note": args.note, "out": out}
    append_row(results, row, FIELDS)
    print(f"{args.game} {args.candidate} vs {args.baseline}: {row['score']:.3f} "
          f"[{row['score_low']:.3f}, {row['score_high']:.3f}] over {row['games']} games, "
          f"Elo {row['elo']:+.0f} ± {row['elo_margin']:.0f}  ({args.note}) -> {results}")
    return row


def match(args, argv) -> int:
    results = args.results or experiments_csv(args.game)
    if args.combine:
        missing = [d for d in args.combine if not (Path(d) / "games.csv").exists()]
        if missing:
            return _error(f"no games.csv in {', '.join(missing)}")
        record_match(args, [Path(d) / "games.csv" for d in args.combine],
                     " + ".join(args.combine), results)
        return 0
    out = args.out or match_folder(args.runs or HERE / "runs", args.game, args.candidate,
                                   args.baseline, args.seed, args.games)
    play_match(args.game, [args.candidate, args.baseline], out, games=args.games,
               seed=args.seed, progress=sys.stderr.isatty(),
               command=command_line(__file__, argv))
    record_match(args, [out / "games.csv"], str(out), results)
    return 0


# ---- lotus -----------------------------------------------------------------------------
def lotus_score(games_csv: Path, candidate: str) -> dict:
    """The candidate's W-D-L, score and intervals from a two-agent games.csv, by seat."""
    from niwa.analysis.stats.intervals import wilson_interval
    from niwa.analysis.stats.match import match_summary

    df = pd.read_csv(games_csv)
    df = df[df["error_seat"].isna()] if "error_seat" in df else df
    mine = [r["result_0"] if r["agent_0"] == candidate else r["result_1"]
            for _, r in df.iterrows()]
    seats = [0 if r["agent_0"] == candidate else 1 for _, r in df.iterrows()]
    wins = sum(1 for x in mine if x > 0.75)
    losses = sum(1 for x in mine if x < 0.25)
    draws = len(mine) - wins - losses
    points = wins + 0.5 * draws
    low, high = wilson_interval(round(points), len(mine))
    m = match_summary(wins, draws, losses)
    return {"games": len(mine), "wins": wins, "losses": losses, "draws": draws,
            "score_pct": round(100 * points / max(1, len(mine)), 1),
            "score_low": round(100 * low, 1), "score_high": round(100 * high, 1),
            "elo": round(m.elo, 1), "elo_margin": round(m.margin, 1),
            **{f"seat{k}_{what}": sum(1 for x, seat in zip(mine, seats, strict=True)
                                      if seat == k and (what == "games" or x > 0.75))
               for k in (0, 1) for what in ("games", "wins")}}


def sources(games_jsonl: Path, candidate: str) -> dict:
    """Where the candidate's moves came from, by its seat: the `algo` each move's comment
    names (mcts, book, tables, proof; a forced move repeats the one before it)."""
    out = {0: Counter(), 1: Counter()}
    with games_jsonl.open() as f:
        for line in f:
            g = json.loads(line)
            seat = [s["agent"] for s in g["seats"]].index(candidate)
            for m in g["moves"]:
                if m.get("by") == seat:
                    out[seat][(m.get("comment") or {}).get("algo", "none")] += 1
    return {seat: dict(c.most_common()) for seat, c in out.items()}


def append_lotus_row(path: Path, row: dict) -> None:
    """One row at the end of the Lotus table; a file written with fewer columns is
    rewritten with the new ones first (empty in its old rows)."""
    rows = []
    if path.exists():
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames != LOTUS_FIELDS:
                rows = list(reader)
    if not rows:
        append_row(path, row, LOTUS_FIELDS)
        return
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=LOTUS_FIELDS)
        w.writeheader()
        w.writerows({k: r.get(k, "") for k in LOTUS_FIELDS} for r in rows)
        w.writerow(row)


def lotus(args, argv) -> int:
    from niwa.ext.registry import parse_variant_options

    variant = parse_variant_options(args.variant)
    results = args.results or experiments_csv("lotus")
    out = args.out or match_folder(args.runs or HERE / "runs", "lotus", args.candidate,
                                   args.reference, args.games, args.seed, args.variant)
    if not args.record_only:
        play_match("lotus", [args.candidate, args.reference], out, games=args.games,
                   seed=args.seed, variant=variant, time_margin=30.0,
                   progress=sys.stderr.isatty(), command=command_line(__file__, argv))
    elif not (out / "games.csv").exists():
        return _error(f"no games.csv in {out} to record")
    row = {"candidate": args.candidate, "reference": args.reference,
           **lotus_score(out / "games.csv", args.candidate), "note": args.note,
           "out": str(out)}
    append_lotus_row(results, row)
    print(", ".join(f"{k}={v}" for k, v in row.items()))
    if (out / "games.jsonl").exists():
        for seat, counts in sources(out / "games.jsonl", args.candidate).items():
            print(f"candidate's moves as seat {seat}: {counts}")
    return 0


def _short(spec: str) -> str:
    """A spec without its time budget (the table's CPU/move column says it)."""
    name, _, rest = spec.partition(":")
    kept = [p for p in rest.split(",") if p and p.split("=")[0] not in ("time", "cpu")]
    return name + (":" + ",".join(kept) if kept else "")


def _elo_cell(r: dict) -> str:
    elo, margin = float(r["elo"]), float(r["elo_margin"])
    if math.isfinite(elo) and math.isfinite(margin):
        return f"{elo:+.0f} ± {margin:.0f}"
    low = float(r["score_low"]) / 100    # a one-sided score: the interval's low end in Elo
    bound = -400 * math.log10(1 / low - 1)
    return f"{elo:+.0f} (≥ {bound:+.0f})" if math.isfinite(elo) else f"∞ (≥ {bound:+.0f})"


def markdown_table(path: Path) -> str:
    """Every row of the Lotus experiments as a Markdown table."""
    lines = ["| candidate | against | CPU/move | games | score | 95% interval | Elo | "
             "wins as seat 0 / seat 1 | note |", "|---|---|---:|---:|---:|---|---:|---|---|"]
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            ms = next((float(p[5:]) * 1000 for p in r["candidate"].split(":")[-1].split(",")
                       if p.startswith("time=")), None)
            seats = (f"{r['seat0_wins']}/{r['seat0_games']} · {r['seat1_wins']}/"
                     f"{r['seat1_games']}" if r.get("seat0_games") else "")
            budget = f"{ms:g} ms" if ms is not None else "-"
            lines.append(f"| `{_short(r['candidate'])}` | `{_short(r['reference'])}` | "
                         f"{budget} | {r['games']} | {r['score_pct']}% | {r['score_low']}-"
                         f"{r['score_high']}% | {_elo_cell(r)} | {seats} | {r['note']} |")
    return "\n".join(lines)


def _error(message: str) -> int:
    print(f"Error: {message}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("match", help="a candidate against a baseline on any game")
    m.add_argument("game")
    m.add_argument("candidate")
    m.add_argument("baseline")
    m.add_argument("--combine", nargs="+", metavar="DIR",
                   help="play nothing: one row for the games.csv of these folders")
    p = sub.add_parser("plot", help="draw a game's recorded experiments as a PNG")
    p.add_argument("game")
    lo = sub.add_parser("lotus", help="a Lotus match, with seats and move sources")
    lo.add_argument("--candidate", required=True)
    lo.add_argument("--reference", required=True)
    lo.add_argument("--variant", action="append", default=[], help="KEY=VALUE")
    lo.add_argument("--record-only", action="store_true",
                    help="play nothing: record the games already in the folder (a run "
                         "stopped early; say so in --note)")
    t = sub.add_parser("table", help="print the Lotus experiments as a Markdown table")
    for q in (m, lo):
        q.add_argument("--games", type=int, default=100, help="games (default 100)")
        q.add_argument("--seed", type=int, default=1)
        q.add_argument("--note", default="")
        q.add_argument("--runs", type=Path, default=None,
                       help="folder of the match folders (default: runs/ beside this file)")
        q.add_argument("--out", type=Path, default=None, help="this match's tournament folder")
    for q in (m, lo, p, t):
        q.add_argument("--results", type=Path, default=None,
                       help="the experiments CSV (default: results/<game>-experiments.csv)")
    args = ap.parse_args(argv)
    if args.cmd in ("match", "lotus"):
        a, b = (args.candidate, args.baseline) if args.cmd == "match" else \
            (args.candidate, args.reference)
        if a == b:
            ap.error("candidate and baseline must differ (tell them apart by spec)")
        if args.games < 2:
            ap.error("--games must be at least 2")
    if args.cmd == "match":
        return match(args, argv)
    if args.cmd == "lotus":
        return lotus(args, argv)
    path = args.results or experiments_csv("lotus" if args.cmd == "table" else args.game)
    if not path.exists():
        return _error(f"no experiments recorded in {path}")
    print(plot(path) if args.cmd == "plot" else markdown_table(path))
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main))
