"""One measured experiment of the Lotus `best` search (niwa issue #16, item 1): a match of
a candidate spec against a reference spec, seats swapped, through `niwa tournament`, and
one row appended to bench/results/lotus-best-experiments.csv (score with its Wilson 95%
interval, the Elo difference with its margin, and the candidate's games and wins in each
seat: two-player Lotus is a proven win for seat 1).

    python bench/lotus_best.py --candidate "mcts:minimax=0.3,cpu=1,time=0.01" \\
        --reference "mcts:playout=heuristic,cpu=1,time=0.01" --games 100 --note "minimax"

Runs are resumable (`--out` keeps the tournament; repeat the command to finish it).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from niwa.analysis.stats.intervals import wilson_interval
from niwa.analysis.stats.match import match_summary

RESULTS = Path(__file__).parent / "results" / "lotus-best-experiments.csv"
FIELDS = ["candidate", "reference", "games", "wins", "losses", "draws", "score_pct",
          "score_low", "score_high", "elo", "elo_margin", "note", "out",
          "seat0_games", "seat0_wins", "seat1_games", "seat1_wins"]


def score(games_csv: Path, candidate: str) -> dict:
    """The candidate's W-D-L, score and intervals from a two-agent games.csv."""
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


def append_row(row: dict) -> None:
    """One row at the end of RESULTS; a file written with fewer columns is rewritten with
    the new ones first (empty in its old rows)."""
    rows = []
    if RESULTS.exists():
        with RESULTS.open(newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames != FIELDS:
                rows = list(reader)
    mode = "w" if rows or not RESULTS.exists() else "a"
    with RESULTS.open(mode, newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if mode == "w":
            w.writeheader()
            w.writerows({k: r.get(k, "") for k in FIELDS} for r in rows)
        w.writerow(row)


def _short(spec: str) -> str:
    """A spec without its time budget (the table's CPU/move column says it)."""
    name, _, rest = spec.partition(":")
    kept = [p for p in rest.split(",") if p and p.split("=")[0] not in ("time", "cpu")]
    return name + (":" + ",".join(kept) if kept else "")


def _elo_cell(r: dict) -> str:
    import math

    elo, margin = float(r["elo"]), float(r["elo_margin"])
    if math.isfinite(elo) and math.isfinite(margin):
        return f"{elo:+.0f} ± {margin:.0f}"
    low = float(r["score_low"]) / 100    # a one-sided score: the interval's low end in Elo
    return f"{elo:+.0f} (≥ {-400 * math.log10(1 / low - 1):+.0f})" if math.isfinite(elo) \
        else f"∞ (≥ {-400 * math.log10(1 / low - 1):+.0f})"


def markdown_table() -> str:
    """Every row of RESULTS as the README's table."""
    lines = ["| candidate | against | CPU/move | games | score | 95% interval | Elo | "
             "wins as seat 0 / seat 1 | note |", "|---|---|---:|---:|---:|---|---:|---|---|"]
    with RESULTS.open(newline="") as f:
        for r in csv.DictReader(f):
            ms = next((float(p[5:]) * 1000 for p in r["candidate"].split(":")[-1].split(",")
                       if p.startswith("time=")), None)
            seats = (f"{r['seat0_wins']}/{r['seat0_games']} · {r['seat1_wins']}/"
                     f"{r['seat1_games']}" if r.get("seat0_games") else "")
            lines.append(f"| `{_short(r['candidate'])}` | `{_short(r['reference'])}` | "
                         f"{ms:g} ms | {r['games']} | {r['score_pct']}% | {r['score_low']}-"
                         f"{r['score_high']}% | {_elo_cell(r)} | {seats} | {r['note']} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidate")
    ap.add_argument("--reference")
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, help="tournament folder (default under /tmp)")
    ap.add_argument("--note", default="")
    ap.add_argument("--variant", action="append", default=[], help="KEY=VALUE")
    ap.add_argument("--record-only", action="store_true",
                    help="play nothing: record the games already in the folder (a run "
                         "stopped early; say so in --note)")
    ap.add_argument("--table", action="store_true",
                    help="play nothing: print every recorded row as a markdown table")
    args = ap.parse_args(argv)
    if args.table:
        print(markdown_table())
        return 0
    if not (args.candidate and args.reference):
        ap.error("--candidate and --reference are required (or --table)")
    key = hashlib.sha1(repr((args.candidate, args.reference, args.games, args.seed,
                             args.variant)).encode()).hexdigest()[:12]
    out = args.out or Path("/tmp") / f"lotus-best-{key}"
    cmd = ["niwa", "tournament", "lotus", "--agents", args.candidate, args.reference,
           "--games", str(args.games), "--workers", "1", "--seed", str(args.seed),
           "--out", str(out), "--resume", "--time-margin", "30", "--no-progress"]
    for v in args.variant:
        cmd += ["--variant", v]
    if not args.record_only:
        subprocess.run(cmd, check=True, env={**os.environ})
    row = {"candidate": args.candidate, "reference": args.reference,
           **score(out / "games.csv", args.candidate), "note": args.note, "out": str(out)}
    append_row(row)
    print(", ".join(f"{k}={v}" for k, v in row.items()))
    if (out / "games.jsonl").exists():
        for seat, counts in sources(out / "games.jsonl", args.candidate).items():
            print(f"candidate's moves as seat {seat}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
