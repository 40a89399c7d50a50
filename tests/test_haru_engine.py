"""The Cython Haru Ichiban engine against the plain-Python oracle: differential, property,
perft and playout tests."""

import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from niwa.ext.game import Rng
from niwa.ext.haru import SPEC, HaruState, from_notation, new_initial, playouts
from niwa.ext.reference import haru as oracle
from niwa.ext.reference import perft
from niwa.ext.testing import check_lockstep

CHANCE, SIMULTANEOUS, TERMINAL = -1, -2, -4
# every combination of the choice variants; targets cycle through 5 (default), 2, 1, 3
ALL_VARIANTS = [dict(figures=f, croak=c, new_round=n, view=v)
                for f, c, n, v in itertools.product(
                    *(SPEC.variants[k].choices for k in ("figures", "croak", "new_round", "view")))]
TARGETS = (5, 2, 1, 3)


def variant_for(i):
    return dict(ALL_VARIANTS[i % len(ALL_VARIANTS)],
                target=TARGETS[(i // len(ALL_VARIANTS)) % len(TARGETS)])


def random_step(state, rng):
    """One seeded random step on an engine or oracle state; returns what was applied."""
    p = state.current_player()
    if p == SIMULTANEOUS:
        joint = [rng.choice(state.legal_actions(q)) for q in (0, 1)]
        state.apply_joint(joint)
        return joint
    if p == CHANCE:
        a = rng.choice(state.chance_outcomes())[0]
    else:
        a = rng.choice(state.legal_actions())
    state.apply(a)
    return a


def uniform_outcome(outcomes, rng):
    """Chance outcomes drawn uniformly (as random_step does), not by probability."""
    return rng.choice(outcomes)[0]


def same_score_history(eng, orc):
    assert eng.stats()["score_history"] == orc.history


def mover_alone_has_actions(eng, orc, step):
    p = eng.current_player()
    if p >= 0:
        assert eng.legal_actions(p) == eng.legal_actions() and eng.legal_actions(1 - p) == []


def lockstep(variant, seed, check_notation=True):
    """One seeded random game in engine and oracle side by side, compared at every step
    (niwa.ext.testing.check_lockstep); the notation is compared when `check_notation`."""
    return check_lockstep(SPEC, variant, seed, choose_outcome=uniform_outcome,
                          notation=check_notation, roundtrip_every=1 if check_notation else 0,
                          observe=mover_alone_has_actions, at_end=same_score_history)


def test_differential_2000_games_over_every_variant():
    plies = 0
    for i in range(2000):
        plies += lockstep(variant_for(i), seed=i, check_notation=(i % 4 == 0))
    assert plies > 2000 * 50


@pytest.mark.slow
def test_differential_20000_games_full_checks():
    for i in range(20000):
        lockstep(variant_for(i), seed=10**6 + i)


# -- perft, pinned from the oracle (niwa.ext.reference.haru); positions reached by seeded
# -- random play from the start, so the oracle can reach them too --------------------------
PERFT = [
    ({}, 1, "choose", 1,
     "haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
     "o.o.o/.oyD./oo.oo/.oor./o.o.o; flowers -; frogs Y:c2 R:d4; score Y:0 R:0; round 1 turn 1; "
     "phase choose; hands Y:136 R:156; piles Y:{2,4,5,7,8} R:{2,3,4,7,8}",
     [9, 109, 4602, 70512]),
    ({}, 2, "wind", 3,
     "haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
     "o.o.o/.oYD./.oooo/..oor/x.o.o; flowers c2:Y1 d2:Y3 c4:Y8 e4:R7 a5:R4 c5:R8; frogs Y:d4 "
     "R:e1; score Y:0 R:0; round 1 turn 3; phase wind Y8 R4; hands Y:25 R:26; piles Y:{4,6,7} "
     "R:{1,3,5}",
     [37, 370, 1480, 4440]),
    ({"view": "turn"}, 3, "choose", 5,
     "haru figures=best croak=random new_round=keep target=5 view=turn; pond "
     "xo..o/oY.D./.oooo/.oxr./o..ox; flowers e1:R8 a2:R6 b2:R1 d2:Y6 b3:Y8 b4:R7 c4:Y4 e5:Y7; "
     "frogs Y:a5 R:d4; score Y:0 R:0; round 1 turn 5; phase choose; hands Y:135 R:234; "
     "piles Y:{2} R:{5}",
     [3, 9, 58, 1650]),
    ({}, 4, "croak", None,
     "haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
     "o.o.o/.oy../x..Do/.xxo./oooro; flowers a1:R2 c1:Y5 a3:R1 d3:Y1 c4:Y3 d4:R7; frogs Y:c2 "
     "R:d5; score Y:0 R:0; round 1 turn 4; phase croak Y4 R4; hands Y:26 R:35; piles Y:{7,8} "
     "R:{6,8}",
     [2, 14, 84, 168]),
    ({"figures": "sum", "croak": "trailing"}, 5, "dark", 7,
     "haru figures=sum croak=trailing new_round=keep target=5 view=simultaneous; pond "
     "o.xxD/xx.yo/..or./xoo../o.o.o; flowers a1:Y8 c1:R3 d1:Y2 e1:R1 a2:Y4 b2:R5 d2:Y3 e2:Y6 "
     "c3:Y5 d3:R6 a4:R2 a5:R8 c5:Y7 e5:R7; frogs Y:off R:off; score Y:1 R:0; round 2 turn 7; "
     "phase dark Y7 R5; hands Y:1 R:4; piles Y:{} R:{}",
     [2, 2, 2, 74]),
    ({}, 6, "choose", 8,
     "haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
     "xxoo./.xxxD/x..r./..yo./oooo.; flowers a1:R2 b1:Y1 d1:Y7 b2:R1 c2:R6 d2:Y6 e2:Y4 d3:R3 "
     "c4:Y3 d4:R7 a5:R4 b5:Y2 c5:Y5 d5:R5; frogs Y:off R:off; score Y:0 R:3; round 2 turn 8; "
     "phase choose; hands Y:8 R:8; piles Y:{} R:{}",
     [1, 2, 16, 112]),
    ({}, 102, "croak", 7,
     "haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
     "xx.Y./ox.oo/o.o../o.r.D/oxoo.; flowers a1:Y5 b1:Y6 d1:Y2 a2:Y8 e2:R3 a3:R7 c3:Y7 a4:Y3 "
     "c4:R8 e4:R1 b5:R2 c5:R5; frogs Y:d2 R:d5; score Y:3 R:0; round 6 turn 7; phase croak Y4 "
     "R4; hands Y:1 R:6; piles Y:{} R:{}",
     [2, 2, 16, 112]),
    ({"new_round": "reset"}, 7, "bloom", None,
     "haru figures=best croak=random new_round=reset target=5 view=simultaneous; pond "
     "o.o.o/.oyD./oo.oo/.oor./o.o.o; flowers d2:Y2; frogs Y:c2 R:d4; score Y:0 R:0; round 2 "
     "turn 1; phase bloom Y2 R7; hands Y:36 R:23; piles Y:{1,4,5,7,8} R:{1,4,5,6,8}",
     [15, 650, 9984, 69888]),
]


def oracle_walk(variant, seed, phase, turn, round_=None):
    """Seeded random play in the oracle until the first state in `phase` (and `turn`)."""
    rng = random.Random(seed)
    s = oracle.initial(**variant)
    while not (s.phase == phase and (turn is None or s.turn == turn)
               and (round_ is None or s.round == round_)):
        random_step(s, rng)
    return s


oracle_perft = perft   # the shared oracle perft (niwa.ext.reference)


@pytest.mark.parametrize("variant,seed,phase,turn,text,counts", PERFT)
def test_perft_pinned(variant, seed, phase, turn, text, counts):
    state = from_notation(text)
    assert state.to_notation() == text
    assert [state.perft(d) for d in range(1, len(counts) + 1)] == counts


@pytest.mark.parametrize("variant,seed,phase,turn,text,counts", PERFT)
def test_perft_positions_come_from_the_oracle(variant, seed, phase, turn, text, counts):
    round_ = 2 if variant.get("new_round") == "reset" else None
    orc = oracle_walk(variant, seed, phase, turn, round_)
    assert orc.to_notation() == text
    assert [oracle_perft(orc, d) for d in range(1, 3)] == counts[:2]


@pytest.mark.slow
@pytest.mark.parametrize("variant,seed,phase,turn,text,counts", PERFT)
def test_perft_full_depth_by_the_oracle(variant, seed, phase, turn, text, counts):
    round_ = 2 if variant.get("new_round") == "reset" else None
    orc = oracle_walk(variant, seed, phase, turn, round_)
    assert [oracle_perft(orc, d) for d in range(1, len(counts) + 1)] == counts


def test_perft_of_the_deal():
    # the deal: Yellow draws 3 of 8, then Red 3 of 8, one chance outcome per draw
    s = HaruState()
    assert [s.perft(d) for d in range(1, 5)] == [8, 56, 336, 2688]


def test_perft_divide_names_joint_actions():
    s = from_notation(PERFT[0][4])
    rows = s.perft_divide(1)
    assert len(rows) == 9 and rows[0][0] == "Y1+R1"


# -- properties -----------------------------------------------------------------------------
def walked(seed, steps, variant):
    rng = random.Random(seed)
    s = HaruState(**variant)
    for _ in range(steps):
        if s.is_terminal():
            break
        random_step(s, rng)
    return s


seeds = st.integers(0, 10**6)
step_counts = st.integers(0, 400)
variants = st.sampled_from(range(len(ALL_VARIANTS) * len(TARGETS))).map(variant_for)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seeds, step_counts, variants)
def test_clone_is_independent_and_hash_follows_notation(seed, steps, variant):
    s = walked(seed, steps, variant)
    text = s.to_notation()
    c = s.clone()
    assert c.to_notation() == text and c.hash() == s.hash() and c == s
    assert from_notation(text).hash() == s.hash()
    if not c.is_terminal():
        random_step(c, random.Random(seed))
        assert s.to_notation() == text       # the original did not move
        assert c.hash() != s.hash()
    assert walked(seed, steps, variant).to_notation() == s.to_notation()


@settings(max_examples=60, deadline=None)
@given(seeds, step_counts, variants)
def test_evaluate_in_unit_interval_and_returns_at_the_end(seed, steps, variant):
    s = walked(seed, steps, variant)
    for p in (0, 1):
        assert 0.0 <= s.evaluate(p) <= 1.0
    plies = s.random_playout(seed)
    assert s.is_terminal() and plies >= 0
    r = s.returns()
    assert sum(r) == 1.0 and set(r) <= {0.0, 0.5, 1.0}
    assert s.evaluate(0) == r[0]


@settings(max_examples=60, deadline=None)
@given(seeds, step_counts, variants, st.sampled_from([0, 1]))
def test_resample_hidden_keeps_what_the_player_knows(seed, steps, variant, player):
    s = walked(seed, steps, variant)
    r = s.resample_hidden(player, Rng(seed))
    assert r.information_state(player) == s.information_state(player)
    assert r.hand(player) == s.hand(player) and r.pile(player) == s.pile(player)
    q = 1 - player
    assert len(r.hand(q)) == len(s.hand(q))
    assert sorted(r.hand(q) + r.pile(q) + [v for v in r.picks()[q:q + 1] if v
                                          and s.phase == "choose"]) == \
        sorted(s.hand(q) + s.pile(q) + [v for v in s.picks()[q:q + 1] if v
                                        and s.phase == "choose"])
    # the resampled state is a legal position of its own
    assert from_notation(r.to_notation()).to_notation() == r.to_notation()


def test_resample_hidden_deals_uniformly():
    s = new_initial(seed=5)             # Yellow to choose, Red's hand hidden from Yellow
    unplayed = s.hand(1) + s.pile(1)
    counts = dict.fromkeys(unplayed, 0)
    rng = Rng(11)
    n = 8000
    for _ in range(n):
        for v in s.resample_hidden(0, rng).hand(1):
            counts[v] += 1
    for v in unplayed:                  # each unplayed flower is in hand 3/8 of the time
        assert abs(counts[v] / n - 3 / 8) < 0.03, counts


def test_information_state_hides_the_opponent_hand_and_pending_pick():
    a = new_initial(seed=3, view="turn")
    b = a.resample_hidden(0, Rng(1))
    while b.hand(1) == a.hand(1):
        b = a.resample_hidden(0, Rng(b.hash()))
    assert a.information_state(0) == b.information_state(0)
    assert a.information_state(1) != b.information_state(1)
    pick = a.hand(0)[0]
    a.apply(pick)                       # Yellow picks, hidden
    assert a.current_player() == 1
    assert f"Y={pick}" in a.to_notation()
    assert "Y=?" in a.information_state(1) and f"Y={pick}" not in a.information_state(1)
    assert f"Y={pick}" in a.information_state(0)


def test_simultaneous_view_exposes_both_players_choices():
    s = new_initial(seed=3)
    assert s.current_player() == SIMULTANEOUS and s.is_simultaneous_node()
    assert s.legal_actions() == []
    assert s.legal_actions(0) == s.hand(0) and s.legal_actions(1) == s.hand(1)
    t = new_initial(seed=3, view="turn")
    assert t.current_player() == 0 and t.legal_actions() == t.hand(0)
    assert t.legal_actions(1) == []


def test_playouts_run_in_c_and_count_games():
    games, actions, wins = playouts(HaruState(), 500, 7)
    assert games == 500 and actions > 500 * 50 and sum(wins) <= 500
    assert playouts(HaruState(), 200, 7) == playouts(HaruState(), 200, 7)
    assert playouts(HaruState(view="turn", target=1), 200, 3)[0] == 200


def test_new_initial_with_seed_is_a_dealt_decision_node():
    a, b = new_initial(seed=9), new_initial(seed=9)
    assert a.to_notation() == b.to_notation()
    assert a.current_player() == SIMULTANEOUS
    assert len(a.hand(0)) == len(a.hand(1)) == 3
    assert new_initial().current_player() == CHANCE


def test_stats_reports_scores_rounds_and_history():
    s = HaruState(target=3)
    s.random_playout(4)
    st_ = s.stats()
    assert st_["scores"] == s.scores and st_["rounds"] == s.round
    assert st_["capped"] is False and len(st_["score_history"]) == st_["rounds"]
    assert st_["score_history"][-1] == st_["scores"]


def test_action_ids_are_disjoint_and_below_1024():
    s = HaruState()
    names = {}
    for a in list(range(1, 9)) + list(range(32, 57)) + list(range(64, 89)) + \
            list(range(96, 121)) + list(range(128, 228)) + list(range(257, 265)) + [272, 273]:
        name = s.action_to_string(a, 0)
        assert name not in names.values() and a < 1024
        names[a] = name
    assert names[128 + 4 * 7 + 1] == "wind-c2E" and names[32 + 7] == "bloom-c2"


def reference_evaluation(orc, p):
    """The documented evaluation computed from the oracle's pond: 0.5 + 0.35 x score lead /
    target + 0.15 x (near-figures lead) / 4, each term clipped to [-1, 1], then to [0, 1]."""
    if orc.is_terminal():
        return orc.returns()[p]
    clip = lambda x: max(-1.0, min(1.0, x))     # noqa: E731
    owned = [{pos for pos, pad in orc.pads.items() if pad.flower and pad.flower[0] == q}
             for q in (0, 1)]
    free = {pos for pos, pad in orc.pads.items() if pad.flower is None}

    def near(q):
        count = 0
        for points, shape, _ in oracle.SHAPES:
            missing = shape - owned[q]
            if points < 5 and not shape & owned[1 - q] and len(missing) == 1 and missing <= free:
                count += 1
        return count

    lead = clip((orc.scores[p] - orc.scores[1 - p]) / orc.variant["target"])
    v = 0.5 + 0.35 * lead + 0.15 * clip((near(p) - near(1 - p)) / 4.0)
    return max(0.0, min(1.0, v))


@pytest.mark.parametrize("seed", range(40))
def test_evaluation_matches_its_documented_formula_along_games(seed):
    variant = variant_for(seed)
    eng, orc = HaruState(**variant), oracle.initial(**variant)
    rng_e, rng_o = random.Random(seed), random.Random(seed)
    while True:
        for p in (0, 1):
            assert eng.evaluate(p) == pytest.approx(reference_evaluation(orc, p), abs=1e-12)
        if eng.is_terminal():
            break
        random_step(eng, rng_e)
        random_step(orc, rng_o)
