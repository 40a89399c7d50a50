"""How hard is a live proof D plies into full Lotus? Picks the depth of an opening book.

    python bench/book_depth.py --plies 8 10 12 14 16 --games 3 --time 20 --tt-mb 1024
    python bench/book_depth.py --book PATH ...   # Black (the book's winner) plays the book
    python bench/book_depth.py --book PATH --leaves 40   # positions just past the book

Plays `--games` seeded games to each depth: both sides random, or with --book the book's
winner from the book and the other side random (the lines `perfect` meets). Then proves
the position with a fresh table within --time seconds and records nodes, seconds and
whether it finished. Writes a CSV (--out) and prints a summary per depth.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
from pathlib import Path

from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch


def line_to(plies: int, seed: int, variant: dict, book=None):
    rng = random.Random(seed)
    s = LotusState(**variant)
    for _ in range(plies):
        if s.is_terminal():
            break
        legal = s.legal_actions()
        move = book.lookup(s) if book is not None and s.current_player() == book.winner \
            else None
        s.apply(move if move in legal else rng.choice(legal))
    return s


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plies", type=int, nargs="+", default=[8, 10, 12, 14, 16])
    p.add_argument("--games", type=int, default=3)
    p.add_argument("--time", type=float, default=20.0)
    p.add_argument("--tt-mb", type=float, default=1024)
    p.add_argument("--rule", default="basic")
    p.add_argument("--trampoline", default="optional")
    p.add_argument("--book", default=None, help="a book file: its winner plays from it")
    p.add_argument("--leaves", type=int, default=0,
                   help="prove this many positions just past --book (seeded sample) instead")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    book = None
    if args.book:
        from niwa.solver.book import load_book
        book = load_book(args.book)
    variant = dict(rule=args.rule, trampoline=args.trampoline)
    search = ProofSearch(tt_mb=args.tt_mb)
    rows = []
    if args.leaves:
        from niwa.solver.book import book_leaves
        leaves = book_leaves(book)
        random.Random(1).shuffle(leaves)
        for i, (s, ply) in enumerate(leaves[:args.leaves]):
            search.clear()
            r = search.solve(s, time_limit=args.time, root_values=False, pv=False)
            rows.append({"plies": ply, "game": i, "mover": r.player,
                         "proven": r.proven, "value": "" if r.value is None else int(r.value),
                         "nodes": r.nodes, "time_s": round(r.time_s, 2),
                         "position": s.to_notation()})
        args.plies = sorted({r["plies"] for r in rows})
        print(f"{len(leaves)} leaves; proved {len(rows)} with a fresh table each", file=sys.stderr)
    for plies in args.plies if not args.leaves else []:
        for g in range(args.games):
            s = line_to(plies, 1000 * plies + g, variant, book)
            if s.is_terminal():
                continue
            search.clear()
            r = search.solve(s, time_limit=args.time, root_values=False, pv=False)
            rows.append({"plies": plies, "game": g, "mover": r.player, "proven": r.proven,
                         "value": "" if r.value is None else int(r.value), "nodes": r.nodes,
                         "time_s": round(r.time_s, 2), "position": s.to_notation()})
            print(f"ply {plies} game {g}: {'proven' if r.proven else 'open'} "
                  f"{r.nodes:,} nodes {r.time_s:.2f} s", file=sys.stderr, flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    for plies in args.plies:
        mine = [r for r in rows if r["plies"] == plies]
        done = [r for r in mine if r["proven"]]
        print(f"ply {plies}: {len(done)}/{len(mine)} proven within {args.time:g} s; max "
              f"{max((r['time_s'] for r in mine), default=0):.2f} s, "
              f"{max((r['nodes'] for r in mine), default=0):,} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
