"""How the two-level proof would scale to more workers: a model replayed from a job log.

    python model.py CHECKPOINT_DIR [--workers 1 2 4 8 16 32 64] [--coordinator-ms 20]
                    [--inflation 1.0] [--nodes 1.4e9 1.7e10] [--width-every 1]

(--nodes defaults to the log's own nodes when its root is proven. --width-every N counts
the open leaves every N jobs and holds the count between: a count walks the whole top tree,
so on a log of 43,563 jobs and a tree of 100,000 nodes counting at every job takes hours.)

The model (stated in full, because the figures are only as good as it is):

1. Work. The jobs of the log (a one-worker run: each job chosen after the previous one
   ended) are the work to be done; job i takes its logged CPU seconds `cpu_s` on any
   worker (an idle machine or a cluster: wall = CPU per job). N workers spend
   `inflation(N)` times the nodes of one worker: the work one worker's job would have
   found in the table and the other's did not (private tables), and speculative jobs whose
   leaf was decided meanwhile. It is not known from a one-worker log; it is an input,
   measured at N = 2 (runs.csv: 0.98 with the shared table on pro/mandatory, 2.0 with
   private tables) and assumed beyond.
2. Width. When job i was chosen, the top tree had w(i) open leaves (replayed from the log:
   the tree is a pure function of the job lines). N workers can only work on distinct open
   leaves, so job i waits until fewer than w(i) jobs are in flight.
3. Coordinator. One process chooses the jobs and folds in the results, `coordinator-ms`
   milliseconds per job, one job at a time (measured: cpu_total_s - cpu_s over the jobs of
   a run in runs.csv).
4. Schedule. Jobs start in log order (list scheduling) as soon as a worker is free, the
   coordinator has chosen them, and the width allows. The makespan T(N) against T(1)
   gives the replay speed-up S(N); divided by inflation(N) it is the model's speed-up.

What it leaves out: that with N workers the jobs would be other jobs (chosen from other
trees); the memory bandwidth N workers share on one machine (measured at N = 2 in
runs.csv's nodes per CPU second); network latency to a cluster (small against jobs of
seconds).
"""

from __future__ import annotations

import argparse
import heapq
import json
from pathlib import Path

from niwa.solver.proof_tree import open_checkpoint


def replay(directory, width_every: int = 1):
    """The log's jobs as (cpu_s, nodes, open leaves when chosen), in order, replayed the way
    a resume replays them (a tree of positions or of paths, as the checkpoint says): the
    open leaves after job i-1 are those job i was chosen among, counted every
    `width_every` jobs and held between."""
    out = []
    width = 1

    def record(tree, row):
        nonlocal width
        out.append((float(row.get("cpu_s", 0.0)), int(row["nodes"]), max(width, 1)))
        if tree.jobs_done % width_every == 0:
            width = sum(1 for n in tree.by_key.values() if n.children is None and not n.proven)

    tree = open_checkpoint(directory, read_only=True, on_replay=record)
    tree.close()
    return out, tree.result()


def makespan(jobs, workers: int, coordinator_s: float) -> float:
    """List scheduling of the jobs in order on `workers` (see the model above)."""
    free = [0.0] * workers              # when each worker is next free (a heap)
    running: list[float] = []           # end times of the jobs in flight (a heap)
    coordinator = 0.0
    end = 0.0
    for cpu, _nodes, width in jobs:
        start = max(heapq.heappop(free), coordinator)
        while running and running[0] <= start:
            heapq.heappop(running)
        while len(running) >= width:   # too few open leaves: wait for a job to end
            start = max(start, heapq.heappop(running))
        coordinator = start + coordinator_s
        finish = coordinator + cpu
        heapq.heappush(free, finish)
        heapq.heappush(running, finish)
        end = max(end, finish)
    return end


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64, 128])
    p.add_argument("--coordinator-ms", type=float, default=20.0)
    p.add_argument("--inflation", type=float, default=1.0,
                   help="nodes of 2 workers / nodes of 1 (assumed to compound per doubling)")
    p.add_argument("--nodes", type=float, nargs=2, default=None,
                   help="the estimated size of the whole proof (low, high); default: the "
                        "log's nodes if its root is proven, else 1.4e9 1.7e10")
    p.add_argument("--csv", default=None,
                   help="append the rows to this CSV (with the checkpoint and inflation)")
    p.add_argument("--width-every", type=int, default=1,
                   help="count the top tree's open leaves every N jobs (exact at 1)")
    a = p.parse_args(argv)
    jobs, result = replay(Path(a.checkpoint), max(1, a.width_every))
    cpu = sum(j[0] for j in jobs)
    nodes = sum(j[1] for j in jobs)
    if a.nodes is None:
        a.nodes = (nodes, nodes) if result.proven else (1.4e9, 1.7e10)
    rate = nodes / cpu
    widths = sorted(j[2] for j in jobs)
    t1 = makespan(jobs, 1, a.coordinator_ms / 1000)
    print(f"{len(jobs)} jobs, {nodes:,} nodes, {cpu:,.0f} CPU s ({rate / 1e6:.2f}M nodes per "
          f"CPU s), {result.summary()}")
    print(f"open leaves when a job was chosen: median {widths[len(widths) // 2]}, "
          f"10th percentile {widths[len(widths) // 10]}, least {widths[0]}")
    rows = []
    for n in a.workers:
        t = makespan(jobs, n, a.coordinator_ms / 1000)
        inflation = a.inflation ** (n.bit_length() - 1) if n > 1 else 1.0
        speed = t1 / t / inflation
        one = [x / rate / 3600 for x in a.nodes]      # CPU hours on one worker
        rows.append({"workers": n, "replay_speedup": round(t1 / t, 2),
                     "inflation": round(inflation, 2), "speedup": round(speed, 2),
                     "efficiency": round(speed / n, 2),
                     "whole_proof_wall_h": [round(h / speed, 2) for h in one],
                     "whole_proof_cpu_h": [round(h * inflation, 1) for h in one]})
        print(json.dumps(rows[-1]))
    if a.csv:
        import pandas as pd

        frame = pd.DataFrame(rows).assign(checkpoint=Path(a.checkpoint).name,
                                          proof_nodes=nodes, proven=result.proven,
                                          inflation_per_doubling=a.inflation)
        for col in ("whole_proof_wall_h", "whole_proof_cpu_h"):   # (low, high) -> 2 columns
            frame[f"{col}_low"], frame[f"{col}_high"] = zip(*frame.pop(col), strict=True)
        out = Path(a.csv)
        frame.to_csv(out, mode="a", header=not out.exists(), index=False)
    return rows


if __name__ == "__main__":
    main()
