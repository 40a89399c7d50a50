"""Chess clocks for agents: time controls, one clock per seat, loss on time.

A time control is written the way cutechess-cli and fastchess write it:

    60+0.5       60 s for the whole game, 0.5 s added after every move (Fischer increment)
    40/60+0.5    60 s for every 40 moves (the next 60 s are added after the 40th move)
    2            2 s for the whole game, no increment
    1:30+1       minutes:seconds are accepted for the base time

>>> tc = TimeControl.parse("40/60+0.5")
>>> tc.moves, tc.base, tc.increment, str(tc)
(40, 60.0, 0.5, '40/60+0.5')
>>> clock = Clock(TimeControl.parse("1+0.1"))
>>> clock.punch(0.25), round(clock.remaining, 3)
(True, 0.85)

The clock is charged the wall time the agent's `step` took; the increment is added after
the move (so a move must fit in the time already on the clock). A clock that goes negative
loses the game on time. In a tournament the time control of every agent is `--tc`, or its
own `tc=` in its spec (e.g. `mcts:tc=2+0.05`, AgentSpec.clock), which the tournament layer
takes out of the spec before the agent is built (AgentSpec.without_clock()). The time
control itself is niwa.solver.time_control.TimeControl, re-exported here.
"""

from __future__ import annotations

from niwa.solver.agent_spec import AgentSpec
from niwa.solver.budget import ClockReading
from niwa.solver.time_control import (
    EXPECTED,
    TimeControl,
    TimeControlError,
    parse_time_control,
)

__all__ = ["EXPECTED", "Clock", "TimeControl", "TimeControlError", "parse_time_control",
           "split_time_control"]


def split_time_control(spec: str) -> tuple[str, TimeControl | None]:
    """An agent spec's text without its `tc=` item, and that time control (None if absent):
    'mcts:tc=2+0.05,iters=50' -> ('mcts:iters=50', TimeControl(2.0, 0.05)). The spec is
    read (and checked) as an AgentSpec; code that holds one asks it for `.clock` and
    `.without_clock()` directly."""
    parsed = AgentSpec.parse(spec)
    return str(parsed.without_clock()), parsed.clock


class Clock:
    """One seat's clock during a game."""

    def __init__(self, control: TimeControl):
        self.control = control
        self.remaining = control.base
        self.moves_made = 0

    @property
    def moves_to_go(self) -> int | None:
        """Moves left before the next period's time is added (None: sudden death)."""
        if not self.control.moves:
            return None
        return self.control.moves - self.moves_made % self.control.moves

    def punch(self, spent: float) -> bool:
        """Charge a move that took `spent` seconds; False when the flag fell (the clock
        went negative), in which case nothing is added."""
        self.remaining -= spent
        if self.remaining < 0:
            return False
        self.moves_made += 1
        self.remaining += self.control.increment
        if self.control.moves and self.moves_made % self.control.moves == 0:
            self.remaining += self.control.base
        return True

    def reading(self, plies_played: int = 0) -> ClockReading:
        """What the agent is told before its move."""
        return ClockReading(self.remaining, self.control.increment, self.moves_to_go,
                            plies_played)
