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
own `tc=` in its spec (e.g. `mcts:tc=2+0.05`), which the tournament layer takes out of the
spec before the agent is built (`split_time_control`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from niwa.ext.errors import NiwaError
from niwa.solver.budget import ClockReading

_NUMBER = r"[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?"
_SYNTAX = re.compile(rf"^(?:(?P<moves>[0-9]+)/)?(?:(?P<minutes>[0-9]+):)?(?P<base>{_NUMBER})"
                     rf"(?:\+(?P<inc>{_NUMBER}))?$")
EXPECTED = "expected [moves/]seconds[+increment], e.g. 60+0.5 or 40/60+0.5"


class TimeControlError(NiwaError):
    """A time control that cannot be read (one-line message)."""


@dataclass(frozen=True)
class TimeControl:
    """`base` seconds (every `moves` moves when `moves` is set, else for the whole game)
    plus `increment` seconds after each move."""

    base: float
    increment: float = 0.0
    moves: int | None = None

    def __post_init__(self):
        for name, value in (("base time", self.base), ("increment", self.increment)):
            if not math.isfinite(value) or value < 0:
                raise TimeControlError(f"time control {name} must be a finite number of "
                                       f"seconds >= 0, got {value}")
        if not self.base > 0:
            raise TimeControlError(f"time control base time must be positive, got {self.base}")
        if self.moves is not None and self.moves < 1:
            raise TimeControlError(f"time control moves per period must be at least 1, "
                                   f"got {self.moves}")

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """A time control from cutechess syntax; TimeControlError names what is wrong."""
        raw = str(text).strip()
        m = _SYNTAX.match(raw)
        if not m:
            raise TimeControlError(f"bad time control {text!r}; {EXPECTED}")
        base = float(m["base"]) + 60 * int(m["minutes"] or 0)
        inc = float(m["inc"]) if m["inc"] else 0.0
        if not (math.isfinite(base) and math.isfinite(inc)):
            raise TimeControlError(f"bad time control {text!r}: seconds must be finite")
        if not base > 0:
            raise TimeControlError(f"bad time control {text!r}: the base time must be "
                                   "positive")
        return cls(base, inc, int(m["moves"]) if m["moves"] else None)

    def __str__(self) -> str:
        text = f"{self.moves}/" if self.moves else ""
        text += _seconds(self.base)
        return text + f"+{_seconds(self.increment)}" if self.increment else text


    def describe(self) -> str:
        """The control in words, for messages: '40/60+0.5' is '60 s per 40 moves + 0.5 s
        a move'.

        >>> TimeControl.parse("1").describe()
        '1: 1 s for the game, no increment'
        """
        period = f"per {self.moves} moves" if self.moves else "for the game"
        inc = (f"+ {_seconds(self.increment)} s a move" if self.increment
               else "no increment")
        return f"{self}: {_seconds(self.base)} s {period}, {inc}"


def _seconds(x: float) -> str:
    return f"{x:g}" if float(f"{x:g}") == x else repr(x)


def parse_time_control(text: str | None) -> TimeControl | None:
    """None for None or '' (no clock), else TimeControl.parse(text)."""
    if text is None or str(text).strip() == "":
        return None
    return TimeControl.parse(text)


def split_time_control(spec: str) -> tuple[str, TimeControl | None]:
    """An agent spec without its `tc=` item, and that time control (None if absent):
    'mcts:tc=2+0.05,iters=50' -> ('mcts:iters=50', TimeControl(2.0, 0.05))."""
    name, colon, rest = spec.strip().partition(":")
    items = [p.strip() for p in rest.split(",") if p.strip()]
    tcs = [p for p in items if p.partition("=")[0].strip().lower() == "tc"]
    if not tcs:
        return spec.strip(), None
    if len(tcs) > 1:
        raise TimeControlError(f"agent spec {spec!r} gives tc= more than once")
    tc = TimeControl.parse(tcs[0].partition("=")[2])
    others = [p for p in items if p not in tcs]
    return (f"{name}:{','.join(others)}" if others else name), tc


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
