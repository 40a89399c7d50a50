"""What a search reports: one value type for alpha-beta, MCTS and the agents built on them.

A field is None where a searcher has no such figure (alpha-beta counts no visits, MCTS
searches to no fixed depth); `dataclasses.asdict(result)` is its JSON form.

>>> from niwa.ext.lotus import LotusState
>>> from niwa.solver.alphabeta import AlphaBeta
>>> r = AlphaBeta(2).search(LotusState(), depth=2)
>>> r.algo, r.depth, r.best_name == r.pv[0]
('alphabeta', 2, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ActionStat:
    """One root action as the search saw it."""

    action: int | list[int]     # a joint action (one per seat) at an MCTS simultaneous root
    name: str
    value: float | None         # expected return for the result's player; None: never tried
    visits: int | None = None   # MCTS only
    share: float | None = None  # MCTS: visits / all root visits
    proven: bool | None = None  # MCTS-Solver: the action's value is exact


@dataclass(frozen=True)
class SearchResult:
    """A search's answer from one root position. Values are expected returns of `player`
    in [0, 1] (1 = win); `proven` means no evaluation entered the value."""

    algo: str                   # alphabeta | mcts | ismcts | greedy | ...
    value: float | None         # None: no iteration finished in time
    player: int
    proven: bool = False
    best: int | None = None
    best_name: str | None = None
    actions: list[ActionStat] = field(default_factory=list)  # alpha-beta: root_values only
    pv: list[str] = field(default_factory=list)     # the principal variation, named
    depth: int = 0              # alpha-beta: last finished iteration; MCTS: len(pv)
    nodes: int = 0
    iterations: int | None = None   # MCTS simulations
    time_s: float = 0.0
    nps: float = 0.0            # nodes/s (alpha-beta), simulations/s (MCTS)
    tt_fill: float = 0.0        # share of the table in use (TT, or MCTS node pool)
    values: list[float | None] | None = None    # MCTS: the root value of every seat
    root_visits: int | None = None  # MCTS, including visits from a reused tree
    max_nodes: int | None = None    # MCTS node cap
    strategy: dict | None = None    # alpha-beta at a simultaneous root: rows (the player's
    #                                 actions), row_strategy, col_strategy, matrix
    strategies: list | None = None  # MCTS at a simultaneous root: per seat, rows of
    #                                 (action, probability, visits, mean)
    episode: int | None = None      # alpha-beta search(episode=True): the episode searched
    status: str | None = None       # proof: "proven", or why the value is only an estimate
    table_warning: str | None = None    # proof: the table was too small (give more --tt-mb)
    proof_numbers: tuple[int, int] | None = None    # proof: the root's (pn, dn) at the end
