"""Haru open-hands analysis of the rest of a round (issue 5): `AlphaBeta.search(episode=True)`
and `niwa solve --round`, checked against a plain brute-force expectiminimax whose
simultaneous choices are solved as matrix games by scipy's LP solver."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner
from scipy.optimize import linprog

from niwa.cli.main import main
from niwa.ext.registry import get_game
from niwa.solver.alphabeta import AlphaBeta

HEAD = "haru figures=best croak=random new_round=keep target=5 view=simultaneous; "
# Round 1, turn 7 (two turns left, hands open), from seeded random play.
TURN7_MIXED = HEAD + (
    "pond ...Dx/oxY../ooox./oxor./x.o.o; flowers d1:Y4 e1:R2 a2:R8 b2:Y5 c2:Y6 b3:R5 c3:R7 "
    "d3:R1 a4:Y7 c4:Y8 a5:Y2 c5:R6; frogs Y:e5 R:d4; score Y:0 R:0; round 1 turn 7; "
    "phase choose; hands Y:13 R:34; piles Y:{} R:{}")
TURN7_SKEWED = HEAD + (
    "pond ..o.o/x.oyD/xoxoo/.xor./x...x; flowers c1:Y8 a2:R3 c2:Y6 d2:R6 e2:Y2 a3:R7 b3:Y7 "
    "c3:R1 e3:R5 b4:Y3 d4:R8 a5:Y5; frogs Y:d3 R:c4; score Y:0 R:0; round 1 turn 7; "
    "phase choose; hands Y:14 R:24; piles Y:{} R:{}")
TURN6 = HEAD + (
    "pond ...Dx/oxY../oo.ox/ooor./x.o.o; flowers d1:Y4 e1:R2 a2:R8 b2:Y5 c2:Y6 d3:R7 e3:R1 "
    "a4:Y7 c4:Y8 c5:R6; frogs Y:e5 R:d4; score Y:0 R:0; round 1 turn 6; phase choose; "
    "hands Y:123 R:345; piles Y:{} R:{}")


def load(notation):
    return get_game("haru").new().from_notation(notation)


def round_value(state, target):
    """Seat 0's value of a finished round, straight from the definition: the returns if
    the game is over, else 0.5 + 0.35 x score lead / target."""
    if state.is_terminal():
        return state.returns()[0]
    y, r = state.scores
    return 0.5 + 0.35 * (y - r) / target


def matrix_value(payoff):
    """Value of the zero-sum game for the (maximising) row player, by linear programming."""
    m, n = len(payoff), len(payoff[0])
    # variables x_0..x_{m-1}, v: maximise v s.t. v <= sum_i x_i payoff[i][j] for every j
    res = linprog(c=[0.0] * m + [-1.0],
                  A_ub=[[-payoff[i][j] for i in range(m)] + [1.0] for j in range(n)],
                  b_ub=[0.0] * n, A_eq=[[1.0] * m + [0.0]], b_eq=[1.0],
                  bounds=[(0, None)] * m + [(None, None)])
    assert res.success
    return -res.fun


def brute_force(state, root_round, target):
    """Seat 0's exact value of the rest of the round: every line, no pruning."""
    if state.is_terminal() or state.episode() != root_round:
        return round_value(state, target)
    if state.is_chance_node():
        return sum(p * brute_force(state.child(a), root_round, target)
                   for a, p in state.chance_outcomes())
    if state.is_simultaneous_node():
        mine = state.legal_actions(0) or [-1]
        theirs = state.legal_actions(1) or [-1]
        payoff = []
        for a in mine:
            row = []
            for b in theirs:
                nxt = state.clone()
                nxt.apply_joint([a, b])
                row.append(brute_force(nxt, root_round, target))
            payoff.append(row)
        return matrix_value(payoff)
    values = [brute_force(state.child(a), root_round, target) for a in state.legal_actions()]
    return max(values) if state.current_player() == 0 else min(values)


def test_episode_is_the_round_number():
    s = load(TURN6)
    assert s.episode() == s.round == 1
    assert get_game("lotus").new().episode() == 0     # the contract's default: no episodes


def test_evaluation_at_a_new_round_is_the_round_value():
    """The documented leaf value: right after a round ends, evaluate() is exactly the
    round's value (no clipping, no near-figure term), for both seats."""
    rng = random.Random(5)
    seen = 0
    for game_seed in range(6):
        s = get_game("haru").new(seed=game_seed, target=3)
        while not s.is_terminal() and seen < 40:
            before = s.round
            if s.is_chance_node():
                s.apply(rng.choice([a for a, _ in s.chance_outcomes()]))
            elif s.is_simultaneous_node():
                s.apply_joint([rng.choice(s.legal_actions(q)) for q in range(2)])
            else:
                s.apply(rng.choice(s.legal_actions()))
            if s.round != before or s.is_terminal():
                seen += 1
                v0 = round_value(s, 3)
                assert s.evaluate(0) == pytest.approx(v0, abs=1e-12)
                assert s.evaluate(1) == pytest.approx(1.0 - v0, abs=1e-12)
    assert seen >= 10


@pytest.mark.parametrize("notation", [TURN7_MIXED, TURN7_SKEWED])
def test_round_search_matches_brute_force(notation):
    s = load(notation)
    r = AlphaBeta(2, tt_bits=16).search(s, episode=True, time_limit=10)
    assert r.proven and r.episode == 1
    strategy = r.strategy
    assert strategy["rows"] == s.legal_actions(0)
    assert all(p >= -1e-9 for p in strategy["row_strategy"])
    assert sum(strategy["row_strategy"]) == pytest.approx(1.0)
    assert sum(strategy["col_strategy"]) == pytest.approx(1.0)
    assert r.value == pytest.approx(brute_force(s, 1, 5), abs=1e-6)


def test_mixed_strategy_is_really_mixed():
    r = AlphaBeta(2, tt_bits=16).search(load(TURN7_MIXED), episode=True)
    assert r.strategy["row_strategy"] == pytest.approx([0.5, 0.5], abs=1e-6)


def test_turn6_is_proven_quickly_and_tt_does_not_leak_into_full_search():
    s = load(TURN6)
    ab = AlphaBeta(2, tt_bits=20)
    r = ab.search(s, episode=True, time_limit=15)
    assert r.proven and 0.0 <= r.value <= 1.0
    assert sum(r.strategy["row_strategy"]) == pytest.approx(1.0)
    # the same searcher without the round limit: round leaves are not exact there
    full = ab.search(s, depth=3)
    assert not full.proven and full.episode is None


def test_cli_round_flag():
    runner = CliRunner()
    out = runner.invoke(main, ["solve", TURN7_MIXED, "--algo", "alphabeta", "--round"])
    assert out.exit_code == 0, out.output
    assert "(proven) = value of the rest of round 1 for player 0" in out.output
    line = next(x for x in out.output.splitlines() if x.startswith("mixed strategy"))
    assert line.startswith("mixed strategy of player 0: ") and "Y1 " in line and "Y3 " in line
    js = runner.invoke(main, ["solve", TURN7_SKEWED, "--round", "--json"])
    data = json.loads(js.output)
    assert data["proven"] and data["round"] == 1
    assert data["value"] == pytest.approx(brute_force(load(TURN7_SKEWED), 1, 5), abs=1e-6)
    bad = runner.invoke(main, ["solve", TURN7_MIXED, "--round", "--algo", "mcts"])
    assert bad.exit_code == 2 and "alphabeta" in bad.output
    assert runner.invoke(main, ["solve", "lotus", "--round"]).exit_code == 2
