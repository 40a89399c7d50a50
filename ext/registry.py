"""The game registry: every installed niwa game, found through the `niwa.games` entry points.

A game is a `GameSpec` (niwa.ext.spec) registered under the ``niwa.games`` entry-point
group, the three built-in games included (see pyproject.toml)::

    [project.entry-points."niwa.games"]
    nim = "niwa_nim:SPEC"

so a separately installed package adds a game with no change to niwa. Specs are loaded on
first use; `games()` lists the names without importing any engine.
"""

from __future__ import annotations

import functools
from importlib.metadata import entry_points

from niwa.ext.errors import NotationError, VariantError
from niwa.ext.spec import GameSpec

ENTRY_POINT_GROUP = "niwa.games"
BUILT_IN = ("lotus", "bonsai", "haru")     # listed first, in this order


_registered_here: dict[str, GameSpec] = {}     # register_game(): this process only


@functools.cache
def _installed() -> dict:
    found = {ep.name.lower(): ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    ordered = {name: found[name] for name in BUILT_IN if name in found}
    ordered.update(sorted((n, ep) for n, ep in found.items() if n not in ordered))
    return ordered


def _entry_points() -> dict:
    return {**_installed(), **_registered_here}


def register_game(spec: GameSpec) -> None:
    """Add a game in this process only (tests, notebooks); installed packages use the
    `niwa.games` entry points instead, which every worker process sees."""
    if not isinstance(spec, GameSpec):
        raise TypeError("register_game needs a GameSpec")
    _registered_here[spec.name] = spec


def unregister_game(name: str) -> None:
    _registered_here.pop(name, None)


def games() -> list[str]:
    """The names of every installed game, built-in games first."""
    names = list(_entry_points())
    if not names:
        raise VariantError("no games are registered: is niwa installed (pip install -e .)?")
    return names


def _load(name: str) -> GameSpec:
    if name in _registered_here:
        return _registered_here[name]
    return _load_installed(name)


@functools.cache
def _load_installed(name: str) -> GameSpec:
    spec = _installed()[name].load()
    if not isinstance(spec, GameSpec) or spec.name != name:
        raise VariantError(f"the {ENTRY_POINT_GROUP} entry point {name!r} does not name a "
                           f"GameSpec called {name!r}")
    return spec


def get_game(name: str) -> GameSpec:
    """The spec of an installed game, or a VariantError that lists the known games."""
    key = str(name).strip().lower()
    if key not in _entry_points():
        raise VariantError(f"unknown game {name!r}; known games: {', '.join(games())}")
    return _load(key)


def find_game(name: str) -> GameSpec | None:
    """The spec of an installed game, or None (e.g. for the test-only toy games)."""
    key = str(name).strip().lower()
    return _load(key) if key in _entry_points() else None


def spec_of(state) -> GameSpec | None:
    """The spec of the game a state belongs to (None for unregistered games): the
    state's own `spec` (kept for callers written before states knew it)."""
    return state.spec


def parse_position(text: str):
    """A state from a notation string, or from a bare game name (its initial position)."""
    text = text.strip()
    words = text.split(";")[0].split()
    if not words:
        raise NotationError("empty position: expected a game name "
                            f"({', '.join(games())}) or a position in its notation")
    first = words[0].lower()
    if first not in _entry_points():
        raise NotationError(
            f"position must begin with a game name ({', '.join(games())}), got {first!r}")
    spec = get_game(first)
    if ";" not in text:
        # "lotus players=3 rule=pro": the initial position of that variant
        return spec.new(**parse_variant_options(words[1:]))
    return spec.from_notation(text)


def parse_variant_options(pairs) -> dict:
    """['rule=pro', 'players=3'] -> {'rule': 'pro', 'players': '3'}; a key given twice is
    refused (which one would be meant?)."""
    out = {}
    for item in pairs:
        if "=" not in item:
            raise VariantError(f"variant {item!r} should be KEY=VALUE")
        k, v = item.split("=", 1)
        key = k.strip().replace("-", "_")
        if key in out:
            raise VariantError(f"variant key {key!r} is given twice")
        out[key] = v.strip()
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
