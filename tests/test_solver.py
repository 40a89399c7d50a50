"""Searchers against brute force: alpha-beta and MCTS-Solver must prove the values a plain
minimax/expectimax written here computes, on Lotus set-ups small enough to solve and on
toy games with known values (chance, simultaneous moves, hidden cards)."""

from __future__ import annotations

import dataclasses
import random
import subprocess
import sys
import textwrap
import time
from functools import cache

import pytest
from scipy.optimize import linprog

from niwa.ext.lotus import LotusState
from niwa.ext.toys import ChanceNimState, KuhnState, MatrixGameState
from niwa.solver.alphabeta import AlphaBeta, solve_matrix_game
from niwa.solver.mcts import MCTS

TINY = dict(towers=2, lane=1, shared=3, trampoline_at=3)
TINY_SETUPS = [
    TINY,
    dict(TINY, rule="pro"),
    dict(towers=2, lane=2, shared=3, trampoline_at=4, trampoline="mandatory"),
]


# ---- brute force (plain Python, memoised on the position hash) --------------------------
def brute_values(state) -> list[float]:
    """Exact value vector: max^n at player nodes (paranoid is checked separately),
    expectation at chance nodes."""
    memo = {}

    def rec(s):
        key = s.hash()
        if key in memo:
            return memo[key]
        if s.is_terminal():
            v = s.returns()
        elif s.is_chance_node():
            v = [0.0] * s.num_players
            for a, p in s.chance_outcomes():
                cv = rec(s.child(a))
                v = [x + p * y for x, y in zip(v, cv, strict=True)]
        else:
            p = s.current_player()
            v = max((rec(s.child(a)) for a in s.legal_actions()), key=lambda vec: vec[p])
        memo[key] = v
        return v

    return rec(state)


def brute_paranoid(state, root) -> float:
    """Root player's return when every other player minimises it."""
    memo = {}

    def rec(s):
        key = s.hash()
        if key not in memo:
            if s.is_terminal():
                memo[key] = s.returns()[root]
            else:
                vals = [rec(s.child(a)) for a in s.legal_actions()]
                memo[key] = max(vals) if s.current_player() == root else min(vals)
        return memo[key]

    return rec(state)


def random_positions(count, seed, min_goal=0, **variant):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = LotusState(**variant)
        plies = rng.randrange(0, 12)
        for _ in range(plies):
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))
        if not s.is_terminal() and sum(s.goal_count(p) for p in range(s.num_players)) >= min_goal:
            out.append(s)
    return out


def play_line(state, names):
    s = state.clone()
    for name in names:
        s.apply(name)
    return s


# ---- Lotus: exact solving ----------------------------------------------------------------
@pytest.mark.parametrize("variant", TINY_SETUPS)
def test_alphabeta_and_mcts_solver_prove_the_brute_force_value_of_tiny_lotus(variant):
    s = LotusState(**variant)
    exact = brute_values(s)[s.current_player()]
    ab = AlphaBeta(2).search(s, depth=200)
    assert ab.proven and ab.value == pytest.approx(exact)
    mc = MCTS(2, seed=1).search(s, iterations=400_000)
    assert mc.proven and mc.value == pytest.approx(exact)
    assert mc.iterations < 400_000          # stopped as soon as the root was proven


def test_root_action_values_match_brute_force_on_many_positions():
    for s in random_positions(12, seed=5, **TINY):
        mover = s.current_player()
        want = {a: brute_values(s.child(a))[mover] for a in s.legal_actions()}
        r = AlphaBeta(2).search(s, depth=200, root_values=True)
        assert r.proven
        got = {a.action: a.value for a in r.actions}
        assert got == pytest.approx(want)
        assert r.value == pytest.approx(max(want.values()))
        mc = MCTS(2, seed=2).search(s, iterations=300_000)
        assert mc.proven and mc.value == pytest.approx(max(want.values()))


def test_a_proven_win_comes_with_a_winning_line_that_wins():
    wins = [s for s in random_positions(40, seed=11, **TINY)
            if brute_values(s)[s.current_player()] == 1.0][:5]
    assert wins
    for s in wins:
        r = AlphaBeta(2).search(s, depth=200)
        assert r.proven and r.value == 1.0
        end = play_line(s, r.pv)
        assert end.is_terminal() and end.returns()[s.current_player()] == 1.0
        mc = MCTS(2, seed=3).search(s, iterations=300_000)
        assert mc.proven and mc.value == 1.0
        assert brute_values(s.child(mc.best))[s.current_player()] == 1.0


def test_paranoid_search_for_three_players_matches_brute_force():
    for s in random_positions(4, seed=2, players=3, towers=1, lane=1, shared=3, trampoline_at=3):
        root = s.current_player()
        r = AlphaBeta(3).search(s, depth=200)
        assert r.proven and r.value == pytest.approx(brute_paranoid(s, root))


def test_mcts_backs_up_reward_vectors_for_three_players():
    s = LotusState(players=3)
    r = MCTS(3, seed=4).search(s, iterations=3000)
    assert len(r.values) == 3 and sum(r.values) == pytest.approx(1.0)
    assert s.action_to_string(r.best) == r.best_name


def test_depth_limited_search_is_an_estimate_and_uses_the_evaluation():
    r = AlphaBeta(2).search(LotusState(), depth=3)
    assert not r.proven and r.depth == 3 and 0.0 <= r.value <= 1.0
    assert len(r.pv) >= 1 and r.nodes > 0 and r.tt_fill > 0


# ---- chance nodes ------------------------------------------------------------------------
@cache
def nim_value(pile, extra=1 / 3):
    """Exact win probability of the player to move in chance Nim (take 1 or 2)."""
    best = 0.0
    for take in (1, 2):
        if take > pile:
            continue
        left = pile - take
        if left == 0:
            v = 1.0
        else:
            v = (1 - extra) * (1 - nim_value(left, extra))
            v += extra * (1.0 if left == 1 else 1 - nim_value(left - 1, extra))
        best = max(best, v)
    return best


@pytest.mark.parametrize("pile", [1, 2, 5, 9, 14])
@pytest.mark.parametrize("star2", [False, True])
def test_expectimax_with_star_pruning_gives_the_exact_chance_value(pile, star2):
    s = ChanceNimState(pile=pile)
    r = AlphaBeta(2, star2=star2).search(s, depth=200)
    assert r.proven and r.value == pytest.approx(nim_value(pile))
    assert r.value == pytest.approx(brute_values(s)[0])


def test_mcts_solver_proves_chance_nodes():
    s = ChanceNimState(pile=6)
    r = MCTS(2, seed=5).search(s, iterations=200_000)
    assert r.proven and r.value == pytest.approx(nim_value(6))


def test_chance_root_is_searched_by_expectation():
    s = ChanceNimState(pile=5)
    s.apply(1)      # now a chance node
    assert s.is_chance_node()
    want = brute_values(s)[0]
    assert AlphaBeta(2).search(s, depth=200).value == pytest.approx(want)
    assert MCTS(2, seed=1).search(s, iterations=50_000).values[0] == pytest.approx(want, abs=0.05)


# ---- simultaneous nodes -----------------------------------------------------------------
def test_matrix_game_solver_matches_scipy_linprog():
    rng = random.Random(3)
    for _ in range(60):
        m, n = rng.randint(1, 6), rng.randint(1, 6)
        a = [[rng.choice([0, 0.25, 0.5, 1]) if rng.random() < 0.3 else rng.random()
              for _ in range(n)] for _ in range(m)]
        v, x, y = solve_matrix_game(a)
        # row player: max v s.t. sum_i x_i a_ij >= v for all j
        res = linprog([0] * m + [-1], A_ub=[[-a[i][j] for i in range(m)] + [1] for j in range(n)],
                      b_ub=[0] * n, A_eq=[[1] * m + [0]], b_eq=[1],
                      bounds=[(0, None)] * m + [(None, None)])
        assert v == pytest.approx(-res.fun, abs=1e-9)
        assert sum(x) == pytest.approx(1) and sum(y) == pytest.approx(1)
        assert min(sum(x[i] * a[i][j] for i in range(m)) for j in range(n)) == pytest.approx(v)
        assert max(sum(y[j] * a[i][j] for j in range(n)) for i in range(m)) == pytest.approx(v)


def test_alphabeta_solves_simultaneous_nodes_as_matrix_games():
    r = AlphaBeta(2).search(MatrixGameState(), depth=10)
    assert r.proven and r.value == pytest.approx(0.48)
    assert r.strategy["row_strategy"] == pytest.approx([0.3, 0.7])
    assert r.strategy["col_strategy"] == pytest.approx([0.4, 0.6])
    # two stages, and player 1's view of the same game
    assert AlphaBeta(2).search(MatrixGameState(stages=2), depth=10).value == pytest.approx(0.48)
    assert AlphaBeta(2).search(MatrixGameState(), depth=10, player=1).value == \
        pytest.approx(0.52)


def test_regret_matching_converges_to_the_mixed_equilibrium():
    r = MCTS(2, seed=6, sim="rm", gamma=0.05).search(MatrixGameState(), iterations=40_000)
    rows, cols = r.strategies
    assert [p for _, p, _, _ in rows] == pytest.approx([0.3, 0.7], abs=0.07)
    assert [p for _, p, _, _ in cols] == pytest.approx([0.4, 0.6], abs=0.07)
    assert r.values[0] == pytest.approx(0.48, abs=0.03)


@pytest.mark.parametrize("sim", ["ucb", "exp3"])
def test_other_simultaneous_policies_report_a_root_strategy(sim):
    r = MCTS(2, seed=7, sim=sim).search(MatrixGameState(stages=2), iterations=20_000)
    for rows in r.strategies:
        assert sum(p for _, p, _, _ in rows) == pytest.approx(1.0)
    assert r.values[0] == pytest.approx(0.48, abs=0.06)


def test_matching_pennies_is_even():
    r = MCTS(2, seed=8, sim="rm").search(MatrixGameState(((1, 0), (0, 1))), iterations=20_000)
    assert [p for _, p, _, _ in r.strategies[0]] == pytest.approx([0.5, 0.5], abs=0.07)


# ---- hidden information ------------------------------------------------------------------
def ismcts_result(state, seed=9, iters=4000):
    return MCTS(2, seed=seed, ismcts=True).search(state, iterations=iters)


def test_ismcts_move_does_not_change_when_only_hidden_opponent_data_changes():
    for mine in range(3):
        views = []
        for theirs in range(3):
            if theirs == mine:
                continue
            s = KuhnState(deal=(mine, theirs))
            r = ismcts_result(s)
            views.append((r.best, [(a.action, a.visits) for a in r.actions]))
        assert views[0] == views[1]
    # the same for the second player, after a bet
    for mine in range(3):
        views = []
        for theirs in range(3):
            if theirs == mine:
                continue
            s = KuhnState(deal=(theirs, mine))
            s.apply(1)
            r = ismcts_result(s)
            views.append((r.best, [(a.action, a.visits) for a in r.actions]))
        assert views[0] == views[1]


def test_ismcts_plays_the_dominant_kuhn_responses():
    def answer_to_bet(card):
        s = KuhnState(deal=((card + 1) % 3, card))
        s.apply(1)
        return ismcts_result(s, iters=6000).best

    assert answer_to_bet(2) == 1      # king calls
    assert answer_to_bet(0) == 0      # jack folds


# ---- budgets, reuse, reproducibility -------------------------------------------------------
def test_iteration_budget_is_exact_and_results_are_reproducible():
    s = LotusState()
    a = MCTS(2, seed=42).search(s, iterations=3000)
    b = MCTS(2, seed=42).search(s, iterations=3000)
    assert a.iterations == 3000 and a.root_visits == 3000
    untimed = {"time_s": 0.0, "nps": 0.0}
    assert dataclasses.replace(a, **untimed) == dataclasses.replace(b, **untimed)


def test_time_budget_is_respected():
    t0 = time.perf_counter()
    r = MCTS(2, seed=1).search(LotusState(), time_limit=0.3)
    assert 0.3 <= time.perf_counter() - t0 < 1.0 and r.iterations > 100
    t0 = time.perf_counter()
    r = AlphaBeta(2).search(LotusState(), depth=60, time_limit=0.3)
    assert time.perf_counter() - t0 < 1.0 and r.depth >= 4


def test_node_cap_bounds_the_tree_and_search_goes_on():
    r = MCTS(2, seed=1, max_nodes=300).search(LotusState(), iterations=5000)
    assert r.nodes <= 300 and r.iterations == 5000 and r.best is not None


def test_tree_is_reused_after_the_moves_played():
    s = LotusState()
    tree = MCTS(2, seed=1)
    r = tree.search(s, iterations=5000)
    s.apply(r.best)
    s.apply(s.legal_actions()[0])
    r2 = tree.search(s, iterations=1000)
    assert r2.root_visits > 1000      # statistics of the old subtree were kept
    fresh = MCTS(2, seed=1, reuse=False).search(s, iterations=1000)
    assert fresh.root_visits == 1000


def test_playout_options_run():
    s = LotusState()
    for kw in ({"playout": "heuristic"}, {"cutoff": 0}, {"cutoff": 10}, {"c": 0.5}):
        r = MCTS(2, seed=1, **kw).search(s, iterations=500)
        assert r.iterations == 500 and 0 <= r.value <= 1


def test_speed_bench_reports_figures():
    from niwa.analysis.bench.search import search_speed

    r = search_speed("lotus", seconds=0.3, towers=2)
    for key in ("playouts_s", "mcts_sims_s", "perft_nps", "perft_made_s", "alphabeta_nps"):
        assert r[key] > 0


def test_tree_reuse_across_simultaneous_and_chance_steps():
    s = MatrixGameState(stages=3)
    tree = MCTS(2, seed=3, sim="rm")
    tree.search(s, iterations=3000)
    s.apply_joint([1, 0])
    r = tree.search(s, iterations=500)
    assert r.root_visits > 500 and tree.arm_count > 0
    for rows in r.strategies:
        assert sum(p for _, p, _, _ in rows) == pytest.approx(1.0)
    nim = ChanceNimState(pile=12)
    tree = MCTS(2, seed=4)
    tree.search(nim, iterations=3000)
    nim.apply(1)
    nim.apply(0)        # chance: no extra stone
    r = tree.search(nim, iterations=500)
    assert r.root_visits > 500 and r.best in nim.legal_actions()


def test_default_heuristic_playout_follows_the_evaluation():
    # W's only stones: one on a1 that reaches the goal with a move of 2 (a win), and the
    # start tower; the guided half of the turns always tries every one of the few moves
    from niwa.ext.game import Rng

    s = LotusState.from_notation(
        "lotus players=2 rule=basic trampoline=optional lane=1 shared=3 trampoline_at=3 towers=2; "
        "track a1:BW; start BB; goal W:2 B:0; turn W")
    n = len(s.legal_actions())
    assert 1 < n <= 4
    rng = Rng(5)
    wins_at_once = {kind: sum(getattr(s.clone(), kind)(rng) == 1 for _ in range(2000))
                    for kind in ("random_playout", "heuristic_playout")}
    assert wins_at_once["random_playout"] / 2000 < 1 / n + 0.05
    assert wins_at_once["heuristic_playout"] / 2000 > 0.5 + 0.5 / n - 0.05


# ---- out of memory -------------------------------------------------------------------------
def run_with_memory_cap(body: str, headroom_mb: int) -> str:
    """Run `body` in a fresh interpreter whose address space may grow only `headroom_mb`
    past what it holds when `body` starts (RLIMIT_AS): allocations beyond fail at once,
    without using the memory. CAP in `body` marks where the cap starts; returns stdout."""
    script = textwrap.dedent("""
        import resource
        from niwa.ext.lotus import LotusState
        from niwa.solver.alphabeta import AlphaBeta, solve_matrix_game
        from niwa.solver.mcts import MCTS

        def cap(headroom_mb):
            with open("/proc/self/statm") as f:
                size = int(f.read().split()[0]) * resource.getpagesize()
            limit = size + headroom_mb * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    """) + textwrap.dedent(body).replace("CAP", f"cap({headroom_mb})")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_transposition_table_too_big_for_memory_raises_memory_error():
    out = run_with_memory_cap("""
        CAP
        try:
            AlphaBeta(2, tt_bits=28)        # 6 GB of table
        except MemoryError:
            print("MemoryError")
        print(AlphaBeta(2, tt_bits=12).search(LotusState(), depth=2).depth)
    """, headroom_mb=256)
    assert out.split() == ["MemoryError", "2"]


def test_an_mcts_tree_that_cannot_grow_raises_memory_error_and_starts_afresh():
    out = run_with_memory_cap("""
        tree = MCTS(2, seed=1, max_nodes=50_000_000)
        CAP
        try:
            tree.search(LotusState(), iterations=10_000_000)
        except MemoryError:
            print("MemoryError", tree.node_count)
        print(tree.search(LotusState(), iterations=100).iterations)
    """, headroom_mb=4)
    assert out.split() == ["MemoryError", "0", "100"]


def test_a_matrix_game_too_big_for_memory_raises_memory_error():
    out = run_with_memory_cap("""
        payoff = [[0.5] * 3_000_000]
        CAP
        try:
            solve_matrix_game(payoff)
        except MemoryError:
            print("MemoryError")
    """, headroom_mb=80)
    assert out.split() == ["MemoryError"]
