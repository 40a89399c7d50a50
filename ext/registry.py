"""The game registry: every niwa game, its variants and defaults, behind one interface.

A game module in niwa.ext provides `VARIANTS` ({key: (choices, default, help)}),
`new_initial(**variant)` and `from_notation(text)`; adding a game means one line here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from niwa.ext.errors import NotationError, VariantError

GAME_MODULES = {
    "lotus": "niwa.ext.lotus",
    "bonsai": "niwa.ext.bonsai",
    "haru": "niwa.ext.haru",
}


@dataclass(frozen=True)
class GameInfo:
    name: str
    module: object

    @property
    def variants(self) -> dict:
        return self.module.VARIANTS

    def defaults(self) -> dict:
        return {k: v[1] for k, v in self.variants.items()}

    @property
    def mcts_defaults(self) -> dict:
        """MCTS settings this game tunes for itself (over the agent's generic defaults)."""
        return dict(getattr(self.module, "MCTS_DEFAULTS", {}))

    def new(self, seed=None, **variant):
        """The initial position (games with a deal use `seed`)."""
        if seed is not None and getattr(self.module, "DEALS", False):
            return self.module.new_initial(seed=seed, **variant)
        return self.module.new_initial(**variant)

    def from_notation(self, text: str):
        return self.module.from_notation(text)


def games() -> list[str]:
    return list(GAME_MODULES)


def get_game(name: str) -> GameInfo:
    name = name.strip().lower()
    if name not in GAME_MODULES:
        raise VariantError(f"unknown game {name!r}; known games: {', '.join(GAME_MODULES)}")
    return GameInfo(name, importlib.import_module(GAME_MODULES[name]))


def parse_position(text: str):
    """A state from a notation string, or from a bare game name (its initial position)."""
    text = text.strip()
    if not text:
        raise NotationError("empty position")
    first = text.split(";")[0].split()[0].lower()
    if first not in GAME_MODULES:
        raise NotationError(
            f"position must begin with a game name ({', '.join(GAME_MODULES)}), got {first!r}")
    info = get_game(first)
    if ";" not in text:
        # "lotus players=3 rule=pro": the initial position of that variant
        return info.new(**parse_variant_options(text.split()[1:]))
    return info.from_notation(text)


def parse_variant_options(pairs) -> dict:
    """['rule=pro', 'players=3'] -> {'rule': 'pro', 'players': '3'}."""
    out = {}
    for item in pairs:
        if "=" not in item:
            raise VariantError(f"variant {item!r} should be KEY=VALUE")
        k, v = item.split("=", 1)
        out[k.strip().replace("-", "_")] = v.strip()
    return out


def sample_outcome(outcomes, rng) -> int:
    """A chance outcome drawn by its probability from [(action, prob), ...] with a niwa Rng
    (or anything with .random()); the one place every runner samples chance."""
    u = rng.random()
    for action, prob in outcomes[:-1]:
        u -= prob
        if u < 0:
            return action
    return outcomes[-1][0]
