"""Time controls, written the way cutechess-cli and fastchess write them:

    60+0.5       60 s for the whole game, 0.5 s added after every move (Fischer increment)
    40/60+0.5    60 s for every 40 moves (the next 60 s are added after the 40th move)
    2            2 s for the whole game, no increment
    1:30+1       minutes:seconds are accepted for the base time

An agent spec may carry its own (`mcts:tc=2+0.05`, AgentSpec.clock), so the value lives
here, below the agent specs; the clocks that run during a game are niwa.analysis.arena.clock.

>>> tc = TimeControl.parse("40/60+0.5")
>>> tc.moves, tc.base, tc.increment, str(tc)
(40, 60.0, 0.5, '40/60+0.5')
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from niwa.ext.errors import NiwaError

_NUMBER = r"[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?"
_SYNTAX = re.compile(rf"^(?:(?P<moves>[0-9]+)/)?(?:(?P<minutes>[0-9]+):)?(?P<base>{_NUMBER})"
                     rf"(?:\+(?P<inc>{_NUMBER}))?$")
EXPECTED = "expected [moves/]seconds[+increment], e.g. 60+0.5 or 40/60+0.5"


MAX_CLOCK_SECONDS = 86_400.0     # the longest base time or increment: a day
MAX_CLOCK_MOVES = 10_000         # the most moves per period


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
        for name, value in (("base time", self.base), ("increment", self.increment)):
            if value > MAX_CLOCK_SECONDS:
                # a game that long never ends in practice (and deadlines overflow)
                raise TimeControlError(f"time control {name} must be at most "
                                       f"{MAX_CLOCK_SECONDS:g} seconds (a day), got {value:g}")
        if self.moves is not None and not 1 <= self.moves <= MAX_CLOCK_MOVES:
            raise TimeControlError(f"time control moves per period must be in "
                                   f"1..{MAX_CLOCK_MOVES}, got {self.moves}")

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """A time control from cutechess syntax; TimeControlError names what is wrong."""
        raw = str(text).strip()
        m = _SYNTAX.match(raw)
        if not m:
            raise TimeControlError(f"bad time control {text!r}; {EXPECTED}")
        if any(len(m[part] or "") > 12 for part in ("moves", "minutes")):
            raise TimeControlError(f"bad time control {text[:40]!r}: number too long")
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
