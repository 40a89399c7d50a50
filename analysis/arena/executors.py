"""Where scheduled games are played: local worker processes or a Dask cluster.

An executor's `run(tasks)` plays the tasks (sized, but generated lazily as taken) and yields
each game's row as soon as it ends, in any order. The local executor keeps a watchdog on
every move (LocalExecutor), so a move that never returns or a native crash costs one game,
never the run. Games are sent in batches sized to a
fraction of a second of play from the durations seen so far (`BatchSizer`), so short
games do not drown in messaging and the tail of a run stays balanced.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import re
import signal
import time
from collections import deque
from collections.abc import Collection, Iterator
from multiprocessing.connection import wait

from niwa.analysis.arena.game_loop import GameResult, Watcher, first_line
from niwa.analysis.arena.game_record import task_record_line
from niwa.analysis.arena.games_csv import game_row, play_task, played_until
from niwa.analysis.arena.run_record import option_flag
from niwa.analysis.arena.schedule import GameTask
from niwa.ext.errors import NiwaError
from niwa.solver.lifetime import (
    die_with_parent,
    kill_groups,
    mirror_groups,
    mirrored_groups,
    own_bar_lock,
    start_reaper,
)


class ExecutorError(NiwaError):
    """Workers that cannot be started or reached, or a job that keeps failing (one-line
    message); tournaments, analyses, tuning runs and table builds all meet it."""


def run_task(task, move_clock=None) -> dict:
    """Run one task: a scheduled game (GameTask), or any other job: a picklable callable
    that returns its result row, a dict with `duration_s` (e.g. one class of an endgame
    table, niwa.solver.tables). Both executors run either kind."""
    if isinstance(task, GameTask):
        return play_task(task, move_clock)
    return task()


def run_batch(tasks: list) -> list[dict]:
    return [run_task(t) for t in tasks]


class BatchSizer:
    """Batches sized to ~target seconds of play from the durations seen so far."""

    def __init__(self, workers: int, target_s: float = 0.25, cap: int = 256):
        self.workers, self.target_s, self.cap = workers, target_s, cap
        self.seconds = 0.0
        self.games = 0

    def record(self, row: dict):
        self.seconds += float(row["duration_s"])
        self.games += 1

    def next_size(self, remaining: int) -> int:
        if self.games < self.workers:
            return 1
        per_game = max(self.seconds / self.games, 1e-5)
        size = int(self.target_s / per_game)
        # keep the tail balanced: never take more than a fair share of what is left
        size = min(size, self.cap, math.ceil(remaining / (2 * self.workers)))
        return max(size, 1)


class _Pending:
    """The tasks still to send: taken lazily from an iterator, with a count of what is
    left (for batch sizing) known without materialising them. A stream that says
    `one_per_worker` (proof jobs, each chosen from the state of the run when it is taken)
    is sent one task at a time, one per worker in flight."""

    def __init__(self, tasks: Collection[GameTask]):
        self.count = len(tasks)
        self.tasks = iter(tasks)
        self.one_per_worker = bool(getattr(tasks, "one_per_worker", False))

    def batch_size(self, sizer: BatchSizer) -> int:
        return 1 if self.one_per_worker else sizer.next_size(self.count)

    def __bool__(self) -> bool:
        return self.count > 0

    def take(self, size: int) -> list[GameTask]:
        batch = []
        for task in self.tasks:
            batch.append(task)
            if len(batch) >= size:
                break
        self.count = self.count - len(batch) if len(batch) == size else 0
        return batch


# ---- the local pool: worker processes under a per-move watchdog -------------------------
WATCHDOG_GRACE_S = 1.0      # a move is stopped this long after its limit has passed
POLL_S = 0.05               # how often the parent looks at its workers' clocks

# the shared move clock of a worker: [deadline, seat, ply, move_started] (time.monotonic()
# seconds, which every process on the machine shares; deadline 0 = no limit, move_started
# 0 = no move in progress), then the process groups of its running engines (0 = none), so
# that the parent can end them after killing the worker
_DEADLINE, _SEAT, _PLY, _STARTED = range(4)
_GROUPS_AT, ENGINE_SLOTS = 4, 16


# the plies of the game in progress, in shared memory beside the move clock, so that a
# game whose worker is killed keeps its record up to the stop (int64 slots): the game id,
# the number of ply slots used, the game's slots before the buffer's first, then per ply:
# player, thinking time in microseconds (-1: chance), k, and k action ids (k = the seats
# at a joint move). The count is written after the ply, so a kill mid-write leaves the
# plies before it whole. A game longer than the buffer sends the full buffer to the
# parent through its pipe and starts it again (the parent reads the pipe to its end
# before it reads the buffer, and drops what it already holds: see plies_played).
PLY_SLOTS = 1 << 14
_GAME, _USED, _BASE, _HEADER = 0, 1, 2, 3
PLIES_MESSAGE = "plies"


class SharedMoveClock(Watcher):
    """The game loop's move clock, written to memory the parent process reads: so a
    watchdog there can stop a move that never returns, without any message from the
    (possibly stuck) worker. As the loop's watcher it also writes each ply played there,
    so the record of a stopped game keeps every move before the stop."""

    def __init__(self, array, plies=None, conn=None):
        self.array, self.plies, self.conn = array, plies, conn
        self.spent = None       # the longest move of the ply in progress (seconds)
        self.move_start = 0.0

    def started(self, seat: int, limit: float | None, ply: int) -> None:
        a, now = self.array, time.monotonic()
        a[_SEAT], a[_PLY], a[_STARTED] = seat, ply, now
        a[_DEADLINE] = now + limit if limit is not None else 0.0
        self.move_start = now

    def finished(self) -> None:
        self.array[_DEADLINE] = 0.0
        self.array[_STARTED] = 0.0
        spent = time.monotonic() - self.move_start
        self.spent = spent if self.spent is None else max(self.spent, spent)

    def begin(self, game_id: int) -> None:
        """A new game: no ply yet."""
        if self.plies is not None:
            self.plies[_USED] = self.plies[_BASE] = 0
            self.plies[_GAME] = game_id
        self.spent = None

    def played(self, before, player: int, action) -> None:
        p = self.plies
        if p is None:
            return
        micros = -1 if self.spent is None else int(self.spent * 1e6)
        self.spent = None
        joint = isinstance(action, list)
        size = 3 + (len(action) if joint else 1)
        used = p[_USED]
        if _HEADER + used + size > len(p):      # full: the parent keeps what it held
            self.conn.send((PLIES_MESSAGE, p[_GAME], p[_HEADER:_HEADER + used]))
            p[_USED] = 0        # first: a kill between the two leaves no slot held twice
            p[_BASE] += used
            used = 0
        at = _HEADER + used
        p[at], p[at + 1], p[at + 2] = player, micros, size - 3
        if joint:
            p[at + 3:at + size] = action
        else:
            p[at + 3] = action
        p[_USED] = used + size


def _worker_main(conn, clock_array, parent_pid: int, plies_array=None) -> None:
    """Play the batches the parent sends, one row back per game as it ends; die with the
    parent, even after its SIGKILL and inside a native search that never returns to
    Python (solver.lifetime: PR_SET_PDEATHSIG on Linux, a watcher thread elsewhere)."""
    own_bar_lock()
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles Ctrl-C
    mirror_groups(clock_array, _GROUPS_AT)
    start_reaper(clock_array, _GROUPS_AT)   # ends our engines after our death, any death
    die_with_parent(parent_pid, before_exit=kill_groups)
    clock = SharedMoveClock(clock_array, plies_array, conn)
    try:
        while True:
            try:
                batch = conn.recv()
            except (EOFError, OSError):
                return
            if batch is None:
                return
            for task in batch:
                if isinstance(task, GameTask):
                    clock.begin(task.game_id)
                conn.send(run_task(task, clock))
    finally:
        kill_groups()       # a forked child skips atexit: end any engine left running


FILES_PER_WORKER = 4     # its pipe, its process sentinel, its clock's shared memory, spare
FILES_RESERVED = 64      # the parent's own files (outputs, tables, imports)


def most_local_workers() -> int:
    """The most local worker processes the open-file limit (RLIMIT_NOFILE) allows."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return 1 << 30
    if soft == resource.RLIM_INFINITY:
        return 1 << 30
    return max(1, (soft - FILES_RESERVED) // FILES_PER_WORKER)


class _Worker:
    """One worker process, its pipe, its move clock and the tasks it holds (in order; the
    first is being played)."""

    def __init__(self, ctx):
        self.clock = ctx.RawArray("d", _GROUPS_AT + ENGINE_SLOTS)
        self.plies = ctx.RawArray("q", PLY_SLOTS)
        self.spilled: list[int] = []        # ply slots the game in progress sent early
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main,
                                args=(child, self.clock, os.getpid(), self.plies),
                                daemon=True)
        self.proc.start()
        child.close()
        self.tasks: deque[GameTask] = deque()
        self.game_started = 0.0

    def send(self, batch: list[GameTask]) -> None:
        self.tasks.extend(batch)
        self.game_started = time.monotonic()
        self.conn.send(batch)

    def rows(self) -> Iterator[dict]:
        """The rows that arrived (the worker may have died after sending them)."""
        while self.tasks:
            try:
                if not self.conn.poll():
                    return
                row = self.conn.recv()
            except (EOFError, OSError):
                return
            if isinstance(row, tuple) and row[0] == PLIES_MESSAGE:
                self.spilled.extend(row[2])
                continue
            self.spilled = []
            self.tasks.popleft()
            self.game_started = time.monotonic()
            yield row

    def plies_played(self, task) -> list[int]:
        """The ply slots of `task`, the game in progress (none if the worker had not
        begun it), once the worker is stopped: those it sent, then those of the buffer
        beyond them."""
        p = self.plies
        if not isinstance(task, GameTask) or p[_GAME] != task.game_id:
            return []
        sent, base = len(self.spilled), p[_BASE]
        if base > sent:         # a buffer it sent never arrived: keep the plies before
            return list(self.spilled)
        return self.spilled + p[_HEADER + sent - base:_HEADER + p[_USED]]

    def overdue(self, now: float) -> bool:
        deadline = self.clock[_DEADLINE]
        return deadline > 0 and now > deadline + WATCHDOG_GRACE_S

    def stop(self) -> None:
        """Kill the worker, then the engines it was running (their process groups)."""
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=5)
        kill_groups(mirrored_groups(self.clock, _GROUPS_AT))
        if not self.proc.is_alive():    # the plies it sent before it died (plies_played)
            try:
                while self.conn.poll():
                    message = self.conn.recv()
                    if isinstance(message, tuple) and message[0] == PLIES_MESSAGE:
                        self.spilled.extend(message[2])
            except (EOFError, OSError):
                pass
        self.conn.close()


def _lost_game_row(task: GameTask, clock, what: str, seconds: float, plies: list[int],
                   termination: str = "forfeit") -> dict:
    """The row of a game its worker could not finish: a forfeit of the seat that was
    moving, or, if no move was in progress, a game without a winner (1/N each, recorded
    as left unfinished). Its record keeps every ply the worker played before it was lost
    (`plies`, the shared ply slots) and the position it stopped at."""
    n = len(task.labels)
    start, state, actions, notes = played_until(task, plies)
    if clock[_STARTED] > 0:
        seat = int(clock[_SEAT])
        result = GameResult([0.0 if q == seat else 1.0 for q in range(n)], len(actions), False,
                            seat, f"seat {seat} ({task.labels[seat]}) {what}",
                            termination=termination)
    else:
        result = GameResult([1.0 / n] * n, len(actions), False, None, f"game lost: {what}",
                            quit=True, termination="forfeit")
    result.actions, result.notes, result.start, result.state = actions, notes, start, state
    return {**game_row(task, result, seconds), **task_record_line(task, result)}


class LocalExecutor:
    """Worker processes on this machine, under a per-move watchdog.

    A move that runs past its limit (--move-time, or the agent's own time= plus the
    margin) by more than WATCHDOG_GRACE_S has its worker killed; the game is recorded as a
    forfeit of the moving seat and a new worker takes over. A worker that dies by itself
    (a native crash) has its game played again once; if it dies again the game is recorded
    with the reason. So one faulty agent costs exactly its own games, and every run ends.
    """

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or default_workers()
        most = most_local_workers()
        if self.workers > most:
            raise ExecutorError(
                f"--workers {self.workers}: each local worker holds about {FILES_PER_WORKER} "
                f"open files and the limit (ulimit -n) allows at most {most} workers")

    def describe(self) -> str:
        return f"local, {self.workers} worker{'s' * (self.workers != 1)}"

    def run(self, tasks: Collection[GameTask]) -> Iterator[dict]:
        """Rows of the games of `tasks` (sized, generated lazily), as each game ends."""
        pending = _Pending(tasks)
        if not pending:
            return
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() \
            else mp.get_context("spawn")
        sizer = BatchSizer(self.workers)
        workers = [_Worker(ctx) for _ in range(min(self.workers, pending.count))]
        replay: deque[GameTask] = deque()     # games whose worker died: played first
        deaths: dict[int, int] = {}
        try:
            while pending or replay or any(w.tasks for w in workers):
                for i, w in enumerate(workers):
                    if not w.tasks and (replay or pending):
                        if not w.proc.is_alive():     # died between games: a fresh one
                            w.stop()
                            workers[i] = w = _Worker(ctx)
                        w.send([replay.popleft()] if replay
                               else pending.take(pending.batch_size(sizer)))
                busy = [w for w in workers if w.tasks]
                wait_for([x for w in busy for x in (w.conn, w.proc.sentinel)], POLL_S)
                for i, w in enumerate(workers):
                    for row in w.rows():
                        sizer.record(row)
                        yield row
                    if not w.tasks:
                        continue
                    now = time.monotonic()
                    if w.overdue(now):
                        yield self._stopped(w, replay, now)
                    elif not w.proc.is_alive():
                        lost = self._died(w, replay, deaths, now)
                        if lost is not None:
                            yield lost
                    else:
                        continue
                    workers[i] = _Worker(ctx)
        finally:
            for w in workers:       # all killed first: their exits (unmapping) overlap
                if w.proc.is_alive():
                    w.proc.kill()
            for w in workers:
                w.stop()

    @staticmethod
    def _stopped(w: _Worker, replay: deque, now: float) -> dict:
        """Kill a worker whose move is past its limit: that game is the mover's forfeit."""
        task = w.tasks.popleft()
        clock = list(w.clock)
        w.stop()
        plies = w.plies_played(task)
        replay.extend(w.tasks)          # the rest of its batch was never started
        limit = task.time_limits[int(clock[_SEAT])] or 0.0
        return _lost_game_row(task, clock, f"exceeded its time budget: no move after "
                              f"{now - clock[_STARTED]:.1f}s > {limit:.3f}s per move "
                              "(stopped)", now - w.game_started, plies, termination="time")

    @staticmethod
    def _died(w: _Worker, replay: deque, deaths: dict, now: float) -> dict | None:
        """A worker died by itself: its game is played again once, then recorded."""
        task = w.tasks.popleft()
        clock = list(w.clock)
        code = w.proc.exitcode
        w.stop()
        plies = w.plies_played(task)
        replay.extend(w.tasks)          # the rest of its batch was never started
        key = task.game_id if isinstance(task, GameTask) else id(task)
        deaths[key] = deaths.get(key, 0) + 1
        if deaths[key] < 2:
            replay.appendleft(task)
            return None
        if not isinstance(task, GameTask):      # a job has no forfeit to record: stop
            raise ExecutorError(f"{task!r} crashed the worker process twice "
                                f"({_exit_reason(code)})")
        return _lost_game_row(task, clock, f"crashed the worker process twice "
                              f"({_exit_reason(code)})", now - w.game_started, plies,
                              "crash")


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def wait_for(handles: list, timeout: float) -> None:
    if handles:
        wait(handles, timeout)
    else:
        time.sleep(timeout)


class DaskExecutor:
    """The same schedule on an existing Dask distributed cluster (pip install niwa[dist])."""

    name = "dask"

    def __init__(self, address: str, workers: int | None = None, timeout: float = 10):
        try:
            from distributed import Client
        except ImportError:
            raise ExecutorError(
                "--executor dask:// needs dask and distributed: pip install 'niwa[dist]'"
            ) from None
        scheme, sep, where = address.partition("://")
        self.address = (("tls://" if scheme == "tls" else "tcp://") + where) if sep else address
        try:
            self.client = Client(self.address, timeout=f"{timeout}s")
        except (OSError, TimeoutError, ValueError) as e:
            raise ExecutorError(f"cannot reach the Dask scheduler at {self.address}: "
                                f"{first_line(e)}") from None
        self.workers = workers or max(sum(self.client.nthreads().values()), 1)

    def describe(self) -> str:
        return f"dask at {self.address}, {self.workers} worker threads"

    def run(self, tasks: Collection[GameTask]) -> Iterator[dict]:
        from distributed import as_completed

        sizer = BatchSizer(self.workers, target_s=1.0)
        pending = _Pending(tasks)

        tasks_of = {}

        def submit():
            batch = pending.take(pending.batch_size(sizer))
            fut = self.client.submit(run_batch, batch, pure=False)
            tasks_of[fut] = batch
            return fut

        # two batches per worker keep it busy while the next is on its way; a stream of
        # one_per_worker jobs (long ones) gains nothing from that and loses the choice
        in_flight = (1 if pending.one_per_worker else 2) * self.workers
        stream = as_completed([submit() for _ in range(min(in_flight, pending.count))])
        try:
            for fut in stream:
                batch = tasks_of.pop(fut, [])
                try:
                    rows = fut.result()
                except Exception as e:    # e.g. a worker without niwa installed
                    if not any(isinstance(t, GameTask) for t in batch):
                        raise ExecutorError(f"a job failed on the Dask cluster: "
                                            f"{first_line(e)}") from None
                    raise ExecutorError(
                        f"a game failed on the Dask cluster: {first_line(e)} (finished games "
                        "are saved: fix the workers and rerun with --resume)") from None
                for row in rows:
                    sizer.record(row)
                    yield row
                if pending:
                    stream.add(submit())
        finally:
            stream.clear()

    def run_on_workers(self, fn, *args) -> list:
        """fn(*args) once in each worker process of the cluster; the results, a list (what
        a proof's kept proofs travel by: the workers' tables are theirs alone)."""
        try:
            return list(self.client.run(fn, *args).values())
        except Exception as e:     # noqa: BLE001 (a worker gone, or without niwa)
            raise ExecutorError(f"a call on the Dask workers failed: {first_line(e)}") \
                from None

    def close(self):
        self.client.close()


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def make_executor(spec: str, workers: int | None, spell=option_flag):
    """The executor a spec names: "local", "dask://HOST:PORT" or "tls://HOST:PORT"; a bad
    spec is one ExecutorError naming the option as `spell` spells it (the API: its own
    parameter)."""
    spec = (spec or "local").strip()
    if spec == "local":
        return LocalExecutor(workers)
    scheme, sep, where = spec.partition("://")
    if sep and scheme in ("dask", "tcp", "tls"):
        m = _HOST_PORT.match(where)
        if not m or not 1 <= int(m["port"]) <= 65535:
            raise ExecutorError(f"{spell('executor')} {spec[:80]!r}: expected "
                                f"{scheme}://HOST:PORT with a port in 1..65535, "
                                f"e.g. {scheme}://10.0.0.5:8786")
        # dask:// is plain TCP; tls:// keeps its scheme (Dask's TLS transport)
        return DaskExecutor(("tls://" if scheme == "tls" else "tcp://") + where, workers)
    raise ExecutorError(f"unknown {spell('executor')} {spec[:80]!r}; expected local, "
                        f"dask://HOST:PORT or tls://HOST:PORT")


# HOST:PORT of a scheduler: a host name or IPv4 address, or an IPv6 address in brackets
_HOST_PORT = re.compile(r"^(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])"
                        r":(?P<port>[0-9]{1,5})$")
