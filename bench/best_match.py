"""One candidate-vs-baseline match for the `best` agent search (issue 16), appended to
bench/results/<game>-best-experiments.csv with its score and 95% interval.

    python bench/best_match.py haru "mcts:time=0.01,c=0.7" "mcts:time=0.01" --games 100 \
        --note "c=0.7"
    python bench/best_match.py haru CANDIDATE BASELINE --combine DIR1 DIR2   # one row for
        # matches already played in several folders (e.g. two seeds run side by side)
    python bench/best_match.py haru --plot     # bench/results/haru-best-experiments.png

The match is `niwa tournament GAME --agents CANDIDATE BASELINE --workers 1` (seats swapped,
one deal per round); the score is the candidate's mean points (win 1, draw 0.5) with the
normal-approximation 95% interval of analysis.stats.match (observed per-game variance).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd

from niwa.analysis.stats.match import match_summary
from niwa.analysis.stats.ratings import Z95

RESULTS = Path(__file__).parent / "results"
FIELDS = ["game", "candidate", "baseline", "games", "wins", "draws", "losses", "score",
          "score_low", "score_high", "elo", "elo_margin", "seed", "note", "out"]


def summarise(games_csvs, candidate: str) -> dict:
    if isinstance(games_csvs, (str, Path)):
        games_csvs = [games_csvs]
    df = pd.concat([pd.read_csv(p) for p in games_csvs], ignore_index=True)
    pts = []
    for _, row in df.iterrows():
        seat = 0 if row["agent_0"] == candidate else 1
        pts.append(float(row[f"result_{seat}"]))
    n = len(pts)
    wins = sum(p == 1.0 for p in pts)
    losses = sum(p == 0.0 for p in pts)
    draws = n - wins - losses
    score = sum(pts) / n
    var = sum((p - score) ** 2 for p in pts) / n
    half = Z95 * math.sqrt(var / n)
    m = match_summary(wins, draws, losses)
    return {"games": n, "wins": wins, "draws": draws, "losses": losses,
            "score": round(score, 4), "score_low": round(score - half, 4),
            "score_high": round(score + half, 4), "elo": round(m.elo, 1),
            "elo_margin": round(m.margin, 1)}


BARS = {"haru": 0.65, "bonsai": 0.58}     # issue 16's bar for `best` at 50 ms


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game")
    ap.add_argument("candidate", nargs="?")
    ap.add_argument("baseline", nargs="?")
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--note", default="")
    ap.add_argument("--out", default=None, help="tournament folder (default /tmp/best/...)")
    ap.add_argument("--combine", nargs="+", metavar="DIR",
                    help="play nothing: one row for the games.csv of these folders")
    ap.add_argument("--plot", action="store_true",
                    help="play nothing: draw the game's recorded experiments as a PNG")
    args = ap.parse_args(argv)
    if args.plot:
        path = RESULTS / f"{args.game}-best-experiments.csv"
        if not path.exists():
            ap.error(f"no experiments recorded in {path}")
        print(plot(path))
        return 0
    if not args.candidate or not args.baseline:
        ap.error("give CANDIDATE and BASELINE specs")
    if args.candidate == args.baseline:
        ap.error("candidate and baseline must differ (tell them apart by spec)")
    if args.combine:
        missing = [d for d in args.combine if not (Path(d) / "games.csv").exists()]
        if missing:
            ap.error(f"no games.csv in {', '.join(missing)}")
        return record(args, [Path(d) / "games.csv" for d in args.combine],
                      " + ".join(args.combine))
    key = hashlib.sha1(repr((args.candidate, args.baseline, args.seed, args.games)).encode())
    out = Path(args.out or f"/tmp/best/{args.game}-{key.hexdigest()[:10]}")
    cmd = ["niwa", "tournament", args.game, "--agents", args.candidate, args.baseline,
           "--games", str(args.games), "--workers", "1", "--seed", str(args.seed),
           "--out", str(out), "--progress" if sys.stderr.isatty() else "--no-progress"]
    if (out / "tournament.json").exists():
        cmd.append("--resume")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return record(args, [out / "games.csv"], str(out))


def record(args, games_csvs, out: str) -> int:
    row = {"game": args.game, "candidate": args.candidate, "baseline": args.baseline,
           **summarise(games_csvs, args.candidate), "seed": args.seed,
           "note": args.note, "out": out}
    path = RESULTS / f"{args.game}-best-experiments.csv"
    new = not path.exists()
    with path.open("a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        w.writerow(row)
    print(f"{args.game} {args.candidate} vs {args.baseline}: {row['score']:.3f} "
          f"[{row['score_low']:.3f}, {row['score_high']:.3f}] over {row['games']} games, "
          f"Elo {row['elo']:+.0f} ± {row['elo_margin']:.0f}  ({args.note})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
