"""The `perfect` agent: plays from df-pn proofs, so the proven winner never loses."""

from __future__ import annotations

import pytest

from niwa.analysis.arena.game_loop import play
from niwa.cli.common import load_position
from niwa.ext.game import Rng
from niwa.solver.agents import AgentError, make_agent


def play_games(position, perfect_spec, opponent_spec, games):
    """Results of `perfect` per game, seats alternating: [(seat, result)]."""
    perfect = make_agent(perfect_spec, seed=1)
    out = []
    for g in range(games):
        seat = g % 2
        opponent = make_agent(opponent_spec, seed=100 + g)
        agents = [perfect, opponent] if seat == 0 else [opponent, perfect]
        for agent in agents:
            agent.reset()
        result = play(load_position(position), agents, chance_rng=Rng(g))
        out.append((seat, result.results[seat]))
    return out


@pytest.mark.parametrize("opponent", ["mcts:iters=200", "alphabeta:depth=4"])
def test_perfect_wins_every_game_from_the_winning_seat_of_towers_2(opponent):
    results = play_games("lotus towers=2", "perfect:time=1,tt_mb=32", opponent, 20)
    assert all(r == 1.0 for seat, r in results if seat == 1), results


def test_perfect_wins_every_game_from_the_winning_seat_of_towers_3():
    # basic/mandatory towers 3..1: a 0.3M-node proof on the first move, then table hits
    results = play_games("lotus towers=3 trampoline=mandatory", "perfect:time=2,tt_mb=64",
                         "mcts:iters=200", 4)
    assert all(r == 1.0 for seat, r in results if seat == 1), results


def test_perfect_reports_the_proof_and_falls_back_without_one():
    agent = make_agent("perfect:time=0.05,tt_mb=16,lean=false,fallback=mcts:iters=50", seed=0)
    state = load_position("lotus")         # the full game: no proof in 0.05 s
    assert agent.step(state, 0) in state.legal_actions()
    assert agent.analysis().algo == "mcts" and agent.sources["fallback"] == 1
    small = load_position("lotus towers=2")
    agent = make_agent("perfect:time=2,tt_mb=16", seed=0)
    agent.step(small, 0)
    assert agent.analysis().algo == "proof" and agent.analysis().value == 0.0


def test_perfect_refuses_itself_as_fallback():
    with pytest.raises(AgentError):
        make_agent("perfect:fallback=perfect")


def test_perfect_can_count_cpu_seconds():
    # cpu=1: the proof's time limit counts this thread's CPU seconds (fair on a busy machine)
    agent = make_agent("perfect:time=0.05,tt_mb=16,book=none,tables=false,cpu=1", seed=0)
    assert agent.exact.cpu_time and not make_agent("perfect", seed=0).exact.cpu_time
    state = load_position("lotus rule=pro")
    assert agent.step(state, 0) in state.legal_actions()
    assert agent.analysis().time_s < 1.0
