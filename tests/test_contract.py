"""What every game promises through the contract, checked the same way for the three
built-in games and the example plugin (niwa.ext.testing: check_contract, check_lockstep)."""

import random
import sys
import types

import pytest
from example_games import ALL_GAMES, nim_spec, spec_for

from niwa.ext.registry import unregister_game
from niwa.ext.testing import check_contract, check_lockstep, contract_variants


@pytest.fixture(autouse=True, scope="module")
def _nim_registered():
    nim_spec()
    yield
    unregister_game("nim")


@pytest.mark.parametrize("name", ALL_GAMES)
def test_every_action_and_outcome_id_is_below_num_distinct_actions(name):
    spec = spec_for(name)
    bound = spec.num_distinct_actions(dict(spec.new(seed=0).variant))
    rng = random.Random(1)
    seen = 0
    for seed in range(30):
        s = spec.new(seed=seed)
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


KINDS = {"lotus": {"decision", "terminal"}, "bonsai": {"decision", "chance", "terminal"},
         "haru": {"decision", "chance", "simultaneous", "terminal"},
         "nim": {"decision", "terminal"}}


@pytest.mark.parametrize("name", ALL_GAMES)
def test_the_contract_holds_along_random_games_of_every_variant(name):
    spec = spec_for(name)
    report = check_contract(spec, seeds=range(2))
    assert report.games == 2 * len(contract_variants(spec))
    assert report.kinds == KINDS[name]


@pytest.mark.parametrize("name", ALL_GAMES)
def test_engine_and_reference_agree_along_random_games(name):
    spec = spec_for(name)
    plies = 0
    for i, variant in enumerate(contract_variants(spec) * 3):
        plies += check_lockstep(spec, variant, seed=i)
    assert plies > 3 * len(contract_variants(spec))


def test_contract_variants_vary_one_option_at_a_time_and_skip_refused_ones():
    spec = spec_for("bonsai")
    variants = contract_variants(spec)
    assert variants[0] == {} and all(len(v) == 1 for v in variants[1:])
    assert {"players": 1} in variants and {"players": 4} in variants
    assert len(variants) == len({tuple(v.items()) for v in variants})


# ---- the checks catch broken games -----------------------------------------------------
def broken_nim(name, **methods):
    """The example Nim with some methods replaced, as a spec named `name`."""
    from niwa_nim import SPEC, Nim
    from niwa_nim import from_notation as nim_from_notation

    from niwa.ext.python_game import python_game_spec

    broken = type("BrokenNim", (Nim,), dict(methods))

    def new(**variant):
        game = broken(**variant)
        return game

    def parse(text):
        game = nim_from_notation(text)
        game.__class__ = broken
        return game

    return python_game_spec(name="nim", new=new, from_notation=parse, options=SPEC.options,
                            max_game_length=SPEC.max_game_length,
                            num_distinct_actions=SPEC.num_distinct_actions, stats=SPEC.stats,
                            reference=SPEC.reference)


def shallow_clone(self):
    other = type(self).__new__(type(self))
    other.__dict__ = dict(self.__dict__)     # shares the piles list
    return other


@pytest.mark.parametrize("methods,message", [
    ({"legal_actions": lambda self, player=None: [a + 200 for a in
                                                 type(self).__mro__[1].legal_actions(self)]},
     "are not in 0.."),
    ({"clone": shallow_clone}, "on a clone changed the original"),
    ({"returns": lambda self: [1.0, 1.0]}, "do not sum to 1"),
    ({"stats": lambda self: {"took": self.taken}}, "stats() keys"),
    ({"hash": lambda self: id(self)}, "hashes differently"),
    ({"action_to_string": lambda self, a, player=None: "take"}, "names are not distinct"),
    ({"evaluate": lambda self, p: 2.0}, "is not in [0, 1]"),
])
def test_check_contract_names_what_a_broken_game_gets_wrong(methods, message):
    nim_spec()
    with pytest.raises(AssertionError) as e:
        check_contract(broken_nim("nim", **methods), [{}], seeds=range(2))
    assert message in str(e.value)
    assert str(e.value).startswith("nim {} seed 0 ply ")


def test_check_lockstep_names_the_first_disagreement_with_the_oracle(monkeypatch):
    from niwa_nim import SPEC
    from niwa_nim import reference as good

    class Flipped(good.NimReference):
        def returns(self):
            return list(reversed(super().returns()))

    fake = types.ModuleType("flipped_nim_reference")
    fake.initial = lambda **variant: Flipped(**variant)
    monkeypatch.setitem(sys.modules, "flipped_nim_reference", fake)
    import dataclasses

    spec = dataclasses.replace(SPEC, reference="flipped_nim_reference")
    with pytest.raises(AssertionError, match=r"returns: engine \[1.0, 0.0\], oracle \[0.0, 1.0\]"
                                             r"|returns: engine \[0.0, 1.0\], oracle \[1.0, 0.0\]"):
        check_lockstep(spec, {}, seed=1)
