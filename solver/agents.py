"""The agents registry: one spec string names an agent everywhere (CLI, tournaments,
analysis). A spec is `name` or `name:key=value,key=value`, e.g. `mcts:iters=2000,c=1.4`.

An agent is asked for one action at a time:
    agent.step(state, player) -> action
`player` is the seat to act for; at a SIMULTANEOUS node it says whose choice is wanted
(agents must not read the other players' pending choices). Agents that keep a tree may
implement `observe(state, action)` / `reset()`; the defaults do nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from niwa.ext.errors import NiwaError
from niwa.ext.game import Rng


class AgentError(NiwaError):
    """An unknown agent, or a bad parameter in an agent spec."""


class Agent:
    name = "agent"

    def __init__(self, seed: int | None = None, **params):
        self.rng = Rng(0 if seed is None else seed)
        self.params = params

    def step(self, state, player: int) -> int:
        raise NotImplementedError

    def observe(self, state, action) -> None:
        """Told every action applied to the game (for tree reuse); optional."""

    def reset(self) -> None:
        """A new game starts."""

    def analysis(self) -> dict:
        """What the agent found at its last step (value, visits...), for logs; optional."""
        return {}

    def __repr__(self):
        return f"<{type(self).__name__} {self.params}>"


class RandomAgent(Agent):
    """Uniformly random legal action."""

    name = "random"

    def step(self, state, player):
        return self.rng.choice(state.legal_actions(player))


@dataclass
class AgentSpec:
    factory: type
    params: dict = field(default_factory=dict)   # name -> (type, default, help)
    help: str = ""


REGISTRY: dict[str, AgentSpec] = {
    "random": AgentSpec(RandomAgent, {}, "uniformly random legal action"),
}


def register_agent(name: str, factory, params: dict | None = None, help: str = "") -> None:
    REGISTRY[name] = AgentSpec(factory, params or {}, help)


def parse_spec(spec: str) -> tuple[str, dict]:
    """'mcts:iters=200,c=1.4' -> ('mcts', {'iters': 200, 'c': 1.4}) with types checked."""
    spec = spec.strip()
    name, _, rest = spec.partition(":")
    name = name.strip().lower()
    if name not in REGISTRY:
        raise AgentError(f"unknown agent {name!r}; available: {', '.join(sorted(REGISTRY))}")
    entry = REGISTRY[name]
    params = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            raise AgentError(f"agent parameter {item!r} in {spec!r} should be key=value")
        if key not in entry.params:
            known = ", ".join(entry.params) or "none"
            raise AgentError(f"agent {name!r} has no parameter {key!r}; parameters: {known}")
        typ = entry.params[key][0]
        try:
            params[key] = _convert(typ, value.strip())
        except ValueError:
            raise AgentError(
                f"agent {name!r} parameter {key}={value!r} should be {typ.__name__}"
            ) from None
    return name, params


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


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build an agent from its spec string; AgentError lists what exists when it's wrong."""
    name, params = parse_spec(spec)
    agent = REGISTRY[name].factory(seed=seed, **params)
    agent.spec = spec
    return agent


def describe_agents() -> list[tuple[str, str, dict]]:
    return [(n, e.help, e.params) for n, e in sorted(REGISTRY.items())]
