"""One test per rule sentence of rules/haru-ichiban.md, on positions written in notation."""

import random

import pytest

from niwa.ext.haru import HaruState, cell_name, from_notation, parse_cell

CHANCE, SIMULTANEOUS, TERMINAL = -1, -2, -4
START = "o.o.o/.oyD./oo.oo/.oor./o.o.o"
# a 4x4 block of pads in the top left: room for squares and 4-lines
BLOCK = "oooo./oooo./ooyD./ooor./....."
# three full rows: room for 5-lines
ROWS = "ooooo/ooooo/oyDro/o..../....."


def make(pond, flowers, phase, turn, hands, frogs="Y:c3 R:d4", score=(0, 0), round_=1,
         **variant):
    """A position in notation; each pile is whatever the pond, hand and pick leave over."""
    v = dict(figures="best", croak="random", new_round="keep", target=5, view="simultaneous")
    v.update(variant)
    board = [set(), set()]
    for tok in flowers.split():
        colour_value = tok.split(":")[1]
        board["YR".index(colour_value[0])].add(int(colour_value[1]))
    picks = [None, None]
    for tok in phase.split()[1:]:
        if tok.startswith("Y="):
            picks[0] = int(tok[2:])
        elif tok[0] in "YR":
            picks["YR".index(tok[0])] = int(tok[1:])
    piles = []
    for p in (0, 1):
        left = set(range(1, 9)) - board[p] - {int(ch) for ch in hands[p]}
        left.discard(picks[p])
        piles.append("{" + ",".join(map(str, sorted(left))) + "}")
    head = "haru " + " ".join(f"{k}={v[k]}" for k in
                               ("figures", "croak", "new_round", "target", "view"))
    text = (f"{head}; pond {pond}; flowers {flowers or '-'}; frogs {frogs}; "
            f"score Y:{score[0]} R:{score[1]}; round {round_} turn {turn}; phase {phase}; "
            f"hands Y:{hands[0] or '-'} R:{hands[1] or '-'}; piles Y:{piles[0]} R:{piles[1]}")
    return from_notation(text)


def dealt(**variant):
    """Turn 1 of a fresh game, Yellow holding 1 3 6 and Red 1 5 6."""
    return make(START, "", "choose", 1, ("136", "156"), frogs="Y:c2 R:d4", **variant)


def pads_of(state):
    b = state.boards()["pads"]
    return {cell_name(c) for c in range(25) if b >> c & 1}


# ---- Components and starting layout -------------------------------------------------------
def test_starting_layout_16_pads_double_dark_and_egg_pads_with_frogs():
    s = HaruState()
    assert s.to_notation().split("; ")[1] == "pond " + START
    assert len(pads_of(s)) == 16
    b = s.boards()
    assert cell_name(b["double_dark"]) == "d2" and b["dark"] == 1 << parse_cell("d2")
    assert [cell_name(c) for c in b["eggs"]] == ["c2", "d4"]
    assert s.frogs() == ["c2", "d4"]


def test_each_player_shuffles_and_draws_three_as_chance_events():
    s = HaruState()
    assert s.current_player() == CHANCE
    drawers = []
    while s.current_player() == CHANCE:
        outcomes = s.chance_outcomes()
        assert all(p == pytest.approx(1 / len(outcomes)) for _, p in outcomes)
        drawers.append(s.action_to_string(outcomes[0][0])[5])
        s.apply(outcomes[-1][0])
    assert drawers == list("YYYRRR")
    assert s.hand(0) == [6, 7, 8] and s.hand(1) == [6, 7, 8]


def test_hands_hold_3_3_3_3_3_3_2_1_flowers_and_turn_8_is_forced():
    for seed in range(100):
        rng = random.Random(seed)
        s = HaruState()
        sizes = {}
        while s.round == 1 and not s.is_terminal():
            if s.phase == "choose":
                sizes[s.turn] = (len(s.hand(0)), len(s.hand(1)))
                if s.turn == 8:
                    assert len(s.legal_actions(0)) == len(s.legal_actions(1)) == 1
            p = s.current_player()
            if p == SIMULTANEOUS:
                s.apply_joint([rng.choice(s.legal_actions(q)) for q in (0, 1)])
            elif p == CHANCE:
                s.apply(rng.choice(s.chance_outcomes())[0])
            else:
                s.apply(rng.choice(s.legal_actions()))
        expected = [3, 3, 3, 3, 3, 3, 2, 1][:len(sizes)]
        assert [sizes[t] for t in sorted(sizes)] == [(n, n) for n in expected]
        if len(sizes) == 8:
            return
    raise AssertionError("no random round reached turn 8")


# ---- A turn ---------------------------------------------------------------------------------
def test_lower_value_is_junior_and_blooms_the_dark_pad_automatically():
    s = dealt()
    s.apply_joint(["Y3", "R6"])
    assert s.flowers() == {"d2": "Y3"}       # the dark pad, by the Junior (Yellow)
    assert s.phase == "bloom" and s.current_player() == 1   # Senior (Red) blooms next


def test_senior_blooms_any_pad_without_a_flower():
    s = dealt()
    s.apply_joint(["Y3", "R6"])
    free = pads_of(s) - {"d2"}
    assert {s.action_to_string(a) for a in s.legal_actions()} == {f"bloom-{c}" for c in free}
    s.apply("bloom-a1")
    assert s.flowers() == {"d2": "Y3", "a1": "R6"}
    assert s.phase == "wind" and s.current_player() == 0    # the Junior calls the wind


def test_senior_bloom_on_a_frog_moves_that_frog_of_either_colour():
    for cell, colour in (("c2", 0), ("d4", 1)):
        s = dealt()
        s.apply_joint(["Y3", "R6"])
        s.apply(f"bloom-{cell}")
        assert s.phase == "bloom-frog" and s.current_player() == 1   # the Senior moves it
        other = s.frogs()[1 - colour]
        dests = {s.action_to_string(a)[5:] for a in s.legal_actions()}
        # no flower, no frog, not dark
        assert dests == pads_of(s) - {"d2", cell, other}
        s.apply("frog-a1")
        assert s.frogs()[colour] == "a1" and s.phase == "wind"


def test_wind_pushes_the_pad_and_the_pads_in_front_up_to_the_first_water():
    s = make(START, "d2:R2 a3:Y7", "wind Y7 R2", 1, ("12", "13"), frogs="Y:c2 R:b3")
    s.apply("wind-a3E")                        # a3 and b3 move, c3 was water
    assert "a3" not in pads_of(s) and {"b3", "c3"} <= pads_of(s)
    assert s.flowers() == {"d2": "R2", "b3": "Y7"}
    assert s.frogs() == ["c2", "c3"]           # the frog rode on its pad
    assert len(pads_of(s)) == 16


def test_wind_pads_behind_the_chosen_pad_do_not_move():
    s = make(START, "d2:R2 a3:Y7", "wind Y7 R2", 1, ("12", "13"), frogs="Y:c2 R:b3")
    s.apply("wind-b3E")
    assert {"a3", "c3"} <= pads_of(s) and "b3" not in pads_of(s)
    assert s.flowers()["a3"] == "Y7" and s.frogs()[1] == "c3"


def test_wind_moves_special_pads_with_their_identity_and_side():
    s = make(START, "d2:R2 a3:Y7", "wind Y7 R2", 1, ("12", "13"), frogs="Y:c2 R:b3")
    s.apply("wind-c2S")                       # the yellow egg pad, with its frog
    assert s.boards()["eggs"][0] == parse_cell("c3") and s.frogs()[0] == "c3"
    t = make(START, "d2:R2 a3:Y7", "wind Y7 R2", 1, ("12", "13"), frogs="Y:c2 R:b3")
    t.apply("wind-d2S")                        # pushes d2 (double-dark), d3 and d4 (red egg)
    assert cell_name(t.boards()["double_dark"]) == "d3"
    assert cell_name(t.boards()["eggs"][1]) == "d5" and "D" in t.to_notation()
    assert t.flowers()["d3"] == "R2" and "d4" in pads_of(t) and "d5" in pads_of(t)


def test_a_push_that_would_leave_the_pond_is_illegal():
    s = make(START, "d2:R2 a3:Y7", "wind Y7 R2", 1, ("12", "13"), frogs="Y:c2 R:b3")
    legal = {s.action_to_string(a) for a in s.legal_actions()}
    assert "wind-a3W" not in legal             # a3 itself would leave
    assert "wind-d3E" not in legal             # d3 pushes e3 off the pond
    assert "wind-a1N" not in legal and "wind-e5S" not in legal
    assert {"wind-a3E", "wind-d3W", "wind-a1E", "wind-c4N"} <= legal
    assert s.current_player() == 1             # the Junior (Red) calls the wind


def test_new_dark_pad_is_a_pad_without_flower_flipped_by_the_senior():
    s = make(START, "d2:R2 a3:Y7", "dark Y7 R2", 1, ("12", "13"), frogs="Y:c2 R:b3")
    assert s.current_player() == 0            # Senior (Yellow)
    assert {s.action_to_string(a)[5:] for a in s.legal_actions()} == pads_of(s) - {"d2", "a3"}
    s.apply("dark-e1")
    assert s.to_notation().split("; ")[1] == "pond o.o.x/.oyD./oo.oo/.oor./o.o.o"
    assert s.phase == "draw"                   # then both draw back up to 3


def test_dark_flip_on_a_frog_moves_it_to_a_light_pad_without_flower_or_frog():
    s = make(START, "d2:R2 a3:Y7", "dark Y7 R2", 1, ("12", "13"), frogs="Y:c2 R:b3")
    s.apply("dark-c2")
    assert s.phase == "dark-frog" and s.current_player() == 0
    dests = {s.action_to_string(a)[5:] for a in s.legal_actions()}
    assert dests == pads_of(s) - {"d2", "a3", "c2", "b3"}   # not the new dark pad either
    s.apply("frog-e5")
    assert s.frogs() == ["e5", "b3"] and s.phase == "draw"
    # next turn the Junior blooms the new dark pad (the egg pad c2, dark side up)
    while s.current_player() == CHANCE:
        s.apply(s.chance_outcomes()[0][0])
    s.apply_joint([s.hand(0)[0], s.hand(1)[-1]])
    assert s.flowers()["c2"][0] == "Y"


# ---- Tie --------------------------------------------------------------------------------------
def test_tie_croak_is_a_chance_event_both_bloom_then_frogs_move_in_croak_order():
    s = dealt()
    s.apply_joint(["Y1", "R1"])
    assert s.current_player() == CHANCE and s.phase == "croak"
    assert s.chance_outcomes() == [(272, 0.5), (273, 0.5)]
    s.apply("croak-R")                         # Red croaks first
    # both bloom the pad under their own frog at once (seeds 000 and 003)
    assert s.flowers() == {"d4": "R1", "c2": "Y1"}
    assert s.phase == "tie-frog1" and s.current_player() == 1   # Red moves its frog first
    assert "first=R" in s.to_notation()
    dests = {s.action_to_string(a)[5:] for a in s.legal_actions()}
    assert dests == pads_of(s) - {"d4", "c2", "d2"}              # no flower, no frog, not dark
    s.apply("frog-a1")
    assert s.phase == "tie-frog2" and s.current_player() == 0
    assert "frog-a1" not in {s.action_to_string(a) for a in s.legal_actions()}
    s.apply("frog-e5")
    assert s.frogs() == ["e5", "a1"]
    # no wind, no new dark pad: the old dark pad stays dark and unflowered
    assert s.phase == "draw" and "d2" not in s.flowers()
    assert s.boards()["dark"] == 1 << parse_cell("d2")


def test_tie_blooms_are_simultaneous_so_both_may_score():
    s = make("oooo./oooo./ooyD./xoor./.....", "a1:Y1 b1:Y2 a2:Y3 b4:Y5 d3:R1 c1:R2 d1:R3 d2:R5",
             "croak Y4 R4", 5, ("67", "67"), frogs="Y:b2 R:c2")
    s.apply("croak-Y")
    assert s.scores == [1, 1] and s.round == 2 and s.phase == "draw"


def test_tie_in_turn_7_leaves_two_free_pads_so_the_frogs_leave_without_moving():
    s = from_notation(
        "haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
        "xx.Y./ox.oo/o.o../o.r.D/oxoo.; flowers a1:Y5 b1:Y6 d1:Y2 a2:Y8 e2:R3 a3:R7 c3:Y7 "
        "a4:Y3 c4:R8 e4:R1 b5:R2 c5:R5; frogs Y:d2 R:d5; score Y:3 R:0; round 6 turn 7; "
        "phase croak Y4 R4; hands Y:1 R:6; piles Y:{} R:{}")
    s.apply("croak-Y")
    assert s.flowers()["d2"] == "Y4" and s.flowers()["d5"] == "R4"
    assert s.frogs() == [None, None] and s.phase == "choose" and s.turn == 8


def test_tie_without_frogs_first_croaker_blooms_the_dark_pad_other_the_last_pad():
    # round 50, so the pond stays visible after the round (and the game) ends
    text = ("haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
            "xxoo./.xxxD/x..r./..yo./oooo.; flowers a1:R2 b1:Y1 d1:Y7 b2:R1 c2:R6 d2:Y6 e2:Y4 "
            "d3:R3 c4:Y3 d4:R7 a5:R4 b5:Y2 c5:Y5 d5:R5; frogs Y:off R:off; score Y:0 R:3; "
            "round 50 turn 8; phase choose; hands Y:8 R:8; piles Y:{} R:{}")
    for first, dark_pad, other in (("Y", "a3", "c1"), ("R", "a3", "c1")):
        s = from_notation(text)
        assert pads_of(s) - set(s.flowers()) == {dark_pad, other}
        s.apply_joint(["Y8", "R8"])
        s.apply(f"croak-{first}")
        second = "R" if first == "Y" else "Y"
        assert s.flowers()[dark_pad] == first + "8" and s.flowers()[other] == second + "8"
        assert s.is_terminal() and s.stats()["capped"]


def test_frogs_leave_when_only_two_unflowered_pads_remain():
    s = make(START, "a1:Y1 c1:R1 e1:Y2 b2:R2 d2:Y6 a3:R3 b3:Y4 d3:R4 e3:Y5 b4:R5 c4:Y3 "
             "c5:Y7 e5:R6", "bloom Y6 R7", 7, ("8", "8"), frogs="Y:c2 R:d4")
    assert s.current_player() == 1 and len(pads_of(s) - set(s.flowers())) == 5 - 2
    s.apply("bloom-a5")
    assert s.frogs() == [None, None]           # no frog move: they have left
    assert s.phase == "wind"


# ---- Figures and scoring ---------------------------------------------------------------------
@pytest.mark.parametrize("yellow,cell,frogs,points", [
    ("a1:Y1 b1:Y3 a2:Y5", "b2", "Y:c1 R:b3", 1),      # 2x2 square
    ("a1:Y1 b1:Y3 c1:Y5", "d1", "Y:a3 R:b3", 2),      # horizontal 4-line
    ("a1:Y1 a2:Y3 a3:Y5", "a4", "Y:c1 R:b3", 2),      # vertical 4-line
    ("a1:Y1 b2:Y3 c3:Y5", "d4", "Y:c1 R:b3", 3),      # diagonal 4-line
    ("d1:Y1 c2:Y3 b3:Y5", "a4", "Y:c1 R:a3", 3),      # the other diagonal
])
def test_each_figure_scores_its_points_for_its_owner(yellow, cell, frogs, points):
    s = make(BLOCK, f"{yellow} d3:R2 c4:R4 b4:R6 d2:R8", "bloom Y7 R2", 4, ("68", "13"),
             frogs=frogs)
    s.apply(f"bloom-{cell}")
    assert s.scores == [points, 0] and s.round == 2
    assert s.stats()["score_history"] == [[points, 0]]


def test_5_line_scores_5_and_wins_at_once_whatever_the_target():
    for target in (5, 10, 30):
        s = make(ROWS, "a1:Y1 b1:Y2 e1:Y3 d1:Y4 c3:R1 a2:R2 c2:R3 e2:R4 a4:R5", "bloom Y8 R1",
                 5, ("56", "67"), frogs="Y:b2 R:d2", target=target)
        s.apply("bloom-c1")
        assert s.is_terminal() and s.returns() == [1.0, 0.0] and s.scores == [5, 0]


def test_several_figures_only_the_most_valuable_scores_or_their_sum():
    flowers = "a1:Y1 c1:Y2 d1:Y3 a2:Y4 b2:Y5 c2:R2 a3:R3 c3:R4 d3:R1 b4:R5 d4:R6"
    for figures, points in (("best", 2), ("sum", 3)):
        s = make(BLOCK, flowers, "bloom Y8 R1", 6, ("67", "78"), frogs="Y:d2 R:b3",
                 figures=figures)
        s.apply("bloom-b1")                    # the 4-line a1-d1 and the square a1 b1 a2 b2
        assert s.scores == [points, 0]


def test_sum_does_not_score_the_4_lines_inside_a_5_line():
    s = make(ROWS, "a1:Y1 b1:Y2 e1:Y3 d1:Y4 c3:R1 a2:R2 c2:R3 e2:R4 a4:R5", "bloom Y8 R1",
             5, ("56", "67"), frogs="Y:b2 R:d2", figures="sum", target=10)
    s.apply("bloom-c1")
    assert s.scores == [5, 0] and s.is_terminal()


def test_a_figure_from_the_juniors_bloom_ends_the_round_before_the_senior_blooms():
    # the dark pad b2 completes Yellow's square when Yellow is Junior
    s = make("oooo./oxoo./ooyD./ooor./.....", "a1:Y1 b1:Y3 a2:Y5 d3:R2 c1:R4 d1:R6", "choose",
             4, ("278", "135"), frogs="Y:c2 R:d2")
    s.apply_joint(["Y2", "R5"])
    assert s.scores == [1, 0] and s.round == 2 and s.phase == "draw"
    assert s.flowers() == {}                   # Red never bloomed; a new round began


WIND_BOTH = "ooooo/o.oyr/oooDo/.o.../o...."
WIND_BOTH_FLOWERS = "a1:Y1 b1:Y2 a2:Y3 b3:Y7 a3:R1 c3:R3 d3:R2 b4:R4"


def test_figures_after_the_wind_both_players_score_and_the_owner_scores():
    s = make(WIND_BOTH, WIND_BOTH_FLOWERS, "wind Y7 R2", 4, ("45", "56"), frogs="Y:d2 R:e2")
    assert s.current_player() == 1             # Red is Junior: Red's wind...
    s.apply("wind-b4N")
    # ...gives Yellow a square (b3 -> b2) and Red the 4-line a3-d3 (b4 -> b3)
    assert s.scores == [1, 2] and s.round == 2


def test_both_reach_5_higher_total_wins():
    s = make(WIND_BOTH, WIND_BOTH_FLOWERS, "wind Y7 R2", 4, ("45", "56"), frogs="Y:d2 R:e2",
             score=(4, 4))
    s.apply("wind-b4N")
    assert s.scores == [5, 6] and s.is_terminal() and s.returns() == [0.0, 1.0]


def test_both_reach_5_with_equal_totals_play_on_until_one_leads():
    s = make(WIND_BOTH, WIND_BOTH_FLOWERS, "wind Y7 R2", 4, ("45", "56"), frogs="Y:d2 R:e2",
             score=(4, 3))
    s.apply("wind-b4N")
    assert s.scores == [5, 5] and not s.is_terminal() and s.round == 2
    # play on: the next round's scorer leads and wins
    s.random_playout(1)
    a, b = s.scores
    assert a != b and s.returns() == ([1.0, 0.0] if a > b else [0.0, 1.0])


def test_first_to_reach_the_target_wins():
    s = make(BLOCK, "a1:Y1 b1:Y3 a2:Y5 d3:R2 c4:R4 b4:R6 d2:R8", "bloom Y7 R2", 4, ("68", "13"),
             frogs="Y:c1 R:b3", score=(4, 2))
    s.apply("bloom-b2")
    assert s.is_terminal() and s.scores == [5, 2] and s.returns() == [1.0, 0.0]


def test_no_figure_after_8_turns_ends_the_round_with_no_score():
    text = ("haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
            "xxoo./.xxxD/x..r./..yo./oooo.; flowers a1:R2 b1:Y1 d1:Y7 b2:R1 c2:R6 d2:Y6 e2:Y4 "
            "d3:R3 c4:Y3 d4:R7 a5:R4 b5:Y2 c5:Y5 d5:R5; frogs Y:off R:off; score Y:0 R:3; "
            "round 2 turn 8; phase choose; hands Y:8 R:8; piles Y:{} R:{}")
    s = from_notation(text)
    s.apply_joint(["Y8", "R8"])
    s.apply("croak-R")
    assert s.round == 3 and s.scores == [0, 3] and s.phase == "draw"


# ---- The game: new rounds, cap ----------------------------------------------------------------
def test_new_round_keep_leaves_pads_where_they_are_resets_sides_flowers_frogs():
    s = make(WIND_BOTH, WIND_BOTH_FLOWERS, "wind Y7 R2", 4, ("45", "56"), frogs="Y:d2 R:e2")
    s.apply("wind-b4N")
    assert s.to_notation().split("; ")[1] == "pond ooooo/oooyr/oooDo/...../o...."
    assert pads_of(s) == {"a1", "b1", "c1", "d1", "e1", "a2", "b2", "c2", "d2", "e2",
                          "a3", "b3", "c3", "d3", "e3", "a5"}
    assert s.flowers() == {} and s.boards()["dark"] == 1 << s.boards()["double_dark"]
    assert s.frogs() == [cell_name(c) for c in s.boards()["eggs"]]
    assert s.hand(0) == [] and s.pile(0) == list(range(1, 9)) and s.phase == "draw"


def test_new_round_reset_restores_the_starting_layout():
    s = make(WIND_BOTH, WIND_BOTH_FLOWERS, "wind Y7 R2", 4, ("45", "56"), frogs="Y:d2 R:e2",
             new_round="reset")
    s.apply("wind-b4N")
    assert s.to_notation().split("; ")[1] == "pond " + START
    assert s.frogs() == ["c2", "d4"]


def test_round_cap_ends_the_game_by_score_or_as_a_draw():
    base = ("haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
            "xxoo./.xxxD/x..r./..yo./oooo.; flowers a1:R2 b1:Y1 d1:Y7 b2:R1 c2:R6 d2:Y6 e2:Y4 "
            "d3:R3 c4:Y3 d4:R7 a5:R4 b5:Y2 c5:Y5 d5:R5; frogs Y:off R:off; score Y:{} R:{}; "
            "round 50 turn 8; phase choose; hands Y:8 R:8; piles Y:{{}} R:{{}}")
    s = from_notation(base.format(0, 3))
    s.apply_joint(["Y8", "R8"])
    s.apply("croak-Y")
    assert s.is_terminal() and s.stats()["capped"] and s.returns() == [0.0, 1.0]
    t = from_notation(base.format(2, 2))
    t.apply_joint(["Y8", "R8"])
    t.apply("croak-Y")
    assert t.is_terminal() and t.returns() == [0.5, 0.5] and t.winner() is None
    assert "over draw capped" in t.to_notation()


# ---- Croak variants ------------------------------------------------------------------------------
def test_croak_seat0_yellow_always_croaks_first():
    s = dealt(croak="seat0")
    s.apply_joint(["Y1", "R1"])
    assert s.phase == "tie-frog1" and s.current_player() == 0 and "first=Y" in s.to_notation()


def test_croak_trailing_the_player_with_fewer_points_croaks_first_ties_are_chance():
    s = make(START, "", "choose", 1, ("136", "156"), frogs="Y:c2 R:d4", score=(2, 1),
             croak="trailing")
    s.apply_joint(["Y1", "R1"])
    assert s.phase == "tie-frog1" and s.current_player() == 1 and "first=R" in s.to_notation()
    t = make(START, "", "choose", 1, ("136", "156"), frogs="Y:c2 R:d4", score=(1, 1),
             croak="trailing")
    t.apply_joint(["Y1", "R1"])
    assert t.phase == "croak" and t.current_player() == CHANCE
