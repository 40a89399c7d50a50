"""Evaluation weights: SPSA tuning of `best`'s weights (what `niwa tune` runs), the
200-game checks of the tuned weights, and the engines' speed before and after the weights
became parameters.

    python bench/eval-weights/run.py tune lotus          # a published run (see --help)
    python bench/eval-weights/run.py tune haru --iterations 2 --runs /tmp/t --results /tmp/t
    python bench/eval-weights/run.py check lotus "best:iters=1000,w_free=0.00743,..." \
        best:iters=1000 --games 200 --seed 7 --note "tuned at iters=1000"
    python bench/eval-weights/run.py speed --base /tmp/base-build \
        --base-python /work/main/.venv/bin/python --rounds 7 --out results/speed.txt

`tune NAME` runs one of the published tuning runs (TUNE_RUNS below) through
analysis.experiments.tune (resumable: the same command continues it in runs/NAME beside
this file) and copies its trajectory (CSV, PNG) and tune.json to results/ as
NAME-tune-trajectory.csv/.png and NAME-tune.json.

`check GAME CANDIDATE BASELINE` plays a seat-swapped match through niwa's tournament
engine and appends one row to results/GAME-checks.csv: the candidate's mean points with
its normal 95% interval (observed per-game variance), and the Elo difference.

`speed` compares two builds in CPU seconds on fixed work (so a loaded machine slows both
sides alike), alternating them: `--base DIR` is a folder holding a `niwa` package (ext/,
solver/... with their compiled modules) put first on PYTHONPATH for the baseline, the
other side is the installed build. Each round runs one process per side and game; a
side's figure is the median over the rounds. Work per game: batch playouts (the game's
policy for MCTS playouts), MCTS with random playouts and with the game's `best` settings
(fixed iterations), and alpha-beta to a fixed depth (evaluation at every leaf).
`speed --measure GAME` prints one side's figures as JSON.

Iteration budgets (`iters=`) keep the tuning and checking games independent of the load.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from campaign import append_row, command_line, guarded, match_score, play_match  # noqa: E402

HERE = Path(__file__).resolve().parent
CHECK_FIELDS = ["game", "candidate", "baseline", "games", "wins", "draws", "losses", "score",
                "score_low", "score_high", "elo", "elo_margin", "seed", "note", "out"]
LOTUS_WEIGHTS = ("w_free=0:20", "w_height=0:5", "w_covered=0:20", "w_scale=2:60")


@dataclass(frozen=True)
class TuneRun:
    game: str
    agent: str
    params: tuple[str, ...]
    iterations: int
    seed: int
    variant: tuple[str, ...] = ()


# the published runs (one worker each); lotus-misset-free-greedy's command was not
# recorded with its files: these settings are those its 200-game check names
TUNE_RUNS = {
    "lotus": TuneRun("lotus", "best:iters=1000", LOTUS_WEIGHTS, 300, 1),
    "lotus-5k": TuneRun("lotus", "best:iters=5000", LOTUS_WEIGHTS, 150, 2),
    "haru": TuneRun("haru", "best:iters=100", ("w_block=0:45", "w_make_near=0:20"), 80, 1),
    "bonsai": TuneRun("bonsai", "best:iters=200", ("w_cultivate=0:1", "w_top_slot=0:1"), 150,
                      1, ("players=2",)),
    "lotus-misset-covered": TuneRun("lotus", "best:iters=300,w_covered=0",
                                    ("w_covered=0:20",), 150, 1),
    "lotus-misset-free-greedy": TuneRun("lotus", "greedy:w_free=0", ("w_free=0:20",), 150, 1),
}


# ---- tune ------------------------------------------------------------------------------
def tune(args, argv) -> int:
    from niwa.analysis.arena.executors import make_executor
    from niwa.analysis.experiments import tune as spsa
    from niwa.ext.registry import parse_variant_options

    run = TUNE_RUNS[args.name]
    iterations = args.iterations or run.iterations
    config = spsa.make_tune_config(run.game, run.agent, list(run.params),
                                   iterations=iterations,
                                   variant=parse_variant_options(list(run.variant)),
                                   seed=run.seed)
    published = iterations == run.iterations
    out = (args.runs or HERE / "runs") / (args.name if published
                                          else f"{args.name}-{iterations}")
    spsa.run_tune(config, str(out), executor=make_executor("local", args.workers),
                  resume=(out / "tune.json").exists(), progress=sys.stderr.isatty(),
                  command=command_line(__file__, argv))
    results = args.results or (HERE / "results" if published else None)
    if results is None:
        print(f"wrote {out} (not copied to results/: not the published iterations)")
        return 0
    results.mkdir(parents=True, exist_ok=True)
    name = args.name if args.name.startswith("lotus-misset") else f"{args.name}-tune"
    copies = {"trajectory.csv": f"{name}-trajectory.csv",
              "trajectory.png": f"{name}-trajectory.png",
              "tune.json": f"{args.name}-tune.json"}
    for src, dst in copies.items():
        if (out / src).exists():
            shutil.copy2(out / src, results / dst)
    print(f"wrote {out}; copied {', '.join(copies.values())} to {results}")
    return 0


# ---- check -----------------------------------------------------------------------------
def check(args, argv) -> int:
    results = args.results or HERE / "results" / f"{args.game}-checks.csv"
    key = repr((args.candidate, args.baseline, args.seed, args.games)).encode()
    out = (args.runs or HERE / "runs") / "checks" / (
        f"{args.game}-{hashlib.sha1(key).hexdigest()[:10]}")
    play_match(args.game, [args.candidate, args.baseline], out, games=args.games,
               seed=args.seed, progress=sys.stderr.isatty(),
               command=command_line(__file__, argv))
    row = {"game": args.game, "candidate": args.candidate, "baseline": args.baseline,
           **match_score(out / "games.csv", args.candidate), "seed": args.seed,
           "note": args.note, "out": str(out)}
    append_row(results, row, CHECK_FIELDS)
    print(f"{args.game} {args.candidate} vs {args.baseline}: {row['score']:.3f} "
          f"[{row['score_low']:.3f}, {row['score_high']:.3f}] over {row['games']} games "
          f"-> {results}")
    return 0


# ---- speed -----------------------------------------------------------------------------
GAMES = ("lotus", "haru", "bonsai")
WORK = {   # game: (playouts, MCTS iterations, alpha-beta depth, variant)
    "lotus": (60_000, 100_000, 7, {}),
    "haru": (20_000, 10_000, 5, {}),
    "bonsai": (5_000, 5_000, 4, {"players": 2}),
}
BEST = {"lotus": {"cutoff": 10}, "haru": {"playout": "heuristic"},
        "bonsai": {"playout": "heuristic"}}


def _cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _midgame(spec, variant):
    """A fixed position a few plies in (seeded random play), one a player moves in."""
    from niwa.ext.game import Rng

    rng, s = Rng(3), spec.new(seed=3, **variant)
    for k in range(100):
        if k >= 12 and s.current_player() >= 0:
            return s
        if s.is_simultaneous_node():
            s.apply_joint([rng.choice(s.legal_actions(q)) for q in range(s.num_players)])
        elif s.is_chance_node():
            s.apply(rng.choice(s.chance_outcomes())[0])
        else:
            s.apply(rng.choice(s.legal_actions()))
    raise RuntimeError(f"{spec.name}: no decision position found")


def measure(game: str) -> dict:
    from niwa.ext.registry import get_game
    from niwa.solver.alphabeta import AlphaBeta
    from niwa.solver.mcts import MCTS

    spec = get_game(game)
    playouts, iters, depth, variant = WORK[game]
    start, mid = spec.new(seed=1, **variant), _midgame(spec, variant)
    policy = () if game == "lotus" else (("heuristic",) if game == "haru" else (True,))
    out = {"playouts/s": playouts / _cpu(lambda: spec.batch_playouts(start, playouts, 5,
                                                                     *policy))}
    for label, extra in (("mcts random sims/s", {}), ("mcts best sims/s", BEST[game])):
        settings = {**dict(spec.mcts_defaults), **extra}
        tree = MCTS(mid.num_players, seed=7, ismcts=spec.traits.hidden_information,
                    **{k: v for k, v in settings.items() if k in ("c", "playout", "cutoff")})
        out[label] = iters / _cpu(lambda t=tree: t.search(mid, iterations=iters,
                                                          observer=mid.current_player()))
    ab = AlphaBeta(mid.num_players, tt_bits=18)
    result = {}
    t = _cpu(lambda: result.update(r=ab.search(mid, depth=depth)))
    out["alphabeta nodes/s"] = result["r"].nodes / t
    return out


def drive(args) -> str:
    """Alternate the two builds, one fresh process per side, game and round: the only way
    to load two builds of the same package (this script itself, with --measure, not
    `niwa`)."""
    me = os.path.abspath(__file__)
    sides = {"base": ([args.base_python, me], {**os.environ, "PYTHONPATH": args.base}),
             "new": ([sys.executable, me],
                     {k: v for k, v in os.environ.items() if k != "PYTHONPATH"})}
    games = args.games or GAMES
    figures = {g: {s: [] for s in sides} for g in games}
    for _ in range(args.rounds):
        for game in games:
            for side, (cmd, env) in sides.items():
                text = subprocess.run(cmd + ["speed", "--measure", game], env=env,
                                      check=True, capture_output=True, text=True).stdout
                figures[game][side].append(json.loads(text))
    lines = [f"CPU-second rates, median of {args.rounds} alternating rounds "
             f"(base: {args.base}; new: this checkout)", ""]
    for game in games:
        for key in figures[game]["base"][0]:
            b = statistics.median(r[key] for r in figures[game]["base"])
            n = statistics.median(r[key] for r in figures[game]["new"])
            spread = [round(r[key]) for r in figures[game]["new"]]
            lines.append(f"{game:<7} {key:<20} base {b:>12,.0f}  new {n:>12,.0f}  "
                         f"new/base {n / b:.3f}   (new per round: {spread})")
    return "\n".join(lines) + "\n"


def speed(args, argv) -> int:
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return 0
    if not args.base:
        print("Error: give --base DIR (a folder holding the baseline's niwa package) or "
              "--measure GAME", file=sys.stderr)
        return 2
    text = drive(args)
    print(text, end="")
    if args.out:
        out = args.out if args.out.is_absolute() else HERE / args.out
        with out.open("a", encoding="utf-8") as f:
            f.write(text)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tune", help="one of the published SPSA runs")
    t.add_argument("name", choices=sorted(TUNE_RUNS))
    t.add_argument("--iterations", type=int, default=None,
                   help="a quick look: fewer iterations (results copied only with --results)")
    t.add_argument("--workers", type=int, default=1, help="parallel games (default 1)")
    c = sub.add_parser("check", help="a seat-swapped match, one row in results/GAME-checks.csv")
    c.add_argument("game")
    c.add_argument("candidate")
    c.add_argument("baseline")
    c.add_argument("--games", type=int, default=200, help="games (default 200)")
    c.add_argument("--seed", type=int, default=7, help="seed (default 7)")
    c.add_argument("--note", default="")
    for q in (t, c):
        q.add_argument("--runs", type=Path, default=None,
                       help="folder of the runs (default: runs/ beside this file)")
        q.add_argument("--results", type=Path, default=None,
                       help="where results go (default: results/ beside this file)")
    s = sub.add_parser("speed", help="two builds' speed in CPU seconds, alternating")
    s.add_argument("--measure", choices=GAMES, help="print this build's figures as JSON")
    s.add_argument("--base", help="folder holding the baseline's niwa package")
    s.add_argument("--base-python", default=sys.executable)
    s.add_argument("--rounds", type=int, default=5)
    s.add_argument("--games", nargs="+", choices=GAMES, help="only these games")
    s.add_argument("--out", type=Path, help="append the table here (relative: to this folder)")
    args = ap.parse_args(argv)
    if args.cmd == "tune" and args.iterations is not None and args.iterations < 1:
        ap.error("--iterations must be at least 1")
    if args.cmd == "check":
        if args.candidate == args.baseline:
            ap.error("candidate and baseline must differ (tell them apart by spec)")
        if args.games < 2:
            ap.error("--games must be at least 2")
    if args.cmd == "speed" and args.rounds < 1:
        ap.error("--rounds must be at least 1")
    return {"tune": tune, "check": check, "speed": speed}[args.cmd](args, argv)


if __name__ == "__main__":
    sys.exit(guarded(main))
