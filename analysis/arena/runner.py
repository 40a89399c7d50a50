"""The run engine: plays a schedule's missing games into its game log.

Tournaments and variant experiments are two schedules fed to `run_schedule`. It resumes
(rows already in the log are kept once the log has validated them against the schedule,
and only missing games are played), appends each game to the log as it completes, runs the games on an
executor (local pool or Dask), shows a tqdm bar, and on Ctrl-C stops the executor while
keeping every finished game (`RunResult.interrupted`; the caller records the run, then
re-raises KeyboardInterrupt).

A stop rule is a plug-in: an object the runner asks after each finished game whether to
stop (`add(row)`, `should_stop()`), and which then says which games count (`keep`). The SPRT
of a two-agent tournament is one.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

from niwa.analysis.arena.games_csv import GameLog, IdSet
from niwa.analysis.arena.schedule import GameTask


class RunSchedule(Protocol):
    """What the runner needs of a schedule (see arena.schedule.Schedule)."""

    def __len__(self) -> int: ...

    def id_ranges(self) -> list[tuple[int, int]]: ...

    def task_for(self, game_id: int) -> GameTask: ...

    def includes(self, game_id: int) -> bool: ...

    def check_row(self, game_id: int, row: dict) -> str | None: ...


class StopRule(Protocol):
    """Told every logged game (those of the log first, when a run resumes), and asked
    after each whether to stop."""

    def add(self, row: dict) -> None: ...

    def should_stop(self) -> bool: ...

    def keep(self, game_id: int) -> bool:
        """Once stopped: whether a game counts."""


class Reporter(Protocol):
    """Told every game of the log when the run starts (`add`), then each game as it
    finishes, after the stop rule has seen it (`played`): live reports (arena.live)."""

    def add(self, row: dict) -> None: ...

    def played(self, row: dict) -> None: ...


class Status(Protocol):
    """A running summary for the progress bar (e.g. the current leader)."""

    def add(self, row: dict) -> None: ...

    def __str__(self) -> str: ...


@dataclass
class RunResult:
    scheduled: int
    recorded: int        # the schedule's games now in the log (those kept, after a stop)
    played_now: int
    finished: bool       # every game played, or the stop rule decided
    stopped: bool        # the stop rule decided
    interrupted: bool
    notes: list[str] = field(default_factory=list)   # what the log restored (one line each)


class _Todo:
    """The schedule's games missing from the log, generated as the executor takes them
    (skipping the logged ranges without generating them); len() is known at once."""

    def __init__(self, schedule: RunSchedule, done: IdSet, count: int):
        self.schedule, self.done, self.count = schedule, done, count

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[GameTask]:
        if not self.count:
            return
        for start, end in self.schedule.id_ranges():
            gid = start
            while True:
                gid = self.done.next_missing(gid)
                if gid >= end:
                    break
                yield self.schedule.task_for(gid)
                gid += 1


def recorded_in(log: GameLog, schedule: RunSchedule) -> int:
    """How many of the schedule's games the log holds (from the id ranges, no rows)."""
    done = log.done
    total = 0
    for start, end in schedule.id_ranges():
        for a, b in zip(done.starts, done.ends, strict=True):
            total += max(0, min(b, end) - max(a, start))
    return total


def run_schedule(schedule: RunSchedule, log: GameLog, executor, *, desc: str,
                 progress: bool | None = None, stop_rule: StopRule | None = None,
                 status: Status | None = None, reporter: Reporter | None = None) -> RunResult:
    """Play the games of `schedule` missing from `log`, appending each as it ends.

    progress=None shows a bar only on a terminal (tqdm's disable=None). First the log
    restores what it keeps beside its rows (games.jsonl: records lost or damaged are
    replayed on the executor).
    """
    try:
        log.restore_records(schedule, executor)
    except BaseException as e:     # a replay that differs (GameLogError), Ctrl-C
        if hasattr(executor, "close"):
            executor.close()
        if not isinstance(e, KeyboardInterrupt):
            log.close()
            raise
        return _finish(schedule, log, None, False, True, 0)
    if stop_rule is not None or status is not None or reporter is not None:
        for row in log.read_rows():
            for listener in (stop_rule, status, reporter):
                if listener is not None:
                    listener.add(row)
    done_before = recorded_in(log, schedule)
    stopped = stop_rule.should_stop() if stop_rule else False
    todo = _Todo(schedule, log.done, 0 if stopped else len(schedule) - done_before)
    bar = _progress_bar(len(schedule), done_before, desc, progress)
    played, interrupted = 0, False
    last_postfix = 0.0
    stream = executor.run(todo)
    try:
        for row in stream:
            log.append(row)
            played += 1
            bar.update(1)
            if status is not None:
                status.add(row)
                if time.monotonic() - last_postfix > 0.5 or played == len(todo):
                    last_postfix = time.monotonic()
                    bar.set_postfix_str(f"leader {status}", refresh=False)
            if stop_rule:
                stop_rule.add(row)
                stopped = stop_rule.should_stop()
            if reporter is not None:
                reporter.played(row)
            if stopped:
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        stream.close()          # stops the workers: games still in flight are abandoned
        bar.close()
        if hasattr(executor, "close"):      # an executor may hold nothing to release
            executor.close()
    return _finish(schedule, log, stop_rule, stopped, interrupted, played)


def _progress_bar(total: int, initial: int, desc: str, progress: bool | None):
    from tqdm.auto import tqdm

    tqdm.monitor_interval = 0   # no monitor thread to be copied into forked workers
    return tqdm(total=total, initial=initial, unit="game",
                disable=None if progress is None else not progress, dynamic_ncols=True,
                smoothing=0.05, desc=desc)


def _finish(schedule, log: GameLog, stop_rule, stopped: bool, interrupted: bool,
            played: int) -> RunResult:
    """Rewrite the log in schedule order once the run is complete (only the games that
    count, after a stop), or just close it."""
    keep = stop_rule.keep if stop_rule and stopped else None
    recorded = recorded_in(log, schedule)
    finished = stopped or (not interrupted and recorded >= len(schedule))
    if finished:
        log.rewrite_sorted(keep)
    else:
        log.close()
    if keep is not None:
        recorded = sum(1 for row in log.read_rows()
                       if schedule.includes(int(row["game_id"])))
    return RunResult(len(schedule), recorded, played, finished, stopped, interrupted,
                     list(log.record_notes))
