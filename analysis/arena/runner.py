"""The run engine: plays a schedule's missing games into its game log.

Tournaments and variant experiments are two schedules fed to `run_schedule`. It resumes
(rows already in the log are kept once `check_log` has validated them, and only missing
games are played), appends each game to the log as it completes, runs the games on an
executor (local pool or Dask), shows a tqdm bar, and on Ctrl-C stops the executor while
keeping every finished game (`RunResult.interrupted`; the caller records the run, then
re-raises KeyboardInterrupt).

A stop rule is a plug-in: an object the runner asks after each finished game whether to
stop (`should_stop(rows)`), and which then names the games that count (`keep`). The SPRT
of a two-agent tournament is one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from niwa.analysis.arena.game_log import GameLog
from niwa.analysis.arena.schedule import GameTask


class RunSchedule(Protocol):
    """What the runner needs of a schedule (see arena.schedule.Schedule)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[GameTask]: ...

    def includes(self, game_id: int) -> bool: ...

    def owns(self, game_id: int, row: dict) -> bool: ...


class StopRule(Protocol):
    """Asked after every finished game (and once when a run resumes)."""

    keep: set[int] | None      # once stopped: the game ids that count (None: all)

    def should_stop(self, rows: dict[int, dict]) -> bool: ...


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


class _Todo:
    """The schedule's games missing from the log, generated as the executor takes them;
    len() is known without generating them."""

    def __init__(self, schedule: RunSchedule, rows: dict, count: int):
        self.schedule, self.rows, self.count = schedule, rows, count

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[GameTask]:
        if self.count:
            yield from (t for t in self.schedule if t.game_id not in self.rows)


def check_log(log: GameLog, schedule: RunSchedule, foreign: Callable[[int], Exception]) -> None:
    """Every row already logged must be a game of this schedule; `foreign(game_id)` is
    raised (log closed) for the first that is not."""
    for gid, row in log.rows.items():
        if not schedule.owns(gid, row):
            log.close()
            raise foreign(gid)


def recorded_in(log: GameLog, schedule: RunSchedule) -> int:
    return sum(1 for gid in log.rows if schedule.includes(gid))


def run_schedule(schedule: RunSchedule, log: GameLog, executor, *, desc: str,
                 progress: bool | None = None, stop_rule: StopRule | None = None,
                 status: Status | None = None) -> RunResult:
    """Play the games of `schedule` missing from `log`, appending each as it ends.

    progress=None shows a bar only on a terminal (tqdm's disable=None).
    """
    done_before = recorded_in(log, schedule)
    stopped = stop_rule.should_stop(log.rows) if stop_rule else False
    todo = _Todo(schedule, log.rows, 0 if stopped else len(schedule) - done_before)
    if status is not None:
        for row in log.rows.values():
            status.add(row)
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
            if stop_rule and stop_rule.should_stop(log.rows):
                stopped = True
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        stream.close()          # stops the pool: games still in flight are abandoned
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
        log.rows = {g: r for g, r in log.rows.items() if g in keep}
    return RunResult(len(schedule), recorded_in(log, schedule), played, finished, stopped,
                     interrupted)

