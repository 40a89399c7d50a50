"""The agents registry: every agent name with its factory, parameters and help.

An entry's factory is a callable `factory(seed=..., **params) -> Agent`, or the text
"module:attribute" naming one, imported when the first agent is built: so the registry
needs none of the agent classes, and listing or checking agents (`niwa agents`, every spec
the CLI reads) imports no searcher. Installed packages add agents through the
`niwa.agents` entry points: each names a zero-argument callable that calls
`register_agent(name, factory, params, help)`.

>>> entry = REGISTRY["mcts"]
>>> entry.params["c"][:2], entry.weights
((<class 'float'>, 1.4), True)
>>> entry.factory
'niwa.solver.agents:MCTSAgent'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points

from niwa.solver.agent_params import (
    ALPHABETA_PARAMS,
    BEST_PARAMS,
    EXACT_PARAMS,
    ISMCTS_PARAMS,
    MCTS_PARAMS,
    PERFECT_PARAMS,
)

PLUGIN_GROUP = "niwa.agents"


@dataclass
class AgentEntry:
    """One registered agent: how to build it and what it takes."""

    factory: Callable | str          # a callable, or "module:attribute" naming one
    params: dict = field(default_factory=dict)   # name -> (type, default, help)
    help: str = ""
    # also accepts any parameter of another registered agent, kept as text and checked when
    # the agent knows what it plays (the `best` agent's overrides)
    open_params: bool = False
    # also accepts w_<name>=value: the game's evaluation weight <name> (EvalWeights)
    weights: bool = False
    # the agent searches with MCTS, so a game's own MCTS defaults apply to it
    mcts: bool = False

    def resolve(self) -> Callable:
        """The factory itself (imported on first use when named by text)."""
        if isinstance(self.factory, str):
            module, _, attr = self.factory.partition(":")
            return getattr(importlib.import_module(module), attr)
        return self.factory

    def defaults(self) -> dict:
        """{parameter: its default}."""
        return {key: default for key, (_, default, _) in self.params.items()}


REGISTRY: dict[str, AgentEntry] = {
    "random": AgentEntry("niwa.solver.agents:RandomAgent", {}, "uniformly random legal action"),
    "greedy": AgentEntry("niwa.solver.agents:GreedyAgent", {},
                         "one ply with the game's evaluation", weights=True),
    "mcts": AgentEntry("niwa.solver.agents:MCTSAgent", {**MCTS_PARAMS, **EXACT_PARAMS},
                       "UCT with MCTS-Solver, chance and "
                       "simultaneous nodes, e.g. mcts:iters=2000,c=1.4", weights=True, mcts=True),
    "ismcts": AgentEntry("niwa.solver.agents:ISMCTSAgent", ISMCTS_PARAMS,
                         "single-observer information-set MCTS, e.g. ismcts:iters=2000",
                         weights=True, mcts=True),
    "alphabeta": AgentEntry(
        "niwa.solver.agents:AlphaBetaAgent", ALPHABETA_PARAMS,
        "iterative-deepening alpha-beta, e.g. alphabeta:depth=8 or alphabeta:time=1s",
        weights=True),
    "human": AgentEntry("niwa.solver.agents:HumanAgent", {},
                        "a person typing moves at the terminal"),
    "best": AgentEntry(
        "niwa.solver.agents:BestAgent", BEST_PARAMS,
        "the game's strongest known agent (its GameSpec's best_agent, see `niwa agents` "
        "below), e.g. best:time=0.05; any parameter of that agent may be overridden, e.g. "
        "best:time=0.05,c=1.0", open_params=True, weights=True),
    "perfect": AgentEntry(
        "niwa.solver.perfect:PerfectAgent", PERFECT_PARAMS,
        "plays its opening book, else proven moves from df-pn proofs (two-player "
        "perfect-information games; a proven loss: the hardest-to-refute move), else its "
        "unfinished proof's most-proving move; its fallback where proofs cannot decide, "
        "e.g. perfect:time=1s"),
}

_plugins_loaded = False


def register_agent(name: str, factory, params: dict | None = None, help: str = "") -> None:
    """Add (or replace) the agent `name`: `factory(seed=..., **params)` builds it, `params`
    declares its parameters as {name: (type, default, help)}."""
    REGISTRY[name] = AgentEntry(factory, params or {}, help)


def load_agent_plugins() -> None:
    """Register the agents of installed packages, once: every entry point of the
    `niwa.agents` group names a zero-argument callable that calls register_agent(). An
    entry point that cannot be imported (its optional dependency is missing, as
    niwa[openspiel] without open_spiel) is skipped: its agents are simply not offered."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            register = ep.load()
        except ImportError:
            continue
        register()


def describe_agents() -> list[tuple[str, str, dict]]:
    """(name, help, parameters) of every agent, plugins included, by name."""
    load_agent_plugins()
    return [(n, e.help, e.params) for n, e in sorted(REGISTRY.items())]
