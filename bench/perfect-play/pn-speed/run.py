"""Single-core df-pn (niwa.solver.proof.ProofSearch) on Lotus: node counts and node rate.

    python run.py nodes 3:pro:mandatory 3:basic:optional [--tt-mb 1024] [--opts '{"eps": 0.5}']
    python run.py speed 3:pro:mandatory --baseline /path/to/other/.venv/bin/python --pairs 3
    python run.py vsc 3:pro:mandatory --c-binary ../reference-c/dfpn --pairs 2

A case is TOWERS:RULE:TRAMPOLINE (towers 4 is the full game). Every proof runs in a child
process of the python given (this one, or --baseline's), plain df-pn from the initial
position with no endgame tables, and is timed in the child's thread CPU seconds
(ProofSearch.solve(cpu_time=True)), so other processes on the machine slow the wall clock
but not, to first order, the figure; the load average (1 min) is written beside it.

`nodes` writes one row per case to results/nodes.csv (value, nodes, CPU s, table use).
`speed` runs this python and the baseline alternately, `--pairs` times each, one row per
run in results/speed.csv, and prints the ratio of node rates (this / baseline) of each
pair: alternating runs in one go see the same load, so their ratio is the figure to trust,
not either rate alone. `vsc` does the same against the plain-C reference
(bench/perfect-play/reference-c/dfpn.c, built with `cc -O3`), same table size, and prints
the ratios of nodes and of node rates (niwa / C); rows in results/vs-c.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = """
import json, sys
from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch
towers, rule, trampoline, tt_mb, opts = json.loads(sys.argv[1])
s = LotusState(towers=towers, rule=rule, trampoline=trampoline)
r = ProofSearch(tt_mb=tt_mb, **opts).solve(s, root_values=False, pv=False, cpu_time=True)
print(json.dumps({"value": r.value, "nodes": r.nodes, "cpu_s": r.time_s,
                  "tt_entries": r.tt_entries, "overwrites": r.overwrites,
                  "overwritten_unproven": r.overwritten_unproven,
                  "overwritten_big": r.overwritten_big}))
"""


def fail(message: str):
    """One `Error: ...` line and exit status 2."""
    print(f"Error: {message}", file=sys.stderr)
    sys.exit(2)


def parse_case(text: str) -> tuple[int, str, str]:
    parts = text.split(":")
    if len(parts) != 3 or not parts[0].isdigit():
        fail(f"case {text!r} should be TOWERS:RULE:TRAMPOLINE, e.g. 3:pro:optional")
    towers, rule, trampoline = int(parts[0]), parts[1], parts[2]
    if towers not in (1, 2, 3, 4) or rule not in ("basic", "pro") or \
            trampoline not in ("optional", "mandatory"):
        fail(f"case {text!r}: towers 1..4, rule basic|pro, trampoline optional|mandatory")
    return towers, rule, trampoline


def code_label(python: str) -> str:
    """The commit of the checkout a python's niwa is installed from (+ if it has edits)."""
    probe = "import niwa.solver.proof as p, os; print(os.path.dirname(os.path.dirname(p.__file__)))"
    try:
        root = subprocess.run([python, "-c", probe], capture_output=True, text=True,
                              check=True).stdout.strip()
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, text=True,
                              capture_output=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, text=True, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+" if dirty.strip() else "")


def run_child(python: str, case, tt_mb: float, opts: dict) -> dict:
    arg = json.dumps([case[0], case[1], case[2], tt_mb, opts])
    p = subprocess.run([python, "-c", CHILD, arg], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"the child failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(p.stdout)


def append(name: str, header: list[str], row: list) -> None:
    out = HERE / "results" / name
    out.parent.mkdir(exist_ok=True)
    new = not out.exists()
    with open(out, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(header)
        w.writerow(row)
    print(row, flush=True)


def utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def case_name(case) -> str:
    return f"towers{case[0]}-{case[1]}-{case[2]}"


def nodes(a) -> None:
    code = code_label(sys.executable)
    for text in a.cases:
        case = parse_case(text)
        load = os.getloadavg()[0]
        r = run_child(sys.executable, case, a.tt_mb, a.opts)
        append("nodes.csv", ["case", "code", "opts", "tt_mb", "value", "nodes", "cpu_s",
                             "nodes_per_cpu_s", "tt_entries", "overwritten_unproven",
                             "overwritten_big", "load", "note", "utc"],
               [case_name(case), code, json.dumps(a.opts, sort_keys=True), a.tt_mb,
                r["value"], r["nodes"], round(r["cpu_s"], 2), round(r["nodes"] / r["cpu_s"]),
                r["tt_entries"], r["overwritten_unproven"], r["overwritten_big"], round(load, 2),
                a.note, utc()])


def speed(a) -> None:
    case = parse_case(a.cases[0])
    pythons = [("new", sys.executable, a.opts), ("base", a.baseline, a.base_opts)]
    labels = {"new": code_label(sys.executable), "base": a.base_label or code_label(a.baseline)}
    ratios = []
    for _ in range(a.pairs):
        rate = {}
        for name, py, opts in pythons:
            load = os.getloadavg()[0]
            r = run_child(py, case, a.tt_mb, opts)
            rate[name] = r["nodes"] / r["cpu_s"]
            append("speed.csv", ["case", "side", "code", "opts", "tt_mb", "value", "nodes",
                                 "cpu_s", "nodes_per_cpu_s", "load", "note", "utc"],
                   [case_name(case), name, labels[name], json.dumps(opts, sort_keys=True),
                    a.tt_mb, r["value"], r["nodes"], round(r["cpu_s"], 2),
                    round(rate[name]), round(load, 2), a.note, utc()])
        ratios.append(rate["new"] / rate["base"])
    print(f"node-rate ratio new/base per pair: {' '.join(f'{x:.3f}' for x in ratios)}; "
          f"median {statistics.median(ratios):.3f}", flush=True)


def run_c(binary: str, case, tt_mb: float) -> dict:
    cmd = [binary, "solve", "--towers", str(case[0]), "--rule", case[1], "--trampoline",
           case[2], "--tt-mb", str(int(tt_mb)), "--no-root-values"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"the C reference failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    r = json.loads(p.stdout)
    return {"value": r["value_first_player"], "nodes": r["nodes"], "cpu_s": r["cpu_s"]}


def vsc(a) -> None:
    case = parse_case(a.cases[0])
    label = code_label(sys.executable)
    node_ratios, rate_ratios = [], []
    for _ in range(a.pairs):
        got = {}
        for engine in ("c", "niwa"):
            load = os.getloadavg()[0]
            r = run_c(a.c_binary, case, a.tt_mb) if engine == "c" else \
                run_child(sys.executable, case, a.tt_mb, a.opts)
            got[engine] = r
            append("vs-c.csv", ["case", "engine", "code", "opts", "tt_mb", "value", "nodes",
                                "cpu_s", "nodes_per_cpu_s", "load", "note", "utc"],
                   [case_name(case), engine, "reference-c" if engine == "c" else label,
                    json.dumps(a.opts if engine == "niwa" else {}, sort_keys=True), a.tt_mb,
                    r["value"], r["nodes"], round(r["cpu_s"], 2),
                    round(r["nodes"] / r["cpu_s"]), round(load, 2), a.note, utc()])
        node_ratios.append(got["niwa"]["nodes"] / got["c"]["nodes"])
        rate_ratios.append((got["niwa"]["nodes"] / got["niwa"]["cpu_s"])
                           / (got["c"]["nodes"] / got["c"]["cpu_s"]))
    print(f"niwa/C nodes: {' '.join(f'{x:.3f}' for x in node_ratios)}; node rate: "
          f"{' '.join(f'{x:.3f}' for x in rate_ratios)} (median "
          f"{statistics.median(rate_ratios):.3f})", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["nodes", "speed", "vsc"])
    p.add_argument("cases", nargs="+", help="TOWERS:RULE:TRAMPOLINE")
    p.add_argument("--tt-mb", type=float, default=1024)
    p.add_argument("--opts", type=json.loads, default={}, help="ProofSearch keywords (JSON)")
    p.add_argument("--base-opts", type=json.loads, default=None,
                   help="speed: the baseline's keywords (default: --opts)")
    p.add_argument("--baseline", default=None, help="speed: the python of the other code")
    p.add_argument("--base-label", default=None,
                   help="speed: what the baseline is (default: its checkout's commit)")
    p.add_argument("--c-binary", default=str(HERE.parent / "reference-c" / "dfpn"),
                   help="vsc: the plain-C reference's binary")
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--note", default="", help="a word on what the run is for")
    a = p.parse_args(argv)
    if a.base_opts is None:
        a.base_opts = a.opts
    if a.mode == "speed":
        if not a.baseline:
            p.error("speed needs --baseline PYTHON")
        speed(a)
    elif a.mode == "vsc":
        vsc(a)
    else:
        nodes(a)


if __name__ == "__main__":
    main()
