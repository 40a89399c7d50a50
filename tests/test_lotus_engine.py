"""The Cython Lotus engine against the plain-Python oracle: differential, property,
perft and notation tests."""

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from niwa.ext.errors import NotationError
from niwa.ext.game import Rng
from niwa.ext.lotus import SPEC, LotusState, from_notation, playouts
from niwa.ext.reference import lotus as oracle
from niwa.ext.testing import check_lockstep

GEOMETRIES = [{}, {"lane": 2, "shared": 5, "trampoline_at": 4},
              {"lane": 1, "shared": 6, "trampoline_at": 2}, {"lane": 4, "shared": 14, "trampoline_at": 12},
              {"lane": 2, "shared": 4, "trampoline_at": 3, "towers": 2}, {"towers": 1}]
VARIANTS = [dict(players=p, rule=r, trampoline=t, **g)
            for p, r, t, g in itertools.product((2, 3, 4), ("basic", "pro"),
                                                ("optional", "mandatory"), GEOMETRIES)]


def lockstep(variant, seed, check_notation=True):
    """One seeded random game in engine and oracle side by side, compared at every step
    (niwa.ext.testing.check_lockstep); the notation is compared when `check_notation`."""
    return check_lockstep(SPEC, variant, seed, notation=check_notation,
                          roundtrip_every=1 if check_notation else 0)


def test_differential_2000_games_over_every_variant():
    games = 0
    for i in range(2000):
        variant = VARIANTS[i % len(VARIANTS)]
        lockstep(variant, seed=i, check_notation=(i % 4 == 0))
        games += 1
    assert games == 2000


@pytest.mark.slow
def test_differential_20000_games_full_checks():
    for i in range(20000):
        lockstep(VARIANTS[i % len(VARIANTS)], seed=10**6 + i)


# -- perft, pinned from the oracle -----------------------------------------------------
PERFT_INITIAL = [
    ({}, [7, 49, 294, 1764, 10650]),
    ({"rule": "pro"}, [7, 43, 301, 1846, 11076]),
    ({"players": 3}, [6, 36, 216, 1014, 4760]),
    ({"players": 4}, [6, 36, 216, 1296, 5934]),
]
PERFT_MID = [
    ("lotus players=2 rule=basic trampoline=optional; track a3:BW b2:BBBB b3:WB 6:B 7:WW; "
     "start WW WW W W B B B; goal W:0 B:0; turn W", [6, 30, 205, 1124]),
    ("lotus players=2 rule=pro trampoline=mandatory; track a2:BWWB b2:BB b3:BWB 4:BW 5:B 7:WB "
     "9:W 14:W; start W W W B; goal W:0 B:0; turn B", [7, 36, 245, 1350]),
    ("lotus players=3 rule=basic trampoline=optional; track a2:W a3:BWR b1:B b2:BWRWWB b3:WR "
     "4:R 6:B; start B RR; goal W:0 B:0 R:0; turn B", [6, 30, 92, 435]),
    ("lotus players=4 rule=pro trampoline=optional; track a1:WRUWWU a2:URB b1:RBB b2:WW "
     "5:BRURWR 7:U 10:B; start B U; goal W:0 B:0 R:0 U:0; turn U", [5, 6, 29, 29]),
    ("lotus players=2 rule=basic trampoline=optional; track a3:WWW b3:BWB 4:WBB 7:BBWB 8:B "
     "9:BW 10:W 11:B 12:W; start -; goal W:1 B:0; turn W", [4, 19, 81, 383]),
]


@pytest.mark.parametrize("variant,counts", PERFT_INITIAL)
def test_perft_initial_positions(variant, counts):
    s = LotusState(**variant)
    assert [s.perft(d) for d in range(1, 6)] == counts


@pytest.mark.parametrize("text,counts", PERFT_MID)
def test_perft_mid_game_positions(text, counts):
    s = from_notation(text)
    assert [s.perft(d) for d in range(1, len(counts) + 1)] == counts


def test_pinned_perft_counts_come_from_the_oracle():
    for variant, counts in PERFT_INITIAL[:2]:
        assert [oracle.perft(oracle.initial(**variant), d) for d in range(1, 5)] == counts[:4]


def test_perft_of_a_blocked_basic_position_counts_others_moves_and_pass():
    text = ("lotus players=2 rule=basic trampoline=optional; track a1:WB 4:WWWB 9:WB 12:WWB; "
            "start BBBB BB; goal W:3 B:0; turn W")
    s = from_notation(text)
    assert s.perft(1) == 9   # B4, B2 x2 lanes, a1, 4 land and bounce, 9, 12, pass
    assert s.perft_divide(2)[-1] == ("pass", s.child("pass").perft(1))


# -- properties ----------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**32 - 1))
def test_conservation_progress_no_cycles_one_winner(variant, seed):
    rng = random.Random(seed)
    s = oracle.initial(**variant)
    eng = LotusState(**variant)
    seen = {eng.hash()}
    while not s.is_terminal():
        a = rng.choice(s.legal_actions())
        before = s.progress()
        s.apply(a, check=False)
        eng.apply(a)
        assert s.stone_counts() == [s.stones_each] * s.players
        if a == s.pass_action():
            assert s.progress() == before
        else:
            assert s.progress() > before
        assert eng.hash() not in seen
        seen.add(eng.hash())
    assert sorted(s.returns()) == [0.0] * (s.players - 1) + [1.0]


def test_no_round_of_passes_is_possible():
    # the owner of any top stone can always move, so passes cannot go all the way round
    for seed in range(300):
        variant = VARIANTS[seed % len(VARIANTS)]
        s = LotusState(**variant)
        rng = random.Random(seed)
        streak = 0
        while not s.is_terminal():
            a = rng.choice(s.legal_actions())
            streak = streak + 1 if a == s.pass_action else 0
            assert streak < s.num_players
            s.apply(a)


# -- notation ------------------------------------------------------------------------
def test_notation_round_trips_along_games():
    for seed in range(200):
        s = LotusState(**VARIANTS[seed % len(VARIANTS)])
        rng = Rng(seed)
        while True:
            t = from_notation(s.to_notation())
            assert t.to_notation() == s.to_notation() and t.hash() == s.hash() and t == s
            assert t.legal_actions() == s.legal_actions()
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))


BASE = "lotus players=2 rule=basic trampoline=optional"


@pytest.mark.parametrize("text,message", [
    ("chess; track -; start -; goal W:0 B:0; turn W", "begin with 'lotus'"),
    (f"{BASE}; track -; start WWWW WWW WW W BBBB BBB BB B; goal W:0 B:0", "5 ';'-separated"),
    (f"{BASE}; track a4:W; start WWW WW W BBBB BBB BB B; goal W:0 B:0; turn W", "'a4' does not exist"),
    (f"{BASE}; track -; start WWWW WWW WW WB BBBB BBB BB; goal W:0 B:0; turn W", "two colours"),
    (f"{BASE}; track -; start WWWW WWW WW BBBB BBB BB B; goal W:0 B:0; turn W", "White has 9 stones"),
    (f"{BASE}; track -; start WWWW WWWW WW BBBB BBB BB B; goal W:0 B:0; turn W", "towers only shrink"),
    (f"{BASE}; track 5:WR; start WWW WW W BBBB BBB BB B; goal W:0 B:0; turn W", "unknown colour 'R'"),
    (f"{BASE}; track -; start WWWW WWW WW W BBBB BBB BB B; goal W:0 B:0; turn W opening=first",
     "only with rule=pro"),
    (f"{BASE} players=7; track -; start -; goal W:0; turn W", "players=7"),
    (f"{BASE}; track 5:; start WWWW WWW WW W BBBB BBB BB B; goal W:0 B:0; turn W", "empty stack"),
    (f"{BASE}; track -; start WWWW WWW WW W BBBB BBB BB B; goal W:0 B:x; turn W", "not an integer"),
    (f"{BASE}; track -; start WWWWW WWW WW BBBB BBB BB B; goal W:0 B:0; turn W", "taller than 4"),
    (f"{BASE}; track -; start -; goal W:10 B:10; turn W", "more than one"),
])
def test_bad_notation_is_rejected_with_a_clear_message(text, message):
    with pytest.raises(NotationError, match=message):
        from_notation(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_parsing_never_crashes(text):
    try:
        from_notation(BASE + "; " + text)
    except NotationError:
        pass


# -- speed sanity (not a benchmark: the figures live in `niwa bench`) --------------------
def test_playouts_in_c_agree_with_the_python_loop_and_are_seeded():
    start = LotusState()
    assert playouts(start, 500, 7) == playouts(start, 500, 7)
    g, actions, wins = playouts(start, 500, 7)
    assert g == 500 and sum(wins) == 500 and 50 * 500 < actions < 400 * 500
