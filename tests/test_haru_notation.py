"""Haru Ichiban notation (round trip, clear errors, fuzzing) and the CLI commands on it."""

import json
import random

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from niwa.cli.main import main
from niwa.ext.errors import NotationError
from niwa.ext.haru import HaruState, from_notation, new_initial
from niwa.ext.registry import get_game, parse_position

GOOD = ("haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
        "o.o.o/.oYD./.oooo/..oor/x.o.o; flowers c2:Y1 d2:Y3 c4:Y8 e4:R7 a5:R4 c5:R8; frogs "
        "Y:d4 R:e1; score Y:0 R:0; round 1 turn 3; phase wind Y8 R4; hands Y:25 R:26; piles "
        "Y:{4,6,7} R:{1,3,5}")
START = ("haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
         "o.o.o/.oyD./oo.oo/.oor./o.o.o; flowers -; frogs Y:c2 R:d4; score Y:0 R:0; round 1 "
         "turn 1; phase draw; hands Y:- R:-; piles Y:{1,2,3,4,5,6,7,8} R:{1,2,3,4,5,6,7,8}")


def test_start_notation_and_round_trip():
    assert HaruState().to_notation() == START
    assert from_notation(START).to_notation() == START
    s = from_notation(GOOD)
    assert s.to_notation() == GOOD and s.current_player() == 1   # Red (4 < 8) is Junior
    assert parse_position("haru target=3 view=turn").variant["target"] == 3


def test_round_trip_along_random_games_in_every_phase():
    seen = set()
    for seed in range(40):
        rng = random.Random(seed)
        s = HaruState(view="turn" if seed % 2 else "simultaneous", croak="trailing")
        while not s.is_terminal():
            text = s.to_notation()
            t = from_notation(text)
            assert t.to_notation() == text and t.hash() == s.hash()
            assert t.legal_actions() == s.legal_actions()
            seen.add(s.phase)
            p = s.current_player()
            if p == -2:
                s.apply_joint([rng.choice(s.legal_actions(q)) for q in (0, 1)])
            elif p == -1:
                s.apply(rng.choice(s.chance_outcomes())[0])
            else:
                s.apply(rng.choice(s.legal_actions()))
        assert from_notation(s.to_notation()).to_notation() == s.to_notation()
    assert seen >= {"draw", "choose", "croak", "bloom", "bloom-frog", "wind", "dark",
                    "dark-frog", "tie-frog1", "tie-frog2"}


def swap(text, old, new):
    assert old in text, old
    return text.replace(old, new, 1)


BAD = [
    (GOOD.replace("; piles Y:{4,6,7} R:{1,3,5}", ""), "9 ';'-separated parts"),
    ("lotus" + GOOD[4:], "must begin with 'haru'"),
    (swap(GOOD, "target=5", "target=99"), "target"),
    (swap(GOOD, "figures=best", "figures=most"), "figures"),
    (swap(GOOD, "x.o.o", "xoo.o"), "17 pads"),
    (swap(GOOD, "o.o.o/.oYD.", "o.o.o/.oYx."), "double-dark"),
    (swap(GOOD, "c4:Y8", "c4:Y3"), "value Y3 is used twice"),
    (swap(GOOD, "c4:Y8", "a3:Y8"), "on water"),
    (swap(GOOD, "c4:Y8", "f4:Y8"), "CELL:COLOUR VALUE"),
    (swap(GOOD, "Y:d4 R:e1", "Y:d4 R:d1"), "frog R is on water"),
    (swap(GOOD, "Y:d4 R:e1", "Y:d4 R:d4"), "both frogs on one pad"),
    (swap(GOOD, "Y:d4 R:e1", "Y:d4 R:off"), "both frogs"),
    (swap(GOOD, "Y:d4 R:e1", "Y:c2 R:e1"), "flowered or dark"),
    (swap(GOOD, "hands Y:25", "hands Y:245"), "used twice"),
    (swap(GOOD, "Y:{4,6,7}", "Y:{4,6}"), "not all accounted"),
    (swap(GOOD, "Y:{4,6,7}", "Y:{4,6,9}"), "values 1..8"),
    (swap(GOOD, "turn 3", "turn 9"), "turn 9"),
    (swap(GOOD, "round 1", "round 51"), "round 51"),
    (swap(GOOD, "phase wind Y8 R4", "phase wind Y8 R8"), "different"),
    (swap(GOOD, "phase wind Y8 R4", "phase sow Y8 R4"), "unknown phase"),
    (swap(GOOD, "phase wind Y8 R4", "phase wind"), "both revealed flowers"),
    (swap(GOOD, "phase wind Y8 R4", "phase choose Y=8"), "view=turn"),
    (swap(GOOD, "score Y:0", "score Y:5"), "game would be over"),
    (swap(GOOD, "score Y:0", "score Y:x"), "integer"),
    (swap(START, "phase draw", "phase over draw"), "round cap"),
    (swap(swap(START, "hands Y:- R:-", "hands Y:1 R:2"), "piles Y:{1,", "piles Y:{")
     .replace("R:{1,2,3", "R:{1,3"), "Yellow draws before Red"),
    ("haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
     "o.o.o/.oyD./oo.oo/.oor./o.o.o; flowers d4:R1 c2:Y1; frogs Y:c2 R:d4; score Y:0 R:0; "
     "round 1 turn 1; phase tie-frog1 Y1 R1; hands Y:36 R:56; piles Y:{2,4,5,7,8} "
     "R:{2,3,4,7,8}", "first croaker"),
    (swap(GOOD, "round 1", "round ١"), "round N turn T"),
    (swap(swap(GOOD, "round 1 turn 3", "round 1 turn 4"), "hands Y:25", "hands Y:25"),
     "flowers on the pond"),
]


@pytest.mark.parametrize("text,message", BAD)
def test_bad_notation_is_rejected_with_a_message_naming_the_problem(text, message):
    with pytest.raises(NotationError) as err:
        from_notation(text)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_figure_on_the_pond_is_rejected():
    text = ("haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
            "oooo./oooo./ooyD./ooor./.....; flowers a1:Y1 b1:Y2 a2:Y3 {} c4:R1 d3:R2 b4:R3 "
            "d2:R4; frogs Y:c1 R:b3; score Y:0 R:0; round 1 turn 4; phase wind Y7 R2; hands "
            "Y:45 R:56; piles Y:{{6,8}} R:{{7,8}}")
    assert from_notation(text.format("c2:Y7")).phase == "wind"
    with pytest.raises(NotationError, match="Yellow has a figure"):
        from_notation(text.format("b2:Y7"))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(GOOD) - 1), st.sampled_from(list("0123456789abcdeoxyYrRD.;:/{},= -")),
       st.booleans())
def test_parsing_never_crashes(position, char, delete):
    text = GOOD[:position] + ("" if delete else char) + GOOD[position + 1:]
    try:
        s = from_notation(text)
    except NotationError:
        return
    assert from_notation(s.to_notation()).to_notation() == s.to_notation()


# ---- CLI ------------------------------------------------------------------------------------
def run(*args):
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_cli_new_with_seed_deals_a_concrete_position():
    code, out = run("new", "haru", "--seed", "1")
    assert code == 0 and out.strip() == new_initial(seed=1).to_notation()
    assert "phase choose" in out and "hands Y:- " not in out
    code, out = run("new", "haru", "-v", "view=turn", "-v", "croak=seat0")
    assert code == 0 and "view=turn" in out and "phase draw" in out


def test_cli_show_draws_the_pond_hands_and_scores():
    code, out = run("show", GOOD)
    assert code == 0
    assert "~~~" in out and "Y8" in out and "fy" in out and "#D" in out
    assert "Yellow score 0  hand 25" in out and "Red" in out
    code, out = run("show", "--json", GOOD)
    data = json.loads(out)
    assert data["flowers"]["c4"] == "Y8" and data["phase"] == "wind"


def test_cli_moves_and_perft():
    code, out = run("moves", GOOD)
    assert code == 0 and "wind-" in out and len(out.strip().splitlines()) == 37
    code, out = run("moves", new_initial(seed=2).to_notation())
    assert code == 0 and "player 0: Y" in out and "player 1: R" in out
    code, out = run("moves", "haru")
    assert "draw-Y1" in out and "p=0.1250" in out
    code, out = run("perft", GOOD, "--depth", "2")
    assert code == 0 and out.strip() == "370"
    code, out = run("perft", GOOD, "--depth", "2", "--divide")
    assert out.strip().splitlines()[-1] == "370"


def test_cli_bad_position_is_one_line_with_status_2():
    code, out = run("show", swap(GOOD, "c4:Y8", "c4:Y3"))
    assert code == 2 and out.count("\n") == 1 and "used twice" in out


def test_cli_bench_reports_a_ratio():
    code, out = run("bench", "haru", "--seconds", "0.3")
    assert code == 0 and "ratio" in out


def test_registry_knows_haru():
    info = get_game("haru")
    assert set(info.variants) == {"figures", "croak", "new_round", "target", "view"}
    assert info.new(seed=4).to_notation() == new_initial(seed=4).to_notation()
