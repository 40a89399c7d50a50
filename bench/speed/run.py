"""Engine and searcher speed, and the searchers' strength bars, through niwa's Python API.

    python bench/speed/run.py engines                  # niwa bench GAME, every game, once
    python bench/speed/run.py engines --rounds 3 --out results/before-after-4.txt
    python bench/speed/run.py suite                    # niwa bench --suite: results/suite.csv
    python bench/speed/run.py searchers                # every strength match, 200 games each
    python bench/speed/run.py searchers --only bonsai --games 20 --runs /tmp/searchers

`engines` prints, per game, what `niwa bench GAME` prints: random playouts/s of the Cython
engine and of the plain-Python oracle, MCTS simulations/s against random playouts/s, and
alpha-beta nodes/s against perft. A before/after comparison of two builds
(results/before-after-*.txt) runs it alternately with each build's Python, rounds
interleaved, so a loaded machine slows both sides alike; `--out` appends the lines.

`suite` is `niwa bench --suite` (analysis/bench/suite.py: niwa against OpenSpiel, strength,
throughput, memory), written to results/suite.csv unless --out says otherwise.

`searchers` plays the strength matches the searchers must win (mcts:iters=2000 against
random at 95%, 10,000 iterations against 1,000 at 60%, and alpha-beta at depth 6 against
random at 95% on the games without chance or hidden information), each its own resumable
tournament folder under --runs (seats swapped every game), and writes the table of every
match played so far there, with 95% Wilson intervals against each bar, to
results/searchers.csv. A shared win or a capped game scores half.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from campaign import append_text, guarded, play_match  # noqa: E402

HERE = Path(__file__).resolve().parent

# (stronger agent, weaker agent, the bar the stronger one must reach), on every game
MATCHUPS = [
    ("mcts:iters=2000", "random", 0.95),
    ("mcts:iters=10000", "mcts:iters=1000", 0.60),
]
# alpha-beta only where it sees the whole game: no chance, nothing hidden
EXACT_MATCHUPS = [("alphabeta:depth=6", "random", 0.95)]


# ---- engines ---------------------------------------------------------------------------
def engine_lines(name: str, seconds: float, seed: int = 1) -> list[str]:
    """The two lines `niwa bench GAME` prints for one game."""
    from niwa.analysis.bench.playouts import bench_engine_vs_oracle
    from niwa.analysis.bench.search import search_speed

    r = bench_engine_vs_oracle(name, seconds=seconds, seed=seed)
    q = search_speed(name, seconds=seconds, seed=seed)
    return [f"{name:<7} engine {r['engine_games_s']:>12,.0f} games/s "
            f"{r['engine_actions_s']:>14,.0f} actions/s | oracle {r['oracle_games_s']:>9,.1f} "
            f"games/s {r['oracle_actions_s']:>11,.0f} actions/s | ratio {r['ratio']:,.0f}x",
            f"{'':<7} MCTS {q['mcts_sims_s']:>14,.0f} sims/s = {q['mcts_ratio']:.2f} x random "
            f"playouts/s ({q['playouts_s']:,.0f}) | alpha-beta {q['alphabeta_nps']:,.0f} "
            f"nodes/s = {q['alphabeta_ratio']:.2f} x perft leaves/s, "
            f"{q['alphabeta_ratio_made']:.2f} x perft moves made/s ({q['perft_made_s']:,.0f})"]


def engines(args) -> int:
    from niwa.ext.registry import games, get_game

    names = args.games or games()
    for name in names:
        get_game(name)              # an unknown game fails here, before any measuring
    lines = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    say(f"# bench/speed/run.py engines, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
        f", {args.seconds:g} s a side")
    for k in range(args.rounds):
        say(f"== round {k + 1}")
        for name in names:
            for line in engine_lines(name, args.seconds, args.seed):
                say(line)
    if args.out:
        append_text(args.out, lines, HERE)
    return 0


# ---- suite -----------------------------------------------------------------------------
def suite(args) -> int:
    from niwa.analysis.bench.suite import format_table, run_suite

    out = args.out if args.out.is_absolute() else HERE / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    df = run_suite(str(out), seconds_budget=args.budget, games=args.games,
                   strength_games=args.strength_games, move_time=args.move_time,
                   workers=args.workers, progress=lambda text: print(text, file=sys.stderr))
    print(format_table(df))
    return 0


# ---- searchers -------------------------------------------------------------------------
def matches() -> list[tuple[str, str, str, float]]:
    """(game, stronger, weaker, bar) for every installed game."""
    from niwa.ext.registry import games, get_game

    out = [(g, *m) for m in MATCHUPS for g in games()]
    traits = {g: get_game(g).traits for g in games()}
    out += [(g, *m) for m in EXACT_MATCHUPS for g in games()
            if not traits[g].chance and traits[g].perfect_information]
    return out


def folder_name(game: str, strong: str, weak: str) -> str:
    return f"{game}--{strong}--vs--{weak}".replace(":", "_").replace("=", "").replace(",", "_")


def score_of(folder: Path, strong: str) -> tuple[float, int]:
    """(points of `strong`, games) from a tournament's games.csv."""
    df = pd.read_csv(folder / "games.csv")
    points = 0.0
    for seat in (0, 1):
        mine = df[df[f"agent_{seat}"] == strong]
        points += mine[f"result_{seat}"].sum()
    return float(points), len(df)


def summary_row(game, strong, weak, bar, folder) -> dict:
    from niwa.analysis.stats import wilson_interval

    points, n = score_of(folder, strong)
    low, high = wilson_interval(round(points), n)
    rate = points / n if n else float("nan")
    return {"game": game, "stronger": strong, "weaker": weak, "games": n, "points": points,
            "rate": rate, "ci_low": low, "ci_high": high, "bar": bar,
            "met": bool(n and rate >= bar)}


def searchers(args) -> int:
    from niwa.ext.registry import get_game

    for g in args.only or ():
        get_game(g)
    runs = args.runs or HERE / "runs" / "searchers"
    planned = matches()
    for game, strong, weak, _ in planned:
        if not args.only or game in args.only:
            print(f"{game}: {strong} vs {weak}, {args.games} games", file=sys.stderr, flush=True)
            play_match(game, [strong, weak], runs / folder_name(game, strong, weak),
                       games=args.games, seed=args.seed, workers=args.workers,
                       progress=sys.stderr.isatty(),
                       command=f"python bench/speed/run.py searchers --games {args.games}")
    # the table covers every match played so far in --runs, not only this call's
    rows = [summary_row(game, strong, weak, bar, runs / folder_name(game, strong, weak))
            for game, strong, weak, bar in planned
            if (runs / folder_name(game, strong, weak) / "games.csv").exists()]
    table = pd.DataFrame(rows)
    out = args.out if args.out.is_absolute() else HERE / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("engines", help="niwa bench GAME: engine, MCTS and alpha-beta speed")
    e.add_argument("games", nargs="*", help="games (default: all)")
    e.add_argument("--seconds", type=float, default=2.0, help="seconds a side (default 2)")
    e.add_argument("--rounds", type=int, default=1)
    e.add_argument("--seed", type=int, default=1)
    e.add_argument("--out", type=Path, default=None,
                   help="append the lines to this file (relative: to this folder)")
    s = sub.add_parser("suite", help="niwa bench --suite (needs niwa[openspiel])")
    s.add_argument("--out", type=Path, default=Path("results/suite.csv"),
                   help="CSV to write (relative: to this folder; default results/suite.csv)")
    s.add_argument("--budget", type=float, default=540.0,
                   help="seconds that scale the timed speed measurements (default 540)")
    s.add_argument("--games", nargs="*", help="games to measure (default: all)")
    s.add_argument("--strength-games", type=int, default=200,
                   help="games per game in the strength match (default 200)")
    s.add_argument("--move-time", type=float, default=0.005,
                   help="seconds per move in the strength match (default 0.005)")
    s.add_argument("--workers", type=int, default=2)
    m = sub.add_parser("searchers", help="the strength matches the searchers must win")
    m.add_argument("--runs", type=Path, default=None,
                   help="folder of the match folders (default: runs/searchers beside this file)")
    m.add_argument("--out", type=Path, default=Path("results/searchers.csv"),
                   help="summary CSV (relative: to this folder; default results/searchers.csv)")
    m.add_argument("--games", type=int, default=200, help="games per match (default 200)")
    m.add_argument("--seed", type=int, default=7)
    m.add_argument("--workers", type=int, default=None, help="parallel games (default: cores)")
    m.add_argument("--only", nargs="*", help="games to run (default: all)")
    args = ap.parse_args(argv)
    if args.cmd == "engines" and (args.seconds <= 0 or args.rounds < 1):
        ap.error("--seconds must be positive and --rounds at least 1")
    if args.cmd == "searchers" and args.games < 2:
        ap.error("--games must be at least 2")
    return {"engines": engines, "suite": suite, "searchers": searchers}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(guarded(main))
