"""How should winning_move find the winner's move at a position the table has proven, but
none of whose children it knows (a kept proof, loaded without its subtree)? The old way
tried the moves in turn with budgets growing 4x a round; ProofSearch.prove_below proves the
position again from its children by df-pn, its own entry set aside.

Positions: a random sample of the winner-to-move children of saved parts' roots (each part
root is the loser's), of `--lo`..`--hi` positions. For each: one fresh table proves it (the
time of a proof from nothing), its own row is read out, and two fresh tables holding only
that row find the move, the old way and prove_below, in random order. The move found is
checked by a third fresh proof. The old way (proof_moves.moves_in_turn) stops after
`--cap` seconds (checked between rounds; counted at what it took). One row a position, appended to
results/prove-below.csv as it ends; the ratio of the sums is printed.

    python prove_below.py --parts /work/proof-run/cert-pm/parts \\
        --tables /work/proof-run/tables-pm-k5 --sample 16 --lo 20000 --hi 300000
"""

from __future__ import annotations

import argparse
import glob
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))        # bench/, for campaign.py
from campaign import append_row  # noqa: E402

OUT = HERE / "results" / "prove-below.csv"
COLUMNS = ["part_positions", "position", "proof_work", "fresh_s", "old_s", "old_capped",
           "prove_below_s", "utc"]


def sample_positions(parts: str, n: int, lo: int, hi: int, seed: int):
    from niwa.ext.registry import parse_position
    from niwa.solver.certificate import PART_FILES, _header_meta

    files = sorted(glob.glob(str(Path(parts) / PART_FILES)))
    rng = random.Random(seed)
    rng.shuffle(files)
    for f in files:
        meta = _header_meta(f)
        if not lo <= meta["nodes"] <= hi:
            continue
        root, winner = parse_position(meta["root"]), int(meta["winner"])
        kids = [root.child(a) for a in root.legal_actions()]
        kids = [k for k in kids if not k.is_terminal() and k.current_player() == winner]
        if kids:
            yield meta["nodes"], rng.choice(kids), winner
            n -= 1
            if n == 0:
                return


def main() -> None:
    import numpy as np

    from niwa.solver.proof import ProofSearch
    from niwa.solver.proof_moves import moves_in_turn
    from niwa.solver.tables import resolve_tables

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", required=True)
    ap.add_argument("--tables", required=True)
    ap.add_argument("--sample", type=int, default=16)
    ap.add_argument("--lo", type=int, default=20000)
    ap.add_argument("--hi", type=int, default=300000)
    ap.add_argument("--cap", type=float, default=240.0)
    ap.add_argument("--tt-mb", type=int, default=256)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    table, sums = None, {"fresh": 0.0, "old": 0.0, "new": 0.0}
    for nodes, state, winner in sample_positions(args.parts, args.sample, args.lo, args.hi,
                                                 args.seed):
        table = table or resolve_tables(state, args.tables)
        fresh = ProofSearch(tt_mb=args.tt_mb, tables=table)
        t0 = time.perf_counter()
        assert fresh.prove_value(state, winner) == 1
        took = {"fresh": time.perf_counter() - t0}
        key = fresh.table_key(state)
        pn, dn, work, best = fresh._probe_key(key)
        row = np.array([[key, pn | (dn << 32), (work & 0xFFFFFFFF) |
                         ((best & 0xFFFFFFFF) << 32)]], dtype=np.uint64)
        capped = False
        for way in rng.sample(["old", "new"], 2):
            search = ProofSearch(tt_mb=args.tt_mb, tables=table)
            search.load_proven(row)
            assert search.cheapest_known_win(state, winner) < 0
            t0 = time.perf_counter()
            move = moves_in_turn(search, state, winner, args.cap) if way == "old" else \
                search.prove_below(state, winner)
            took[way] = time.perf_counter() - t0
            if move < 0 and way == "old":
                capped = True
                continue
            check = ProofSearch(tt_mb=args.tt_mb, tables=table)
            assert move >= 0 and check.prove_value(state.child(move), winner) == 1
        for k in sums:
            sums[k] += took[k]
        append_row(OUT, {"part_positions": nodes, "position": state.to_notation(),
                         "proof_work": work, "fresh_s": f"{took['fresh']:.3f}",
                         "old_s": f"{took['old']:.3f}", "old_capped": capped,
                         "prove_below_s": f"{took['new']:.3f}",
                         "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, COLUMNS)
        print(f"{nodes:>8} work {work:>9}  fresh {took['fresh']:7.2f} s  old {took['old']:7.2f}"
              f" s{' (capped)' if capped else ''}  prove_below {took['new']:7.2f} s", flush=True)
    print(f"sums: fresh {sums['fresh']:.1f} s, old {sums['old']:.1f} s, prove_below "
          f"{sums['new']:.1f} s; old / prove_below {sums['old'] / max(sums['new'], 1e-9):.2f}")


if __name__ == "__main__":
    main()
