"""Search speed next to the engine's own limits, measured in the same run (what
`niwa bench GAME --search` prints).

Speed figures, all from the first position where someone decides: MCTS simulations/s
against random playouts/s (a simulation is one playout plus the tree walk), and alpha-beta
nodes/s against the positions perft plays per second (perft counts its last ply in bulk,
without playing it, so its leaves/s is shown too but is no rate a searcher can approach).
"""

from __future__ import annotations

import time

from niwa.ext.game import Rng
from niwa.ext.registry import get_game, spec_of


def playouts_per_second(state, seconds: float, seed: int = 1) -> float:
    spec = spec_of(state)
    fast = spec.batch_playouts if spec is not None else None
    games, batch = 0, 16
    t0 = time.perf_counter()
    while True:
        if fast is not None:
            games += fast(state, batch, seed + games)[0]
        else:
            rng = Rng(seed + games)
            for _ in range(batch):
                state.clone().random_playout(rng)
            games += batch
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return games / elapsed
        batch = min(batch * 2, 1 << 14)


def perft_nodes_per_second(state, seconds: float) -> tuple[float, float, int]:
    """(leaves/s, moves made/s, depth) of the deepest perft that fits the budget. Leaves
    at the last ply are bulk-counted (generated, not played), so leaves/s is the usual perft
    figure; moves made/s counts the positions actually played (every node above the last
    ply), which is the work an alpha-beta node also does."""
    depth, best = 1, (0.0, 0.0, 0)
    spent = 0.0
    counts = []
    while spent < seconds and depth < 12:
        t0 = time.perf_counter()
        leaves = state.perft(depth)
        dt = time.perf_counter() - t0
        spent += dt
        made = sum(counts)       # perft(1) + ... + perft(depth - 1)
        counts.append(leaves)
        best = (leaves / max(dt, 1e-9), made / max(dt, 1e-9), depth)   # the deepest run
        if depth >= 3 and dt * 6 > seconds - spent:     # the next depth would overrun
            break
        depth += 1
    return best


def decision_state(name: str, seed: int = 1, **variant):
    """The first position where someone decides (the deal and other chance resolved): where
    searches start in practice, so the speed figures are taken there."""
    state = get_game(name).new(seed=seed, **variant)
    rng = Rng(seed)
    while state.current_player() == -1:
        outcomes = state.chance_outcomes()
        state.apply(outcomes[rng.below(len(outcomes))][0])
    return state


def search_speed(name: str, seconds: float = 2.0, seed: int = 1, **variant) -> dict:
    from niwa.solver.alphabeta import AlphaBeta
    from niwa.solver.mcts import MCTS

    state = decision_state(name, seed, **variant)
    playouts = playouts_per_second(state, seconds, seed)
    tree = MCTS(state.num_players, seed=seed, reuse=False)
    sims = tree.search(state, time_limit=seconds).nps
    perft_nps, perft_made, perft_depth = perft_nodes_per_second(state, seconds)
    ab = AlphaBeta(state.num_players).search(state, depth=200, time_limit=seconds)
    return {"game": name, "playouts_s": playouts, "mcts_sims_s": sims,
            "mcts_ratio": sims / playouts, "perft_nps": perft_nps, "perft_made_s": perft_made,
            "perft_depth": perft_depth,
            "alphabeta_nps": ab.nps, "alphabeta_depth": ab.depth,
            "alphabeta_ratio": ab.nps / perft_nps if perft_nps else float("nan"),
            "alphabeta_ratio_made": ab.nps / perft_made if perft_made else float("nan")}
