"""Every searcher on the real games behind the contract: Haru Ichiban (simultaneous flower
choice, chance draws, hidden hands) and Bonsai (chance reveals, 1-4 players)."""

from __future__ import annotations

import random

import pytest

from niwa.ext.registry import get_game
from niwa.solver.agents import make_agent
from niwa.solver.alphabeta import AlphaBeta
from niwa.solver.mcts import MCTS

HARU_HANDS = "hands Y:456 R:146; piles Y:{1,2,3,7,8} R:{2,3,5,7,8}"
HARU_OTHER_HANDS = "hands Y:456 R:235; piles Y:{1,2,3,7,8} R:{1,4,6,7,8}"


def walk(state, plies, seed):
    """A position `plies` random steps (chance included) from `state`."""
    rng = random.Random(seed)
    s = state.clone()
    for _ in range(plies):
        if s.is_terminal():
            break
        if s.is_chance_node():
            s.apply(rng.choice([a for a, _ in s.chance_outcomes()]))
        elif s.is_simultaneous_node():
            s.apply_joint([rng.choice(s.legal_actions(q)) if s.legal_actions(q) else -1
                           for q in range(s.num_players)])
        else:
            s.apply(rng.choice(s.legal_actions()))
    return s


def positions(name, **variant):
    start = get_game(name).new(seed=3, **variant)
    out = [start] + [walk(start, k, seed=k) for k in (7, 20, 45)]
    return [s for s in out if not s.is_terminal()]


def mover_of(state):
    return state.current_player() if state.current_player() >= 0 else 0


@pytest.mark.parametrize("name, variant", [
    ("haru", {}), ("bonsai", {}), ("bonsai", {"players": 1}), ("bonsai", {"players": 3}),
])
@pytest.mark.parametrize("spec", ["greedy", "mcts:iters=300", "ismcts:iters=300",
                                  "alphabeta:depth=2", "mcts:iters=200,sim=rm,cutoff=8"])
def test_agents_play_legal_actions(name, variant, spec):
    for s in positions(name, **variant):
        if s.is_chance_node():
            continue
        p = mover_of(s)
        agent = make_agent(spec, seed=1)
        assert agent.step(s.clone(), p) in s.legal_actions(p)


@pytest.mark.parametrize("name", ["haru", "bonsai"])
def test_searchers_handle_chance_roots(name):
    s = get_game(name).new(seed=5)
    for k in range(200):
        s = walk(s, 1, seed=k)
        if s.is_chance_node() or s.is_terminal():
            break
    assert s.is_chance_node()
    r = MCTS(s.num_players, seed=1).search(s, iterations=500)
    assert r.iterations == 500 and r.root_visits == 500
    assert sum(r.values) == pytest.approx(1.0, abs=1e-6)
    ab = AlphaBeta(s.num_players).search(s, depth=2)
    assert 0.0 <= ab.value <= 1.0


def test_haru_simultaneous_root_reports_mixed_strategies():
    s = get_game("haru").new(seed=1)
    assert s.is_simultaneous_node()
    for sim in ("ucb", "rm", "exp3"):
        r = MCTS(2, seed=2, sim=sim, ismcts=True).search(s, iterations=600, observer=0)
        mine = r.strategies[0]
        assert {a for a, _, _, _ in mine} == set(s.legal_actions(0))
        assert sum(p for _, p, _, _ in mine) == pytest.approx(1.0)
    ab = AlphaBeta(2).search(s, depth=2)
    assert ab.strategy["rows"] == s.legal_actions(0)
    assert sum(ab.strategy["row_strategy"]) == pytest.approx(1.0)


def test_haru_ismcts_does_not_read_the_opponents_hand():
    s = get_game("haru").new(seed=1)
    assert HARU_HANDS in s.to_notation()
    other = s.from_notation(s.to_notation().replace(HARU_HANDS, HARU_OTHER_HANDS))
    assert other.information_state(0) == s.information_state(0)
    assert other.to_notation() != s.to_notation()
    views = [MCTS(2, seed=3, ismcts=True).search(x, iterations=1500, observer=0).strategies[0]
             for x in (s, other)]
    assert views[0] == views[1]
    picks = {make_agent(spec, 4).step(x.clone(), 0)
             for spec in ("mcts:iters=500",) for x in (s, other)}
    assert len(picks) == 1      # the plain mcts agent also switches to ISMCTS here


def test_bonsai_solo_and_budgets():
    s = get_game("bonsai").new(seed=1, players=1)
    r = MCTS(1, seed=1, max_nodes=200).search(s, iterations=400)
    assert r.nodes <= 200 and r.iterations == 400 and r.best in s.legal_actions()
    ab = AlphaBeta(1).search(s, depth=3)
    assert ab.best in s.legal_actions()
