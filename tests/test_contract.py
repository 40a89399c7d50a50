"""What every game promises through the contract, checked the same way for all three."""

import random

import pytest

from niwa.ext.registry import games, get_game


@pytest.mark.parametrize("name", games())
def test_every_action_and_outcome_id_is_below_num_distinct_actions(name):
    bound = get_game(name).new(seed=0).num_distinct_actions
    rng = random.Random(1)
    seen = 0
    for seed in range(30):
        s = get_game(name).new(seed=seed)
        while not s.is_terminal():
            if s.is_chance_node():
                ids = [a for a, _ in s.chance_outcomes()]
                s.apply(rng.choice(ids))
            elif s.is_simultaneous_node():
                per = [s.legal_actions(q) for q in range(s.num_players)]
                ids = [a for acts in per for a in acts]
                s.apply_joint([rng.choice(acts) if acts else -1 for acts in per])
            else:
                ids = s.legal_actions()
                s.apply(rng.choice(ids))
            assert all(0 <= a < bound for a in ids), (name, seed, ids)
            seen = max([seen, *ids])
    assert seen >= bound // 4      # the bound is not wildly loose either
