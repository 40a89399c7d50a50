"""niwa's single-core df-pn against a plain-C df-pn reference (dfpn.c beside this file), on
the same machine in one run. README.md beside this file has the figures and what they say.

    python bench/perfect-play/reference-c/run.py build          # cc -O3 dfpn.c -> build/dfpn
    python bench/perfect-play/reference-c/run.py check          # perft and values against niwa
    python bench/perfect-play/reference-c/run.py compare --wrap /work/bg/exclusive
    python bench/perfect-play/reference-c/run.py compare --cases 3:basic:optional --rounds 3
    python bench/perfect-play/reference-c/run.py playout --games 2000000

`compare` runs every case as C, niwa, C, niwa ... (each run a process of its own, one after
the other, never two at once), each wrapped in `--wrap` (a command that takes a machine-wide
lock, e.g. /work/bg/exclusive), and writes results/compare.csv: per run its nodes, CPU
seconds (the C: CLOCK_PROCESS_CPUTIME_ID around the proof; niwa: ProofSearch.solve with
cpu_time=True, the thread's CPU time around the proof), nodes per CPU second, table entries
and overwrites, and the load average (1 min) just before the run; then it prints, per case,
niwa nodes / C nodes and niwa nodes per CPU s / C nodes per CPU s (taken from runs next to
each other). Both searchers get the same table size (24-byte entries in buckets of 4 in both),
proof only (no first-move values, no principal variation), no endgame tables.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "dfpn.c"
BINARY = HERE / "build" / "dfpn"
RESULTS = HERE / "results"

# towers:rule:trampoline -> table MB (the same for both searchers): room for every entry
# the proof stores (docs/lotus-perfect-play.csv's tt_entries, 24 bytes each) with the
# table at most ~2/3 full, so that neither search thrashes.
CASES = {
    "3:basic:optional": 256,
    "3:basic:mandatory": 256,
    "3:pro:optional": 4096,
    "3:pro:mandatory": 1024,
    "4:basic:optional": 6144,
    "4:basic:mandatory": 2048,
}
SMALL_FIRST = ["3:basic:mandatory", "3:basic:optional", "3:pro:mandatory", "3:pro:optional",
               "4:basic:mandatory", "4:basic:optional"]

FIELDS = ["round", "case", "engine", "tt_mb", "value_first_player", "nodes", "cpu_s",
          "nodes_per_cpu_s", "wall_s", "proc_user_s", "proc_sys_s", "tt_entries", "overwrites",
          "load_1min", "date_utc", "huge_pages"]


def fail(message: str) -> None:
    """Bad input or a failed run: one `Error: ...` line, exit status 2."""
    print(f"Error: {message}", file=sys.stderr)
    raise SystemExit(2)


def build(compiler: str | None = None, out: Path = BINARY, extra: list[str] | None = None) -> Path:
    """Compile dfpn.c with -O3 (no -march=native: as a portable wheel is built)."""
    cc = compiler or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        fail("no C compiler (cc or gcc) found")
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and out.stat().st_mtime >= SOURCE.stat().st_mtime and not extra:
        return out      # up to date (a compare running meanwhile keeps using it)
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    subprocess.run([cc, "-O3", "-o", str(tmp), str(SOURCE), *(extra or [])], check=True)
    os.replace(tmp, out)    # atomic: a run starting now sees the old binary or the new one
    return out


def parse_case(case: str) -> dict:
    """'3:pro:optional' -> {'towers': 3, 'rule': 'pro', 'trampoline': 'optional'}."""
    try:
        towers, rule, trampoline = case.split(":")
        towers = int(towers)
    except ValueError:
        fail(f"a case is TOWERS:RULE:TRAMPOLINE, e.g. 3:pro:optional; got {case!r}")
    if towers not in (1, 2, 3, 4) or rule not in ("basic", "pro") or \
            trampoline not in ("optional", "mandatory"):
        fail(f"bad case {case!r}: towers 1..4, rule basic|pro, trampoline optional|mandatory")
    return {"towers": towers, "rule": rule, "trampoline": trampoline}


def c_args(variant: dict) -> list[str]:
    out = []
    for key, flag in (("towers", "--towers"), ("rule", "--rule"), ("trampoline", "--trampoline"),
                      ("lane", "--lane"), ("shared", "--shared"), ("trampoline_at", "--trampoline-at")):
        if key in variant:
            out += [flag, str(variant[key])]
    return out


def run_c(variant: dict, tt_mb: float, binary: Path = BINARY, huge_pages: bool = False,
          root_values: bool = False, max_nodes: int = 0, position: str | None = None,
          wrap: list[str] | None = None) -> dict:
    """One proof by the C reference; its JSON line as a dict."""
    cmd = [str(binary), "solve", *c_args(variant), "--tt-mb", str(tt_mb)]
    if not root_values:
        cmd.append("--no-root-values")
    if huge_pages:
        cmd.append("--huge-pages")
    if max_nodes:
        cmd += ["--max-nodes", str(max_nodes)]
    if position:
        cmd += ["--position", position]
    return _run(wrap, cmd)


def _run(wrap: list[str] | None, cmd: list[str]) -> dict:
    """Run one measurement (through `wrap`); its last stdout line as a dict, with the load
    average the wrapper saw when it took the lock ("load X Y Z" on its stderr), if any."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([*(wrap or []), *cmd], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        fail(f"{shlex.join(cmd)} failed: {out.stderr.strip()[-500:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    m = re.search(r"load ([0-9.]+)", out.stderr)
    r.setdefault("load_1min", round(float(m.group(1)) if m else load, 2))
    # the whole process's user and kernel CPU (start-up included; the kernel's share is
    # mostly zeroing table pages on first touch)
    r["proc_user_s"] = round(after.ru_utime - before.ru_utime, 2)
    r["proc_sys_s"] = round(after.ru_stime - before.ru_stime, 2)
    return r


def solve_niwa(variant: dict, tt_mb: float, huge_pages: bool = False) -> dict:
    """One proof by niwa's plain single-process df-pn, in this process."""
    from niwa.ext.lotus import LotusState
    from niwa.solver.proof import ProofSearch

    state = LotusState(**variant)
    search = ProofSearch(tt_mb=tt_mb, tables=None, huge_pages=huge_pages)
    r = search.solve(state, root_values=False, pv=False, cpu_time=True)
    value = None if r.value is None else int(r.value if state.current_player() == 0 else 1 - r.value)
    return {"value_first_player": value, "nodes": r.nodes, "cpu_s": r.time_s,
            "nodes_per_cpu_s": r.nodes / r.time_s if r.time_s > 0 else None,
            "tt_entries": r.tt_entries, "overwrites": r.overwrites}


def run_niwa(variant: dict, tt_mb: float, huge_pages: bool = False,
             wrap: list[str] | None = None) -> dict:
    """One niwa proof in a process of its own (its table is gone when it ends)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "niwa-one", json.dumps(variant),
           "--tt-mb", str(tt_mb)] + (["--huge-pages"] if huge_pages else [])
    return _run(wrap, cmd)


def compare(cases: list[str], rounds: int, wrap: list[str], tt_mb: float | None,
            huge_pages: bool, out_csv: Path, binary: Path, first_round: int = 1) -> list[dict]:
    rows = []
    new_file = not out_csv.exists()
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new_file:
            w.writeheader()
        for rnd in range(first_round, first_round + rounds):
            for case in cases:
                variant = parse_case(case)
                mb = tt_mb or CASES.get(case, 1024)
                for engine in ("c", "niwa"):
                    t0 = time.monotonic()
                    if engine == "c":
                        r = run_c(variant, mb, binary, huge_pages, wrap=wrap)
                    else:
                        r = run_niwa(variant, mb, huge_pages, wrap=wrap)
                    row = {"round": rnd, "case": case, "engine": engine, "tt_mb": mb,
                           "value_first_player": r["value_first_player"], "nodes": r["nodes"],
                           "cpu_s": round(r["cpu_s"], 3),
                           "nodes_per_cpu_s": round(r["nodes"] / r["cpu_s"]),
                           "wall_s": round(time.monotonic() - t0, 2),
                           "proc_user_s": r["proc_user_s"], "proc_sys_s": r["proc_sys_s"],
                           "tt_entries": r["tt_entries"], "overwrites": r["overwrites"],
                           "load_1min": r["load_1min"],
                           "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                           "huge_pages": int(huge_pages)}
                    w.writerow(row)
                    f.flush()
                    rows.append(row)
                    print(f"round {rnd} {case:18} {engine:4} nodes {row['nodes']:>12,} "
                          f"cpu {row['cpu_s']:8.2f} s  {row['nodes_per_cpu_s']:>10,}/s  "
                          f"load {row['load_1min']}", flush=True)
                c, n = rows[-2], rows[-1]
                print(f"    niwa/C nodes {n['nodes'] / c['nodes']:.3f}   niwa/C node rate "
                      f"{n['nodes_per_cpu_s'] / c['nodes_per_cpu_s']:.3f}", flush=True)
    summarise(rows)
    return rows


def summarise(rows: list[dict]) -> None:
    """Per case: the ratios of each C/niwa pair, and their medians over the rounds."""
    by_case: dict[str, list[tuple[float, float]]] = {}
    for c, n in zip(rows[0::2], rows[1::2], strict=True):
        by_case.setdefault(c["case"], []).append(
            (n["nodes"] / c["nodes"], n["nodes_per_cpu_s"] / c["nodes_per_cpu_s"]))
    print("\ncase                niwa/C nodes (<= 1.5 wanted)   niwa/C node rate (>= 1.0 wanted)")
    for case, pairs in by_case.items():
        nodes = statistics.median(p[0] for p in pairs)
        rate = statistics.median(p[1] for p in pairs)
        print(f"{case:20} {nodes:8.3f}                       {rate:8.3f}   "
              f"({len(pairs)} pair{'s' if len(pairs) > 1 else ''})")


def check(binary: Path, depth: int) -> int:
    """Perft of the four variants against niwa's engine, and small proofs' values."""
    from niwa.ext.lotus import LotusState
    from niwa.solver.proof import ProofSearch

    bad = 0
    for rule in ("basic", "pro"):
        for tramp in ("optional", "mandatory"):
            for towers in (2, 4):
                v = {"rule": rule, "trampoline": tramp, "towers": towers}
                for d in range(1, depth + 1):
                    out = subprocess.run([str(binary), "perft", str(d), *c_args(v)],
                                         check=True, capture_output=True, text=True)
                    mine = json.loads(out.stdout)["count"]
                    theirs = LotusState(**v).perft(d)
                    bad += mine != theirs
                    print(f"perft {d} {v}: C {mine} niwa {theirs} {'ok' if mine == theirs else 'DIFFERENT'}")
    for towers in (1, 2, 3):
        for rule in ("basic", "pro"):
            for tramp in ("optional", "mandatory"):
                v = {"rule": rule, "trampoline": tramp, "towers": towers}
                if towers == 3 and rule == "pro" and tramp == "optional":
                    continue    # 170M nodes: compare runs it
                c = run_c(v, 1024)
                r = ProofSearch(tt_mb=1024, tables=None).solve(LotusState(**v), root_values=False, pv=False)
                bad += c["value_first_player"] != r.value
                print(f"value {v}: C {c['value_first_player']} ({c['nodes']:,} nodes) niwa "
                      f"{r.value} ({r.nodes:,} nodes)")
    print("all agree" if not bad else f"{bad} DIFFERENCES")
    return 1 if bad else 0


def playout(binary: Path, games: int, wrap: list[str]) -> dict:
    """Random playouts from the initial position (towers 4, basic, 2 players) in the C
    engine, against niwa's own C-level playouts (niwa.ext.lotus.playouts) for the record."""
    out = subprocess.run([*wrap, str(binary), "playout", str(games), "--seed", "1"],
                         check=True, capture_output=True, text=True)
    c = json.loads(out.stdout)
    code = ("import json, resource, time\n"
            "from niwa.ext.lotus import LotusState, playouts\n"
            "t0 = time.process_time()\n"
            f"g, a, w = playouts(LotusState(), {games}, seed=1)\n"
            "dt = time.process_time() - t0\n"
            "print(json.dumps({'games': g, 'actions': a, 'wins': w, 'cpu_s': dt, "
            "'actions_per_s': a / dt, 'games_per_s': g / dt}))\n")
    out = subprocess.run([*wrap, sys.executable, "-c", code], check=True, capture_output=True, text=True)
    n = json.loads(out.stdout)
    for name, r in (("C reference", c), ("niwa playouts()", n)):
        print(f"{name:16} {r['games']:,} games, {r['actions']:,} actions, wins {r['wins']}, "
              f"{r['cpu_s']:.2f} CPU s: {r['actions_per_s'] / 1e6:.1f}M actions/s, "
              f"{r['games_per_s'] / 1e3:.0f}k games/s")
    return {"c": c, "niwa": n}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build", help="compile dfpn.c to build/dfpn")
    ck = sub.add_parser("check", help="perft and small values against niwa")
    ck.add_argument("--depth", type=int, default=5)
    cp = sub.add_parser("compare", help="C and niwa alternating, on the cases")
    cp.add_argument("--cases", nargs="+", default=SMALL_FIRST, help="TOWERS:RULE:TRAMPOLINE ...")
    cp.add_argument("--rounds", type=int, default=1)
    cp.add_argument("--first-round", type=int, default=1, help="number of the first round (CSV)")
    cp.add_argument("--tt-mb", type=float, default=None, help="table MB for all (default: per case)")
    cp.add_argument("--wrap", default="", help="a command each run goes through, e.g. /work/bg/exclusive")
    cp.add_argument("--huge-pages", action="store_true", help="2 MB pages for both tables")
    cp.add_argument("--out", type=Path, default=RESULTS / "compare.csv")
    po = sub.add_parser("playout", help="random playout rate of the C engine (towers 4, basic)")
    po.add_argument("--games", type=int, default=1_000_000)
    po.add_argument("--wrap", default="")
    one = sub.add_parser("niwa-one", help=argparse.SUPPRESS)
    one.add_argument("variant")
    one.add_argument("--tt-mb", type=float, required=True)
    one.add_argument("--huge-pages", action="store_true")
    a = p.parse_args(argv)
    if a.cmd == "niwa-one":
        r = solve_niwa(json.loads(a.variant), a.tt_mb, a.huge_pages)
        print(json.dumps(r))
        return 0
    if a.cmd == "playout" and a.games < 1:
        fail("--games must be at least 1")
    if a.cmd == "check" and not 1 <= a.depth <= 8:
        fail("--depth must be in 1..8")
    binary = build()
    if a.cmd == "build":
        print(binary)
        return 0
    if a.cmd == "check":
        return check(binary, a.depth)
    if a.cmd == "playout":
        playout(binary, a.games, shlex.split(a.wrap))
        return 0
    if a.cmd == "compare" and (a.rounds < 1 or (a.tt_mb is not None and not a.tt_mb > 0)):
        fail("--rounds must be at least 1 and --tt-mb positive")
    for case in a.cases:
        parse_case(case)
    compare(a.cases, a.rounds, shlex.split(a.wrap), a.tt_mb, a.huge_pages, a.out, binary, a.first_round)
    return 0


if __name__ == "__main__":
    sys.exit(main())
