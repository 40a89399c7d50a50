"""The state knows its game (`state.spec`) and what it hides (`state.hides_from`)."""

from __future__ import annotations

import pytest
from example_games import nim_spec

from niwa.ext.game import Rng
from niwa.ext.registry import get_game, unregister_game
from niwa.ext.toys import ChanceNimState, KuhnState, MatrixGameState


def _positions(game: str, n: int = 12):
    """The start and positions along one seeded random game of `game`."""
    state = get_game(game).new(seed=3)
    rng = Rng(5)
    out = [state.clone()]
    while not state.is_terminal() and len(out) < n:
        if state.is_chance_node():
            state.apply(rng.choice([a for a, _ in state.chance_outcomes()]))
        elif state.current_player() < 0:            # simultaneous: everyone's choice
            state.apply_joint([rng.choice(state.legal_actions(p) or [-1])
                               for p in range(state.num_players)])
        else:
            state.apply(rng.choice(state.legal_actions()))
        out.append(state.clone())
    return out


@pytest.mark.parametrize("game", ["lotus", "haru", "bonsai"])
def test_every_engine_state_returns_its_own_spec(game):
    for state in _positions(game, 4):
        assert state.spec is get_game(game)
        assert state.clone().spec is state.spec


@pytest.mark.parametrize("game", ["lotus", "haru", "bonsai"])
def test_hides_from_says_whether_the_seat_sees_less_than_the_whole_position(game):
    for state in _positions(game):
        for p in range(state.num_players):
            assert state.hides_from(p) == (state.information_state(p) != state.to_notation())


def test_haru_hides_the_opponent_s_hand_and_lotus_hides_nothing():
    haru = get_game("haru").new(seed=1)
    assert haru.hides_from(0) and haru.hides_from(1)
    lotus = get_game("lotus").new(seed=1)
    assert not any(lotus.hides_from(p) for p in range(lotus.num_players))


def test_the_toys_stand_outside_the_registry_and_say_what_they_hide():
    for toy in (ChanceNimState(), MatrixGameState()):
        assert toy.spec is None and not toy.hides_from(0)
    kuhn = KuhnState()
    assert kuhn.spec is None and kuhn.hides_from(0) and kuhn.hides_from(1)


def test_a_python_game_state_returns_the_spec_that_made_it():
    spec = nim_spec()
    try:
        state = spec.new()
        assert state.spec is spec and state.clone().spec is spec
        assert state.child(state.legal_actions()[0]).spec is spec
        assert not state.hides_from(0)
    finally:
        unregister_game("nim")
