"""Would larger jobs decide the pro/mandatory leaves for less? The real run sends 4M-node
df-pn jobs and expands a leaf in the top tree when its job does not decide it. This takes a
random sample of the jobs of a checkpoint's log that did not decide their position, proves
each position again in this process with one job of up to `--budget` nodes (a fresh table,
the checkpoint's kept proofs loaded into it, the same endgame tables), and sets the nodes
that one job needed beside what the top tree has spent below the same position since (its
jobs in the top tree's DAG below the node, and whether the tree has decided it).

A fresh table holds less than the run's shared one (the other jobs' proofs), so a single
job here is at a disadvantage: a leaf it decides within B nodes, the run could too.
One row per position, appended to results/job-size.csv as it ends; a rerun skips the jobs
already there.

    python job_size.py CHECKPOINT --jobs 34982:37842 --sample 20 --budget 64000000 \\
        --tables /path/to/tables-pm-k5 --tt-mb 2048
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))        # bench/, for campaign.py
from campaign import append_row, job_range  # noqa: E402

OUT = HERE / "results" / "job-size.csv"
COLUMNS = ["label", "job", "depth", "job_budget", "job_pn", "job_dn", "budget",
           "one_job_nodes", "one_job_value", "one_job_cpu_s", "tree_jobs_below",
           "tree_decided", "tree_pn", "tree_dn", "utc"]


def undecided_jobs(rows, first: int, last: int | None) -> list[dict]:
    return [r for r in rows if r["job"] >= first and (last is None or r["job"] < last)
            and r["pn"] != 0 and r["dn"] != 0 and "path" in r]


def jobs_below(node) -> int:
    """Jobs finished on `node` and on every node below it in the top tree (a DAG: each
    node once)."""
    seen, stack, total = set(), [node], 0
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        total += n.jobs
        stack.extend(n.children or ())
    return total


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint", type=Path)
    p.add_argument("--jobs", default=(0, None), type=job_range,
                   help="FROM:TO, job numbers to sample (TO excluded)")
    p.add_argument("--sample", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget", type=int, default=64_000_000)
    p.add_argument("--tables", default=None)
    p.add_argument("--tt-mb", type=float, default=2048)
    p.add_argument("--label", default="")
    p.add_argument("--out", type=Path, default=OUT)
    a = p.parse_args(argv)

    from tqdm import tqdm

    from niwa.ext.registry import parse_position
    from niwa.solver.proof import ProofSearch
    from niwa.solver.proof_tree import look_at_checkpoint, read_meta, read_proven, read_rows
    from niwa.solver.tables import resolve_tables

    rows = undecided_jobs(read_rows(a.checkpoint), *a.jobs)
    chosen = sorted(random.Random(a.seed).sample(rows, min(a.sample, len(rows))),
                    key=lambda r: r["job"])
    done = set()
    if a.out.exists():
        with a.out.open() as f:
            done = {int(r["job"]) for r in csv.DictReader(f)}
    chosen = [r for r in chosen if r["job"] not in done]
    root = parse_position(read_meta(a.checkpoint)["position"])
    tree, _ = look_at_checkpoint(a.checkpoint)
    kept, read = None, False
    for r in tqdm(chosen, desc="positions", unit=" pos"):
        state = root.clone()
        for action in r["path"]:
            state.apply(action)
        node = tree.by_key.get((state.symmetric_hash(), state.current_player()))
        table = None if a.tables is None else resolve_tables(state, a.tables)
        search = ProofSearch(tt_mb=a.tt_mb, tables=table)
        if not read:    # (once: the file and its checksum, the same for every position)
            kept, read = read_proven(a.checkpoint, search, root), True
        if kept is not None:
            search.load_proven(kept)
        c0 = time.thread_time()
        result = search.solve(state, max_nodes=a.budget, root_values=False, pv=False)
        cpu = time.thread_time() - c0
        append_row(a.out, {
            "label": a.label, "job": r["job"], "depth": len(r["path"]),
            "job_budget": r["budget"], "job_pn": r["pn"], "job_dn": r["dn"],
            "budget": a.budget, "one_job_nodes": result.nodes,
            "one_job_value": result.value if result.proven else "",
            "one_job_cpu_s": round(cpu, 1),
            "tree_jobs_below": "" if node is None else jobs_below(node),
            "tree_decided": "" if node is None else int(node.proven),
            "tree_pn": "" if node is None else node.pn,
            "tree_dn": "" if node is None else node.dn,
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, COLUMNS)
        del search      # its table goes before the next position's is made
    return 0


if __name__ == "__main__":
    sys.exit(main())
