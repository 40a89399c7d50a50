"""Where scheduled games are played: a local process pool or a Dask cluster.

An executor's `run(tasks)` plays the tasks (sized, but generated lazily as taken) and yields
each game's row as soon as it ends, in any order. Games are sent in batches sized to a
fraction of a second of play from the durations seen so far (`BatchSizer`), so short
games do not drown in messaging and the tail of a run stays balanced.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Collection, Iterator

from niwa.analysis.arena.game_log import play_batch, play_task
from niwa.analysis.arena.game_loop import first_line
from niwa.analysis.arena.schedule import GameTask, TournamentError


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


_RESULT_QUEUE = None


def _worker_init(queue, parent_pid):
    """Stream rows back one game at a time; die with the parent (even after its SIGKILL)."""
    import signal
    import threading

    global _RESULT_QUEUE
    _RESULT_QUEUE = queue
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles Ctrl-C

    def watch():
        while True:
            if os.getppid() != parent_pid:
                os._exit(1)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def _worker_batch(tasks: list[GameTask]) -> int:
    # Each row goes back as soon as its game ends; only games shorter than SEND_EVERY_S
    # are grouped (so a kill can lose at most that much finished play per worker).
    rows, last = [], time.monotonic()
    for task in tasks:
        rows.append(play_task(task))
        if time.monotonic() - last >= SEND_EVERY_S:
            _RESULT_QUEUE.put(rows)
            rows, last = [], time.monotonic()
    if rows:
        _RESULT_QUEUE.put(rows)
    return len(tasks)


SEND_EVERY_S = 0.02


class _Pending:
    """The tasks still to send: taken lazily from an iterator, with a count of what is
    left (for batch sizing) known without materialising them."""

    def __init__(self, tasks: Collection[GameTask]):
        self.count = len(tasks)
        self.tasks = iter(tasks)

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


class LocalExecutor:
    """A process pool on this machine (workers=1 plays in this process)."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or default_workers()

    def describe(self) -> str:
        return f"local, {self.workers} worker{'s' * (self.workers != 1)}"


    def run(self, tasks: Collection[GameTask]) -> Iterator[dict]:
        """Rows of the games of `tasks` (sized, generated lazily), as each game ends."""
        pending = _Pending(tasks)
        if self.workers == 1 or pending.count <= 1:
            for t in pending.tasks:
                yield play_task(t)
            return
        yield from self._run_pool(pending)

    def _run_pool(self, pending: _Pending):
        import multiprocessing as mp
        import queue as queue_mod
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() \
            else mp.get_context("spawn")
        results = ctx.Queue()
        sizer = BatchSizer(self.workers)
        outstanding: dict = {}          # future -> set of game ids still to arrive
        waiting_ids: set[int] = set()
        pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_worker_init,
                                   initargs=(results, os.getpid()))
        try:
            while pending or waiting_ids:
                while pending and len(outstanding) < 2 * self.workers:
                    batch = pending.take(sizer.next_size(pending.count))
                    if not batch:
                        break
                    fut = pool.submit(_worker_batch, batch)
                    outstanding[fut] = {t.game_id for t in batch}
                    waiting_ids.update(t.game_id for t in batch)
                try:
                    rows = results.get(timeout=0.2)
                except queue_mod.Empty:
                    rows = []
                for row in rows:
                    sizer.record(row)
                    waiting_ids.discard(row["game_id"])
                    for ids in outstanding.values():
                        if row["game_id"] in ids:
                            ids.discard(row["game_id"])
                            break
                    yield row
                done, _ = wait(list(outstanding), timeout=0, return_when=FIRST_COMPLETED)
                for fut in done:
                    fut.result()        # re-raises a worker's failure (BrokenProcessPool)
                    if not outstanding[fut]:
                        del outstanding[fut]
        except BrokenProcessPool:
            raise TournamentError(
                "a worker process died (killed or crashed in native code); finished games "
                "are saved: rerun with --resume") from None
        finally:
            procs = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in procs:          # our own workers, possibly mid-game: stop them
                if proc.is_alive():
                    proc.terminate()
            for proc in procs:
                proc.join(timeout=5)
            results.close()


class DaskExecutor:
    """The same schedule on an existing Dask distributed cluster (pip install niwa[dist])."""

    name = "dask"

    def __init__(self, address: str, workers: int | None = None, timeout: float = 10):
        try:
            from distributed import Client
        except ImportError:
            raise TournamentError(
                "--executor dask:// needs dask and distributed: pip install 'niwa[dist]'"
            ) from None
        self.address = "tcp://" + address.split("://", 1)[1] if "://" in address else address
        try:
            self.client = Client(self.address, timeout=f"{timeout}s")
        except (OSError, TimeoutError) as e:
            raise TournamentError(f"cannot reach the Dask scheduler at {self.address}: "
                                  f"{first_line(e)}") from None
        self.workers = workers or max(sum(self.client.nthreads().values()), 1)

    def describe(self) -> str:
        return f"dask at {self.address}, {self.workers} worker threads"

    def run(self, tasks: Collection[GameTask]) -> Iterator[dict]:
        from distributed import as_completed

        sizer = BatchSizer(self.workers, target_s=1.0)
        pending = _Pending(tasks)

        def submit():
            batch = pending.take(sizer.next_size(pending.count))
            return self.client.submit(play_batch, batch, pure=False)

        stream = as_completed([submit() for _ in range(min(2 * self.workers, pending.count))])
        try:
            for fut in stream:
                try:
                    rows = fut.result()
                except Exception as e:    # e.g. a worker without niwa installed
                    raise TournamentError(
                        f"a game failed on the Dask cluster: {first_line(e)} (finished games "
                        "are saved: fix the workers and rerun with --resume)") from None
                for row in rows:
                    sizer.record(row)
                    yield row
                if pending:
                    stream.add(submit())
        finally:
            stream.clear()

    def close(self):
        self.client.close()


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def make_executor(spec: str, workers: int | None):
    spec = (spec or "local").strip()
    if spec == "local":
        return LocalExecutor(workers)
    if spec.startswith("dask://"):
        if not spec[len("dask://"):]:
            raise TournamentError("--executor dask:// needs HOST:PORT, e.g. dask://10.0.0.5:8786")
        return DaskExecutor(spec, workers)
    raise TournamentError(f"unknown --executor {spec!r}; expected local or dask://HOST:PORT")
