"""`perfect` in one fixed seat against other agents: does the proven winner win every game?

    python bench/perfect_seat.py --perfect perfect:time=1,tt_mb=512 \\
        --opponents mcts:time=0.05 mcts:time=0.2,playout=heuristic --games 50 --seat 1 \\
        --out bench/results/perfect-full-lotus

`niwa tournament` seats every agent in every seat equally often; here `perfect` keeps the
seat given (1 = Black, the proven winner of two-player Lotus) so that every game tests the
claim. Agents are built per game from their specs, as a tournament worker builds them (so
the proof table kept per process is exercised across games). Game g against opponent k
uses agent seeds derived from (--seed, k, g). Writes games.csv (one row per game: result,
plies, seconds, where perfect's moves came from: book / proof / fallback / forced, its
slowest move), summary.csv (per opponent) and sources.png.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
import time
from pathlib import Path

from tqdm import tqdm

from niwa.analysis.arena.game_loop import play
from niwa.ext.game import Rng
from niwa.ext.registry import get_game, parse_variant_options
from niwa.solver.agents import make_agent

SOURCES = ("book", "proof", "fallback", "forced")


def seed_of(*parts) -> int:
    return int.from_bytes(hashlib.blake2b(repr(parts).encode(), digest_size=8).digest(),
                          "little") >> 1


class Timed:
    """Wraps an agent to record how long each of its moves took."""

    def __init__(self, agent):
        self.agent, self.times = agent, []

    def step(self, state, player):
        t = time.perf_counter()
        a = self.agent.step(state, player)
        self.times.append(time.perf_counter() - t)
        return a

    def __getattr__(self, name):
        return getattr(self.agent, name)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="lotus")
    p.add_argument("--variant", "-v", nargs="*", default=[], help="KEY=VALUE ...")
    p.add_argument("--perfect", default="perfect:time=1,tt_mb=512")
    p.add_argument("--opponents", nargs="+", default=["mcts:time=0.05"])
    p.add_argument("--games", type=int, default=50, help="games per opponent")
    p.add_argument("--seat", type=int, default=1, help="perfect's seat")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    variant = parse_variant_options(args.variant)
    spec = get_game(args.game)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    limit = float(args.perfect.split("time=")[1].split(",")[0]) + 0.5 \
        if "time=" in args.perfect else None
    bar = tqdm(total=args.games * len(args.opponents), desc="games", unit=" game")
    for k, opp in enumerate(args.opponents):
        for g in range(args.games):
            perfect = Timed(make_agent(args.perfect, seed=seed_of(args.seed, k, g, "perfect")))
            opponent = make_agent(opp, seed=seed_of(args.seed, k, g, "opponent"))
            agents = [opponent, perfect] if args.seat == 1 else [perfect, opponent]
            for a in agents:
                a.reset()
            t = time.perf_counter()
            r = play(spec.new(seed=seed_of(args.seed, k, g, "deal"), **variant), agents,
                     chance_rng=Rng(seed_of(args.seed, k, g, "chance")))
            row = {"opponent": opp, "game": g, "seat": args.seat,
                   "result": r.results[args.seat], "plies": len(r.actions),
                   "seconds": round(time.perf_counter() - t, 2),
                   **{s: perfect.sources.get(s, 0) for s in SOURCES},
                   "perfect_moves": len(perfect.times),
                   "slowest_move_s": round(max(perfect.times, default=0.0), 3),
                   "over_limit": sum(x > limit for x in perfect.times) if limit else 0}
            rows.append(row)
            bar.update()
            bar.set_postfix(won=sum(x["result"] == 1.0 for x in rows), of=len(rows))
    bar.close()
    with (args.out / "games.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    summary = []
    for opp in args.opponents:
        mine = [r for r in rows if r["opponent"] == opp]
        summary.append({
            "opponent": opp, "seat": args.seat, "games": len(mine),
            "wins": sum(r["result"] == 1.0 for r in mine),
            "mean_seconds_per_game": round(sum(r["seconds"] for r in mine) / len(mine), 2),
            **{s: sum(r[s] for r in mine) for s in SOURCES},
            "slowest_move_s": max(r["slowest_move_s"] for r in mine),
            "moves_over_limit": sum(r["over_limit"] for r in mine)})
    with (args.out / "summary.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0]))
        w.writeheader()
        w.writerows(summary)
    (args.out / "command.json").write_text(json.dumps(
        {"command": "python bench/perfect_seat.py " + " ".join(argv or sys.argv[1:]),
         "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1))
    plot(summary, args.out / "sources.png")
    for s in summary:
        print(json.dumps(s))
    return 0


def plot(summary, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    bottom = [0] * len(summary)
    for s in SOURCES:
        vals = [row[s] for row in summary]
        ax.bar([row["opponent"] for row in summary], vals, bottom=bottom, label=s)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    for i, row in enumerate(summary):
        ax.text(i, bottom[i], f"won {row['wins']}/{row['games']}", ha="center", va="bottom")
    ax.set_ylabel("perfect's moves")
    ax.set_title(f"where perfect's moves came from (seat {summary[0]['seat']})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
