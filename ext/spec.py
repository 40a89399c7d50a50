"""The game description: everything the rest of niwa may ask of a game, declared in one place.

Each game module exports one frozen `GameSpec` named ``SPEC`` and registers it under the
``niwa.games`` entry-point group (see `niwa.ext.registry`). Searchers, runners, the
OpenSpiel adapter and the CLI read a game only through its spec and the `State` contract
(`niwa.ext.game`); nothing probes a game module for optional attributes.

>>> from niwa.ext.registry import get_game
>>> spec = get_game("lotus")
>>> spec.traits.max_players, spec.defaults()["rule"]
(4, 'basic')
>>> spec.parse_variant({"players": "3"})["players"]
3
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from niwa.ext.errors import VariantError

# A variant value on the command line is text; a value inside niwa is an int or a str.
VariantValue = int | str


@dataclass(frozen=True)
class VariantOption:
    """One variant setting: its allowed values, default and one line of help."""

    key: str
    choices: tuple | range
    default: VariantValue
    help: str

    @property
    def numeric(self) -> bool:
        """True when the values are integers (given as text on the command line)."""
        return isinstance(self.choices, range) or any(isinstance(c, int) for c in self.choices)

    def shown(self) -> str:
        """The allowed values as a user reads them: `1..8` or `basic, pro`."""
        if isinstance(self.choices, range):
            return f"{self.choices.start}..{self.choices.stop - 1}"
        return ", ".join(map(str, self.choices))

    def parse(self, game: str, raw: Any) -> VariantValue:
        """`raw` (text, int or bool) as a checked value of this option, or a VariantError."""
        value = raw
        if raw is True or raw is False:
            value = "on" if raw else "off"
        if isinstance(value, str):
            value = value.strip().lower()
            if self.numeric and value not in self.choices:
                try:
                    value = int(value)
                except ValueError:
                    pass
        elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if value not in self.choices:
            shown = value if isinstance(value, int) else repr(raw)
            raise VariantError(f"{game} variant {self.key}={shown} is out of range; "
                               f"expected {self.shown()}")
        return value


@dataclass(frozen=True)
class Traits:
    """What kind of game it is: what searchers and adapters must be ready for."""

    min_players: int
    max_players: int
    chance: bool                  # has CHANCE nodes (dice, shuffles, draws)
    simultaneous: bool            # has SIMULTANEOUS nodes in some variant
    hidden_information: bool      # some player cannot see part of the state
    deals: bool                   # `new(seed=...)` resolves the opening deal from the seed

    @property
    def perfect_information(self) -> bool:
        return not self.hidden_information


@dataclass(frozen=True)
class StatField:
    """One field of a finished game's `stats()` (written to games.csv's `scores` column)."""

    name: str
    type: str      # 'int', 'float', 'bool', 'str', 'seat' (int or None) or 'json' (nested)
    per_player: bool
    help: str


@dataclass(frozen=True)
class EvalWeight:
    """One tunable weight of a game's evaluation or playout policy: agents take it as
    `w_<name>=value` (e.g. `mcts:cutoff=10,w_free=6`), `niwa tune` tunes it in
    [low, high]. The default reproduces the game's published evaluation exactly."""

    name: str
    default: float
    low: float
    high: float
    help: str


@dataclass(frozen=True)
class GameSpec:
    """Everything niwa may ask of a game. Built by each game module as ``SPEC``.

    `create(variant, seed)` makes the initial position of a full, checked variant dict
    (with `seed`, games that deal resolve the deal up to the first decision);
    `parse_notation(text)` reads the game's one-line notation; `max_game_length(variant)`
    and `num_distinct_actions(variant)` bound plies and action ids for that variant.
    `batch_playouts(start, games, seed, policy)` runs playouts entirely in C and returns
    (games, actions, wins by seat); `policy` is one of `playout_policies`.
    `placement(final_state)` gives each seat's score for the finishing order (the game's
    returns come first, so the winner is always placed first).
    """

    name: str
    title: str
    options: tuple[VariantOption, ...]
    traits: Traits
    create: Callable[[dict, int | None], Any]
    parse_notation: Callable[[str], Any]
    max_game_length: Callable[[dict], int]
    num_distinct_actions: Callable[[dict], int]
    batch_playouts: Callable[..., tuple] | None = None
    playout_policies: tuple[str, ...] = ("random", "heuristic")
    mcts_defaults: Mapping[str, Any] = field(default_factory=dict)
    # The strongest agent niwa knows for this game, as an agent spec string without a time
    # budget: what the `best` agent plays (`best:time=0.05` adds the budget). Published per
    # game from measured results (bench/best-agents/results/<game>-experiments.csv).
    best_agent: str = "mcts"
    stats: tuple[StatField, ...] = ()
    score_parts: tuple[str, ...] = ()           # keys of state.score_breakdown() rows, if any
    solo_thresholds: Mapping[int, int] = field(default_factory=dict)
    check_variant: Callable[[dict], None] | None = None   # cross-key rules, raises VariantError
    simultaneous_when: Callable[[dict], bool] | None = None   # per variant, if not always
    reference: str | None = None    # dotted module of the plain-Python reference rules
    # A full notation consistent with an information_state(p) text (hidden parts filled
    # with any values they could have; resample_hidden(p) then draws them properly), for
    # games whose information states do not parse as positions.
    complete_information_state: Callable[[str], str] | None = None
    # Finishing order of a multiplayer game: each seat's score at the end (higher is better,
    # e.g. final points), used to order the players below the winner; None: by returns only.
    placement: Callable[[Any], list[float]] | None = None
    # The weights of the game's c_evaluate (and of its heuristic playout policy) in the
    # order the engine reads them from State.c_weights; () for a game with none.
    eval_weights: tuple[EvalWeight, ...] = ()
    # What the codes of the game's render mean (card codes, say), printed by `niwa play`
    # under the first board and on 'help'; "" when the render explains itself.
    legend: str = ""
    # Which turn a position is in (any value that changes when a new turn begins), for
    # displays that show the board once per turn; None: every ply is a turn.
    turn: Callable[[Any], Any] | None = None

    def __post_init__(self):
        object.__setattr__(self, "mcts_defaults", MappingProxyType(dict(self.mcts_defaults)))
        object.__setattr__(self, "solo_thresholds", MappingProxyType(dict(self.solo_thresholds)))

    # ---- variants -------------------------------------------------------------------
    @property
    def variants(self) -> dict[str, VariantOption]:
        return {o.key: o for o in self.options}

    def defaults(self) -> dict:
        return {o.key: o.default for o in self.options}

    def parse_variant(self, given: Mapping[str, Any] | None = None) -> dict:
        """The full variant (defaults filled in) from `given` settings, checked: unknown
        keys, values out of range and cross-key rules raise a one-line VariantError.

        >>> from niwa.ext.registry import get_game
        >>> get_game("haru").parse_variant({"target": "3"})["target"]
        3
        """
        variant = self.defaults()
        options = self.variants
        for raw_key, raw in (given or {}).items():
            key = str(raw_key).strip().replace("-", "_")
            if key not in options:
                raise VariantError(f"unknown {self.name} variant key {key!r}; known: "
                                   f"{', '.join(options) or '(none)'}")
            variant[key] = options[key].parse(self.name, raw)
        if self.check_variant is not None:
            self.check_variant(variant)
        return variant

    # ---- positions ------------------------------------------------------------------
    def new(self, seed: int | None = None, **variant):
        """The initial position of a variant (games that deal use `seed` for the deal)."""
        return self.create(self.parse_variant(variant), seed if self.traits.deals else None)

    def from_notation(self, text: str):
        return self.parse_notation(text)

    def simultaneous(self, variant: dict) -> bool:
        """Whether this variant has SIMULTANEOUS nodes."""
        if self.simultaneous_when is not None:
            return bool(self.simultaneous_when(variant))
        return self.traits.simultaneous

    def load_reference(self):
        """The game's plain-Python reference rules (oracle) module: `initial(**variant)`,
        `random_playout(state, rng)` and states with the contract's Python methods."""
        if self.reference is None:
            raise VariantError(f"{self.name} ships no reference rules")
        return importlib.import_module(self.reference)

    def weight_values(self, given: Mapping[str, float] | None = None,
                      prefix: str = "") -> list[float]:
        """The full weight vector (declared order) with `given` (name -> value) over the
        defaults; an unknown name or a value outside its declared range raises a one-line
        ValueError naming what is allowed (names shown with `prefix`, as agents take them).

        >>> from niwa.ext.registry import get_game
        >>> get_game("lotus").weight_values({"free": 6})[:2]
        [1.0, 6.0]
        """
        known = {w.name: w for w in self.eval_weights}
        values = {w.name: float(w.default) for w in self.eval_weights}
        for name, value in (given or {}).items():
            if name not in known:
                raise ValueError(f"{self.name} has no evaluation weight {prefix}{name}; "
                                 f"weights: {', '.join(prefix + k for k in known) or '(none)'}")
            w = known[name]
            if not (math.isfinite(value) and w.low <= value <= w.high):
                raise ValueError(f"{self.name} weight {prefix}{name}={value:g} is out of range; "
                                 f"expected {w.low:g}..{w.high:g}")
            values[name] = float(value)
        return list(values.values())

    def stat(self, name: str) -> StatField | None:
        """The declared statistics field `name`, or None if this game does not report it."""
        return next((f for f in self.stats if f.name == name), None)
