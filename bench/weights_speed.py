"""Speed of the engines and searchers before and after a change, measured in CPU seconds
on fixed work (so a loaded machine slows both sides alike), alternating the two builds.

    python bench/weights_speed.py --base /tmp/base-build --base-python /work/main/.venv/bin/python \
        --rounds 5 --out bench/results/eval-weights-speed.txt

`--base DIR` is a folder holding a `niwa` package (ext/, solver/... with their compiled
modules) put first on PYTHONPATH for the baseline runs; the other side is this checkout's
build. Each round runs one subprocess per side and game; a side's figure is the median
over the rounds. Work per game: batch playouts (the game's policy for MCTS playouts),
MCTS with random playouts and with the game's `best` settings (fixed iterations), and
alpha-beta to a fixed depth (evaluation at every leaf).
`python bench/weights_speed.py --measure GAME` prints one side's figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

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
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sides = {"base": ([args.base_python, os.path.abspath(__file__)],
                      {**os.environ, "PYTHONPATH": args.base}),
             "new": ([sys.executable, os.path.abspath(__file__)],
                     {k: v for k, v in os.environ.items() if k != "PYTHONPATH"})}
    games = args.games or GAMES
    figures = {g: {s: [] for s in sides} for g in games}
    for _ in range(args.rounds):
        for game in games:
            for side, (cmd, env) in sides.items():
                text = subprocess.run(cmd + ["--measure", game], env=env, cwd=here, check=True,
                                      capture_output=True, text=True).stdout
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", choices=GAMES)
    ap.add_argument("--base")
    ap.add_argument("--base-python", default=sys.executable)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--games", nargs="+", choices=GAMES, help="only these games")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    if not args.base:
        ap.error("give --base DIR (or --measure GAME)")
    text = drive(args)
    print(text, end="")
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
