"""Do proof-set choices (`niwa solve --checkpoint ... --set-plies N`) prove with fewer nodes
than the top tree's own numbers? Towers 3..1 under each rule, one worker in this process
(its node counts are the same on every run), no endgame tables, a fresh 1 GB table: each
position with --set-plies 0 (the tree's numbers alone), 4 and 40 (every ply down to a leaf),
for two job sizes. One row per proof, appended to results/set-choice.csv as it ends; a
rerun skips the rows already there.

    python set_choice.py [--job-nodes 200000 1000000] [--plies 0 4 40] [--every 1]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))        # bench/, for campaign.py
from campaign import append_row  # noqa: E402

OUT = HERE / "results" / "set-choice.csv"
POSITIONS = ("lotus towers=3 rule=pro trampoline=mandatory",
             "lotus towers=3 rule=pro trampoline=optional",
             "lotus towers=3 rule=basic trampoline=optional")
COLUMNS = ["position", "job_nodes", "set_plies", "set_every", "value_first_player", "jobs",
           "nodes", "cpu_s", "peak_tree_nodes", "set_choices", "set_cpu_s", "utc"]


def prove(position: str, job_nodes: int, plies: int, every: int) -> dict:
    """One proof of `position` with these settings, as a row."""
    from niwa.ext.registry import parse_position
    from niwa.solver.proof_tree import ProofTree

    tree = ProofTree(parse_position(position), job_nodes=job_nodes, tt_mb=1024,
                     set_plies=plies, set_every=every)
    r = tree.run()
    return {"position": position, "job_nodes": job_nodes, "set_plies": plies,
            "set_every": every, "value_first_player": r.value, "jobs": r.jobs,
            "nodes": r.nodes, "cpu_s": round(r.cpu_s, 1), "peak_tree_nodes": r.peak_tree_nodes,
            "set_choices": tree.set_choices, "set_cpu_s": round(tree.set_cpu_s, 2),
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--job-nodes", type=int, nargs="+", default=[200_000, 1_000_000])
    p.add_argument("--plies", type=int, nargs="+", default=[0, 4, 40])
    p.add_argument("--every", type=int, default=1)
    p.add_argument("--positions", nargs="+", default=list(POSITIONS))
    p.add_argument("--out", type=Path, default=OUT)
    a = p.parse_args(argv)
    done = set()
    if a.out.exists():
        with a.out.open() as f:
            done = {(r["position"], int(r["job_nodes"]), int(r["set_plies"]),
                     int(r["set_every"])) for r in csv.DictReader(f)}
    for position in a.positions:
        for job_nodes in a.job_nodes:
            for plies in a.plies:
                every = a.every if plies else 0
                if (position, job_nodes, plies, every) in done:
                    continue
                row = prove(position, job_nodes, plies, max(every, 1))
                row["set_every"] = every
                append_row(a.out, row, COLUMNS)
                print(", ".join(f"{k} {row[k]}" for k in COLUMNS[:9]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
