"""What every agent is: the `Agent` base class, its error, and its evaluation weights.

An agent is asked for one action at a time:
    agent.step(state, player) -> action
`player` is the seat to act for; at a SIMULTANEOUS node it says whose choice is wanted
(agents must not read the other players' pending choices). Agents that keep a tree may
implement `observe(state, action)` / `reset()`; the defaults do nothing. A game loop calls
`prepare(state)` once a game, after `reset()` and before the first move, off the move
clock: an agent loads there what it needs for the game (a book, an endgame table whose
checksum alone takes seconds), so that its first timed move does not pay for it.

Clocks: before each move a game loop with time controls sets `agent.clock` to the seat's
`ClockReading` (seconds left, increment, moves to go; None without a clock). Agents may
ignore it; the built-in searchers given no `time=` and no `iters=`/`depth=` then choose
their own time per move from it (niwa.solver.budget). It also sets `agent.move_limit`,
the seconds past which the move forfeits (None: no limit); an external engine passes it
on (`go ... limit MS`), the built-in agents keep to their own settings.

This module sits below the registry and the agents themselves, so that a plugin's agent,
the `perfect` agent and the built-in ones all build on it without importing each other.
"""

from __future__ import annotations

from niwa.ext.errors import NiwaError
from niwa.ext.game import Rng
from niwa.ext.registry import find_game
from niwa.solver.budget import ClockReading
from niwa.solver.results import SearchResult


class AgentError(NiwaError):
    """An unknown agent, or a bad parameter in an agent spec."""


WEIGHT_PREFIX = "w_"     # agent parameter w_<name>: the game's evaluation weight <name>


class Agent:
    name = "agent"
    clock: ClockReading | None = None    # set by a game loop with clocks before each step
    move_limit: float | None = None      # set by a game loop before each step (seconds)
    spec = None                          # the AgentSpec it was made from (make_agent)
    _last: SearchResult | None = None

    def __init__(self, seed: int | None = None, **params):
        self.rng = Rng(0 if seed is None else seed)
        self.params = params
        self.weights = EvalWeights(self.name, params)

    def step(self, state, player: int) -> int:
        raise NotImplementedError

    def observe(self, state, action) -> None:
        """Told every action applied to the game (for tree reuse); optional."""

    def reset(self) -> None:
        """A new game starts."""

    def prepare(self, state) -> None:
        """Load what the game of `state` (its start) needs, untimed; optional."""

    def analysis(self) -> SearchResult | None:
        """What the agent found at its last step (value, visits, line...), for logs; None
        when it reports nothing. Searching agents keep their search's result as-is."""
        return self._last

    def __repr__(self):
        return f"<{type(self).__name__} {self.params}>"


def split_weights(params: dict) -> tuple[dict, dict]:
    """(the parameters other than weights, {weight name: value}) of an agent's params.

    >>> split_weights({"iters": 5, "w_free": 6.0})
    ({'iters': 5}, {'free': 6.0})
    """
    rest = {k: v for k, v in params.items() if not k.startswith(WEIGHT_PREFIX)}
    return rest, {k[len(WEIGHT_PREFIX):]: v for k, v in params.items()
                  if k.startswith(WEIGHT_PREFIX)}


class EvalWeights:
    """An agent's `w_<name>=value` parameters: checked against the game's declared weights
    (GameSpec.eval_weights) when the agent first sees the game, then set on a copy of each
    position it searches, so its evaluation (and the game's heuristic playout policy) uses
    them while another agent in the same process keeps its own."""

    def __init__(self, agent: str, params: dict):
        self.agent = agent
        self.given = split_weights(params)[1]
        self.game: str | None = None
        self.values: list[float] | None = None

    def check(self, game: str) -> list[float]:
        """The full weight vector for the game named `game`; AgentError for an unknown or
        bad weight."""
        return self.check_spec(find_game(game), game)

    def check_spec(self, spec, game: str) -> list[float]:
        """As check(), given the game's GameSpec (None: a game outside the registry)."""
        if self.game != game:
            if spec is None or not spec.eval_weights:
                raise AgentError(f"agent {self.agent!r}: {game} declares no evaluation "
                                 f"weights, so {WEIGHT_PREFIX}{next(iter(self.given))} "
                                 "means nothing")
            try:
                self.values = spec.weight_values(self.given, WEIGHT_PREFIX)
            except ValueError as e:
                raise AgentError(f"agent {self.agent!r}: {e}") from None
            self.game = game
        return self.values

    def apply(self, state):
        """`state` itself without weights given, else a copy evaluating with them."""
        if not self.given:
            return state
        values = self.check_spec(state.spec, state.game_name)
        weighted = state.clone()
        weighted.set_weights(values)
        return weighted
