"""Games written in plain Python: the contract they follow, and their GameSpec in one call.

A plain-Python game is a class whose objects are positions. niwa wraps each one in a
`PythonGameState` (niwa.ext.python_state), which implements the Cython contract by
calling it, so every searcher, tournament and analysis works on it (slower than a Cython
engine: one Python call per contract call).

The contract (OpenSpiel's vocabulary, as niwa.ext.game)
-------------------------------------------------------
Required:

``game_name``                   str, the game's registry name (first word of the notation)
``num_players``                 int, 1..4
``current_player()``            a seat 0..num_players-1, or CHANCE, SIMULTANEOUS, TERMINAL
``legal_actions(player=None)``  list of action ids (ints >= 0, below the spec's
                                num_distinct_actions, no duplicates). Asked with `player`
                                only at SIMULTANEOUS nodes (that player's own choices);
                                never at CHANCE or TERMINAL nodes
``apply(action)``               play a legal action (or chance outcome) in place
``clone()``                     an independent copy
``returns()``                   one float per player in [0, 1] (1 = won), read at TERMINAL
``action_to_string(a, player=None)``  a short name, distinct among the legal actions
``to_notation()``               one line that begins with the game name and round-trips
                                through the spec's `from_notation`

Required when the game has them:

``chance_outcomes()``           [(outcome id, probability), ...] summing to 1, at CHANCE
``apply_joint(actions)``        one action per player, at SIMULTANEOUS nodes
``information_state(p)``        what seat p knows, as a string (default: the notation)
``resample_hidden(p, rng)``     a NEW game object consistent with what p knows; `rng` is a
                                niwa.ext.game.Rng (below(n), random(), choice(), shuffle())

Optional:

``hash()``                      a 64-bit int, equal for equal notations (default: a stable
                                FNV-1a hash of the notation)
``evaluate(p)``                 heuristic expected return of p in [0, 1] (default 0.5, or
                                the returns once the game is over)
``stats()``                     dict of the spec's `stats` fields, for finished games
``string_to_action(text, player=None)``, ``render()``, ``episode()``
``variant``                     dict of the variant settings (keys as in the spec)

Any other attribute of the game stays reachable through the wrapper (``state.piles``).
`PythonGame` below gives the optional methods their defaults and `clone()` by deepcopy;
inheriting from it is a convenience, not a requirement.

>>> from niwa.ext.spec import VariantOption
>>> class Race(PythonGame):
...     '''Two players race to `goal` steps; each turn the mover steps 1 or 2.'''
...     game_name, num_players = "race", 2
...     def __init__(self, goal=5):
...         self.goal, self.pos, self.turn = goal, [0, 0], 0
...         self.variant = {"goal": goal}
...     def current_player(self):
...         return TERMINAL if max(self.pos) >= self.goal else self.turn
...     def legal_actions(self, player=None):
...         return [0, 1]                      # step 1 or 2
...     def apply(self, action):
...         self.pos[self.turn] += action + 1
...         self.turn = 1 - self.turn
...     def returns(self):
...         return [1.0, 0.0] if self.pos[0] >= self.goal else [0.0, 1.0]
...     def action_to_string(self, action, player=None):
...         return f"+{action + 1}"
...     def to_notation(self):
...         return f"race goal={self.goal}; pos {self.pos[0]} {self.pos[1]}; turn {self.turn}"
>>> SPEC = python_game_spec(
...     name="race", new=Race, from_notation=None,
...     options=(VariantOption("goal", range(1, 10), 5, "steps to the finish"),),
...     max_game_length=lambda v: 2 * v["goal"], num_distinct_actions=2)
>>> state = SPEC.new(goal=3)
>>> state.legal_actions(), [state.action_to_string(a) for a in state.legal_actions()]
([0, 1], ['+1', '+2'])
>>> state.perft(2)
4
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from niwa.ext.errors import NotationError, VariantError
from niwa.ext.game import PLAYER_CHANCE, PLAYER_SIMULTANEOUS, PLAYER_TERMINAL
from niwa.ext.python_state import PythonGameState, batch_playouts
from niwa.ext.spec import GameSpec, StatField, Traits, VariantOption

CHANCE = PLAYER_CHANCE
SIMULTANEOUS = PLAYER_SIMULTANEOUS
TERMINAL = PLAYER_TERMINAL

__all__ = ["CHANCE", "SIMULTANEOUS", "TERMINAL", "PythonGame", "PythonGameState",
           "python_game_spec"]


class PythonGame:
    """Defaults for the optional part of the plain-Python game contract (see the module
    docstring). Subclasses define the required methods."""

    game_name = "python-game"
    num_players = 2

    def clone(self):
        return copy.deepcopy(self)

    def chance_outcomes(self):
        return []

    def returns(self):
        return [0.0] * self.num_players

    def action_to_string(self, action, player=None):
        return str(action)

    def information_state(self, player):
        return self.to_notation()

    def resample_hidden(self, player, rng):
        return self.clone()

    def stats(self):
        return {}

    def __repr__(self):
        return f"<{type(self).__name__} {self.to_notation()!r}>"


def _bound(value, what: str) -> Callable[[dict], int]:
    if callable(value):
        return value
    if isinstance(value, int) and value > 0:
        return lambda variant: value
    raise VariantError(f"python_game_spec: {what} must be a positive int or a function of "
                       f"the variant, got {value!r}")


def python_game_spec(
    *,
    name: str,
    new: Callable[..., Any],
    from_notation: Callable[[str], Any] | None,
    max_game_length: int | Callable[[dict], int],
    num_distinct_actions: int | Callable[[dict], int],
    options: tuple[VariantOption, ...] = (),
    title: str | None = None,
    players: int | tuple[int, int] = 2,
    chance: bool = False,
    simultaneous: bool = False,
    hidden_information: bool = False,
    deals: bool = False,
    stats: tuple[StatField, ...] = (),
    reference: str | None = None,
    mcts_defaults: Mapping[str, Any] | None = None,
    check_variant: Callable[[dict], None] | None = None,
    **more: Any,
) -> GameSpec:
    """The GameSpec of a plain-Python game, its positions wrapped in PythonGameState.

    `new(**variant)` builds the initial game object of a full, checked variant (games that
    `deals` also get `seed=`); `from_notation(text)` parses the game's notation into a game
    object (None: only notations of initial positions, "NAME key=value ...", are read).
    Bounds are ints or functions of the variant; `players` is a count or (min, max).
    Further GameSpec fields (score_parts, solo_thresholds, simultaneous_when, ...) pass
    through `more`.
    """
    if not name or name != name.strip().lower() or " " in name or ";" in name:
        raise VariantError(f"python_game_spec: game name {name!r} must be one lower-case word")
    low, high = (players, players) if isinstance(players, int) else players

    def create(variant: dict, seed: int | None):
        game = new(seed=seed, **variant) if deals else new(**variant)
        return PythonGameState(game, spec)

    def parse(text: str):
        if from_notation is None:
            raise NotationError(f"{name} reads no positions; give `{name} key=value ...` "
                                f"for an initial position")
        return PythonGameState(from_notation(text), spec)

    spec = GameSpec(
        name=name,
        title=title or name.capitalize(),
        options=tuple(options),
        traits=Traits(min_players=low, max_players=high, chance=chance,
                      simultaneous=simultaneous, hidden_information=hidden_information,
                      deals=deals),
        create=create,
        parse_notation=parse,
        max_game_length=_bound(max_game_length, "max_game_length"),
        num_distinct_actions=_bound(num_distinct_actions, "num_distinct_actions"),
        batch_playouts=more.pop("batch_playouts", batch_playouts),
        stats=tuple(stats),
        reference=reference,
        mcts_defaults=dict(mcts_defaults or {}),
        check_variant=check_variant,
        **more,
    )
    return spec
