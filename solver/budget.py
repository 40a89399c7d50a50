"""How a searcher on a clock chooses its time for one move.

The game loop tells an agent its clock before each move by setting `agent.clock` to a
`ClockReading` (None when the seat has no clock). The built-in searchers (mcts, ismcts,
alphabeta) given neither `time=` nor `iters=`/`depth=` search for `move_budget(...)`
seconds:

    moves = moves_to_go                        with a moves/time period (e.g. 40/60)
            max(10, min(30, moves bound))      otherwise: 30 moves expected, fewer when
                                               the game's max length leaves fewer, but
                                               never more than a tenth of the clock
    budget = min(remaining / moves + increment, remaining / 2)

`moves bound` is this seat's most possible remaining moves, ceil((max game length - plies
played) / players), from the game's declared `max_game_length`. The cap at half the clock
keeps a reserve for the moves after this one.

A searcher overshoots the time it is given (MCTS looks at the time every 64 iterations:
about 20 ms in a Lotus opening), so each clocked agent keeps a `Pacer` that learns its
recent worst overshoot and asks its search for that much less.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

EXPECTED_MOVES = 30      # moves still to play when nothing tighter is known
MIN_MOVES = 10           # never spend more than remaining / 10 (plus the increment)
MAX_SHARE = 0.5          # never spend more than half of the clock on one move


@dataclass(frozen=True)
class ClockReading:
    """A seat's clock as it stands before its move: seconds left, seconds added after
    each move, moves left in the current period (None: the rest of the game), and plies
    played so far in the game."""

    remaining: float
    increment: float = 0.0
    moves_to_go: int | None = None
    plies_played: int = 0


def moves_bound(state, plies_played: int) -> int | None:
    """The most moves this seat can still make, from the game's max length (None when the
    game is not registered or declares no useful bound)."""
    spec = state.spec
    if spec is None:
        return None
    try:
        longest = spec.max_game_length(dict(state.variant))
    except Exception:    # a bound is advice only: without one the default horizon is used
        return None
    return max(1, math.ceil((longest - plies_played) / max(1, state.num_players)))


def move_budget(clock: ClockReading, bound: int | None = None) -> float:
    """Seconds to search this move (see the module docstring); `bound` is moves_bound()."""
    if clock.moves_to_go:
        moves = clock.moves_to_go
    else:
        expected = EXPECTED_MOVES if bound is None else min(EXPECTED_MOVES, bound)
        moves = max(MIN_MOVES, expected)
    remaining = max(0.0, clock.remaining)
    return max(0.0, min(remaining / moves + clock.increment, MAX_SHARE * remaining))


def budget_for(clock: ClockReading, state) -> float:
    """move_budget for `state`, with the game's bound on the moves left."""
    return move_budget(clock, moves_bound(state, clock.plies_played))


MIN_SEARCH_SECONDS = 1e-4    # a clocked searcher with (almost) no time still searches a bit


class Pacer:
    """One agent's time per move on its clock, net of its search's usual overshoot."""

    def __init__(self):
        self.lag = 0.0          # recent worst overshoot (s), decaying by a quarter per move

    def time_limit(self, clock: ClockReading, state) -> float:
        return max(budget_for(clock, state) - self.lag, MIN_SEARCH_SECONDS)

    def took(self, asked: float, seconds: float) -> None:
        self.lag = max(seconds - asked, 0.75 * self.lag, 0.0)
