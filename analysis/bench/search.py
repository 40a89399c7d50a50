"""Search speed next to the engine's own limits, measured in the same run, and the small
strength matches of issue 5 ("mcts beats random" and so on).

    python -m niwa.analysis.bench.search speed lotus --seconds 2
    python -m niwa.analysis.bench.search match lotus mcts:iters=2000 random --games 200

Speed figures, all from the first position where someone decides: MCTS simulations/s
against random playouts/s (a simulation is one playout plus the tree walk), and alpha-beta
nodes/s against the positions perft plays per second (perft counts its last ply in bulk,
without playing it, so its leaves/s is shown too but is no rate a searcher can approach).
"""

from __future__ import annotations

import argparse
import time

from niwa.ext.game import Rng
from niwa.ext.registry import games, get_game, spec_of


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


def match(name: str, spec_a: str, spec_b: str, games: int, seed: int = 1, **variant) -> dict:
    """`games` games of A against B (2 players) with seats swapped every game; A's score
    counts a win as 1 and a shared result as 1/2."""
    from niwa.analysis.arena.game_loop import play
    from niwa.solver.agents import make_agent

    score = 0.0
    rng = Rng(seed)
    for g in range(games):
        state = get_game(name).new(seed=seed * 100_003 + g, **variant)
        a_seat = g % 2
        agents = [None, None]
        agents[a_seat] = make_agent(spec_a, seed + 2 * g)
        agents[1 - a_seat] = make_agent(spec_b, seed + 2 * g + 1)
        score += play(state, agents, chance_rng=rng, forfeits=False).results[a_seat]
    return {"game": name, "a": spec_a, "b": spec_b, "games": games, "score_a": score,
            "rate_a": score / games}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("speed")
    sp.add_argument("games", nargs="*", default=games())
    sp.add_argument("--seconds", type=float, default=2.0)
    mp = sub.add_parser("match")
    mp.add_argument("game")
    mp.add_argument("a")
    mp.add_argument("b")
    mp.add_argument("--games", type=int, default=200)
    mp.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.cmd == "speed":
        for g in args.games:
            r = search_speed(g, args.seconds)
            print(f"{g:<7} playouts/s {r['playouts_s']:>10,.0f}  mcts sims/s {r['mcts_sims_s']:>10,.0f}"
                  f" ({r['mcts_ratio']:.2f}x) | perft nodes/s {r['perft_nps']:>12,.0f}"
                  f" (depth {r['perft_depth']})  alpha-beta nodes/s {r['alphabeta_nps']:>10,.0f}"
                  f" ({r['alphabeta_ratio']:.2f}x of leaves/s, {r['alphabeta_ratio_made']:.2f}x of"
                  f" perft moves made/s {r['perft_made_s']:,.0f}; depth {r['alphabeta_depth']})",
                  flush=True)
    else:
        t0 = time.perf_counter()
        r = match(args.game, args.a, args.b, args.games, args.seed)
        print(f"{r['game']}: {r['a']} vs {r['b']}: {r['score_a']:g}/{r['games']} "
              f"= {r['rate_a']:.1%} ({time.perf_counter() - t0:.0f}s)", flush=True)


if __name__ == "__main__":
    main()
