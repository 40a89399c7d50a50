"""Lotus endgame tables: check a table against the proof search, and measure it.

    python bench/endgame-tables/run.py --dir DIR verify --stones 3 --samples 2000 \
        --playouts 1000 [--saturated 200]
    python bench/endgame-tables/run.py --dir DIR speed --stones 3
    python bench/endgame-tables/run.py --dir DIR nodes --case 3:basic:optional \
        --case 4:basic:mandatory --with-plain --name cases
    python bench/endgame-tables/run.py --dir DIR midgame --outside 5 --positions 40
    python bench/endgame-tables/run.py --dir K4 --rule pro --trampoline mandatory compare \
        --against K5 --checkpoint CHECKPOINT --positions 20 --name pro-mandatory-jobs
    python bench/endgame-tables/run.py --dir SCRATCH --rule pro --trampoline mandatory \
        build-memory --stones 4 --workers 2 --label "in place" [--niwa OTHER/bin/niwa]

`verify`: positions of the table's domain, drawn two ways (uniformly random indices, and
random playouts from the initial position stopped as soon as both players are down to k
stones outside the goal: the positions games produce), each proven by the df-pn proof
search without tables; every value must equal the table's. Appends a summary row to
results/verify.csv (--rows FILE: every position) and exits 1 on any mismatch.

`speed`: lookups per second (the C probe in a loop over prepared positions), and the
latency of `solve_position` inside the table (cold: the first call, which loads the table
and checks its sha256; warm: later calls), median and maximum.

`midgame`: positions random games reach with a few more stones outside the goal than the
table holds, proven with and without the table (alternating), nodes and time: every
position to results/midgame-k<K>-outside<N>.csv, a summary row to results/midgame.csv
and its chart to results/midgame.png.

`compare --against DIR2`: the same positions proven with the table of --dir and with the
table of DIR2 (k = 4 against k = 5, say), alternating which goes first; the positions are
either from random games (--outside N) or the decided jobs of a real proof checkpoint
(--checkpoint DIR): results/compare-kA-kB-NAME.csv and a row in results/compare.csv.

`build-memory`: builds a table into a fresh folder under --dir with `niwa tables build`
(this environment's, or --niwa PATH: another install, to compare versions) and samples
/proc every 0.2 s: the peak of the anonymous memory summed over the build's processes (what
the kernel cannot write back; no swap here), of the main process alone, and of the
file-backed pages mapped; a row with the wall time and the payload's sha256 goes to
results/build-memory.csv.

`nodes`: the proof search's expansions from a case's initial position (towers:rule:
trampoline on the standard board) with and without the tables of that variant in --dir
(the largest k there): results/proof-nodes-<NAME>.csv and a PNG bar chart beside it.

The table must exist in --dir (niwa tables build lotus --stones K [-v ...] --dir DIR).
Everything runs through niwa's Python API (solver.tables, solver.proof, solver.solve);
results go to results/ beside this file (--results to write elsewhere).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_tree import read_meta, read_rows
from niwa.solver.solve import solve_position
from niwa.solver.tables import find_table, table_name, table_value

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from campaign import guarded  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


class MissingTable(Exception):
    """The table the command needs is not in --dir."""


def variant_of(args) -> dict:
    return dict(rule=args.rule, trampoline=args.trampoline, towers=args.towers)


def the_table(args, k=None):
    table = find_table(LotusState(**variant_of(args)), args.dir)
    if table is None or (k is not None and table.k != k):
        raise MissingTable(f"no k={k} table for {variant_of(args)} in {args.dir}: build it "
                           f"with niwa tables build lotus --stones {k} ... --dir {args.dir}")
    return table


def playout_positions(variant, k, count, rng, limit=100000):
    """Positions random games reach when both players first have <= k stones outside."""
    out, tries = [], 0
    probe = LotusState(**variant)
    each = probe.stats()["goal"][0] + sum(probe.start_towers(0))
    while len(out) < count and tries < limit:
        tries += 1
        s = LotusState(**variant)
        while not s.is_terminal() and not all(each - s.goal_count(p) <= k for p in (0, 1)):
            s.apply(rng.choice(s.legal_actions()))
        if not s.is_terminal():
            out.append(s)
    return out


def verify(args) -> int:
    table = the_table(args, args.stones)
    rng = random.Random(args.seed)
    cases = [("index", table.unrank(i)) for i in rng.sample(range(table.size), args.samples)]
    cases += [("saturated", table.unrank(i)) for i in saturated_indices(args, table, rng)]
    cases += [("playout", s) for s in playout_positions(variant_of(args), table.k,
                                                        args.playouts, rng)]
    ps = ProofSearch(tt_mb=args.tt_mb)
    bad = nodes = 0
    t0 = time.time()
    rows = open(args.rows, "w", newline="") if args.rows else None
    w = csv.writer(rows) if rows else None
    if w:
        w.writerow(["source", "position", "table_value", "table_plies", "proof_value",
                    "proof_nodes"])
    for i, (source, s) in enumerate(cases):
        v, plies = table_value(table, s)
        r = ps.solve(s, root_values=False, pv=False)
        nodes += r.nodes
        bad += r.value != v
        if w:
            w.writerow([source, s.to_notation(), v, plies, r.value, r.nodes])
        if (i + 1) % 500 == 0:
            print(f"  {i + 1}/{len(cases)} checked, {bad} mismatches, "
                  f"{time.time() - t0:.0f} s", flush=True)
    if rows:
        rows.close()
    kinds = {k: sum(1 for c in cases if c[0] == k) for k in ("index", "playout", "saturated")}
    summary = dict(k=table.k, rule=args.rule, trampoline=args.trampoline, towers=args.towers,
                   positions=len(cases), random_indices=kinds["index"],
                   from_playouts=kinds["playout"], saturated=kinds["saturated"],
                   mismatches=bad, proof_nodes=nodes,
                   seconds=round(time.time() - t0, 1), seed=args.seed)
    append_row(args.results / "verify.csv", summary)
    print(f"verify k={table.k} {variant_of(args)}: {len(cases)} positions ({kinds['index']} "
          f"random indices, {kinds['playout']} from random playouts, {kinds['saturated']} "
          f"with a saturated distance), {bad} mismatches; "
          f"{nodes:,} proof nodes in {time.time() - t0:.1f} s")
    return 1 if bad else 0


def saturated_indices(args, table, rng, chunk=1 << 28):
    """Up to --saturated random indices whose stored distance is 127 ("127 plies or
    more", where the distance saturates: k = 5 and above)."""
    import numpy as np

    if not args.saturated:
        return []
    values = np.load(Path(args.dir) / f"{table_name(table.variant, table.k)}.npy",
                     mmap_mode="r")
    found = []
    for at in range(0, len(values), chunk):
        found.extend((np.flatnonzero((values[at:at + chunk] & 127) == 127) + at).tolist())
    return rng.sample(found, min(args.saturated, len(found)))


def append_row(path, row):
    """Append one summary row (header written with the first)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(row))
        if new:
            w.writeheader()
        w.writerow(row)


def speed(args) -> int:
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    table = the_table(args, args.stones)
    cold_load = time.perf_counter() - t0
    states = [table.unrank(i) for i in rng.sample(range(table.size), 20000)]
    states += playout_positions(variant_of(args), table.k, 2000, rng)
    best = 0.0
    for _ in range(5):
        t0 = time.perf_counter()
        values = table.probe_many(states)
        best = max(best, len(states) / (time.perf_counter() - t0))
    assert (values > 0).all()
    t0 = time.perf_counter()
    for s in states[:5000]:
        table.probe(s)
    python_rate = 5000 / (time.perf_counter() - t0)
    warm, plies = [], []
    for s in states[:300] + states[-300:]:
        t0 = time.perf_counter()
        r = solve_position(s, tables=args.dir)
        warm.append(time.perf_counter() - t0)
        plies.append(len(r.pv))
        assert r.algo == "tables"
    print(f"k={table.k} {variant_of(args)}: {table.size:,} positions")
    print(f"  load (first find_table: header, sha256 of {table.size / 1e6:.1f} MB, memory map): "
          f"{cold_load * 1000:.1f} ms")
    print(f"  C lookups: {best:,.0f}/s (probe_many over {len(states):,} positions, best of 5); "
          f"from Python: {python_rate:,.0f}/s")
    print(f"  solve_position inside the table (value, every move, PV to the end), warm: "
          f"median {statistics.median(warm) * 1000:.2f} ms, mean {statistics.mean(warm) * 1000:.2f}"
          f" ms, max {max(warm) * 1000:.2f} ms over {len(warm)} positions (300 random indices,"
          f" 300 from playouts; PV {statistics.mean(plies):.1f} plies on average, longest "
          f"{max(plies)})")
    return 0


def nodes(args) -> int:
    rows = []
    for case in args.case:
        towers, rule, trampoline = case.split(":")
        variant = dict(towers=int(towers), rule=rule, trampoline=trampoline)
        state = LotusState(**variant)
        table = find_table(state, args.dir)
        if table is None:
            raise MissingTable(f"no table for {variant} in {args.dir}")
        for tab in ([table, None] if args.with_plain else [table]):
            t0 = time.time()
            r = ProofSearch(tt_mb=args.tt_mb, tables=tab).solve(
                state, time_limit=args.time_limit, root_values=False, pv=False)
            row = dict(case=case, tables=f"k={table.k}" if tab is not None else "none",
                       value=r.value, nodes=r.nodes, table_hits=r.table_hits,
                       time_s=round(time.time() - t0, 2), tt_entries=r.tt_entries,
                       status=r.status)
            print(row, flush=True)
            rows.append(row)
    args.results.mkdir(parents=True, exist_ok=True)
    out = args.results / f"proof-nodes-{args.name}.csv"
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(rows, out.with_suffix(".png"))
    print(f"-> {out} and {out.with_suffix('.png')}")
    return 0


def plot(rows, path):
    """Bars of the proof's expansions per case, with and without tables."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    labels = [f"{r['case']}\n{r['tables']}" for r in rows]
    heights = [int(r["nodes"]) for r in rows]
    bars = ax.bar(range(len(rows)), heights,
                  color=["tab:green" if r["tables"] != "none" else "tab:gray" for r in rows])
    ax.bar_label(bars, [f"{h:,}" for h in heights], fontsize=8)
    ax.set_xticks(range(len(rows)), labels, fontsize=8)
    ax.set_ylabel("df-pn expansions")
    ax.set_title("Proof of the initial position, with and without endgame tables")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def midgame(args) -> int:
    """Positions random games reach when both players are down to --outside stones outside
    the goal (just beyond the table), proven with and without the table: nodes and time,
    alternating the two searches position by position."""
    table = the_table(args)
    rng = random.Random(args.seed)
    positions = playout_positions(variant_of(args), args.outside, args.positions, rng)
    totals = {"tables": [0, 0.0], "none": [0, 0.0]}
    rows = []
    for i, s in enumerate(positions):
        row = {"position": s.to_notation()}
        for label, tab in (("tables", table), ("none", None)) if i % 2 == 0 else \
                (("none", None), ("tables", table)):
            t0 = time.perf_counter()
            r = ProofSearch(tt_mb=args.tt_mb, tables=tab).solve(s, root_values=False, pv=False)
            dt = time.perf_counter() - t0
            totals[label][0] += r.nodes
            totals[label][1] += dt
            row[f"value_{label}"], row[f"nodes_{label}"] = r.value, r.nodes
            row[f"time_{label}"] = round(dt, 4)
        assert row["value_tables"] == row["value_none"], row
        rows.append(row)
    out = args.results / f"midgame-k{table.k}-outside{args.outside}.csv"
    args.results.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (n1, t1), (n0, t0_) = totals["tables"], totals["none"]
    summary = args.results / "midgame.csv"
    append_row(summary, dict(k=table.k, rule=args.rule, trampoline=args.trampoline,
                             outside=args.outside, positions=len(rows), nodes_none=n0,
                             nodes_tables=n1, time_none=round(t0_, 2),
                             time_tables=round(t1, 2), seed=args.seed))
    plot_midgame(summary)
    print(f"midgame k={table.k}, {len(rows)} positions with {args.outside} stones a player "
          f"outside the goal: nodes {n0:,} without -> {n1:,} with the table "
          f"({n0 / max(n1, 1):.1f}x fewer), time {t0_:.2f} s -> {t1:.2f} s "
          f"({t0_ / max(t1, 1e-9):.1f}x) -> {out}")
    return 0


def checkpoint_positions(directory, count, min_nodes, rng):
    """Positions a real proof sent out as jobs and its workers decided, each with at least
    `min_nodes` df-pn nodes spent on it (the frontier a larger table would have to help)."""
    root = LotusState.from_notation(read_meta(directory)["position"])
    decided = [r for r in read_rows(directory)
               if (r["pn"] == 0 or r["dn"] == 0) and r["nodes"] >= min_nodes]
    out = []
    for r in rng.sample(decided, min(count, len(decided))):
        s = root.clone()
        for a in r["path"]:
            s.apply(a)
        out.append(s)
    return out


def compare(args) -> int:
    """The same positions proven with the table of --dir and with the table of --against
    (say k = 4 and k = 5), alternating which goes first: nodes, CPU time, values."""
    a, b = the_table(args), find_table(LotusState(**variant_of(args)), args.against)
    if b is None:
        raise MissingTable(f"no table for {variant_of(args)} in {args.against}")
    rng = random.Random(args.seed)
    if args.checkpoint:
        positions = checkpoint_positions(args.checkpoint, args.positions, args.min_job_nodes, rng)
        source = f"jobs of {Path(args.checkpoint).name} (>= {args.min_job_nodes:,} nodes)"
    else:
        positions = playout_positions(variant_of(args), args.outside, args.positions, rng)
        source = f"random games, {args.outside} stones a player outside"
    out = args.results / f"compare-k{a.k}-k{b.k}-{args.name}.csv"
    args.results.mkdir(parents=True, exist_ok=True)
    labels = (f"k{a.k}", f"k{b.k}") if a.k != b.k else (f"k{a.k}a", f"k{b.k}b")
    rows = []
    for i, s in enumerate(positions):
        row = {"position": s.to_notation()}
        pair = list(zip(labels, (a, b), strict=True))
        for label, tab in (pair if i % 2 == 0 else pair[::-1]):
            r = ProofSearch(tt_mb=args.tt_mb, tables=tab).solve(
                s, max_nodes=args.max_nodes, root_values=False, pv=False, cpu_time=True)
            row[f"value_{label}"], row[f"nodes_{label}"] = r.value, r.nodes
            row[f"cpu_s_{label}"], row[f"status_{label}"] = round(r.time_s, 3), r.status
        if all(_proven(row, lab) for lab in labels) and \
                row[f"value_{labels[0]}"] != row[f"value_{labels[1]}"]:
            raise SystemExit(f"the two tables disagree on {row['position']}: {row}")
        rows.append(row)
        print(f"  {i + 1}/{len(positions)}: " + ", ".join(
            f"{lab} {row[f'nodes_{lab}']:,} nodes {row[f'cpu_s_{lab}']:.2f} s" for lab in labels),
            flush=True)
        with open(out, "w", newline="") as f:   # rewritten as each position completes
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    summary = compare_summary(rows, labels)
    append_row(args.results / "compare.csv", dict(
        name=args.name, rule=args.rule, trampoline=args.trampoline, source=source,
        positions=len(rows), max_nodes=args.max_nodes, tt_mb=args.tt_mb, **summary,
        seed=args.seed))
    plot_compare(rows, labels, args.max_nodes, out.with_suffix(".png"), source)
    a_, b_ = labels
    print(f"compare {a_} vs {b_} ({source}): {summary['proven_by_both']} of {len(rows)} "
          f"proven by both: nodes {summary[f'nodes_{a_}']:,} -> {summary[f'nodes_{b_}']:,}, CPU "
          f"{summary[f'cpu_s_{a_}']} s -> {summary[f'cpu_s_{b_}']} s; proven by {a_} only "
          f"{summary[f'only_{a_}']}, by {b_} only {summary[f'only_{b_}']}; all positions, "
          f"unfinished ones counted at --max-nodes: {summary[f'all_nodes_{a_}']:,} -> "
          f"{summary[f'all_nodes_{b_}']:,} -> {out}")
    return 0


def compare_summary(rows, labels) -> dict:
    """Totals over the positions both tables proved; the positions only one proved within
    the budget; and node totals over all positions with unfinished ones at the budget (a
    bound on the ratio, not the ratio)."""
    a, b = labels
    done = _proven
    both = [r for r in rows if done(r, a) and done(r, b)]
    out = {"proven_by_both": len(both)}
    for lab in labels:
        out[f"nodes_{lab}"] = sum(int(r[f"nodes_{lab}"]) for r in both)
        out[f"cpu_s_{lab}"] = round(sum(float(r[f"cpu_s_{lab}"]) for r in both), 2)
    out[f"only_{a}"] = sum(1 for r in rows if done(r, a) and not done(r, b))
    out[f"only_{b}"] = sum(1 for r in rows if done(r, b) and not done(r, a))
    for lab in labels:
        out[f"all_nodes_{lab}"] = sum(int(r[f"nodes_{lab}"]) for r in rows)
    return out


def _proven(row, label) -> bool:
    """Whether the search with table `label` proved the row's position (a row read back
    from the CSV holds "" where a fresh one holds None)."""
    return row[f"value_{label}"] not in (None, "")


def plot_compare(rows, labels, budget, path, source):
    """Each position's proof nodes with one table against the other (log-log); a position
    one of them did not finish sits at the budget, drawn hollow."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    a, b = labels
    fig, ax = plt.subplots(figsize=(5, 5))
    for r in rows:
        x, y = int(r[f"nodes_{a}"]), int(r[f"nodes_{b}"])
        full = _proven(r, a) and _proven(r, b)
        ax.scatter([x], [y], s=30, color="tab:green",
                   facecolors="tab:green" if full else "none")
    low = min(min(int(r[f"nodes_{a}"]), int(r[f"nodes_{b}"])) for r in rows)
    ends = [max(1, low / 2), budget * 1.5]
    ax.plot(ends, ends, color="gray", lw=0.8, label="same nodes")
    ax.plot(ends, [e / 2 for e in ends], color="gray", lw=0.8, ls="--", label="half")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"df-pn nodes with the {a} table")
    ax.set_ylabel(f"df-pn nodes with the {b} table")
    ax.set_title(f"{source}\n(hollow: not proven within {budget:,} nodes)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plot_midgame(summary):
    """Proof nodes per position, with and without tables, by stones outside the goal."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(summary) as f:
        rows = list(csv.DictReader(f))
    fig, ax = plt.subplots(figsize=(7, 3.8))
    labels = [f"{r['outside']} out\nk={r['k']}" for r in rows]
    x = range(len(rows))
    none = [int(r["nodes_none"]) / int(r["positions"]) for r in rows]
    with_t = [int(r["nodes_tables"]) / int(r["positions"]) for r in rows]
    ax.bar([i - 0.2 for i in x], none, 0.4, color="tab:gray", label="no tables")
    ax.bar([i + 0.2 for i in x], with_t, 0.4, color="tab:green", label="with the k table")
    ax.set_yscale("log")
    ax.set_xticks(list(x), labels, fontsize=8)
    ax.set_ylabel("df-pn expansions per position")
    ax.set_title("Proofs of positions from random games, stones a player outside the goal")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(Path(summary).with_suffix(".png"), dpi=120)


def _process_tree(pid: int) -> list[int]:
    out = [pid]
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                out += _process_tree(int(child))
    except OSError:             # gone meanwhile
        pass
    return out


def _memory_mb(pid: int) -> dict:
    """RssAnon and RssFile + RssShmem of one process, in MB (empty if it is gone)."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "RssShmem"):
                out[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return out


def build_memory(args) -> int:
    niwa = args.niwa or [sys.executable, "-m", "niwa.cli.main"]
    niwa = [niwa] if isinstance(niwa, str) else niwa
    folder = Path(args.dir) / f"build-memory-k{args.stones}"
    shutil.rmtree(folder, ignore_errors=True)
    cmd = [*niwa, "tables", "build", "lotus", "--stones", str(args.stones), "-v",
           f"rule={args.rule}", "-v", f"trampoline={args.trampoline}", "-v",
           f"towers={args.towers}", "--dir", str(folder), "--workers", str(args.workers)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    anon = main_anon = files = 0.0
    while proc.poll() is None:
        tree = [_memory_mb(p) for p in _process_tree(proc.pid)]
        anon = max(anon, sum(m.get("RssAnon", 0) for m in tree))
        main_anon = max(main_anon, tree[0].get("RssAnon", 0) if tree else 0)
        files = max(files, sum(m.get("RssFile", 0) + m.get("RssShmem", 0) for m in tree))
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    if proc.returncode:
        print(f"Error: the build failed: {proc.stderr.read().strip()[-300:]}", file=sys.stderr)
        return 1
    header = json.loads(next(folder.glob("*.json")).read_text())
    row = {"label": args.label, "stones": args.stones, "variant": json.dumps(variant_of(args)),
           "workers": args.workers, "positions": header["positions"],
           "wall_s": round(wall, 1), "build_s": header["build"]["seconds"],
           "peak_anon_mb": round(anon), "peak_anon_main_mb": round(main_anon),
           "peak_file_mb": round(files), "payload_sha256": header["payload_sha256"],
           "niwa": header["build"]["niwa"]}
    append_row(args.results / "build-memory.csv", row)
    shutil.rmtree(folder, ignore_errors=True)
    print(row)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="the tables folder")
    ap.add_argument("--results", type=Path, default=RESULTS,
                    help="where the CSV and PNG files go (default: results/ beside this file)")
    ap.add_argument("--rule", default="basic")
    ap.add_argument("--trampoline", default="optional")
    ap.add_argument("--towers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tt-mb", type=float, default=256)
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify")
    v.add_argument("--stones", type=int, default=3)
    v.add_argument("--samples", type=int, default=2000)
    v.add_argument("--playouts", type=int, default=1000)
    v.add_argument("--rows", default=None, help="also write every position checked (CSV)")
    v.add_argument("--saturated", type=int, default=0,
                   help="also this many positions whose distance saturated at 127")
    s = sub.add_parser("speed")
    s.add_argument("--stones", type=int, default=3)
    n = sub.add_parser("nodes")
    n.add_argument("--case", action="append", required=True, help="towers:rule:trampoline")
    n.add_argument("--time-limit", type=float, default=0)
    n.add_argument("--with-plain", action="store_true", help="also prove without tables")
    n.add_argument("--name", default="cases", help="results file: lotus-tables-proof-nodes-NAME")
    m = sub.add_parser("midgame")
    m.add_argument("--outside", type=int, default=5)
    m.add_argument("--positions", type=int, default=40)
    c = sub.add_parser("compare")
    c.add_argument("--against", required=True, help="the other tables folder (e.g. k = 5)")
    c.add_argument("--checkpoint", default=None,
                   help="take the positions from this proof checkpoint's decided jobs")
    c.add_argument("--min-job-nodes", type=int, default=200_000)
    c.add_argument("--outside", type=int, default=7,
                   help="else positions of random games with this many stones outside")
    c.add_argument("--positions", type=int, default=20)
    c.add_argument("--max-nodes", type=int, default=30_000_000)
    c.add_argument("--name", default="cases", help="results file: compare-kA-kB-NAME.csv")
    b = sub.add_parser("build-memory")
    b.add_argument("--stones", type=int, default=3)
    b.add_argument("--workers", type=int, default=2)
    b.add_argument("--label", default="")
    b.add_argument("--niwa", default=None, help="another install's niwa executable")
    args = ap.parse_args(argv)
    try:
        return {"verify": verify, "speed": speed, "nodes": nodes,
                "midgame": midgame,
                "compare": compare, "build-memory": build_memory}[args.cmd](args)
    except MissingTable as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(guarded(main))
