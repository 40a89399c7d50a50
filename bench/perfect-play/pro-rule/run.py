"""Does the pro rule fix Lotus's balance? The two-level proof search (niwa.solver.proof_tree)
timed on towers 3..1, and its checkpoint tested by a kill.

    python run.py time --workers 1                 # towers 3..1 pro/optional, local workers
    python run.py time --workers 2
    python run.py dask --workers 2                 # the same on a Dask LocalCluster
    python run.py kill --workers 1                 # SIGKILL at a random moment, then resume
    python run.py time --trampoline mandatory      # the quicker pro/mandatory case
    python run.py speed --trampoline mandatory --baseline /work/main/.venv/bin/python
                                                   # plain df-pn, this code against another
    python run.py calibrate --label "s34 start"    # this machine's plain df-pn rate, to
                                                   # compare the real run's rates across machines
    python run.py certification CHECKPOINT --jobs 27022: --label "s36 cut"
                                                   # what --certify-jobs cost on those jobs
    python run.py dag CHECKPOINT "W4-4 W1-a1" "W4-4 W1-a1 B4-4" --label s37
                                                   # the top tree's double counting there
                                                   # (--parting: where its choice and the
                                                   # proof sets' differ, a focus to steer by)
    python run.py steer CHECKPOINT "W2-a2 W1-b1" --every 540
                                                   # steer a running proof to the proof
                                                   # sets' choice where they part from the
                                                   # tree's (1+eps kept), results/sets-steering.csv
    python run.py milestones pro/mandatory=results/pro-mandatory-history.csv \
        pro/optional=results/pro-optional-history.csv    # where each position was decided
    python run.py figures checkpoint-pro-optional   # a stop's state-table row and figures,
                                                   # and where the documents differ
    python run.py warmup CHECKPOINT --since 25000  # the share of jobs decided through each
                                                   # session (results/warm-up.csv and .png)

Each run starts from an empty checkpoint folder under --scratch and appends one row to
results/runs.csv: case, mode, workers, value for the first player, jobs, nodes, CPU and wall
seconds, the load average (1 min) before and after, and for `kill` the moment of the kill,
the jobs logged before it (and how many of them were proofs), the jobs replayed on resume,
and how many jobs proven before the kill were sent again after it (0 = no proven work lost).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from niwa.ext.lotus import LotusState
from niwa.solver.proof_tree import ProofTree, line_actions, line_text, open_checkpoint, read_rows

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))        # bench/, for campaign.py
from campaign import append_row, job_range  # noqa: E402

COLUMNS = ["case", "mode", "workers", "job_nodes", "tt_mb", "value_first_player", "jobs",
           "nodes", "cpu_s", "wall_s", "tree_nodes", "load_before", "load_after", "kill_at_s",
           "jobs_before_kill", "proven_jobs_before_kill", "jobs_replayed", "proven_jobs_resent",
           "torn_lines", "root_pn", "root_dn", "utc", "code", "shared_mb", "cpu_total_s",
           "answer_s"]
# what the `code` column says of rows written before it existed
OLD_CODE = "4e6079b private tables"


def case_name(a) -> str:
    return f"towers{a.towers}-{a.rule}-{a.trampoline}"


def state_of(a) -> LotusState:
    return LotusState(towers=a.towers, rule=a.rule, trampoline=a.trampoline)


def executor_of(mode: str, workers: int):
    if mode == "dask":
        from distributed import LocalCluster

        from niwa.analysis.arena.executors import DaskExecutor

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return DaskExecutor(cluster.scheduler_address, workers), cluster
    if workers == 1:
        from niwa.solver.proof_tree import InProcessExecutor

        return InProcessExecutor(), None
    from niwa.analysis.arena.executors import LocalExecutor

    return LocalExecutor(workers), None


def fresh(folder: Path) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    return folder


def code_label(a) -> str:
    """Which code made a row: the commit, and whether local workers shared their table."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, text=True,
                              capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        head = "?"
    label = f"{head} {'private tables' if a.no_share else 'shared table'}"
    if getattr(a, "no_transpositions", False):
        label += ", tree of paths"
    label += f", busy={getattr(a, 'busy', 'guess')}, expand_after={getattr(a, 'expand_after', 1)}"
    if getattr(a, "huge_pages", False):
        label += ", huge pages"
    return label


def write_row(row: dict) -> None:
    out = HERE / "results" / "runs.csv"
    out.parent.mkdir(exist_ok=True)
    rows = []
    if out.exists():
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        for old in rows:
            if not old.get("code"):
                old["code"] = OLD_CODE
    rows.append(row)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") if r.get(k) is not None else "" for k in COLUMNS})
    print(json.dumps(row))


def cpu_total() -> float:
    """CPU seconds of this process and of its children that have ended (the workers)."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(a) -> dict:
    """One proof from scratch with `a.workers` local workers or a Dask LocalCluster."""
    folder = fresh(Path(a.scratch) / f"{case_name(a)}-{a.mode}-{a.workers}")
    ex, cluster = executor_of(a.mode, a.workers)
    load0 = os.getloadavg()[0]
    cpu0 = cpu_total()
    tree = ProofTree(state_of(a), job_nodes=a.job_nodes, tt_mb=a.tt_mb, tables=a.tables,
                     checkpoint=folder, share=not a.no_share,
                     transpositions=not a.no_transpositions, busy_policy=a.busy,
                     expand_after=a.expand_after, huge_pages=a.huge_pages)
    try:
        r = tree.run(ex, time_limit=a.time_limit)
    finally:
        tree.close()
        if hasattr(ex, "close"):
            ex.close()
        if cluster is not None:
            cluster.close()
    row = row_of(a, r, load0)
    # Dask's workers are not our children: their CPU is only in the jobs' own figures
    row.update(shared_mb=tree.shared_mb, cpu_total_s=round(cpu_total() - cpu0, 1)
               if a.mode != "dask" else "")
    return row


def row_of(a, r, load0) -> dict:
    value = None if r.value is None else (r.value if r.player == 0 else 1.0 - r.value)
    return {"case": case_name(a), "mode": a.mode, "workers": a.workers,
            "job_nodes": a.job_nodes, "tt_mb": a.tt_mb, "value_first_player": value,
            "jobs": r.jobs, "nodes": r.nodes, "cpu_s": round(r.cpu_s, 1),
            "wall_s": round(r.wall_s, 1),
            "answer_s": "" if r.answer_s is None else round(r.answer_s, 1),
            "tree_nodes": r.tree_nodes,
            "load_before": round(load0, 2), "load_after": round(os.getloadavg()[0], 2),
            "root_pn": r.root_pn, "root_dn": r.root_dn,
            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "code": code_label(a)}


def killed(a) -> dict:
    """`niwa solve --checkpoint` killed by SIGKILL after a random number of seconds, then
    resumed in this process to the end."""
    folder = fresh(Path(a.scratch) / f"{case_name(a)}-kill-{a.workers}")
    position = state_of(a).to_notation()
    cmd = ["niwa", "solve", position, "--checkpoint", str(folder), "--workers",
           str(a.workers), "--job-nodes", str(a.job_nodes), "--tt-mb", str(a.tt_mb)]
    cmd += ["--tables", a.tables] if a.tables else ["--no-tables"]
    kill_at = random.Random(a.seed).uniform(a.kill_after[0], a.kill_after[1])
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, start_new_session=True)
    try:
        proc.wait(timeout=kill_at)
        sys.exit(f"the proof ended before the kill at {kill_at:.1f} s: give a shorter --kill-after")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)     # the CLI and its worker processes
        proc.wait()
    before_wall = time.monotonic() - t0
    log = (folder / "jobs.jsonl").read_bytes().split(b"\n")
    before = [json.loads(x) for x in log[:-1]]
    proven_before = {tuple(r["path"]) for r in before if r["pn"] == 0 or r["dn"] == 0}
    ex, cluster = executor_of(a.mode if a.mode != "kill" else "local", a.workers)
    tree = open_checkpoint(folder, tables=a.tables)
    replayed, torn = tree.jobs_replayed, tree.torn_lines
    try:
        r = tree.run(ex)
    finally:
        tree.close()
    rows = [json.loads(x) for x in (folder / "jobs.jsonl").read_text().splitlines()]
    resent = sum(tuple(row["path"]) in proven_before for row in rows[len(before):])
    out = row_of(a, r, load0)
    out.update(mode="kill", kill_at_s=round(before_wall, 1), jobs_before_kill=len(before),
               proven_jobs_before_kill=len(proven_before),
               jobs_replayed=replayed, proven_jobs_resent=resent, torn_lines=torn)
    return out


SPEED_CHILD = """
import json, os, sys, time
from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch
s = LotusState(towers={towers}, rule={rule!r}, trampoline={trampoline!r})
r = ProofSearch(tt_mb={tt_mb}).solve(s, root_values=False, pv=False, cpu_time=True)
print(json.dumps({{"value": r.value, "nodes": r.nodes, "cpu_s": r.time_s}}))
"""


def time_child(python: str, child: str) -> dict:
    """Run a SPEED_CHILD script with `python`: its value, nodes, CPU seconds and rate, the
    load average (1 min) before it and when it ended (UTC)."""
    load = os.getloadavg()[0]
    r = json.loads(subprocess.run([python, "-c", child], capture_output=True, text=True,
                                  check=True).stdout)
    return dict(value=r["value"], nodes=r["nodes"], cpu_s=round(r["cpu_s"], 2),
                nodes_per_cpu_s=round(r["nodes"] / r["cpu_s"]), load=round(load, 2),
                utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def speed(a) -> None:
    """Plain df-pn (one process, no top tree) timed in CPU seconds, this code's python and
    a baseline's alternately (`--pairs` times each), so the load hits both alike; one row
    per run in results/single-process-speed.csv."""
    out = HERE / "results" / "single-process-speed.csv"
    new = not out.exists()
    child = SPEED_CHILD.format(towers=a.towers, rule=a.rule, trampoline=a.trampoline,
                               tt_mb=a.tt_mb)
    with open(out, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["case", "code", "python", "value", "nodes", "cpu_s", "nodes_per_cpu_s",
                        "load", "utc"])
        for _ in range(a.pairs):
            for label, python in ((code_label(a).split()[0], sys.executable),
                                  ("baseline", a.baseline)):
                row = [case_name(a), label, python, *time_child(python, child).values()]
                w.writerow(row)
                f.flush()
                print(row, flush=True)


CALIBRATION_COLUMNS = ["label", "case", "code", "cpu", "boot", "value", "nodes", "cpu_s",
                       "nodes_per_cpu_s", "load", "utc"]


def cpu_model() -> str:
    """The processor's name as Linux reports it ('' elsewhere)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name")), "")
    except OSError:
        return ""


def boot_id() -> str:
    """Which boot of which machine this is (Linux; '' elsewhere): rows with the same one
    were measured on the same machine."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8]
    except OSError:
        return ""


CALIBRATION_CASE = argparse.Namespace(towers=3, rule="pro", trampoline="mandatory",
                                      tt_mb=1024)


def calibrate(a) -> None:
    """This machine's plain df-pn rate on a fixed search (CALIBRATION_CASE: towers 3..1
    pro/mandatory, 14.4M nodes with the code of 2026-12-07, no endgame table; `--pairs`
    runs in a child process each, CPU-timed), one row per run in results/calibration.csv.
    The real run's nodes per CPU second moved from 1.21M to 0.76M between machines at the
    same depth and budget; a session that runs this first says how much of a change is
    the machine."""
    child = SPEED_CHILD.format(**vars(CALIBRATION_CASE))
    for _ in range(a.pairs):
        row = dict(label=a.label, case=case_name(CALIBRATION_CASE),
                   code=code_label(a).split()[0], cpu=cpu_model(), boot=boot_id(),
                   **time_child(sys.executable, child))
        append_row(HERE / "results" / "calibration.csv", row, CALIBRATION_COLUMNS)
        print(json.dumps(row), flush=True)


CERTIFICATION_COLUMNS = ["label", "checkpoint", "first_job", "last_job", "jobs", "cpu_s",
                         "proven", "certified", "cut", "parts", "given_up", "certify_s",
                         "given_up_s", "certify_share", "given_up_share", "positions"]


def certification(checkpoint, jobs: tuple[int, int | None], label: str) -> dict:
    """What job certification (`--certify-jobs`) did on the jobs FROM:TO of a checkpoint's
    log: proven jobs, how many were certified (whole or cut into parts), given up, and the
    share of the jobs' CPU it took (a job's cpu_s includes its certification)."""
    first, last = jobs
    rows = [r for r in read_rows(checkpoint)
            if r["job"] >= first and (last is None or r["job"] < last)]
    certified = [r for r in rows if "certify_s" in r]
    given_up = [r for r in certified if "certify_skipped" in r]
    cpu = sum(float(r.get("cpu_s", 0.0)) for r in rows)
    spent = sum(r["certify_s"] for r in certified)
    lost = sum(r["certify_s"] for r in given_up)
    return {"label": label, "checkpoint": str(checkpoint),
            "first_job": min((r["job"] for r in rows), default=None),
            "last_job": max((r["job"] for r in rows), default=None), "jobs": len(rows),
            "cpu_s": round(cpu, 1), "proven": len(certified),
            "certified": sum("part" in r for r in rows),
            "cut": sum(bool(r.get("certify_parts")) and "part" in r for r in rows),
            "parts": sum(r.get("certify_parts", 0) for r in rows),
            "given_up": len(given_up), "certify_s": round(spent, 1),
            "given_up_s": round(lost, 1),
            "certify_share": round(spent / cpu, 4) if cpu else None,
            "given_up_share": round(lost / cpu, 4) if cpu else None,
            "positions": sum(r.get("certified", 0) + r.get("certify_part_positions", 0)
                             for r in rows)}


DAG_COLUMNS = ["label", "checkpoint", "jobs", "tree_nodes", "line", "tree_pn", "tree_dn",
               "set_pn", "set_dn", "set_pn_leaves", "set_dn_leaves", "tree_line_plies",
               "set_line_plies", "same_choice_plies"]


def numbers_line(node) -> list:
    """The nodes the tree's own numbers choose from `node` down to a leaf (each mover
    taking the open child of least proof number in its own view, as a selection does)."""
    line = [node]
    while node.children is not None and not node.proven:
        here = node
        node = min((c for c in node.children if not c.proven), key=here.seen)
        line.append(node)
    return line


def first_difference(by_sets: list, by_numbers: list) -> int:
    """The first place where two lines of nodes hold different nodes (the shorter line's
    length where one is the start of the other)."""
    pairs = zip(by_sets, by_numbers, strict=False)     # (lines of different lengths)
    return next((i for i, (a, b) in enumerate(pairs) if a is not b),
                min(len(by_sets), len(by_numbers)))


def double_counting(checkpoint, lines: list[str], label: str) -> list[dict]:
    """For each line, the top tree's (pn, dn) against the proof-set numbers (root mover's
    view), the number of leaves in each set, and how far down from there the tree's own
    choices and the proof sets' (`set_line`) go and agree."""
    from niwa.solver.proof_sets import proof_set, set_line
    from niwa.solver.proof_tree import look_at_checkpoint

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    tree, result = look_at_checkpoint(checkpoint)
    memo: dict = {}
    me = tree.root.mover
    rows = []
    for line in lines:
        node = tree.node_at(line_actions(tree.root_state, line))
        if node is None:
            raise SystemExit(f"error: the top tree has no node for {line!r}")
        pn, dn = tree.root_view(node)
        set_pn, pn_leaves = proof_set(node, me, memo)
        set_dn, dn_leaves = proof_set(node, 1 - me, memo)
        by_sets, by_numbers = set_line(node, 10_000, memo), numbers_line(node)
        same = first_difference(by_sets, by_numbers) - 1
        parted = same + 1 < min(len(by_sets), len(by_numbers))
        rows.append({"label": label, "checkpoint": str(checkpoint), "jobs": result.jobs,
                     "tree_nodes": len(tree.by_key), "line": line, "tree_pn": pn,
                     "tree_dn": dn, "set_pn": set_pn, "set_dn": set_dn,
                     "set_pn_leaves": len(pn_leaves or ()),
                     "set_dn_leaves": len(dn_leaves or ()),
                     "tree_line_plies": len(by_numbers) - 1, "set_line_plies": len(by_sets) - 1,
                     "same_choice_plies": same,
                     "parting": parting_choices(tree, walk_text(tree, line, by_sets[:same + 1]),
                                                by_sets[same], by_sets[same + 1],
                                                by_numbers[same + 1], memo) if parted else None})
    return rows


def parting_choices(tree, line: str, node, by_set, by_tree, memo) -> dict:
    """Where the tree's choice and the proof sets' first differ (`node`, reached by `line`,
    whose children `by_set` and `by_tree` set_line and numbers_line took): the line and,
    for each open child, its move, its proof-set weight and the tree's own number for the
    node's mover (the two choices flagged), the choice to steer by hand."""
    from niwa.solver.proof_sets import proof_set

    return {"line": line,
            "children": [{"move": move_name(tree, line, c),
                          "set": proof_set(c, node.mover, memo)[0],
                          "tree": node.seen(c)[0],
                          "choice": ("sets " if c is by_set else "") +
                                    ("tree" if c is by_tree else "")}
                         for c in node.children if not c.proven]}


def walk_text(tree, line: str, nodes: list) -> str:
    """`line` (the moves to nodes[0]) followed by the moves along `nodes`: the line a walk
    down the tree took (a node's own path may be another line to its position)."""
    actions = line_moves(tree, line)
    for child in nodes[1:]:
        actions += (move_to(tree, actions, child),)
    return line_text(tree.root_state, actions)


def move_name(tree, line: str, child) -> str:
    """The name of the move from the position `line` reaches to `child`'s."""
    actions = line_moves(tree, line)
    return line_text(tree.root_state, (*actions, move_to(tree, actions, child))).split()[-1]


def move_to(tree, actions: tuple, child) -> int:
    """The action from the position `actions` reach to `child`'s, found by the tree's own
    key. Not the last action of the child's own path, nor the parent's action list: a node
    keeps the path it was first reached by, which may end in a transposition or the lane
    mirror of this position, where the same action is another move."""
    state = tree.root_state.clone()
    for a in actions:
        state.apply(a)
    return next(a for a in state.legal_actions() if tree.node_at((*actions, a)) is child)


def line_moves(tree, line: str) -> tuple:
    """The actions of a line of moves from the tree's root ("" the root itself)."""
    return tuple(line_actions(tree.root_state, line)) if line.strip() else ()


STEER_EPS = 0.25            # the 1+eps trick's margin (Pawlewicz and Lew 2007)
STEER_COLUMNS = ["label", "utc", "jobs", "nodes", "cpu_s", "base", "base_set_dn", "base_tree_dn",
                 "parting", "steer", "steer_set", "best_set", "kept"]


def sets_steer_choice(base, current, memo, eps: float = STEER_EPS):
    """Where to steer below `base`: (the proof sets' line from `base` to the node where it
    and the tree's own line first part, the child to steer to there, that child's set
    weight, the lightest set weight among the open children there, whether `current` was
    kept), or None where the two lines never part. The sets' child is taken unless
    `current`, the child steered to before, is still an open child of the same node and
    within (1 + eps) of the lightest: the 1+eps trick keeps one reply worked on instead of
    a seesaw among near-equal ones."""
    from niwa.solver.proof_sets import proof_set, set_line

    by_sets, by_numbers = set_line(base, 10_000, memo), numbers_line(base)
    i = first_difference(by_sets, by_numbers)
    if i >= min(len(by_sets), len(by_numbers)):
        return None
    walk, parting, target = by_sets[:i], by_sets[i - 1], by_sets[i]
    best = proof_set(target, parting.mover, memo)[0]
    if current is not None and not current.proven and \
            any(c is current for c in parting.children):
        weight = proof_set(current, parting.mover, memo)[0]
        if weight <= (1 + eps) * best:
            return walk, current, weight, best, True
    return walk, target, best, best, False


def steer_by_sets(checkpoint, base: str, eps: float, dry: bool, label: str = "") -> dict:
    """One look at a running proof: the sets' choice below `base` (sets_steer_choice, the
    present focus's first line as the child steered to before), steered to (then `base`)
    unless `dry` or unchanged. The row of results/sets-steering.csv."""
    from niwa.solver.proof_sets import proof_set
    from niwa.solver.proof_tree import look_at_checkpoint, steer_checkpoint

    sys.setrecursionlimit(max(100_000, sys.getrecursionlimit()))
    tree, result = look_at_checkpoint(checkpoint)
    node = tree.node_at(line_moves(tree, base))
    if node is None:
        raise LookupError(f"the top tree has no node for {base!r}")
    # the focus the run's last snapshot names (focus_text's "first, then base")
    focus = tree.saved_focus or ""
    current = tree.node_at(line_moves(tree, focus.split(", then ")[0])) \
        if ", then " in focus else None
    memo: dict = {}
    row = {"label": label, "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "jobs": result.jobs,
           "nodes": result.nodes, "cpu_s": round(result.cpu_s, 1), "base": base,
           "base_set_dn": proof_set(node, 1 - tree.root.mover, memo)[0],
           "base_tree_dn": tree.root_view(node)[1], "parting": "", "steer": "",
           "steer_set": "", "best_set": "", "kept": ""}
    choice = None if node.proven else sets_steer_choice(node, current, memo, eps)
    if choice is not None:
        walk, target, weight, best, kept = choice
        row.update(parting=walk_text(tree, base, walk),
                   steer=walk_text(tree, base, [*walk, target]), steer_set=weight,
                   best_set=best, kept=int(kept))
        if not dry and target is not current:     # (current: the same position, by any line)
            steer_checkpoint(checkpoint, [row["steer"], base])
    return row


WARM_UP_COLUMNS = ["session_start_utc", "first_job", "last_job", "session_jobs", "part",
                   "jobs", "decided", "decided_share", "cpu_s"]
SESSION_GAP_S = 600.0       # jobs started further apart than this belong to two sessions


def sessions_of(rows: list[dict], gap_s: float = SESSION_GAP_S) -> list[list[dict]]:
    """A job log cut into sessions: a new one wherever no job started for `gap_s` seconds
    (a resume starts its first job within seconds; sessions lie hours apart)."""
    sessions: list[list[dict]] = []
    last = None
    for r in sorted((r for r in rows if "started" in r), key=lambda r: r["started"]):
        if last is None or r["started"] - last > gap_s:
            sessions.append([])
        sessions[-1].append(r)
        last = r["started"]
    return sessions


def warm_up(rows: list[dict], parts: int = 5, min_jobs: int = 500) -> list[dict]:
    """For each session of at least `min_jobs` jobs, its jobs in `parts` equal parts by
    start time, and the share of each part's jobs that decided their position (pn or dn
    0). Each session's df-pn table starts empty but for the kept proofs and fills as it
    goes, so a share that rises through the sessions bounds what a fresh table costs (the
    focus also moves within a session: this measures the two together)."""
    out = []
    for jobs in sessions_of(rows):
        if len(jobs) < min_jobs:
            continue
        session = {"session_start_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                      time.gmtime(jobs[0]["started"])),
                   "first_job": min(r["job"] for r in jobs),
                   "last_job": max(r["job"] for r in jobs), "session_jobs": len(jobs)}
        for k in range(parts):
            part = jobs[k * len(jobs) // parts:(k + 1) * len(jobs) // parts]
            decided = sum(r["pn"] == 0 or r["dn"] == 0 for r in part)
            out.append({**session, "part": k + 1, "jobs": len(part), "decided": decided,
                        "decided_share": round(decided / len(part), 4),
                        "cpu_s": round(sum(float(r.get("cpu_s", 0.0)) for r in part), 1)})
    return out


def plot_warm_up(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    for start in dict.fromkeys(r["session_start_utc"] for r in rows):
        mine = [r for r in rows if r["session_start_utc"] == start]
        ax.plot([r["part"] for r in mine], [100 * r["decided_share"] for r in mine],
                marker="o", label=f"{start[5:16].replace('T', ' ')} ({mine[0]['session_jobs']} jobs)")
    ax.set_xlabel("part of the session (equal numbers of jobs, in start order)")
    ax.set_ylabel("jobs that decided their position (%)")
    ax.set_title("jobs that decided their position, through each session")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


MILESTONE_COLUMNS = ["case", "line", "value_player0", "job", "nodes", "cpu_s",
                     "share_of_nodes_so_far", "root_decided"]


def milestones(history_csv, case: str) -> list[dict]:
    """Where each position a `niwa solve --history` CSV follows (the first moves, and the
    positions two plies down with `--depth 2`) was decided: the first job after which its
    pn (a win for player 0) or dn (a loss) is 0, with the nodes and CPU spent by then and
    that as a share of the run's nodes so far (of the whole proof once the root is decided:
    the scale of one proof against another's, decided position by position)."""
    with open(history_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    last = rows[-1]
    decided_root = last["root_pn"] in ("0", "inf") or last["root_dn"] in ("0", "inf")
    lines = [c[:-3] for c in rows[0] if c.endswith(" pn") and c != "root_pn"]
    out = []
    for line in lines:
        for r in rows:
            value = (1 if r[f"{line} pn"] == "0" else 0 if r[f"{line} dn"] == "0" else None)
            if value is not None:
                out.append({"case": case, "line": line, "value_player0": value,
                            "job": int(r["job"]), "nodes": int(r["nodes"]),
                            "cpu_s": float(r["cpu_s"]),
                            "share_of_nodes_so_far": round(int(r["nodes"]) / int(last["nodes"]), 4),
                            "root_decided": decided_root})
                break
    return sorted(out, key=lambda r: (r["job"], r["line"]))


REPO = HERE.parents[2]


def stop_figures(checkpoint) -> dict:
    """What a session's stop publishes, read from the checkpoint's own record of it
    (tree.json, written as the run stops), so that no figure is copied by hand."""
    folder = Path(checkpoint)
    t = json.loads((folder / "tree.json").read_text())
    meta = json.loads((folder / "meta.json").read_text())
    return {"kind": "optional" if "trampoline=optional" in meta["position"] else "mandatory",
            "stopped_utc": t["written_utc"][:16].replace("T", " "),
            "top_tree": "positions" if meta.get("transpositions") else "paths",
            "jobs": t["jobs"], "nodes": t["nodes"], "cpu_s": round(t["cpu_s"]),
            "tree_nodes": t["tree_nodes"], "root_pn": t["root_pn"], "root_dn": t["root_dn"],
            "value": t["value"], "first_moves": t["first_moves"], "focus": t.get("focus")}


def decided_cell(first_moves: dict) -> str:
    """'2 of 7 (W3-a3 = W3-b3 = 0)': the first moves decided, grouped by value."""
    done = {m: v for m, v in first_moves.items() if v is not None}
    cell = f"{len(done)} of {len(first_moves)}"
    if done and len(done) == len(first_moves) and len(set(done.values())) == 1:
        return cell + f" (all {next(iter(done.values())):g})"
    groups = [" = ".join(m for m in done if done[m] == v) + f" = {v:g}"
              for v in sorted(set(done.values()))]
    return cell + (f" ({'; '.join(groups)})" if groups else "")


def state_cells(fig: dict) -> list[str]:
    """The state table's cells after its first (the run's label), in the README's order:
    stopped, top tree of, jobs, df-pn nodes, CPU s, top tree, root pn, root dn, decided."""
    from niwa.solver.proof_sets import INF

    def number(n):
        return "inf" if n == INF else f"{n:,}"
    return [fig["stopped_utc"], fig["top_tree"], f"{fig['jobs']:,}", f"{fig['nodes']:,}",
            f"{fig['cpu_s']:,}", f"{fig['tree_nodes']:,}", number(fig["root_pn"]),
            number(fig["root_dn"]), decided_cell(fig["first_moves"])]


def published_phrases(fig: dict) -> list[tuple[str, str]]:
    """(document, phrase) pairs that each name an open proof's stop figures, as the
    documents word them (whitespace aside). A decided proof's text is written once, by
    hand, and its state-table row alone is checked."""
    if fig["value"] is not None:
        return []
    billions, cpu = f"{fig['nodes'] / 1e9:.1f}", f"{fig['cpu_s']:,}"
    pn, dn = fig["root_pn"] / 1e6, fig["root_dn"] / 1e6
    here = "bench/perfect-play/pro-rule/README.md"
    return [("README.md", f"{billions} billion nodes so far"),
            ("docs/results/perfect-play.md", f"not decided after {billions} billion nodes "
                                             f"({cpu} CPU s"),
            ("docs/results/perfect-play.md", f"root pn {pn:.2f}M / dn {dn:.2f}M"),
            (here, f"({fig['jobs']:,} jobs, {billions} billion nodes;"),
            (here, f"**{fig['jobs']:,} jobs, {fig['nodes'] / 1e9:.2f}e9 nodes, {cpu} CPU s**"),
            (here, f"root pn {pn:.2f}M, dn {dn:.2f}M")]


STATE_TABLE_HEADER = "| full game, pro rule |"


def state_table_rows(readme: Path, kind: str) -> list[list[str]]:
    """The cells of the README's state-table rows for one trampoline setting: the rows of
    the table under STATE_TABLE_HEADER only, so another table naming the setting is not
    taken for it."""
    rows, inside = [], False
    for line in readme.read_text().splitlines():
        if line.startswith(STATE_TABLE_HEADER):
            inside = True
        elif inside and not line.startswith("|"):
            break
        elif inside and f"{kind} trampoline" in line.split("|")[1]:
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def figure_mismatches(fig: dict, repo: Path = REPO) -> list[str]:
    """Where the published figures disagree with a checkpoint's (stop_figures): the state
    table's last row of its kind, and (while the proof is open) each phrase of
    published_phrases."""
    kind = fig["kind"]
    rows = state_table_rows(repo / "bench/perfect-play/pro-rule/README.md", kind)
    if not rows:
        return [f"the state table has no row for the {kind} trampoline"]
    want, have = state_cells(fig), rows[-1][1:]
    skip = {5} if fig["value"] is not None else set()    # a decided tree gives its peak
    out = [f"state table, {kind}: {have[i]!r}, the checkpoint says {want[i]!r}"
           for i in range(len(want)) if i not in skip and (i >= len(have) or have[i] != want[i])]
    for doc, phrase in published_phrases(fig):
        if phrase not in " ".join((repo / doc).read_text().split()):
            out.append(f"{doc} lacks {phrase!r}")
    return out


def report_parser(description: str, results_csv: str) -> argparse.ArgumentParser:
    """The options of a mode that reads a checkpoint and appends rows to a results CSV."""
    q = argparse.ArgumentParser(description=description)
    q.add_argument("checkpoint")
    q.add_argument("--label", default="")
    q.add_argument("--out", default=str(HERE / "results" / results_csv))
    return q


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["dag"]:
        q = report_parser("the top tree's double counting below lines", "double-counting.csv")
        q.add_argument("lines", nargs="+", help="lines of moves from the root")
        q.add_argument("--parting", action="store_true",
                       help="also print where the tree's choice and the sets' first differ")
        b = q.parse_args(argv[1:])
        out = Path(b.out)
        with (out.open(newline="") if out.exists() else open(os.devnull)) as f:
            known = {tuple(r.get(c, "") for c in DAG_COLUMNS) for r in csv.DictReader(f)}
        for row in double_counting(b.checkpoint, b.lines, b.label):
            if tuple(str(row[c]) for c in DAG_COLUMNS) not in known:    # (not measured yet)
                append_row(out, {c: row[c] for c in DAG_COLUMNS}, DAG_COLUMNS)
            print(f"{row['line']}: pn {row['tree_pn']:,} (set {row['set_pn']:,}, "
                  f"{row['set_pn_leaves']} leaves), dn {row['tree_dn']:,} (set "
                  f"{row['set_dn']:,}, {row['set_dn_leaves']} leaves); choices: the tree's "
                  f"{row['tree_line_plies']} plies, the sets' {row['set_line_plies']}, the "
                  f"same for {row['same_choice_plies']}")
            if b.parting and row["parting"]:
                print(f"  they part at {row['parting']['line']} (the mover's numbers):")
                for c in row["parting"]["children"]:
                    print(f"    {c['move']:>8}  set {c['set']:>12,}  tree {c['tree']:>12,}  "
                          f"{c['choice']}")
        return
    if argv[:1] == ["steer"]:
        q = report_parser("steer a running proof to the proof sets' choice where they part "
                          "from the tree's below a line", "sets-steering.csv")
        q.add_argument("base", help="the line of moves the steering works below (\"\": "
                                    "the root)")
        q.add_argument("--eps", type=float, default=STEER_EPS)
        q.add_argument("--every", type=float, default=0.0,
                       help="seconds between looks (0: one look)")
        q.add_argument("--dry", action="store_true", help="print the choice, do not steer")
        b = q.parse_args(argv[1:])
        from niwa.solver.proof_tree import CheckpointError, LineError, checkpoint_in_use
        while True:
            try:
                row = steer_by_sets(b.checkpoint, b.base, b.eps, b.dry, b.label)
            except (CheckpointError, LineError, LookupError) as e:
                q.error(str(e))     # one line, status 2
            if not b.dry:
                append_row(Path(b.out), row, STEER_COLUMNS)
            print(json.dumps(row), flush=True)
            if b.every <= 0:
                return
            time.sleep(b.every)
            if not checkpoint_in_use(Path(b.checkpoint)):     # the run ended meanwhile
                return
    if argv[:1] == ["figures"]:
        q = argparse.ArgumentParser(description="a checkpoint's stop figures, as the state "
                                                "table row and the documents' phrases")
        q.add_argument("checkpoint")
        q.add_argument("--label", default=None, help="the row's first cell (default: from "
                                                      "the checkpoint's focus)")
        b = q.parse_args(argv[1:])
        if not all((Path(b.checkpoint) / f).is_file() for f in ("tree.json", "meta.json")):
            q.error(f"{b.checkpoint} is not a proof checkpoint (no tree.json and meta.json)")
        fig = stop_figures(b.checkpoint)
        label = b.label or (f"{fig['kind']} trampoline" + (f" (focus `{fig['focus']}`)"
                                                    if fig["focus"] else ""))
        print("| " + " | ".join([label, *state_cells(fig)]) + " |")
        for doc, phrase in published_phrases(fig):
            print(f"{doc}: {phrase}")
        for problem in figure_mismatches(fig):
            print(f"differs: {problem}")
        return
    if argv[:1] == ["milestones"]:
        q = argparse.ArgumentParser(description="where each followed position was decided, "
                                                "in each run's history (the CSV made anew)")
        q.add_argument("cases", nargs="+", metavar="CASE=HISTORY_CSV")
        q.add_argument("--out", default=str(HERE / "results" / "milestones.csv"))
        b = q.parse_args(argv[1:])
        rows = [row for case in b.cases for row in milestones(*reversed(case.split("=", 1)))]
        with open(b.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=MILESTONE_COLUMNS)
            w.writeheader()
            w.writerows(rows)
        for row in rows:
            print(json.dumps(row))
        return
    if argv[:1] == ["warmup"]:
        q = argparse.ArgumentParser(description="the share of jobs decided through each "
                                                "session (the CSV and its PNG made anew)")
        q.add_argument("checkpoint")
        q.add_argument("--out", default=str(HERE / "results" / "warm-up.csv"))
        q.add_argument("--since", type=int, default=0, help="only jobs from this number on")
        q.add_argument("--parts", type=int, default=5)
        q.add_argument("--min-jobs", type=int, default=500, help="shorter sessions left out")
        b = q.parse_args(argv[1:])
        rows = warm_up([r for r in read_rows(b.checkpoint) if r["job"] >= b.since], b.parts,
                       b.min_jobs)
        out = Path(b.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", newline="") as f:    # the whole table, made again from the log
            w = csv.DictWriter(f, fieldnames=WARM_UP_COLUMNS)
            w.writeheader()
            w.writerows(rows)
        plot_warm_up(rows, out.with_suffix(".png"))
        for row in rows:
            print(json.dumps(row))
        return
    if argv[:1] == ["certification"]:
        q = report_parser("what --certify-jobs did on a checkpoint's jobs",
                          "job-certification.csv")
        q.add_argument("--jobs", default=(0, None), type=job_range,
                       help="FROM:TO, job numbers (TO excluded)")
        b = q.parse_args(argv[1:])
        row = certification(b.checkpoint, b.jobs, b.label)
        append_row(Path(b.out), row, CERTIFICATION_COLUMNS)
        print(json.dumps(row))
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["time", "dask", "kill", "speed", "calibrate"])
    p.add_argument("--towers", type=int, default=3)
    p.add_argument("--rule", default="pro")
    p.add_argument("--trampoline", default="optional", choices=["optional", "mandatory"])
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--job-nodes", type=int, default=2_000_000)
    p.add_argument("--tt-mb", type=float, default=1024)
    p.add_argument("--tables", default=None, help="endgame tables folder (default: none)")
    p.add_argument("--kill-after", type=float, nargs=2, default=(20.0, 120.0),
                   metavar=("LOW", "HIGH"), help="kill: seconds, drawn uniformly")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--time-limit", type=float, default=0.0,
                   help="time/dask: stop after this many seconds (the row says how far it got)")
    p.add_argument("--scratch", default="/tmp/niwa-pro-rule")
    p.add_argument("--no-share", action="store_true",
                   help="local workers keep private tables (the code before the shared table)")
    p.add_argument("--no-transpositions", action="store_true",
                   help="a top tree of move paths (the code before positions were folded)")
    p.add_argument("--busy", default="guess", help="the busy policy (ProofTree busy_policy)")
    p.add_argument("--expand-after", type=int, default=2,
                   help="unfinished jobs on a leaf before the top tree expands it")
    p.add_argument("--huge-pages", action="store_true",
                   help="the df-pn tables on 2 MB pages (ProofTree huge_pages)")
    p.add_argument("--baseline", default=None, help="speed: the python of the other code")
    p.add_argument("--pairs", type=int, default=2,
                   help="speed: alternating pairs of runs; calibrate: runs")
    p.add_argument("--label", default="", help="calibrate: what the row is (session, load)")
    a = p.parse_args(argv)
    if a.mode == "speed":
        if not a.baseline:
            p.error("speed needs --baseline PYTHON")
        speed(a)
        return
    if a.mode == "calibrate":
        calibrate(a)
        return
    if a.mode == "time":
        a.mode = "local"
    write_row(killed(a) if a.mode == "kill" else timed(a))


if __name__ == "__main__":
    main()
