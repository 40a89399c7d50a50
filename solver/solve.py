"""Search one position for its value with the searcher that suits it: what `niwa solve`
asks, without any command-line concerns.

>>> from niwa.ext.lotus import LotusState
>>> r = solve_position(LotusState(towers=1, lane=1, shared=3, trampoline_at=3), depth=40)
>>> r.algo, r.proven
('alphabeta', True)
"""

from __future__ import annotations

from niwa.ext.errors import NiwaError
from niwa.solver.agents import hides_something_from, mcts_settings
from niwa.solver.results import SearchResult


class SolveError(NiwaError):
    """A position or a request that cannot be solved as asked."""


def has_hidden_information(state) -> bool:
    """True when some player's view differs from the full position."""
    return any(hides_something_from(state, p) for p in range(state.num_players))


def solve_position(state, algo="auto", time_s=None, depth=None, iters=None, seed=0,
                   tt_bits=22, round_only=False) -> SearchResult:
    """Search `state`: the value (expected return of `player`, in [0, 1]), proven, best,
    every root action, the principal variation and the search's figures.

    `algo`: alphabeta, mcts, or auto (alpha-beta unless something is hidden: then ISMCTS).
    `round_only`: open-hands alpha-beta of the rest of the current round only (the game's
    episode, State.episode()); the value is then the round's outcome as the game's
    evaluation at the round's end defines it, and the result's `episode` names the round."""
    from niwa.solver.alphabeta import AlphaBeta
    from niwa.solver.mcts import MCTS

    if state.is_terminal():
        raise SolveError("the position is over: nothing to solve")
    if round_only:
        if algo == "mcts":
            raise SolveError("--round is an exact open-hands search: use --algo alphabeta")
        if state.episode() == 0:
            raise SolveError(f"--round: {state.game_name} has no rounds")
        algo = "alphabeta"
    if algo == "auto":
        algo = "mcts" if has_hidden_information(state) else "alphabeta"
    if algo == "alphabeta":
        ab = AlphaBeta(state.num_players, tt_bits=tt_bits)
        limit = 10.0 if time_s is None and depth is None else (time_s or 0.0)
        r = ab.search(state, depth=depth or 200, time_limit=limit, root_values=True,
                      episode=round_only)
        if r.value is None:
            raise SolveError("no search iteration finished in time: give more --time")
        return r
    tuned = mcts_settings(state, {})
    tree = MCTS(state.num_players, seed=seed, ismcts=has_hidden_information(state),
                max_nodes=4_000_000, c=tuned["c"], playout=tuned["playout"],
                cutoff=tuned["cutoff"])
    if iters is None and time_s is None:
        iters = 100_000
    return tree.search(state, iterations=iters or 0, time_limit=time_s or 0.0)

