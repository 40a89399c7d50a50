"""A two-level proof search: a small proof-number tree near the root whose frontier
positions are proven by df-pn jobs, run in parallel and checkpointed to disk.

Model. The top tree is a best-first proof-number search (Allis) kept in memory. Its
leaves are positions; a leaf is sent as a *job* to a worker, which runs df-pn
(niwa.solver.proof.ProofSearch) on it with a node budget. A job comes back with either a
proof (the leaf's mover wins or loses) or, when the budget ran out, the leaf's proof and
disproof numbers and those of each of its children as the worker's table has them. This is
job-level proof-number search (Wu et al., Connect6 openings on a desktop grid) with df-pn
jobs, as in the two-level searches of SPDFPN (Pawlewicz & Hayward) and the Sprouts proofs.

Numbers are kept in the mover's perspective (negamax form, as in proof.pyx): for a node n
with children c, cp(c), cd(c) = (dn(c), pn(c)) when the other player moves in c, and
(pn(c), dn(c)) when the same player moves again (Lotus pro rule: seat 0 plays two actions on
its first turn); pn(n) = min cp, dn(n) = sum cd. A proven node is (0, INF) or (INF, 0).

What a job that runs out of budget does to the tree: its leaf is expanded in the top tree,
its children taking the numbers the worker's table holds for them (a child the worker
proved comes in proven). Only when the top tree is full (`max_tree_nodes`) or the leaf is
at `max_depth` is the leaf instead resubmitted with twice its last budget. So the top tree
steers the work best-first, and a hard leaf deep down gets longer and longer jobs.

Transpositions (`transpositions=True`, the default of a new tree). A node of the top tree
is a position under the game's symmetric key (State.symmetric_hash and the mover: Lotus
folds a position and its lane mirror together, as the df-pn table does), not a path of
moves, so the top tree is a DAG. Mirror first moves (W1-a1 / W1-b1) and transposed move
orders share one node: one job works on them, so two workers never prove the same position
at once (the shared table cannot prevent that: df-pn stores a node only when it leaves it),
and a proof settles the position on every path to it. Every root move is still reported
(its own edge to the shared node). The numbers follow the same min and sum (a node with two
parents counts in both sums, as in PNS on DAGs: it only steers the search), and a node no
unproven parent links to any more leaves the tree. Keys are the game's 64-bit hash, the
trust the df-pn table already places in it. Checkpoints written before (no
"transpositions" in meta.json) replay as the tree of paths they were.

Parallel workers stay on distinct subtrees by in-flight marking, and the busy policy says
how a node with a job out counts when the next job is chosen. "skip": a busy leaf is
skipped (a node with every open child busy is busy), so the next job goes to the next
most-proving leaf, often an alternative to the busy one (speculation). The others count
every busy node as proven for the rest of the selection (virtual win / virtual loss of
job-level PNS, Wu et al.), so the next job goes where the tree still needs work if the busy
jobs end as assumed: "win" for the root's mover, "loss" against it, "lean" the way the
root's numbers favour, "guess" (the default) the way each busy node's own numbers lean
(its mover wins if pn <= dn). "win"/"loss" presume the answer; "guess" does not. When the
assumption proves the root, or no leaf is free, the busy nodes are skipped; when every leaf
is busy, the most-proving busy leaf is expanded in the top tree and one of its children is
sent (the busy job's answer still counts when it arrives). Several workers start from the
root's children (the root is expanded without a job: a job on it would search the subtree
the second worker is sent to).

Sharing. Each worker process keeps one ProofSearch across jobs, so the subtrees it proved
answer its later jobs at once. Local worker processes (LocalExecutor, more than one) also
share one table: the coordinator maps a SharedProofTable (niwa.solver.proof) of `tt_mb`
times the number of workers before they are forked, and every worker's df-pn reads and
writes it without locks (entries are checked against their key word by word, so a torn
write is a miss, never a wrong proof). The subtrees of different first moves transpose
into each other heavily, so what one worker proved the other then finds in the table
instead of proving it again (with private tables, two workers spent twice the nodes of
one). Workers the coordinator did not fork (a Dask cluster) keep private tables and share
only through the top tree (a proven leaf is never sent again). The executors take proof
jobs one per worker at a time (`_Stream.one_per_worker`): a job is chosen when a worker
is free, so it goes to the leaf that is most-proving at that moment.

The value is exact whatever the number of workers or the order in which jobs end: every
leaf value is a df-pn proof and the top tree only combines proven values by min and sum.

Checkpoint (a folder): `meta.json` (the position and the settings, written once, atomically)
and `jobs.jsonl`, one JSON line per finished job, appended and flushed as each job ends
(a torn last line from a kill is dropped on resume; any other damage is an error). The top
tree is a pure function of the job lines in order, so resuming replays them and goes on: no
finished job is lost, only the jobs in flight at the kill run again. `tree.json` is a
snapshot of the progress (root numbers, first moves), replaced atomically (temp + rename)
every few seconds, for a quick look.
"""

from __future__ import annotations

import io
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from niwa.ext.errors import NiwaError
from niwa.solver.proof_sets import INF, set_line

PN_MAX = 0xFFFFFFFE         # finite numbers saturate here
FORMAT = "niwa-proof-tree"
FORMAT_VERSION = 1
# what a busy node (a job is out on it) counts as when the next job is chosen
BUSY_POLICIES = ("skip", "win", "loss", "lean", "guess")
SNAPSHOT_EVERY_S = 5.0
# nodes of a new top tree at most (about 1 KB each in the main process); at the cap a leaf
# whose job did not finish is sent again with twice the budget instead of being expanded
MAX_TREE_NODES = 50_000
# selections between two proof-set choices (ProofTree's set_plies). Each costs about 2 CPU s
# for a top tree of 80,000 nodes; a choice kept for 32 selections took 1.5x to 2.4x the
# nodes of the tree's own choices on towers 3..1 pro/optional (bench/perfect-play/pro-rule/
# results/set-choice.csv), so the default is a fresh choice at every selection
SET_EVERY = 1
PROVEN_FORMAT = "niwa-proven-positions"
KEEP_MIN_WORK = 1000        # proofs cheaper than this are not worth a row of proven.npy


class CheckpointError(NiwaError):
    """A checkpoint folder that cannot be read or does not fit the run."""


class LineError(NiwaError):
    """A line of moves that cannot be played from the position it starts at."""


class FocusError(LineError):
    """A focus line that is not a line of moves from the root."""


@dataclass(frozen=True)
class AutoFocus:
    """A focus the tree chooses itself (`--focus auto`, `auto:PLIES`): of the open
    positions `plies` down (or open leaves above that depth, which stand for their
    subtree), the one nearest to being decided (smallest min(pn, dn), then pn + dn); it
    keeps the jobs until it is decided, then the next is chosen. The choice is saved in
    the checkpoint's tree.json, so a resumed `--focus auto` goes on with it."""

    plies: int = 2

    @classmethod
    def parse(cls, item):
        """An AutoFocus for "auto" or "auto:PLIES", else None.

        >>> AutoFocus.parse("auto:3"), AutoFocus.parse("W2-a2")
        (AutoFocus(plies=3), None)
        """
        if not isinstance(item, str) or item.split(":")[0].strip().lower() != "auto":
            return None
        _, _, plies = item.partition(":")
        if not plies:
            return cls()
        if not plies.strip().isdigit() or not 1 <= int(plies) <= 20:
            raise FocusError(f"focus: {item!r}: auto:PLIES wants PLIES from 1 to 20")
        return cls(int(plies))


def focus_text(state, focus, auto_line=None) -> str:
    """Focus items (lines of actions from `state`, or AutoFocus, whose choice so far is
    `auto_line`) by move names, in their order ("" without a focus)."""
    def text(item):
        if not isinstance(item, AutoFocus):
            return line_text(state, item)
        now = "" if auto_line is None else f"; now {line_text(state, auto_line)}"
        return f"the open position {item.plies} plies down nearest to being decided{now}"

    return ", then ".join(text(item) for item in focus)


def line_actions(state, item) -> tuple[int, ...]:
    """A line of moves from `state` as actions: move names separated by spaces or commas
    ("W2-a2 W4-4"), one action, or a sequence of names or actions; LineError naming the
    first move that is not legal where it is played.

    >>> from niwa.ext.lotus import LotusState
    >>> s = LotusState(rule="pro")
    >>> line_text(s, line_actions(s, "W2-a2, W4-4"))
    'W2-a2 W4-4'
    """
    if isinstance(item, str):
        moves = item.replace(",", " ").split()
    elif isinstance(item, int):
        moves = [item]
    else:
        moves = list(item)
    if not moves:
        raise LineError(f"{item!r} names no move")
    s, line = state.clone(), []
    for m in moves:
        names = {} if s.is_terminal() else {s.action_to_string(a): a for a in s.legal_actions()}
        a = names.get(m) if isinstance(m, str) else m
        if a not in names.values():
            where = "the root" if not line else f"the position after {line_text(state, line)}"
            theirs = f" (its moves: {', '.join(names)})" if names else " (the game is over there)"
            raise LineError(f"{m!r} is not a move of {where}{theirs}")
        line.append(a)
        s.apply(a)
    return tuple(line)


def line_text(state, line) -> str:
    """A line of actions from `state` by move names, space-separated."""
    s, names = state.clone(), []
    for a in line:
        names.append(s.action_to_string(a))
        s.apply(a)
    return " ".join(names)


# ---- the job a worker runs ----------------------------------------------------------------
_WORKER = threading.local()     # one ProofSearch per worker thread/process, kept across jobs
# run id -> the SharedProofTable of that session, mapped by the coordinator before it forks
# its local workers (who find it here, inherited); absent in any other process
_SHARED_TABLES: dict = {}
# In a worker process elsewhere (a Dask worker), whose tables the coordinator cannot read:
# run id -> the rows an earlier session kept, sent by the coordinator (_stash_kept) and
# loaded into each table made for that run; run id -> the searches made for it, whose
# proofs a stop collects (_collect_kept). One run's at a time, as _WORKER keeps.
_KEPT_ROWS: dict = {}
_RUN_SEARCHES: dict = {}


def _worker_search(tt_mb: float, tables: str | None, state, run: str,
                   huge_pages: bool = False):
    """This worker's ProofSearch (made on first use; its table is kept across the jobs of
    one proof tree's session, `run`: another tree starts from an empty table). It works in
    the session's shared table when this process inherited one, else in its own (on huge
    pages if asked)."""
    from niwa.solver.proof import ProofSearch

    key = (os.getpid(), tt_mb, tables, run, huge_pages)
    cached = getattr(_WORKER, "search", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    _WORKER.search = None       # free the old table before mapping a new one
    for other in [r for r in _RUN_SEARCHES if r != run]:
        del _RUN_SEARCHES[other]    # (so too the other runs' tables this process made)
    table = None
    if tables is not None:
        from niwa.solver.tables import resolve_tables

        table = resolve_tables(state, tables)
    search = ProofSearch(tt_mb=tt_mb, tables=table, shared=_SHARED_TABLES.get(run),
                         huge_pages=huge_pages)
    if run in _KEPT_ROWS and search.shared is None:
        search.load_proven(_KEPT_ROWS[run])
    _RUN_SEARCHES.setdefault(run, []).append(search)
    _WORKER.search = (key, search)
    return search


def _root_key(root: str) -> int:
    """This build's table key of the position `root` (what kept rows are filed under)."""
    from niwa.ext.registry import parse_position
    from niwa.solver.proof import ProofSearch

    return ProofSearch(tt_mb=1).table_key(parse_position(root))


def _stash_kept(run: str, rows, root: str, root_key: int) -> int:
    """In a worker process (run there by the coordinator): keep the rows an earlier session
    of `run` kept, for each table made for it here; 0 (none kept) if this build files
    positions under other keys than the coordinator's."""
    if _root_key(root) != root_key:
        return 0
    _KEPT_ROWS.clear()
    _KEPT_ROWS[run] = rows
    return len(rows)


def _collect_kept(run: str, root: str, min_work: int, most: int):
    """In a worker process: (this build's table key of `root`, the proven rows of every
    table made here for `run`, as ProofSearch.proven_entries gives them; safe while a job
    still writes), the rows of all its tables together."""
    import numpy as np

    parts = [s.proven_entries(min_work, most) for s in _RUN_SEARCHES.get(run, [])]
    rows = np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.uint64)
    _KEPT_ROWS.pop(run, None)
    return _root_key(root), rows


def merge_kept(parts, most: int):
    """The rows of several tables' proven_entries as one: the most costly proof of each
    key, the largest work first, at most `most` rows (0: all)."""
    import numpy as np

    rows = np.concatenate([np.asarray(r, dtype=np.uint64).reshape(-1, 3) for r in parts]) \
        if parts else np.zeros((0, 3), dtype=np.uint64)
    order = np.argsort(-(rows[:, 2] & np.uint64(0xFFFFFFFF)).astype(np.int64), kind="stable")
    rows = rows[order]
    _, first = np.unique(rows[:, 0], return_index=True)
    rows = rows[np.sort(first)]
    return rows[:most] if most > 0 else rows


THP = Path("/sys/kernel/mm/transparent_hugepage")
STEER_FILE = "focus.steer"      # a new focus for the running proof (steer_checkpoint)
JOB_PARTS = "parts"             # the certificates the jobs wrote (ProofTree's certify)
STEER_EVERY_S = 2.0


def huge_pages_note(shared: bool, thp=None) -> str | None:
    """Why a table asked for on huge pages will get small pages here, or None when it will
    get 2 MB pages. Linux backs a mapping madvise()d MADV_HUGEPAGE with huge pages when
    `enabled` is always or madvise, and a shared one (the workers' table) when
    `shmem_enabled` is always, within_size or advise (many systems ship it as never; root
    can set it: `echo advise > /sys/kernel/mm/transparent_hugepage/shmem_enabled`).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "enabled").write_text("always [madvise] never")
    >>> _ = (d / "shmem_enabled").write_text("always within_size advise [never] deny force")
    >>> huge_pages_note(False, d) is None
    True
    >>> huge_pages_note(True, d)
    'the kernel gives shared memory no huge pages (transparent_hugepage/shmem_enabled is never)'
    """
    name, good = (("shmem_enabled", ("always", "within_size", "advise", "force")) if shared
                  else ("enabled", ("always", "madvise")))
    try:
        text = (Path(THP if thp is None else thp) / name).read_text()
    except OSError:
        return "this system has no transparent huge pages"
    chosen = text[text.find("[") + 1:text.find("]")] if "[" in text else text.strip()
    if chosen in good:
        return None
    what = "shared memory" if shared else "memory"
    return f"the kernel gives {what} no huge pages (transparent_hugepage/{name} is {chosen})"


class DrawInProofTree(NiwaError):
    """The top tree combines wins and losses only: a proven draw cannot enter it."""


def _numbers(result) -> tuple[int, int]:
    """A ProofResult's root numbers in the mover's perspective (proven: 0 or INF). A draw
    has no place in a win/loss tree: refused rather than read as a loss."""
    if result.proven:
        if result.value not in (0.0, 1.0):
            raise DrawInProofTree(
                f"the two-level proof search decides win/loss games only, and a position "
                f"below the root is a proven draw (value {result.value}); solve it "
                f"without --checkpoint (df-pn proves draws)")
        return (0, INF) if result.value == 1.0 else (INF, 0)
    return int(result.root_pn), int(result.root_dn)


@dataclass(frozen=True)
class ProofJob:
    """Prove the position `path` (actions from the position `root`, in notation) with df-pn
    and at most `max_nodes` expansions. Picklable; calling it returns the result row."""

    root: str
    path: tuple[int, ...]
    max_nodes: int
    tt_mb: float
    tables: str | None
    job_id: int
    run: str = ""
    huge_pages: bool = False
    # called as certify(search, state, run, parts) once the job proved its position: (a
    # certificate or None, the parts made for it, figures for the row); see
    # niwa.solver.certificate.JobCertifier
    certify: object = None
    parts: str | None = None        # where the tree keeps the job certificates

    def __call__(self) -> dict:
        from niwa.ext.registry import parse_position

        started = time.time()
        t0, c0 = time.monotonic(), time.thread_time()
        state = parse_position(self.root)
        for a in self.path:
            state.apply(a)
        search = _worker_search(self.tt_mb, self.tables, state, self.run, self.huge_pages)
        r = search.solve(state, max_nodes=self.max_nodes, root_values=False, pv=False)
        row = {"job": self.job_id, "path": list(self.path), "budget": self.max_nodes,
               "player": r.player, "nodes": r.nodes, "shared": search.shared is not None}
        row["pn"], row["dn"] = _numbers(r)
        if r.proven and self.certify is not None:
            cert, made, figures = self.certify(search, state, self.run, self.parts)
            row.update(figures)
            if made:
                row["certificate_parts"] = made     # saved by the tree, not logged
            if cert is not None:
                row["certificate"] = cert
        if not r.proven:
            # what this worker's table knows of each child: the numbers the top tree's
            # expansion starts from (a lookup each, no search)
            kids = []
            for a in state.legal_actions():
                child = state.clone()
                child.apply(a)
                if child.is_terminal():
                    kids.append([a, None, None, None])
                    continue
                c = search.solve(child, max_nodes=1, root_values=False, pv=False)
                if not c.proven and search.subtree_work(child) == 0:
                    kids.append([a, None, None, None])      # not in the table: unexplored
                else:
                    kids.append([a, c.player, *_numbers(c)])
            row["children"] = kids
        row["cpu_s"] = round(time.thread_time() - c0, 4)
        row["duration_s"] = time.monotonic() - t0
        row["pid"] = os.getpid()
        row["started"] = round(started, 3)      # epoch seconds (which jobs overlapped)
        return row


class JobExecutor(Protocol):
    """What a proof run asks of an executor: InProcessExecutor below, and
    niwa.analysis.arena.executors' LocalExecutor and DaskExecutor (this layer cannot import
    those, so they match it by shape)."""

    name: str           # "local" workers are forked from this process and can share its table
    workers: int        # how many jobs run at once

    def describe(self) -> str: ...

    def run(self, tasks) -> Iterator[dict]:
        """Yield each task's result row as it ends."""

    # optional, for workers whose tables this process cannot read (Dask's):
    # run_on_workers(fn, *args) calls fn(*args) once in each worker process and returns
    # the results, a list; the proofs kept between sessions travel that way


class InProcessExecutor:
    """Runs the jobs one after another in this process (one worker, no pickling)."""

    name = "in-process"
    workers = 1

    def describe(self) -> str:
        return "this process, 1 worker"

    def run(self, tasks):
        for task in tasks:
            yield task()


# ---- the top tree ---------------------------------------------------------------------------
class Node:
    """A position of the top tree. With `transpositions` (the default) a node stands for
    every path to its position under the game's symmetric key (a lane mirror, a
    transposition), so it may have several parents; otherwise for one path of moves."""

    __slots__ = ("key", "path", "parents", "mover", "pn", "dn", "children", "actions",
                 "busy", "jobs", "budget", "depth")

    def __init__(self, key, path, parent, mover, pn, dn, depth):
        self.key, self.path, self.mover = key, path, mover
        self.parents: list[Node] = [] if parent is None else [parent]
        self.pn, self.dn = pn, dn
        self.children: list[Node] | None = None
        self.actions: list[int] | None = None   # the move to each child, from `path`
        self.busy = 0               # jobs out on this node
        self.jobs = 0               # jobs finished on this node
        self.budget = 0             # the node budget of its next job (0 = the default)
        self.depth = depth

    @property
    def parent(self):
        """The parent it was first reached from (None at the root)."""
        return self.parents[0] if self.parents else None

    @property
    def proven(self) -> bool:
        return self.pn == 0 or self.dn == 0

    def seen(self, child) -> tuple[int, int]:
        """The child's (pn, dn) in this node's mover's perspective."""
        if child.mover == self.mover:
            return child.pn, child.dn
        return child.dn, child.pn


@dataclass
class ProofTreeResult:
    """Where a two-level proof stands: `value` 1.0 / 0.0 for the player to move at the
    root when proven, else None; `first_moves` maps each root move's name to its proven
    value for that player (None: open)."""

    value: float | None
    player: int
    root_pn: int
    root_dn: int
    first_moves: dict[str, float | None]
    jobs: int
    nodes: int
    cpu_s: float
    wall_s: float
    tree_nodes: int                 # in the top tree now (proven subtrees are dropped)
    expansions: int = 0             # top-tree expansions so far (this session and replayed)
    peak_tree_nodes: int = 0
    jobs_replayed: int = 0
    torn_lines: int = 0
    status: str = ""
    workers: dict[int, int] = field(default_factory=dict)   # pid -> jobs
    # each root move's (pn, dn) in the root mover's perspective: how far it is from decided
    first_numbers: dict[str, tuple[int, int]] = field(default_factory=dict)
    # wall seconds (all sessions) until the root was proven, before the session's teardown
    # (stopping the workers, keeping its proofs): when the answer was known
    answer_s: float | None = None
    max_tree_nodes: int = 0         # the top tree's cap (0: not said)

    @property
    def proven(self) -> bool:
        return self.value is not None

    def summary(self) -> str:
        head = {1.0: "win", 0.0: "loss", None: "unproven"}[self.value]
        decided = sum(v is not None for v in self.first_moves.values())
        moves = " ".join(f"{k}={'?' if v is None else int(v)}" for k, v in self.first_moves.items())
        return (f"{head} for player {self.player} ({self.status}): root pn={number_text(self.root_pn)} "
                f"dn={number_text(self.root_dn)}; first moves decided {decided}/{len(self.first_moves)} "
                f"({moves}); {self.jobs:,} jobs, {self.nodes:,} nodes, {self.cpu_s:,.1f} CPU s, "
                f"{self.wall_s:,.1f} s wall; top tree {self.tree_nodes:,} nodes "
                f"(peak {self.peak_tree_nodes:,}, {self.expansions:,} expansions"
                f"{f', cap {self.max_tree_nodes:,}' if self.max_tree_nodes else ''})")


def number_text(x: int, thousands: bool = False) -> str:
    """A proof or disproof number as text: "inf" for infinity (proven the other way)."""
    return "inf" if x >= INF else f"{x:,}" if thousands else str(x)


class ProofTree:
    """The two-level proof of `state` (two players, deterministic, perfect information,
    acyclic: what ProofSearch handles).

    >>> from niwa.ext.lotus import LotusState
    >>> tree = ProofTree(LotusState(towers=1, lane=1, shared=2, trampoline_at=3), job_nodes=50)
    >>> tree.run().value
    0.0
    """

    def __init__(self, state, job_nodes: int = 2_000_000, tt_mb: float = 256,
                 tables: str | None = None, checkpoint: str | Path | None = None,
                 max_tree_nodes: int | None = None, max_depth: int = 40,
                 read_only: bool = False,
                 share: bool = True, transpositions: bool | None = None,
                 busy_policy: str = "guess", expand_after: int = 2, keep_proven: int = 200_000,
                 keep_min_work: int = KEEP_MIN_WORK, on_replay=None, huge_pages: bool = False,
                 focus=(), certify=None, set_plies: int = 0, set_every: int = SET_EVERY):
        from niwa.solver.proof import ProofSearch

        ProofSearch(tt_mb=1)._prepare(state)        # the same refusals as the df-pn search
        if job_nodes < 1:
            raise ValueError("job_nodes must be positive")
        self.root_state = state.clone()
        self.notation = state.to_notation()
        self.job_nodes = int(job_nodes)
        self.tt_mb = float(tt_mb)
        self.tables = None if tables is None else str(tables)
        # None: the checkpoint's (a new one: MAX_TREE_NODES); given on a resume, it may
        # only raise the checkpoint's, since the log is replayed under the cap in meta.json
        # (a higher cap expands every node the old one did, so every logged path is there)
        self._asked_max_tree_nodes = max_tree_nodes
        self.max_tree_nodes = MAX_TREE_NODES if max_tree_nodes is None else int(max_tree_nodes)
        if self.max_tree_nodes < 1:
            raise ValueError("max_tree_nodes must be positive")
        self.max_depth = max_depth
        self.share = share          # local workers share one table (see the module docstring)
        # df-pn tables on 2 MB pages (madvise; Linux transparent huge pages): fewer TLB misses
        # in a table of gigabytes, a dearer first touch (see huge_pages_note())
        self.huge_pages = bool(huge_pages)
        # lines of moves from the root (a first move, or deeper: the pro opening's two
        # stones) whose positions get this session's jobs, one after the other in this
        # order, until each is decided (or has no leaf free): the order of the work only
        self.focus = self._focus_lines(state, focus)
        # the first set_plies plies below the focus node (the root without one) are chosen by
        # proof-set numbers (niwa.solver.proof_sets: a transposed leaf counted once), worked
        # out again every set_every selections; the tree's numbers choose below them
        if set_plies < 0 or set_every < 1:
            raise ValueError("set_plies must be at least 0 and set_every at least 1")
        self.set_plies, self.set_every = int(set_plies), int(set_every)
        self._set_base = self._set_key = None   # the last choice: from which node, to which
        self._set_age = 0                       # selections since it was worked out
        self.set_choices = 0                    # proof-set choices worked out this session
        self.set_cpu_s = 0.0                    # and the CPU seconds they took
        # each job that proves its position certifies it in its worker (JobCertifier), the
        # certificate saved in DIR/parts: the proof's certificate is then mostly written
        # as it goes (needs a checkpoint)
        if certify is not None and checkpoint is None:
            raise ValueError("certify needs a checkpoint (the job certificates go there)")
        self.certify = certify
        self._certificate_names: list[str] = []    # DIR/parts files the log's rows name
        self._plan = None           # the focus nodes of the running selection
        self.auto_line = None       # the position an AutoFocus chose (actions from the root)
        self.steered = 0            # focus changes taken from DIR/focus.steer while running
        self.saved_focus = None     # the focus the checkpoint's last snapshot names (text)
        self.saved_set_choice = None    # and the node its proof-set numbers chose last
        self.run_settings = None    # this session's executor, workers, table (see run())
        self.saved_run = None       # the last session's, from tree.json
        self._steer_at = 0.0
        # at a stop, up to keep_proven proofs of at least keep_min_work expansions each are
        # kept in DIR/proven.npy and loaded into the next session's table
        self.keep_proven, self.keep_min_work = int(keep_proven), int(keep_min_work)
        self.proven_loaded = self.proven_saved = 0
        self._kept_search = None     # the table whose proofs a stop keeps (see _load_proven)
        # or (the executor whose workers' tables a stop collects, this build's table key of
        # the root, which the rows are filed under)
        self._kept_remote = None
        self.shared_mb = 0.0        # the size of the table shared in the last session, if any
        if busy_policy not in BUSY_POLICIES:
            raise ValueError(f"busy_policy must be one of {', '.join(BUSY_POLICIES)}")
        self.busy_policy = busy_policy
        if expand_after < 1:
            raise ValueError("expand_after must be at least 1")
        # a leaf's first expand_after - 1 unfinished jobs send it again with twice the
        # budget (df-pn goes on in its table) before the top tree expands it
        self.expand_after = int(expand_after)
        # None: a checkpoint's own setting, True for a new tree (see _open_checkpoint)
        self.transpositions = True if transpositions is None else bool(transpositions)
        self._asked_transpositions = transpositions
        self._new_tree()
        self.jobs_done = self.nodes = 0
        self.cpu_s = 0.0
        self.wall_s = 0.0           # wall seconds of earlier sessions (from the checkpoint)
        self.answer_s = None        # wall seconds until the root was proven
        self.next_job = 0
        self.workers: dict[int, int] = {}
        self.run_id = uuid.uuid4().hex[:12]     # this session's worker tables
        self.expansions = 0                     # nodes expanded in the top tree
        self.peak_tree_nodes = 1
        self.jobs_replayed = self.torn_lines = 0
        self.dir = None if checkpoint is None else Path(checkpoint)
        self.read_only = read_only      # a look at a checkpoint (--status): nothing written
        # called as on_replay(tree, row) after each job of the log is replayed (the history)
        self._on_replay = on_replay
        self._log = self._lock = None
        self._snapshot_at = 0.0
        self._session_t0 = None     # when the running session started (for the wall time)
        if self.dir is not None:
            try:
                self._open_checkpoint()
            except BaseException:
                self.close()        # let go of the lock of a checkpoint we cannot use
                raise

    @staticmethod
    def _focus_lines(state, focus) -> tuple[tuple[int, ...], ...]:
        """Each focus item as a line of actions from the root (see line_actions), or an
        AutoFocus ("auto", "auto:PLIES")."""
        try:
            return tuple(AutoFocus.parse(item) or line_actions(state, item) for item in focus)
        except FocusError:
            raise
        except LineError as e:
            raise FocusError(f"focus: {e}") from None

    def focus_text(self) -> str:
        """The focus lines by move names, in their order ("" without a focus)."""
        return focus_text(self.root_state, self.focus, self.auto_line)

    def _new_tree(self):
        state = self.root_state
        self.root = self._new_node(self._key((), state), (), None, state)
        self.by_key: dict = {self.root.key: self.root}

    # -- nodes
    def _key(self, path, state):
        """The node key of the position `state` reached by `path`: the path itself without
        transpositions; with them the game's symmetric hash and the mover (a game's end
        is a node of its own on each edge: it carries its parent's perspective)."""
        if not self.transpositions:
            return path
        if state.is_terminal():
            return ("end",) + path
        return (state.symmetric_hash(), state.current_player())

    def _new_node(self, key, path, parent, state, pn=None, dn=None):
        if state.is_terminal():
            # the result for the parent's mover decides it; stored in that perspective
            # under the mover -1 (never equal to a player, so seen() swaps it back)
            won = state.returns()[parent.mover] == 1.0
            return Node(key, path, parent, -1, INF if won else 0, 0 if won else INF,
                        parent.depth + 1)
        m = state.current_player()
        if pn is None:
            # unexplored: df-pn's mobility numbers (one good move could prove it, every
            # move must be refuted)
            pn, dn = 1, len(state.legal_actions())
        return Node(key, path, parent, m, pn, dn, 0 if parent is None else parent.depth + 1)

    def _state_at(self, path):
        s = self.root_state.clone()
        for i, a in enumerate(path):
            if s.is_terminal() or a not in s.legal_actions():
                raise CheckpointError(f"job path {list(path)} has an illegal action at {i}")
            s.apply(a)
        return s

    def _expand(self, node, known=None):
        """Give `node` its children in the top tree; `known` maps a child's key to its
        (player, pn, dn) as a worker's table had them. A child whose position is already
        in the tree (a transposition) is linked, not made again."""
        state = self._state_at(node.path)
        node.children, node.actions = [], []
        known = known or {}
        refined: list[Node] = []
        for a in state.legal_actions():
            child = state.clone()
            child.apply(a)
            path = node.path + (a,)
            key = self._key(path, child)
            info = known.get(key)
            c = self.by_key.get(key)
            if c is not None:
                if info is not None and info[0] is not None and c.children is None and \
                        c.jobs == 0 and c.busy == 0 and not c.proven:
                    # a leaf no job has looked at: this table's numbers are better
                    c.pn, c.dn = int(info[1]), int(info[2])
                    refined.extend(p for p in c.parents if p is not node)
                c.parents.append(node)
            elif info is not None and info[0] is not None and not child.is_terminal():
                c = self._new_node(key, path, node, child, int(info[1]), int(info[2]))
            else:
                c = self._new_node(key, path, node, child)
            self.by_key.setdefault(key, c)
            node.children.append(c)
            node.actions.append(a)
        self.expansions += 1
        self.peak_tree_nodes = max(self.peak_tree_nodes, len(self.by_key))
        for p in refined:       # (the caller updates `node` itself)
            self._update(p)

    def _update(self, node):
        """Recompute the numbers of `node` and of every ancestor whose numbers change."""
        stack = [node]
        while stack:
            n = stack.pop()
            if n.children and not n.proven:
                before = n.pn, n.dn
                pn, total = INF, 0
                for c in n.children:
                    cp, cd = n.seen(c)
                    pn = min(pn, cp)
                    total += cd
                n.pn = pn
                n.dn = INF if pn == 0 else 0 if total == 0 else min(total, PN_MAX)
                if n.proven:
                    self._prune(n)
                elif (n.pn, n.dn) == before:
                    continue
            stack.extend(n.parents)

    def _prune(self, node):
        """A proven node keeps its children only for the root's first moves; a node no
        parent links to any more leaves the tree."""
        if node is self.root or node.children is None:
            return
        stack = [node]
        while stack:
            n = stack.pop()
            kids, n.children, n.actions = n.children, None, None
            for c in kids:
                c.parents.remove(n)
                if not c.parents:
                    self.by_key.pop(c.key, None)
                    if c.children:
                        stack.append(c)

    def _free(self, node, memo) -> bool:
        """Whether a leaf no job is working on lies below `node`."""
        if node.proven:
            return False
        if node.children is None:
            return node.busy == 0
        got = memo.get(id(node))
        if got is None:
            got = memo[id(node)] = any(self._free(c, memo) for c in node.children)
        return got

    def _select(self):
        """The most-proving leaf no job is working on (busy nodes counted as the busy
        policy says); if there is none, the most-proving busy leaf is expanded in the top
        tree and one of its children is taken."""
        self._take_steering()
        self._plan = self._focus_plan()
        if self.root.proven:        # growing the tree to a focus line may decide it
            return None
        if self.busy_policy != "skip":
            node = self._select_virtual()
            if node is not None:
                return node
        while True:
            node = self.root
            memo: dict = {}
            if self._free(node, memo):
                while node.children is not None:
                    node = min(self._focused(node, [c for c in node.children
                                                     if self._free(c, memo)]),
                               key=node.seen)
                return node
            while node.children is not None:
                node = min(self._focused(node, [c for c in node.children if not c.proven]),
                           key=node.seen)
            self._expand(node)
            self._update(node)
            if node.proven or self.root.proven:
                return None
            pick = min(self._focused(node, [c for c in node.children if not c.proven]),
                       key=node.seen)
            if self._free(pick, {}):
                return pick
            # (transpositions) that child is busy elsewhere: look again, the tree grew

    def _select_virtual(self):
        """The most-proving leaf when every busy node counts as proven for the player the
        policy names (Wu et al.'s job-level PNS: virtual win / virtual loss), so the next
        job goes where the tree still needs work under that assumption; None when the
        assumption proves the root (then the busy nodes are skipped instead)."""
        r = self.root
        if self.busy_policy == "win":
            winner = r.mover
        elif self.busy_policy == "loss":
            winner = 1 - r.mover
        else:   # "lean": the side the root's numbers favour
            winner = r.mover if r.pn <= r.dn else 1 - r.mover
        busy = [n for n in self.by_key.values() if n.busy and not n.proven]
        if not busy:
            return None
        if self.busy_policy == "guess":
            # each busy node goes the way its own numbers lean (the mover wins if its
            # proof looks cheaper than its disproof)
            virtual = {id(n): ((0, INF) if n.pn <= n.dn else (INF, 0)) for n in busy}
        else:
            virtual = {id(n): ((0, INF) if n.mover == winner else (INF, 0)) for n in busy}
        above: set = set()
        stack = list(busy)
        while stack:
            n = stack.pop()
            for p in n.parents:
                if id(p) not in above:
                    above.add(id(p))
                    stack.append(p)

        def numbers(n):
            got = virtual.get(id(n))
            if got is not None:
                return got
            if id(n) not in above or n.proven or n.children is None:
                return n.pn, n.dn
            pn, total = INF, 0
            for c in n.children:
                cpn, cdn = numbers(c)
                cp, cd = (cpn, cdn) if c.mover == n.mover else (cdn, cpn)
                pn = min(pn, cp)
                total += cd
            got = virtual[id(n)] = (pn, INF if pn == 0 else 0 if total == 0 else
                                    min(total, PN_MAX))
            return got

        def seen(n, c):
            cpn, cdn = numbers(c)
            return (cpn, cdn) if c.mover == n.mover else (cdn, cpn)

        pn, dn = numbers(r)
        if pn == 0 or dn == 0:
            return None
        node = r
        while node.children is not None:
            node = min(self._focused(node, node.children, lambda c: 0 not in numbers(c)),
                       key=lambda c, n=node: seen(n, c))
        return node

    def node_at(self, line):
        """The top tree's node of the position `line` (actions from the root) reaches, or
        None if the tree does not hold it."""
        return self.by_key.get(self._key(tuple(line), self._state_at(line)
                                         if self.transpositions else None))

    def _focus_plan(self):
        """(the first open focus node, its ancestors), each by id, for this selection, or None
        without a focus. A focus line's node is grown into the top tree if it is not there
        yet (None if a node on the way is decided first)."""
        if not self.focus and not self.set_plies:
            return None
        targets = []
        for line in self.focus:
            if isinstance(line, AutoFocus):
                node = self._auto_target(line)
                if node is None:
                    continue
                targets.append(node)
                break
            node = self.node_at(line)
            if node is None:
                node = self.root
                for a in line:
                    if node.proven:
                        break
                    if node.children is None:
                        self._expand(node)
                        self._update(node)
                    node = node.children[node.actions.index(a)]
            if not node.proven:
                targets.append(node)
                break       # in order: the first focus still open takes the jobs
        if self.set_plies:
            deep = self._set_target(targets[0] if targets else self.root)
            if deep is not None:
                targets = [deep]
        toward: dict = {}
        stack = list(targets)
        while stack:
            for p in stack.pop().parents:
                if id(p) not in toward:
                    toward[id(p)] = p   # held, so no id is reused while the plan stands
                    stack.append(p)
        return {id(t): t for t in targets}, toward

    def _set_target(self, base):
        """The node `set_plies` plies below `base` that proof-set numbers choose (see
        niwa.solver.proof_sets.set_line), worked out again when `base` changes, when the last
        choice is decided or has left the tree, and every `set_every` selections; None when
        `base` is decided or not yet expanded."""
        if base.proven or base.children is None:
            return None
        self._set_age += 1
        node = None if self._set_key is None else self.by_key.get(self._set_key)
        if node is None or node.proven or self._set_base != base.key or \
                self._set_age >= self.set_every:
            t = time.process_time()
            node = set_line(base, self.set_plies)[-1]
            self.set_cpu_s += time.process_time() - t
            self.set_choices += 1
            self._set_base, self._set_key, self._set_age = base.key, node.key, 0
        return node

    def _take_steering(self):
        """A new focus written into DIR/focus.steer (steer_checkpoint) while this run goes
        on: taken, at most every STEER_EVERY_S seconds, and the file removed. A file that
        does not parse is removed and ignored (steer_checkpoint checks before it writes)."""
        if self.dir is None or self.read_only or \
                time.monotonic() - self._steer_at < STEER_EVERY_S:
            return
        self._steer_at = time.monotonic()
        path = self.dir / STEER_FILE
        try:
            lines = json.loads(path.read_text())
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            lines = None
        path.unlink(missing_ok=True)
        try:
            focus = self._focus_lines(self.root_state, lines)
        except (FocusError, TypeError):
            return
        self.focus, self.auto_line = focus, None
        self.steered += 1

    def _auto_target(self, auto):
        """The open node an AutoFocus sends the jobs to: the one it chose before while that
        is open, else a new choice (None when the root has no open position below it)."""
        if self.auto_line is not None:
            node = self.node_at(self.auto_line)
            if node is not None and not node.proven:
                return node
        if self.root.children is None and not self.root.proven:
            self._expand(self.root)     # a choice below the root, as a focus line's
            self._update(self.root)
        candidates = [c for ply, c in self.nodes_below(auto.plies, proven=False)
                      if ply == auto.plies or c.children is None]
        if not candidates:
            self.auto_line = None
            return None
        pick = min(candidates, key=lambda c: (min(c.pn, c.dn), c.pn + c.dn))
        self.auto_line = tuple(pick.path)
        return pick

    def _focused(self, node, children, is_open=None):
        """`children` of `node` to choose from: on the way down to an open focus node (from
        any of its parents), the children that lead there and are open (`is_open`,
        default: not proven) if there are any, else all."""
        plan = self._plan
        if plan is None or id(node) not in plan[1]:
            return children
        is_open = is_open or (lambda c: not c.proven)
        kept = [c for c in children if (id(c) in plan[0] or id(c) in plan[1]) and is_open(c)]
        return kept or children

    def _find(self, path):
        """The node at `path` and its position (None when the path is not in the tree);
        the top tree is grown down to it if the job was sent from a busy leaf's expansion
        this tree has not made (a replayed checkpoint). The node is None if an ancestor is
        proven (the job's answer is no longer needed)."""
        state = self._state_at(path) if self.transpositions else None
        node = self.by_key.get(self._key(path, state))
        if node is not None:
            return node, state
        node = self.root
        for i in range(len(path)):
            if node.proven:
                return None, state
            if node.children is None:
                self._expand(node)
                self._update(node)
                if node.proven:
                    return None, state
            prefix = path[:i + 1]
            node = self.by_key.get(self._key(prefix, self._state_at(prefix)
                                             if self.transpositions else None))
            if node is None:
                raise CheckpointError(f"job path {list(path)} has an illegal action at {i}")
        return node, state

    # -- jobs
    def _job_for(self, node) -> ProofJob:
        node.busy += 1
        self.next_job += 1
        return ProofJob(self.notation, node.path, node.budget or self.job_nodes, self.tt_mb,
                        self.tables, self.next_job, self.run_id, self.huge_pages, self.certify,
                        None if self.certify is None else str(self.dir / JOB_PARTS))

    def _jobs(self, stop):
        """The job stream the executor takes from (a job is chosen when a worker is free)."""
        while not self.root.proven and not stop():
            node = self._select()
            if node is None:
                continue
            yield self._job_for(node)

    def apply_row(self, row: dict) -> None:
        """Fold one finished job into the tree (also used to replay a checkpoint)."""
        path = tuple(row["path"])
        self.jobs_done += 1
        if row.get("part"):
            self._certificate_names.append(str(row["part"]))
        self.nodes += int(row["nodes"])
        self.cpu_s += float(row.get("cpu_s", 0.0))
        self.next_job = max(self.next_job, int(row["job"]))
        pid = int(row.get("pid", 0))
        self.workers[pid] = self.workers.get(pid, 0) + 1
        node, state = self._find(path)
        if node is None:        # pruned meanwhile: an ancestor was proven
            return
        node.busy = max(node.busy - 1, 0)
        node.jobs += 1
        if node.proven:
            return
        if int(row["player"]) != node.mover:
            raise CheckpointError(f"job {row['job']} does not fit the position at "
                                  f"{list(path)} (another mover)")
        pn, dn = int(row["pn"]), int(row["dn"])
        if pn == 0 or dn == 0:
            # a proof of the position: it settles the node on every path to it
            node.pn, node.dn = pn, dn
            self._prune(node)
            for p in list(node.parents):
                self._update(p)
            return
        known = {}
        for k in row.get("children") or []:
            a = int(k[0])
            if state is None:
                known[path + (a,)] = (k[1], k[2], k[3])
            elif a in state.legal_actions():
                child = state.clone()
                child.apply(a)
                known[self._key(path + (a,), child)] = (k[1], k[2], k[3])
        if node.children is None:
            if len(self.by_key) < self.max_tree_nodes and node.depth < self.max_depth and \
                    (node.jobs >= self.expand_after or node is self.root):
                self._expand(node, known)
                self._update(node)
            else:
                node.pn, node.dn = pn, dn
                node.budget = 2 * int(row.get("budget") or self.job_nodes)
                for p in list(node.parents):
                    self._update(p)
        else:
            # expanded while this job was out: its table's numbers refine children no job
            # has looked at yet
            for c in node.children:
                info = known.get(c.key)
                if c.children is None and c.jobs == 0 and c.busy == 0 and not c.proven \
                        and info is not None and info[0] is not None:
                    c.pn, c.dn = int(info[1]), int(info[2])
                    for p in c.parents:
                        if p is not node:
                            self._update(p)
            self._update(node)

    # -- running
    def _share_table(self, executor) -> float:
        """Map the table the local workers of this session will share (before the executor
        forks them): `tt_mb` per worker, in one table. 0 when the workers keep their own
        (one worker, this process, or workers not forked from here, such as Dask's)."""
        from niwa.solver.proof import SharedProofTable

        workers = executor.workers
        if not self.share or executor.name != "local" or workers < 2:
            return 0.0
        mb = self.tt_mb * workers
        _SHARED_TABLES[self.run_id] = SharedProofTable(mb, huge_pages=self.huge_pages)
        return mb

    # -- proofs kept between sessions
    def _session_search(self, executor):
        """The df-pn search whose table this session's jobs fill, as this process can reach
        it: the table shared with local workers, or the in-process worker's own; None for
        workers elsewhere (a Dask cluster), whose tables this process cannot read."""
        from niwa.solver.proof import ProofSearch

        shared = _SHARED_TABLES.get(self.run_id)
        if shared is not None:
            return ProofSearch(tt_mb=shared.tt_mb, shared=shared)
        if isinstance(executor, InProcessExecutor):
            return _worker_search(self.tt_mb, self.tables, self.root_state, self.run_id,
                                  self.huge_pages)
        return None

    def _load_proven(self, executor) -> None:
        """Put the proofs an earlier session kept (DIR/proven.npy) into this session's table
        before the first job, so a resume does not prove them again."""
        self._kept_search = self._kept_remote = None
        if self.dir is None or self.read_only or self.keep_proven <= 0:
            return
        search = self._session_search(executor)
        if search is None:
            self._load_proven_remote(executor)
            return
        self._kept_search = search
        rows = read_proven(self.dir, search, self.root_state)
        if rows is not None:
            try:
                self.proven_loaded = int(search.load_proven(rows))
            except ValueError as e:
                raise CheckpointError(f"checkpoint {self.dir} is damaged: proven.npy {e}") \
                    from None

    def _load_proven_remote(self, executor) -> None:
        """The kept proofs sent to every worker process elsewhere (a Dask cluster), each
        loading them into the tables it makes for this session; a stop then collects the
        workers' proofs (_save_proven). Nothing for an executor that cannot reach its
        workers' processes."""
        if not callable(getattr(executor, "run_on_workers", None)):
            return
        from niwa.solver.proof import ProofSearch

        keys = ProofSearch(tt_mb=1)         # (a table of its own to read the keys with)
        key = keys.table_key(self.root_state)
        self._kept_remote = executor, key
        rows = read_proven(self.dir, keys, self.root_state)
        if rows is not None and len(rows):
            sent = executor.run_on_workers(_stash_kept, self.run_id, rows, self.notation, key)
            self.proven_loaded = len(rows) if any(sent) else 0

    def _save_proven(self) -> None:
        """Keep the largest proofs of this session's table (DIR/proven.npy, atomically),
        read while no worker writes it (the workers have ended), or of the workers' tables
        elsewhere (each read safely while a job may still write it)."""
        search, self._kept_search = self._kept_search, None
        remote, self._kept_remote = self._kept_remote, None
        if self.dir is None or self.read_only:
            return
        if remote is not None:
            self._save_proven_remote(*remote)
            return
        if search is None:
            return
        rows = search.proven_entries(self.keep_min_work, self.keep_proven)
        write_proven(self.dir, rows, search.table_key(self.root_state), self.notation,
                     self.keep_min_work)
        self.proven_saved = len(rows)

    def _save_proven_remote(self, executor, key: int) -> None:
        """_save_proven for workers elsewhere: their tables' proofs collected and merged
        (rows filed under other keys than `key`, another build's, are left out); if the
        workers cannot be reached, the kept proofs of the last session stay as they were."""
        try:
            answers = executor.run_on_workers(_collect_kept, self.run_id, self.notation,
                                              self.keep_min_work, self.keep_proven)
        except Exception:   # noqa: BLE001 (a cluster gone at the stop: keep the old file)
            return
        rows = merge_kept([r for k, r in answers if k == key], self.keep_proven)
        if not len(rows):
            return          # (workers restarted, or another build: keep the old file)
        write_proven(self.dir, rows, key, self.notation, self.keep_min_work)
        self.proven_saved = len(rows)

    def run(self, executor: JobExecutor | None = None, time_limit: float = 0.0, max_jobs: int = 0,
            progress=None) -> ProofTreeResult:
        """Prove the root (or stop after `time_limit` wall seconds or `max_jobs` jobs of this
        session; a checkpointed run continues later from where it stopped)."""
        executor = executor or InProcessExecutor()
        t0 = self._session_t0 = time.monotonic()
        done = 0
        # how this session runs, for the checkpoint's tree.json (meta.json keeps the first
        # session's settings: the defaults of a resume)
        self.run_settings = {"executor": executor.name, "workers": executor.workers,
                             "tt_mb": self.tt_mb, "huge_pages": self.huge_pages,
                             "tables": self.tables, "certify_jobs": self.certify is not None,
                             "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if self.certify is not None:
            self.run_settings["certify_budget_s"] = self.certify.time_budget
        if self.set_plies:
            self.run_settings["set_plies"] = self.set_plies
            self.run_settings["set_every"] = self.set_every

        def stop():
            return (time_limit > 0 and time.monotonic() - t0 >= time_limit) or \
                (max_jobs > 0 and done + in_flight() >= max_jobs)

        def in_flight():
            return sum(n.busy for n in self.by_key.values()) if max_jobs else 0

        status = "proven"
        if not self.root.proven:
            self.shared_mb = self._share_table(executor)
            self._load_proven(executor)
            if executor.workers > 1 and self.root.children is None:
                # several workers: a job on the root would search the very subtrees the
                # second job is sent to (the root is busy, so it goes to a first move);
                # its children are in the top tree from the start instead
                self._expand(self.root)
                self._update(self.root)
            rows = executor.run(_Stream(self._jobs(stop)))
            try:
                for row in rows:
                    self._record(row)
                    self.apply_row(row)
                    done += 1
                    self._maybe_snapshot()
                    if progress is not None:
                        progress(self, row)
                    if self.root.proven:
                        self.answer_s = self.wall_s + time.monotonic() - t0
                        break
                    if time_limit > 0 and time.monotonic() - t0 >= time_limit:
                        status = "time limit"
                        break
                    if max_jobs > 0 and done >= max_jobs:
                        status = "job limit"
                        break
            finally:
                close = getattr(rows, "close", None)
                if close is not None:
                    close()
                # the workers have ended with the stream: the table is quiet, its proofs
                # can be kept; then this process's mapping goes
                self._save_proven()
                _SHARED_TABLES.pop(self.run_id, None)
                # also when interrupted (Ctrl-C): tree.json then matches the job log
                self._end_session(t0)
            if not self.root.proven and status == "proven":
                status = "stopped"
        else:
            self._end_session(t0)
        result = self.result()
        result.status = status if not result.proven else "proven"
        return result

    def _end_session(self, t0) -> None:
        for n in self.by_key.values():
            n.busy = 0          # jobs still out are lost with the session
        self.wall_s += time.monotonic() - t0
        self._session_t0 = None
        self._snapshot()

    def result(self) -> ProofTreeResult:
        r = self.root
        value = None if not r.proven else (1.0 if r.pn == 0 else 0.0)
        first, numbers = {}, {}
        state = self.root_state
        for a, c in zip(r.actions or [], r.children or [], strict=True):
            name = state.action_to_string(a)
            cp, cd = r.seen(c)
            first[name] = 1.0 if cp == 0 else 0.0 if cd == 0 else None
            numbers[name] = (cp, cd)
        wall = self.wall_s
        if self._session_t0 is not None:
            wall += time.monotonic() - self._session_t0
        return ProofTreeResult(value, r.mover, r.pn, r.dn, first, self.jobs_done, self.nodes,
                               self.cpu_s, wall, len(self.by_key),
                               self.expansions, self.peak_tree_nodes, self.jobs_replayed, self.torn_lines,
                               "proven" if r.proven else "open", dict(self.workers),
                               numbers, self.answer_s, self.max_tree_nodes)

    def nodes_below(self, depth: int, proven: bool = True):
        """(plies down, node) for each position of the top tree 1..`depth` plies below the
        root, once each (where the first line reaches it), nearest first; game ends are
        left out, and proven positions too unless `proven`."""
        seen, level = {id(self.root)}, [self.root]
        for ply in range(1, depth + 1):
            below = []
            for n in level:
                for c in n.children or ():
                    if id(c) in seen or c.mover < 0 or (c.proven and not proven):
                        continue
                    seen.add(id(c))
                    below.append(c)
                    yield ply, c
            level = below

    def root_view(self, node) -> tuple[int, int]:
        """A node's (pn, dn) in the root mover's perspective."""
        return (node.pn, node.dn) if node.mover == self.root.mover else (node.dn, node.pn)

    @property
    def job_certificates(self) -> int:
        """How many jobs of the log wrote a certificate to DIR/parts."""
        return len(self._certificate_names)

    def job_certificates_kept(self) -> int:
        """How many of the certificates the log's jobs wrote are in DIR/parts now (none in
        a copy of the checkpoint that left them out, as the repository's does)."""
        if self.dir is None:
            return 0
        return sum((self.dir / JOB_PARTS / name).is_file() for name in self._certificate_names)

    def open_positions(self, depth: int) -> list[tuple[str, int, int, int]]:
        """The open positions of the top tree 2..`depth` plies below the root, each once
        (under the first line that reached it), nearest first: (line by move names, pn, dn
        in the root mover's perspective, jobs finished on it). What is left to decide below
        the first moves: where `--focus` can send the work."""
        return [(line_text(self.root_state, c.path), *self.root_view(c), c.jobs)
                for ply, c in self.nodes_below(depth, proven=False) if ply >= 2]

    # -- the checkpoint
    def _meta(self) -> dict:
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "position": self.notation,
                "job_nodes": self.job_nodes, "tt_mb": self.tt_mb, "tables": self.tables,
                "max_tree_nodes": self.max_tree_nodes, "max_depth": self.max_depth,
                "transpositions": self.transpositions, "expand_after": self.expand_after}

    def _open_checkpoint(self):
        d = self.dir
        meta_path, log_path = d / "meta.json", d / "jobs.jsonl"
        if self.read_only:
            read_meta(d)
        elif meta_path.exists():
            self._take_lock()
        if meta_path.exists():
            meta = read_meta(d)
            if meta["position"] != self.notation:
                raise CheckpointError(f"checkpoint {d} holds another position: "
                                      f"{meta['position']!r}")
            # the tree's shape depends on these: take the checkpoint's, not the caller's
            self.job_nodes = int(meta["job_nodes"])
            self.max_tree_nodes = int(meta["max_tree_nodes"])
            asked = self._asked_max_tree_nodes
            if asked is not None and int(asked) < self.max_tree_nodes:
                raise CheckpointError(f"checkpoint {d} has a top tree of up to "
                                      f"{self.max_tree_nodes:,} nodes: it can be raised, "
                                      f"not lowered to {int(asked):,} (its log replays "
                                      f"under the larger cap)")
            self.max_depth = int(meta["max_depth"])
            # (checkpoints from before the setting expanded a leaf after its first job)
            self.expand_after = int(meta.get("expand_after", 1))
            # checkpoints written before transpositions were folded hold a tree of paths;
            # asked for the other kind, the whole log is replayed into it (every job line
            # is a fact about a position either way) and the header says so from then on
            saved = bool(meta.get("transpositions", False))
            want = saved if self._asked_transpositions is None else self._asked_transpositions
            if want != self.transpositions:
                self.transpositions = want
                self._new_tree()
            # the header says what the checkpoint is now: its kind of tree, and the endgame
            # tables of its latest session (each session is given its own)
            if asked is not None:
                self.max_tree_nodes = int(asked)
            changed = {k: v for k, v in (("transpositions", want), ("tables", self.tables),
                                         ("max_tree_nodes", self.max_tree_nodes))
                       if meta.get(k, False if k == "transpositions" else None) != v}
            if changed and not self.read_only:
                _atomic_write(meta_path, json.dumps(dict(meta, **changed), indent=1) + "\n")
            for row in read_rows(d, self, repair=not self.read_only):
                self.apply_row(row)
                self.jobs_replayed += 1
                if self._on_replay is not None:
                    self._on_replay(self, row)
            for n in self.by_key.values():
                n.busy = 0
            snap = _read_json(d / "tree.json") if (d / "tree.json").exists() else None
            if isinstance(snap, dict):
                self.wall_s = float(snap.get("wall_s", 0.0))
                if isinstance(snap.get("answer_s"), int | float) and self.root.proven:
                    self.answer_s = float(snap["answer_s"])
                self._restore_auto_line(snap.get("auto_focus"))
                if isinstance(snap.get("focus"), str):
                    self.saved_focus = snap["focus"]
                if isinstance(snap.get("set_choice"), str):
                    self.saved_set_choice = snap["set_choice"]
                if isinstance(snap.get("run"), dict):
                    self.saved_run = snap["run"]
        else:
            try:
                d.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise CheckpointError(f"cannot make the checkpoint folder {d}: {e.strerror}") \
                    from None
            self._take_lock()
            if log_path.exists() and log_path.stat().st_size:
                raise CheckpointError(f"checkpoint {d} is damaged: jobs.jsonl without meta.json")
            _atomic_write(meta_path, json.dumps(self._meta(), indent=1) + "\n")
        if not self.read_only:
            self._log = open(log_path, "ab")

    def _restore_auto_line(self, saved):
        """The position an earlier session's --focus auto chose (tree.json), if it is a line
        of moves from the root; anything else is ignored (the next choice is made anew)."""
        if isinstance(saved, str):
            try:
                self.auto_line = line_actions(self.root_state, saved)
            except LineError:
                self.auto_line = None

    def _take_lock(self):
        """One run per checkpoint: two would interleave their job lines."""
        import fcntl

        self._lock = open(self.dir / "lock", "a+")
        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            self._lock = None
            raise CheckpointError(f"checkpoint {self.dir} is in use by another running proof "
                                  "(stop it first; --status only reads)") from None
        _HELD_LOCKS.add(self._lock.fileno())
        # a steering file left by a run that ended before it took it is not for this one;
        # dropped as the lock is taken, so that one written while this run replays its log
        # (it holds the lock, and `--steer` accepts) is kept for it
        (self.dir / STEER_FILE).unlink(missing_ok=True)

    def _record(self, row):
        cert = row.pop("certificate", None)
        made = row.pop("certificate_parts", ())
        if self.dir is not None and not self.read_only:
            # the job's certificate (JobCertifier), saved before its row names it, after
            # the parts it was cut into (kept even when the job's own was given up)
            for i, part in enumerate(made, 1):
                part.save(self.dir / JOB_PARTS / f"job-{int(row['job'])}-{i}.npz")
            if cert is not None:
                name = f"job-{int(row['job'])}.npz"
                cert.save(self.dir / JOB_PARTS / name)
                row["part"] = name
        if self._log is None:
            return
        line = json.dumps(row, separators=(",", ":")) + "\n"
        self._log.write(line.encode())
        self._log.flush()
        os.fsync(self._log.fileno())

    def _maybe_snapshot(self):
        if self.dir is not None and time.monotonic() - self._snapshot_at >= SNAPSHOT_EVERY_S:
            self._snapshot()

    def _snapshot(self):
        if self.dir is None or self.read_only:
            return
        self._snapshot_at = time.monotonic()
        r = self.result()
        snap = {"value": r.value, "player": r.player, "root_pn": r.root_pn,
                "root_dn": r.root_dn, "first_moves": r.first_moves,
                "first_numbers": {k: list(v) for k, v in r.first_numbers.items()},
                "jobs": r.jobs,
                "nodes": r.nodes, "cpu_s": round(r.cpu_s, 3),
                "wall_s": round(r.wall_s, 3), "tree_nodes": r.tree_nodes,
                "answer_s": None if r.answer_s is None else round(r.answer_s, 3),
                "written_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if self.auto_line is not None:
            snap["auto_focus"] = line_text(self.root_state, self.auto_line)
        if self.focus:
            snap["focus"] = self.focus_text()
        if self.run_settings is not None:
            snap["run"] = dict(self.run_settings, shared_mb=self.shared_mb)
            if self.set_plies:
                snap["run"].update(set_choices=self.set_choices,
                                   set_cpu_s=round(self.set_cpu_s, 3))
        chosen = None if self._set_key is None else self.by_key.get(self._set_key)
        if chosen is not None and not chosen.proven:
            snap["set_choice"] = line_text(self.root_state, chosen.path)
        _atomic_write(self.dir / "tree.json", json.dumps(snap) + "\n")

    def close(self):
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._lock is not None:
            _HELD_LOCKS.discard(self._lock.fileno())
            self._lock.close()      # releases the lock
            self._lock = None


# The checkpoint locks this process holds (file descriptors). flock() locks belong to the
# open file, which a forked worker shares: a worker still exiting after its run (a loaded
# machine) kept the checkpoint locked against the next run. A child lets go of its copies
# at once (each pointed at /dev/null, so that the copied file object's close stays harmless).
_HELD_LOCKS: set[int] = set()


def _let_go_of_inherited_locks() -> None:
    if not _HELD_LOCKS:
        return
    null = os.open(os.devnull, os.O_RDWR)
    for fd in _HELD_LOCKS:
        os.dup2(null, fd)
    os.close(null)
    _HELD_LOCKS.clear()


os.register_at_fork(after_in_child=_let_go_of_inherited_locks)


class _Stream:
    """A job stream the arena's executors can take from: sized (as far as they need to
    know: 'many') and generated lazily, so each job is chosen when a worker is free.
    `one_per_worker`: the executors send these jobs one at a time and keep no more than one
    per worker in flight (no batches, no prefetch): a job taken early would be chosen on a
    tree that is stale by the time it runs."""

    one_per_worker = True

    def __init__(self, jobs):
        self.jobs = jobs

    def __len__(self):
        return 1 << 40

    def __iter__(self):
        return self.jobs


# ---- reading a checkpoint -----------------------------------------------------------------
def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return None


CHECKPOINT_FILES = ("meta.json", "jobs.jsonl", "tree.json", "proven.npy", "proven.json")


def refuse_links(directory) -> None:
    """A checkpoint's files must be its own: one that is a symbolic link (appended to, or
    replaced, wherever it leads) is refused, as the endgame tables refuse theirs."""
    d = Path(directory)
    for name in CHECKPOINT_FILES:
        p = d / name
        if p.is_symlink():
            raise CheckpointError(f"checkpoint {d}: {name} is a symbolic link (to "
                                  f"{os.readlink(p)}); a checkpoint's files must be its own")


def read_meta(directory) -> dict:
    """The checkpoint's meta.json, checked (CheckpointError if missing or damaged)."""
    d = Path(directory)
    path = d / "meta.json"
    if not path.is_file():
        raise CheckpointError(f"{d} is not a proof checkpoint (no meta.json)")
    refuse_links(d)
    meta = _read_json(path)
    keys = ("position", "job_nodes", "tt_mb", "max_tree_nodes", "max_depth")
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or \
            any(k not in meta for k in keys):
        raise CheckpointError(f"checkpoint {d} is damaged: meta.json is not a {FORMAT} header")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"checkpoint {d} has format version {meta.get('format_version')},"
                              f" this niwa reads {FORMAT_VERSION}")
    return meta


ROW_KEYS = ("job", "path", "player", "pn", "dn", "nodes")


def read_rows(directory, tree=None, repair=False):
    """The finished jobs of a checkpoint, in order. A last line cut short by a kill (or
    being written by a live run) is skipped (counted in tree.torn_lines) and, with `repair`,
    cut off the file; any other bad line is a CheckpointError."""
    path = Path(directory) / "jobs.jsonl"
    if not path.exists():
        return
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn = lines.pop()          # b"" when the file ends with a newline
    if torn and tree is not None:
        tree.torn_lines += 1
    for number, raw in enumerate(lines, 1):
        try:
            row = json.loads(raw)
            ok = isinstance(row, dict) and all(k in row for k in ROW_KEYS) and \
                isinstance(row["path"], list)
        except (ValueError, UnicodeDecodeError):
            ok = False
        if not ok:
            raise CheckpointError(f"checkpoint {directory} is damaged: jobs.jsonl line "
                                  f"{number} is not a job result")
        yield row
    if torn and repair:
        # cut the torn line off, so the next append starts on a line of its own
        with open(path, "r+b") as f:
            f.truncate(len(data) - len(torn))


def open_checkpoint(directory, state=None, **settings) -> ProofTree:
    """The proof tree of a checkpoint folder, its finished jobs replayed: of `state` (a
    new checkpoint is started if the folder has none), or of the position the checkpoint
    holds when `state` is None. `read_only=True`: only look (no lock, nothing written)."""
    d = Path(directory)
    if state is None:
        meta = read_meta(d)
        from niwa.ext.registry import parse_position

        try:
            state = parse_position(meta["position"])
        except NiwaError as e:
            raise CheckpointError(f"checkpoint {d} is damaged: its position does not parse "
                                  f"({str(e).splitlines()[0]})") from None
        settings = {"job_nodes": meta["job_nodes"], "tt_mb": meta["tt_mb"],
                    "tables": meta.get("tables"), **settings}
    try:
        return ProofTree(state, checkpoint=d, **settings)
    except (CheckpointError, FocusError):
        raise
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise CheckpointError(f"checkpoint {d} is damaged: {type(e).__name__}: {e}") from None


def checkpoint_in_use(directory) -> bool:
    """Whether a running proof holds the checkpoint in `directory` (its lock, as
    ProofTree takes it)."""
    import fcntl

    d = Path(directory)
    if not (d / "meta.json").is_file() or not (d / "lock").exists():
        return False
    with open(d / "lock", "a+") as lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
        return False


def steer_checkpoint(directory, focus) -> str:
    """Give the proof running on the checkpoint in `directory` a new focus (lines of moves,
    "auto" or "auto:PLIES", as ProofTree's `focus`; an empty list: none) without stopping
    it: checked against the checkpoint's position, written to DIR/focus.steer, and taken by
    the run within seconds (its table, and all it holds, kept). CheckpointError when no
    run holds the checkpoint. Returns the focus as text."""
    from niwa.ext.registry import parse_position

    d = Path(directory)
    state = parse_position(read_meta(d)["position"])
    text = focus_text(state, ProofTree._focus_lines(state, list(focus))) or "none"
    if not checkpoint_in_use(d):
        raise CheckpointError(f"no proof is running on {d}: start one with --focus")
    _atomic_write(d / STEER_FILE, json.dumps([str(x) for x in focus]) + "\n")
    return text


def look_at_checkpoint(directory, **settings):
    """(tree, result) of the checkpoint in `directory`, its jobs replayed read-only (no lock,
    nothing written): where the proof stands, for --status, a table row or a certificate."""
    tree = open_checkpoint(directory, read_only=True, **settings)
    try:
        return tree, tree.result()
    finally:
        tree.close()


def proven_jobs(directory, root_state) -> tuple[dict, set]:
    """What the finished jobs of a checkpoint proved, as (proven, tree): `proven` maps the
    (symmetric key, mover) of each position a job proved to (1 if its mover wins else 0,
    the job's nodes; the smallest when several jobs proved it); `tree` holds the keys of
    every position on a job's path (the top tree's positions, where the proofs of the jobs
    combine). Certificates are read off a two-level proof with them
    (niwa.solver.certificate.certificate_from_checkpoint)."""
    proven: dict = {}
    tree: set = set()
    for row in read_rows(directory):
        pn, dn = int(row["pn"]), int(row["dn"])
        state = root_state.clone()
        for i, a in enumerate(row["path"]):
            if state.is_terminal() or a not in state.legal_actions():
                raise CheckpointError(f"checkpoint {directory} is damaged: job path "
                                      f"{row['path']} has an illegal action at {i}")
            tree.add((state.symmetric_hash(), state.current_player()))
            state.apply(a)
        if state.is_terminal() or state.current_player() != int(row["player"]):
            raise CheckpointError(f"checkpoint {directory} is damaged: job {row['job']} "
                                  f"does not fit its position")
        tree.add((state.symmetric_hash(), state.current_player()))
        nodes = int(row["nodes"])
        facts = [(state, pn == 0)]
        if pn != 0 and dn != 0:
            # a job out of budget: the children its table had proven are proven too
            facts, legal = [], state.legal_actions()
            for a, player, cpn, cdn in row.get("children") or []:
                if player is not None and (cpn == 0 or cdn == 0) and a in legal:
                    child = state.child(a)
                    if not child.is_terminal() and child.current_player() == player:
                        facts.append((child, cpn == 0))
        for s, mover_wins in facts:
            key = (s.symmetric_hash(), s.current_player())
            won = int(mover_wins)
            if key in proven and proven[key][0] != won:
                raise CheckpointError(f"checkpoint {directory} is damaged: two jobs prove "
                                      f"{s.to_notation()} both ways")
            if key not in proven or nodes < proven[key][1]:
                proven[key] = (won, nodes)
    return proven, tree


# ---- proofs kept between sessions ---------------------------------------------------------
def write_proven(directory, rows, root_key: int, position: str, min_work: int) -> None:
    """Write DIR/proven.npy (rows of (key, numbers, extra), as ProofSearch.proven_entries
    gives them) and its header DIR/proven.json, each atomically, the header last."""
    import hashlib

    import numpy as np

    d = Path(directory)
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(rows, dtype=np.uint64))
    data = buffer.getvalue()
    tmp = d / "proven.npy.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    digest = hashlib.sha256(data).hexdigest()
    os.replace(tmp, d / "proven.npy")
    head = {"format": PROVEN_FORMAT, "format_version": 1, "position": position,
            "root_key": f"{root_key:016x}", "rows": int(len(rows)), "min_work": int(min_work),
            "sha256": digest, "written_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    _atomic_write(d / "proven.json", json.dumps(head, indent=1) + "\n")


def kept_header(directory) -> dict | None:
    """DIR/proven.json as a dict, or None if there is none or it does not read."""
    head = _read_json(Path(directory) / "proven.json")
    return head if isinstance(head, dict) else None


def read_proven(directory, search, root_state):
    """The rows of DIR/proven.npy checked against their header, or None when there are none
    or they were written by a build whose table keys differ from `search`'s (keys of another
    hashing would name other positions: such rows are not used). A damaged file is a
    CheckpointError."""
    import hashlib

    import numpy as np

    d = Path(directory)
    head_path, rows_path = d / "proven.json", d / "proven.npy"
    if not head_path.exists() and not rows_path.exists():
        return None
    head = kept_header(d)
    if head is None or head.get("format") != PROVEN_FORMAT or \
            not rows_path.is_file() or not isinstance(head.get("sha256"), str):
        raise CheckpointError(f"checkpoint {d} is damaged: proven.json/proven.npy do not match "
                              f"(delete both to go on without the kept proofs)")
    data = rows_path.read_bytes()
    if hashlib.sha256(data).hexdigest() != head["sha256"]:
        raise CheckpointError(f"checkpoint {d} is damaged: proven.npy does not match its "
                              f"checksum (delete proven.npy and proven.json to go on without "
                              f"the kept proofs)")
    if head.get("root_key") != f"{search.table_key(root_state):016x}" or \
            head.get("position") != root_state.to_notation():
        return None
    rows = np.load(io.BytesIO(data), allow_pickle=False)
    if rows.dtype != np.uint64 or rows.ndim != 2 or rows.shape[1] != 3 or \
            len(rows) != head.get("rows"):
        raise CheckpointError(f"checkpoint {d} is damaged: proven.npy is not a table of "
                              f"proven positions")
    return rows
