"""niwa's Lotus engine against a tight plain-C reference for random playouts.

    python bench/speed/reference_c.py perft --depth 6
    python bench/speed/reference_c.py compare --games 1000000 --rounds 5 --out results/reference-c.txt

reference-c/playout.c plays two-player Lotus (basic rule, default board) the way a strong
C programmer would write a playout: bitboards and precomputed action tables, no hashing, no
allocation, the start position copied per game, and niwa's RNG (xoshiro256**, Lemire's
bounded draw). It is a yardstick for niwa's Cython engine (ext/lotus.pyx): how far its
general State machinery (action integers, kept Zobrist hashes, a 1.4 kB state) sits from
what the game itself costs. It is built with `cc -O3` and no -march, as a portable wheel
would be, into reference-c/build/ (not committed) whenever the source is newer.

`perft` checks that the C program generates exactly niwa's actions: perft from the initial
position at every depth up to --depth, with both trampoline settings (exit 1 on any
difference). It also generates them in niwa's order, so the same seed plays the same games
on both sides, and `compare` reports whether the totals agree.

`compare` measures random playouts/s of both in one run, rounds alternating (C, then niwa's
`playouts()`), each in its own subprocess timing its own CPU seconds around the playout
loop only. The machine is shared and noisy, so absolute rates mean little: the figure is
the niwa/C ratio of each round and their median. `--out` appends the printout to a text
file (relative paths are under bench/speed/, as in run.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))        # bench/, for campaign.py
from campaign import append_text  # noqa: E402

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "reference-c" / "playout.c"
BINARY = HERE / "reference-c" / "build" / "playout"
# no -march: the yardstick must not get instructions a portable wheel of niwa cannot use
CFLAGS = ["-O3", "-std=c99"]
TRAMPOLINES = ("optional", "mandatory")

# niwa's side of a round, in a fresh interpreter so that neither side warms the other's caches
NIWA_RUN = """
import json, sys, time
from niwa.ext.lotus import LotusState, playouts
games, seed, trampoline = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
start = LotusState(trampoline=trampoline)
t0 = time.process_time()
games, actions, wins = playouts(start, games, seed=seed)
cpu = time.process_time() - t0
print(json.dumps({"mode": "playout", "games": games, "actions": actions, "wins": wins,
                  "cpu_s": cpu, "actions_per_s": actions / cpu, "games_per_s": games / cpu}))
"""


def build() -> Path:
    """The C binary, compiled first if missing or older than its source."""
    if not BINARY.exists() or BINARY.stat().st_mtime < SOURCE.stat().st_mtime:
        BINARY.parent.mkdir(parents=True, exist_ok=True)
        cmd = ["cc", *CFLAGS, "-o", str(BINARY), str(SOURCE)]
        print("building:", " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True)
    return BINARY


def run_json(cmd: list[str]) -> dict:
    """Run one measuring subprocess and read its one line of JSON."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_c(games: int, seed: int, trampoline: str) -> dict:
    return run_json([str(build()), "run", str(games), "--seed", str(seed),
                     "--trampoline", trampoline])


def run_niwa(games: int, seed: int, trampoline: str) -> dict:
    return run_json([sys.executable, "-c", NIWA_RUN, str(games), str(seed), trampoline])


def perft(args) -> int:
    from niwa.ext.lotus import LotusState

    binary = build()
    bad = 0
    print(f"{'trampoline':<10} {'depth':>5} {'C':>15} {'niwa':>15}")
    for trampoline in TRAMPOLINES:
        state = LotusState(trampoline=trampoline)
        for depth in range(1, args.depth + 1):
            c = run_json([str(binary), "perft", str(depth), "--trampoline", trampoline])["nodes"]
            n = state.perft(depth)
            bad += c != n
            print(f"{trampoline:<10} {depth:>5} {c:>15,} {n:>15,}{'' if c == n else '  DIFFERENT'}",
                  flush=True)
    print("perft: all equal" if not bad else f"perft: {bad} counts differ")
    return 1 if bad else 0


def header() -> str:
    cc = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout.splitlines()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"# bench/speed/reference_c.py compare, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
            f", {platform.machine()}, {cc[0] if cc else 'cc ?'} ({' '.join(CFLAGS)}), load {load}")


def compare(args) -> int:
    build()                         # compile before anything is timed
    lines = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    say(header())
    say(f"# {args.games:,} random playouts a side, seed {args.seed}, trampoline={args.trampoline}, "
        f"{args.rounds} rounds alternating C then niwa; rates per CPU second")
    ratios_a, ratios_g, same = [], [], True
    for r in range(1, args.rounds + 1):
        c = run_c(args.games, args.seed, args.trampoline)
        n = run_niwa(args.games, args.seed, args.trampoline)
        same &= (c["games"], c["actions"], list(c["wins"])) == (n["games"], n["actions"], list(n["wins"]))
        ra, rg = n["actions_per_s"] / c["actions_per_s"], n["games_per_s"] / c["games_per_s"]
        ratios_a.append(ra)
        ratios_g.append(rg)
        say(f"round {r}: C {c['actions_per_s']:>12,.0f} actions/s {c['games_per_s']:>9,.0f} games/s"
            f" | niwa {n['actions_per_s']:>12,.0f} actions/s {n['games_per_s']:>9,.0f} games/s"
            f" | niwa/C {ra:.3f} {rg:.3f}")
    say(f"games: {c['games']:,}, actions {c['actions']:,} ({c['actions'] / c['games']:.2f} a game), "
        f"seat-0 wins {c['wins'][0] / c['games']:.4f}; niwa played "
        + ("the same games" if same else f"other games: actions {n['actions']:,}, wins {n['wins']}"))
    say(f"median niwa/C: actions/s {statistics.median(ratios_a):.3f}, "
        f"games/s {statistics.median(ratios_g):.3f} (C is {1 / statistics.median(ratios_a):.2f}x niwa)")
    if args.out:
        append_text(args.out, lines, HERE)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("perft", help="check the C program's perft against niwa's")
    p.add_argument("--depth", type=int, default=6, help="check depths 1..DEPTH (default 6)")
    c = sub.add_parser("compare", help="playouts/s of C and niwa in alternating rounds")
    c.add_argument("--games", type=int, default=1_000_000, help="playouts a side per round")
    c.add_argument("--rounds", type=int, default=5)
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--trampoline", choices=TRAMPOLINES, default="optional")
    c.add_argument("--out", type=Path, default=None,
                   help="append the printout to this file (relative: under bench/speed/)")
    args = ap.parse_args(argv)
    if args.command == "perft":
        if args.depth < 1:
            ap.error("--depth must be at least 1")
        return perft(args)
    if args.games < 1 or args.rounds < 1:
        ap.error("--games and --rounds must be at least 1")
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
