"""The Cython Bonsai engine against the plain-Python oracle: differential, perft, property
and notation tests."""

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from niwa.ext.bonsai import SPEC, BonsaiState, from_notation, new_initial, playouts
from niwa.ext.errors import NotationError
from niwa.ext.game import Rng
from niwa.ext.reference import bonsai as oracle
from niwa.ext.reference import perft
from niwa.ext.testing import check_lockstep

CULTIVATE, STOP, CLAIM, RENOUNCE = 904, 916, 920, 936
KINDS = {0: "place-cell", 768: "remove", 896: "keep", 900: "meditate", 904: "cultivate",
         908: "gain", 912: "place-type", 916: "stop", 920: "claim", 936: "renounce",
         952: "discard", 960: "reveal", 992: "goal-draw"}

# every variant combination: players x goals x tokonoma x discard_before_reveal, solo levels
VARIANTS = [dict(players=p, goals=g, tokonoma=t, discard_before_reveal=b)
            for p, g, t, b in itertools.product((1, 2, 3, 4), ("on", "off"), ("off", "on"),
                                                ("off", "on"))
            if not (p == 1 and g == "off")]
VARIANTS += [dict(players=1, solo_level=level, tokonoma=t)
             for level in (2, 3, 4) for t in ("off", "on")]


def choose(legal, rng, greedy):
    """Uniform, or (greedy) a player who cultivates, keeps placing and claims goals often,
    so that trees grow large and goals get met."""
    if greedy:
        if CULTIVATE in legal and rng.random() < 0.5:
            return CULTIVATE
        if STOP in legal and len(legal) > 1 and rng.random() < 0.9:
            return rng.choice([a for a in legal if a != STOP])
        claims = [a for a in legal if CLAIM <= a < RENOUNCE]
        if claims and rng.random() < 0.8:
            return claims[0]
    return rng.choice(legal)


def lockstep(variant, seed, greedy=False, roundtrip_every=7):
    """One seeded game in engine and oracle side by side, compared at every step
    (niwa.ext.testing.check_lockstep); returns the decision kinds and phases it went
    through."""
    kinds = set()

    def observe(eng, orc, action):
        if eng.current_player() >= 0:
            legal = eng.legal_actions()
            assert len(set(eng.action_to_string(a) for a in legal)) == len(legal)
            assert legal and all(0 <= a < 1024 for a in legal)
        kinds.add(KINDS[max(k for k in KINDS if k <= action)])
        kinds.add(eng.phase)

    def same_scores(eng, orc):
        assert all(eng.score_breakdown()[p] == orc.score_breakdown(p)
                   for p in range(eng.num_players))

    check_lockstep(SPEC, variant, seed, choose=lambda legal, rng: choose(legal, rng, greedy),
                   roundtrip_every=roundtrip_every, observe=observe, at_end=same_scores)
    return kinds


def test_differential_1000_games_over_every_variant_and_player_count():
    seen, kinds = set(), set()
    for i in range(1000):
        variant = VARIANTS[i % len(VARIANTS)]
        kinds |= lockstep(variant, seed=i, greedy=i % 2 == 1)
        seen.add(tuple(sorted(variant.items())))
    assert len(seen) == len(VARIANTS)
    # every decision kind and phase was exercised
    assert kinds == set(KINDS.values()) | {"goaldraw", "deal", "remove", "action", "slot",
                                            "master", "place", "cell", "reveal", "goals",
                                            "discard"}
    assert {v["players"] for v in VARIANTS} == {1, 2, 3, 4}


@pytest.mark.slow
def test_differential_4000_more_games_every_step_roundtrip():
    for i in range(4000):
        lockstep(VARIANTS[i % len(VARIANTS)], seed=10**6 + i, greedy=i % 3 == 0,
                 roundtrip_every=1)


# ---- perft, pinned from the oracle ---------------------------------------------------
oracle_perft = perft   # the shared oracle perft (niwa.ext.reference)


def oracle_after(variant, seed, plies):
    """The oracle and the engine after the same seeded random plies."""
    rng = random.Random(seed)
    eng, orc = BonsaiState(**variant), oracle.initial(**variant)
    for _ in range(plies):
        if eng.is_terminal():
            break
        legal = sorted(eng.legal_actions())
        a = choose(legal, rng, True)
        eng.apply(a)
        orc.apply(a)
    return eng, orc


PERFT = [  # (variant, seed, plies played first)
    ({"players": 2}, 1, 30),
    ({"players": 1}, 2, 25),
    ({"players": 3, "tokonoma": "on"}, 3, 40),
    ({"players": 4, "discard_before_reveal": "on"}, 4, 60),
    ({"players": 2, "goals": "off"}, 5, 80),
]


@pytest.mark.parametrize("variant,seed,plies", PERFT)
def test_perft_matches_the_oracle_mid_game(variant, seed, plies):
    eng, orc = oracle_after(variant, seed, plies)
    assert [eng.perft(d) for d in (1, 2, 3)] == [oracle_perft(orc, d) for d in (1, 2, 3)]


def oracle_seeded(variant, engine_state):
    """The oracle at the engine's seeded start: same goal draw, same four reveals (the first
    card revealed lies in slot 3)."""
    orc = oracle.initial(**variant)
    if orc.phase == "goaldraw":
        colours = tuple(oracle.COLOURS.index(g.split(".")[0])
                        for g in engine_state.goals_in_play()[::3 if variant["players"] > 2 else 2])
        orc.apply(oracle.GOALS + oracle.GOAL_DRAWS.index(colours))
    for card in reversed(engine_state.market()):
        orc.apply(oracle.REVEAL + oracle.CARDS.index(card))
    assert orc.to_notation() == engine_state.to_notation()
    return orc


PINNED = [  # (variant, seed, perft 1..4 of the seeded start), computed with the oracle
    (dict(players=2), 1, [5, 28, 159, 1007]),
    (dict(players=4, goals="off"), 7, [5, 70, 342, 3668]),
    ({"players": 2}, None, [10, 220, 4700]),       # before the goal draw: chance nodes
]


@pytest.mark.parametrize("variant,seed,counts", PINNED)
def test_pinned_perft(variant, seed, counts):
    s = new_initial(seed=seed, **variant)
    orc = oracle.initial(**variant) if seed is None else oracle_seeded(variant, s)
    depths = range(1, len(counts) + 1)
    assert [s.perft(d) for d in depths] == counts
    assert [oracle_perft(orc, d) for d in depths] == counts


# ---- properties ------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**9), variant=st.sampled_from(VARIANTS), plies=st.integers(0, 300))
def test_clone_hash_notation_evaluate_properties(seed, variant, plies):
    rng = random.Random(seed)
    s = BonsaiState(**variant)
    for _ in range(plies):
        if s.is_terminal():
            break
        s.apply(choose(s.legal_actions(), rng, seed % 2 == 0))
    c = s.clone()
    assert c.hash() == s.hash() and c.to_notation() == s.to_notation()
    back = from_notation(s.to_notation())
    assert back.hash() == s.hash() and back.legal_actions() == s.legal_actions()
    for p in range(s.num_players):
        assert 0.0 <= s.evaluate(p) <= 1.0
    if not s.is_terminal():
        c.random_playout(seed)
        assert s.to_notation() == back.to_notation()        # the clone is independent
        assert c.is_terminal() and sum(c.returns()) <= 1.0
        r = s.resample_hidden(0, seed)
        assert r.information_state(0) == s.information_state(0)
        h = r.clone()
        h.heuristic_playout(seed)
        assert h.is_terminal()
        # a known deck order makes every reveal certain
        while not r.is_terminal():
            if r.is_chance_node() and r.phase != "goaldraw":
                assert len(r.chance_outcomes()) == 1
            r.apply(r.legal_actions()[0])


def test_new_initial_with_seed_stops_at_the_first_decision_and_is_reproducible():
    for n in (1, 2, 3, 4):
        a, b = new_initial(seed=11, players=n), new_initial(seed=11, players=n)
        assert a.to_notation() == b.to_notation() and a.current_player() == 0
        assert new_initial(players=n).is_chance_node()


def test_playouts_run_in_c_and_count_wins():
    start = new_initial(seed=3, players=3)
    games, actions, wins = playouts(start, 200, seed=1)
    assert games == 200 and sum(wins) == 200 and actions > 200 * 50
    assert playouts(start, 200, seed=1) == (games, actions, wins)
    solo = new_initial(seed=3, players=1)
    assert sum(playouts(solo, 50, seed=2)[2]) <= 50


def test_heuristic_playouts_score_more_than_random_ones():
    start = new_initial(seed=5, players=2)

    def mean_score(heuristic):
        total = 0
        for i in range(100):
            s = start.clone()
            (s.heuristic_playout if heuristic else s.random_playout)(i)
            total += sum(s.scores())
        return total / 100

    assert mean_score(True) > 1.5 * mean_score(False)


def test_random_playout_plies_match_the_oracle_count_shape():
    s = new_initial(seed=9, players=2)
    plies = s.clone().random_playout(Rng(4))
    assert 50 < plies < 5000


def test_stats_and_json():
    s = new_initial(seed=2, players=2)
    s.random_playout(3)
    st_ = s.stats()
    assert len(st_["scores"]) == 2 and len(st_["goals_claimed"]) == 2 and st_["turns"] > 0
    j = s.to_json()
    assert j["terminal"] and j["scores"] == s.score_breakdown() and j["winner"] in (0, 1)
    assert "Player 0" in s.render() and "=" in s.render()


# ---- notation errors ---------------------------------------------------------------------
GOOD = new_initial(seed=1, players=2).to_notation()


@pytest.mark.parametrize("mutate,message", [
    (lambda t: t.replace("bonsai", "bonzai", 1), "begin with 'bonsai'"),
    (lambda t: t.replace("players=2", "players=5"), "players"),
    (lambda t: t.replace("; gone -", ""), "needs 8"),
    (lambda t: t.replace("market ", "market XX ", 1), "market"),
    (lambda t: t.replace("p0 tree -", "p0 tree W5,5"), "not joined"),
    (lambda t: t.replace("p0 tree -", "p0 tree Q0,1"), "unknown tile type"),
    (lambda t: t.replace("p0 tree -", "p0 tree W0,1 W0,1"), "two tiles"),
    (lambda t: t.replace("cards -", "cards T*3", 1), "above"),
    (lambda t: t.replace("cards -", "cards ZZ", 1), "unknown card"),
    (lambda t: t.replace("phase=action", "phase=dance"), "phase must be"),
    (lambda t: t.replace("turn p0", "turn p7"), "out of range"),
    (lambda t: t.replace("phase=action", "phase=goals"), "no open goal"),
    (lambda t: t.replace("final=-", "final=1"), "deck is empty"),
    (lambda t: t.replace("supply W1 L0", "supply W1 X0"), "supply"),
])
def test_bad_notation_is_rejected_with_a_clear_message(mutate, message):
    with pytest.raises(NotationError, match=message):
        from_notation(mutate(GOOD))


def test_notation_round_trips_known_deck_orders_and_tokonoma():
    s = new_initial(seed=4, players=3, tokonoma="on").resample_hidden(1, 9)
    text = s.to_notation()
    assert "deck order" in text and "top=" in text
    assert from_notation(text).to_notation() == text
