"""The agent spec: one line of text that names an agent and its parameters, as a value.

A spec is `name` or `name:key=value,key=value,...`, e.g. `mcts:iters=200,c=1.4`. Every
agent takes its own parameters (niwa.solver.agent_params, `niwa agents` lists them), those
that search with the game's evaluation also take its weights as `w_<name>=value`, and any
agent may carry its own time control as `tc=` (cutechess syntax, used by tournaments).

`AgentSpec.parse` checks a spec against the registry once: the agent exists, each
parameter is declared, values are converted to their types and lie in their ranges; any
problem is one line of AgentError (TimeControlError for a bad `tc=`). The value is
immutable and hashable; its text is canonical (lower-case name, no spaces, numbers
written back the shortest way that reads the same), and parameters keep the order they
were written in, which is part of the spec:

>>> spec = AgentSpec.parse("MCTS: iters=200, c=1.40, tc=60+1")
>>> spec
AgentSpec('mcts:iters=200,c=1.4,tc=60+1')
>>> spec.name, spec.params, str(spec.clock)
('mcts', {'iters': 200, 'c': 1.4}, '60+1')
>>> AgentSpec.parse(str(spec)) == spec
True
>>> spec.without_clock()
AgentSpec('mcts:iters=200,c=1.4')
>>> spec.replace(c=0.7, playout="heuristic")
AgentSpec('mcts:iters=200,c=0.7,playout=heuristic,tc=60+1')
>>> AgentSpec.parse("alphabeta:time=1s").params
{'time': 1.0}
>>> AgentSpec.parse("mcts:c=-1")
Traceback (most recent call last):
...
niwa.solver.agent_base.AgentError: agent 'mcts' parameter c=-1 should be at least 0.0 and at most 100.0

`make_agent(spec, seed)` builds the agent a spec names (text or AgentSpec).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from niwa.ext.registry import find_game, get_game
from niwa.solver.agent_base import WEIGHT_PREFIX, Agent, AgentError
from niwa.solver.agent_params import CHOICES, INT64, RANGES
from niwa.solver.agent_registry import REGISTRY, AgentEntry, load_agent_plugins
from niwa.solver.time_control import TimeControl, TimeControlError

CLOCK_KEY = "tc"        # the item every spec may carry: its own time control


@dataclass(frozen=True)
class AgentSpec:
    """An agent's name, its parameters (typed, in the order written) and its own time
    control (None without `tc=`). Build one with `AgentSpec.parse(text)`; constructing it
    directly skips the checks."""

    name: str
    items: tuple = ()                   # ((key, value), ...), values already typed
    clock: TimeControl | None = None

    @classmethod
    def parse(cls, text) -> AgentSpec:
        """The spec `text` names, checked against the registry (an AgentSpec is returned
        as it is); one-line AgentError or TimeControlError on anything wrong."""
        if isinstance(text, AgentSpec):
            return text
        if not isinstance(text, str):
            raise AgentError(f"an agent spec is text like mcts:iters=200, not {text!r}")
        load_agent_plugins()
        raw = text.strip()
        name, _, rest = raw.partition(":")
        name = name.strip().lower()
        if name not in REGISTRY:
            raise AgentError(f"unknown agent {name!r}; available: {', '.join(sorted(REGISTRY))}")
        entry = REGISTRY[name]
        params: dict = {}
        clock = None
        seen_clock = False
        for item in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not eq:
                raise AgentError(f"agent parameter {item!r} in {raw!r} should be key=value")
            if key.lower() == CLOCK_KEY:
                if seen_clock:
                    raise TimeControlError(f"agent spec {raw!r} gives tc= more than once")
                seen_clock = True
                clock = TimeControl.parse(value)
                continue
            if key in params:
                raise AgentError(f"agent {name!r} parameter {key} is given twice in {raw!r}")
            params[key] = _typed_value(entry, name, key, value)
        return cls(name, tuple(params.items()), clock)

    @property
    def params(self) -> dict:
        """{parameter: value} as written (a new dict: changing it changes no spec)."""
        return dict(self.items)

    @property
    def entry(self) -> AgentEntry:
        """The registry entry of the agent named."""
        load_agent_plugins()
        if self.name not in REGISTRY:
            raise AgentError(f"unknown agent {self.name!r}; available: "
                             f"{', '.join(sorted(REGISTRY))}")
        return REGISTRY[self.name]

    def replace(self, **params) -> AgentSpec:
        """This spec with these parameters set (existing ones keep their place, new ones
        come last), checked as parse() checks; `tc=` sets the time control."""
        values = self.params
        clock = self.clock
        if CLOCK_KEY in params:
            tc = params.pop(CLOCK_KEY)
            clock = tc if isinstance(tc, TimeControl) or tc is None else TimeControl.parse(tc)
        values.update(params)
        return AgentSpec.parse(_text(self.name, tuple(values.items()), None)).with_clock(clock)

    def without(self, *keys: str) -> AgentSpec:
        """This spec without these parameters (absent ones are ignored)."""
        return AgentSpec(self.name, tuple((k, v) for k, v in self.items if k not in keys),
                         self.clock)

    def without_clock(self) -> AgentSpec:
        """This spec without its `tc=`: what the agent itself is built from."""
        return AgentSpec(self.name, self.items, None)

    def with_clock(self, clock: TimeControl | str | None) -> AgentSpec:
        """This spec with its own time control `clock` (None: without one)."""
        if isinstance(clock, str):
            clock = TimeControl.parse(clock)
        return AgentSpec(self.name, self.items, clock)

    def __str__(self) -> str:
        return _text(self.name, self.items, self.clock)

    def __repr__(self) -> str:
        return f"AgentSpec({str(self)!r})"


def _text(name: str, items, clock) -> str:
    parts = [f"{k}={value_text(v)}" for k, v in items]
    if clock is not None:
        parts.append(f"{CLOCK_KEY}={clock}")
    return name + (":" + ",".join(parts) if parts else "")


def value_text(value) -> str:
    """A parameter value as a spec writes it: true/false, integers as they are, reals the
    shortest way that reads back the same.

    >>> value_text(True), value_text(2000), value_text(1.0), value_text(0.1), value_text(1e-7)
    ('true', '2000', '1', '0.1', '1e-07')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        short = f"{value:g}"
        return short if float(short) == value else repr(value)
    return str(value)


def _typed_value(entry: AgentEntry, name: str, key: str, value: str):
    """`value` (text) as agent `name`'s parameter `key` wants it; AgentError otherwise."""
    if key.startswith(WEIGHT_PREFIX) and entry.weights:
        return _weight_value(name, key, value)
    if key not in entry.params and entry.open_params and any(
            key in other.params for other in REGISTRY.values()):
        return value     # checked once the agent knows what it plays
    if key not in entry.params:
        known = ", ".join(entry.params) or "none"
        raise AgentError(f"agent {name!r} has no parameter {key!r}; parameters: {known}")
    typ = entry.params[key][0]
    try:
        typed = _convert(typ, value)
    except ValueError:
        raise AgentError(
            f"agent {name!r} parameter {key}={value!r} should be {typ.__name__}") from None
    allowed = CHOICES.get(key)
    if allowed and typed not in allowed:
        raise AgentError(f"agent {name!r} parameter {key}={value!r} should be one of "
                         f"{', '.join(allowed)}")
    if typ in (int, float):
        _check_range(name, key, value, typed)
    return typed


def _weight_value(agent: str, key: str, text: str) -> float:
    """A `w_<name>=` value as a finite float (its name and range are checked against the
    game when the agent first sees it, EvalWeights.check)."""
    try:
        value = float(text)
    except ValueError:
        raise AgentError(f"agent {agent!r} weight {key}={text!r} should be a number") from None
    if not math.isfinite(value):
        raise AgentError(f"agent {agent!r} weight {key}={text} should be a finite number")
    return value


def _check_range(agent: str, key: str, text: str, value) -> None:
    """A number parameter must be finite and within its meaning (one-line AgentError)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise AgentError(f"agent {agent!r} parameter {key}={text} should be a finite number")
    low, high, low_open = RANGES.get(key, (-INT64, INT64, False))
    if value < low or value > high or (low_open and value == low):
        lowest = ("positive" if (low_open and low == 0) or low == 1
                  else f"above {low}" if low_open else f"at least {low}")
        raise AgentError(f"agent {agent!r} parameter {key}={text} should be {lowest} and at "
                         f"most {high}")


def _convert(typ, value: str):
    if typ is bool:
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(value)
    if typ is float and value.endswith("s"):   # time budgets like 1s / 0.5s
        value = value[:-1]
    return typ(value)


# ---- what is built from a spec ---------------------------------------------------------

def parse_spec(spec) -> tuple[str, dict]:
    """'mcts:iters=200,c=1.4' -> ('mcts', {'iters': 200, 'c': 1.4}) with types checked
    (the name and parameters of AgentSpec.parse; its `tc=` is left out)."""
    parsed = AgentSpec.parse(spec)
    return parsed.name, parsed.params


def make_agent(spec, seed: int | None = None) -> Agent:
    """Build the agent a spec (text or AgentSpec) names; AgentError lists what exists when
    it's wrong. A spec with `tc=` is refused: clocks are run by a tournament, which builds
    its agents from `spec.without_clock()`."""
    parsed = AgentSpec.parse(spec)
    if parsed.clock is not None:
        raise AgentError(f"agent spec {str(parsed)!r} gives tc=: a time control is run by a "
                         "tournament (its --tc or an agent's tc=), not by the agent")
    agent = parsed.entry.resolve()(seed=seed, **parsed.params)
    agent.spec = parsed
    return agent


def check_for_game(spec, state) -> None:
    """Check a spec against the game it will play, before any game starts: its evaluation
    weights (`w_NAME=`) must be ones the game declares (AgentError otherwise), so a typo
    is one line at start-up instead of a forfeit in every game."""
    from niwa.solver.agent_base import EvalWeights, split_weights

    parsed = AgentSpec.parse(spec)
    if split_weights(parsed.params)[1]:
        EvalWeights(parsed.name, parsed.params).check_spec(state.spec, state.game_name)


def best_agent_spec(game: str, overrides: dict | None = None) -> AgentSpec:
    """The spec `best` plays on `game`: the game's published `best_agent` (plain `mcts` for
    a game outside the registry) with `overrides` (parameter -> value) replacing or adding
    parameters, checked as any spec is (AgentError when the resolved agent lacks one).

    >>> best_agent_spec("lotus", {"time": 0.05}).params["time"]
    0.05
    """
    info = find_game(game)
    published = AgentSpec.parse(info.best_agent if info is not None else "mcts")
    try:
        return published.replace(**(overrides or {}))
    except AgentError as e:
        raise AgentError(f"best on {game} plays {published.name}: {e}") from None


def best_spec(game: str, overrides: dict | None = None) -> str:
    """best_agent_spec's text.

    >>> best_spec("lotus", {"time": 0.05}).endswith("time=0.05")
    True
    """
    return str(best_agent_spec(game, overrides))


def agent_settings(spec, game: str) -> dict:
    """Every parameter of the agent `spec` names on `game`, defaults filled in (the game's
    own MCTS defaults included): what a run records so that its agents can be rebuilt
    exactly even if defaults change later."""
    parsed = AgentSpec.parse(spec)
    if parsed.name == "best":     # what it resolves to on this game, fully (and checked here)
        resolved = best_spec(game, parsed.params)
        return {**agent_settings(resolved, game), "agent": "best", "resolves_to": resolved}
    entry = parsed.entry
    settings = entry.defaults()
    if entry.mcts or getattr(entry.factory, "searches_with_mcts", False):
        settings.update(get_game(game).mcts_defaults)
    return {"agent": parsed.name, **settings, **parsed.params}
