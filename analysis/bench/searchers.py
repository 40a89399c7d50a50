"""The searcher strength matches of issue 5, as resumable `niwa tournament` runs, and a
table of the results with 95% Wilson intervals against each bar.

    python bench/searchers.py                      # every match, 200 games each (hours)
    python bench/searchers.py --only bonsai --workers 2
    python bench/searchers.py --games 20 --out /tmp/searchers   # a quick look

Each match is its own tournament folder under --out (seats swapped every game, every
game saved as it ends), so an interrupted run picks up where it stopped; the summary of
every match played so far in --out is written to OUT/searchers.csv. A result of 1/2 (a
shared win or a capped game) scores half.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd

from niwa.analysis.stats import wilson_interval

# (stronger agent, weaker agent, the bar the stronger one must reach), on every game
MATCHUPS = [
    ("mcts:iters=2000", "random", 0.95),
    ("mcts:iters=10000", "mcts:iters=1000", 0.60),
]
# alpha-beta only where it sees the whole game: no chance, nothing hidden
EXACT_MATCHUPS = [("alphabeta:depth=6", "random", 0.95)]


def matches() -> list[tuple[str, str, str, float]]:
    """(game, stronger, weaker, bar) for every installed game, issue 5's matches first."""
    from niwa.ext.registry import games, get_game

    out = [(g, *m) for m in MATCHUPS for g in games()]
    traits = {g: get_game(g).traits for g in games()}
    out += [(g, *m) for m in EXACT_MATCHUPS for g in games()
            if not traits[g].chance and traits[g].perfect_information]
    return out


def folder_name(game: str, strong: str, weak: str) -> str:
    return f"{game}--{strong}--vs--{weak}".replace(":", "_").replace("=", "").replace(",", "_")


def play(game, strong, weak, games, seed, workers, out: Path) -> None:
    folder = out / folder_name(game, strong, weak)
    command = ["niwa", "tournament", game, "--agents", strong, weak, "--games", str(games),
               "--seed", str(seed), "--out", str(folder), "--progress"]
    if workers:
        command += ["--workers", str(workers)]
    if (folder / "tournament.json").exists():
        command.append("--resume")
    print("$", " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True)


def score_of(folder: Path, strong: str) -> tuple[float, int]:
    """(points of `strong`, games) from a tournament's games.csv."""
    df = pd.read_csv(folder / "games.csv")
    points = 0.0
    for seat in (0, 1):
        mine = df[df[f"agent_{seat}"] == strong]
        points += mine[f"result_{seat}"].sum()
    return float(points), len(df)


def summary_row(game, strong, weak, bar, folder) -> dict:
    points, n = score_of(folder, strong)
    low, high = wilson_interval(round(points), n)
    rate = points / n if n else float("nan")
    return {"game": game, "stronger": strong, "weaker": weak, "games": n, "points": points,
            "rate": rate, "ci_low": low, "ci_high": high, "bar": bar,
            "met": bool(n and rate >= bar)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs/searchers", help="folder of the match folders")
    ap.add_argument("--games", type=int, default=200, help="games per match (default 200)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--workers", type=int, default=None, help="parallel games (default: cores)")
    ap.add_argument("--only", nargs="*", help="games to run (default: all)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    planned = matches()
    for game, strong, weak, _ in planned:
        if not args.only or game in args.only:
            play(game, strong, weak, args.games, args.seed, args.workers, out)
    # the table covers every match played so far in --out, not only this call's
    rows = [summary_row(game, strong, weak, bar, out / folder_name(game, strong, weak))
            for game, strong, weak, bar in planned
            if (out / folder_name(game, strong, weak) / "games.csv").exists()]
    table = pd.DataFrame(rows)
    table.to_csv(out / "searchers.csv", index=False)
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
