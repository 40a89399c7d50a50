"""One test per rule sentence of rules/lotus.md (section by section), on the Cython engine."""

import pytest

from niwa.ext.errors import VariantError
from niwa.ext.lotus import LotusState

HEAD2 = "lotus players=2 rule=basic trampoline=optional"


def pos(track, start, turn="W", head=HEAD2):
    """A position; each colour's goal count is whatever makes its stones add up."""
    n = int(head.split("players=")[1].split()[0])
    each = 10 if n == 2 else 6
    text = "".join(t.split(":")[1] for t in track.split()) + "".join(start.split())
    goal = " ".join(f"{c}:{each - text.count(c)}" for c in "WBRU"[:n])
    return LotusState.from_notation(f"{head}; track {track or '-'}; start {start or '-'}; "
                                    f"goal {goal}; turn {turn}")


def names(state):
    return sorted(state.action_to_string(a) for a in state.legal_actions())


def play(state, text):
    state.apply(state.string_to_action(text))
    return state


# -- Components and setup -------------------------------------------------------------
def test_two_players_have_ten_stones_in_towers_4_3_2_1():
    s = LotusState()
    assert s.num_players == 2
    assert s.start_towers(0) == [4, 3, 2, 1] and s.start_towers(1) == [4, 3, 2, 1]


@pytest.mark.parametrize("players", [3, 4])
def test_three_or_four_players_have_six_stones_in_towers_3_2_1(players):
    s = LotusState(players=players)
    for p in range(players):
        assert s.start_towers(p) == [3, 2, 1]
    assert s.to_notation().split("; ")[2] == "start " + " ".join(
        c * h for c in "WBRU"[:players] for h in (3, 2, 1))


def test_seat_zero_moves_first_and_start_towers_stay_one_colour():
    s = LotusState(players=3)
    assert s.current_player() == 0
    # every start move takes the mover's own top stone: towers only shrink, keep one colour
    play(s, "W3-a3")
    assert s.start_towers(0) == [2, 2, 1]


# -- The track ------------------------------------------------------------------------
def test_geometry_parameters_are_validated():
    with pytest.raises(VariantError, match="trampoline_at"):
        LotusState(lane=3, shared=11, trampoline_at=3)   # must be a shared space
    with pytest.raises(VariantError, match="lane"):
        LotusState(lane=0)
    s = LotusState(lane=2, shared=5, trampoline_at=4)
    assert s.num_spaces() == 9


def test_positions_one_to_three_exist_twice_and_four_to_fourteen_once():
    s = LotusState()
    assert [s.space_name(i) for i in range(s.num_spaces())] == \
        ["a1", "a2", "a3", "b1", "b2", "b3"] + [str(p) for p in range(4, 15)]


# -- A move ---------------------------------------------------------------------------
def test_covered_stone_cannot_move_and_only_own_colour_moves():
    s = pos("a1:WB 5:BW", "WWWW WWW W BBBB BBB B")
    moves = names(s)
    assert not any(m.startswith("a1") for m in moves)    # W under B
    assert "5-7" in moves                                  # W on top of a B
    assert all(not m.startswith("B") for m in moves)


def test_distance_is_the_height_of_the_stack_of_any_colours():
    s = pos("a1:BBW", "WWWW WWW WW BBBB BB B")
    assert "a1-4" in names(s)   # height 3 from a1 -> position 4 (shared)


def test_start_tower_goes_to_position_h_with_free_lane_choice_inside_lanes():
    s = LotusState()
    assert names(s) == ["W1-a1", "W1-b1", "W2-a2", "W2-b2", "W3-a3", "W3-b3", "W4-4"]


def test_move_stays_in_its_lane_until_the_merge():
    s = pos("b1:WW", "WWWW WWW W BBBB BBB BB B")
    assert "b1-b3" in names(s)
    play(s, "b1-b3")
    assert s.stack(s.num_spaces() and 5) == "W"   # b3 is space index 5
    t = pos("b2:WW", "WWWW WWW W BBBB BBB BB B")
    assert "b2-4" in names(t)


def test_overshooting_the_route_enters_the_goal_without_exactness():
    s = pos("13:WWW", "WWWW WW W BBBB BBB BB B")
    play(s, "13-goal")
    assert s.goal_count(0) == 1 and s.stack(15) == "WW"   # 13 is space 15


def test_landing_stacks_on_top_without_capture_and_leaves_stones_below():
    s = pos("a1:BW 4:BB", "WWWW WWW W BBBB BBB")
    # W on a1 (height 2) moves to a3: stones under it stay
    play(s, "a1-a3")
    assert s.stack(0) == "B" and s.stack(2) == "W"
    t = pos("a2:W 4:BB", "WWWW WWW W BBBB BBB")
    play(t, "W1-b1")
    assert t.stack(3) == "W"


def test_stacks_have_no_height_limit():
    s = pos("a2:WWWWWWWWW", "W BBBB BBB BB B")
    assert "a2-11" in names(s)   # height 9 from a2


def test_only_forward_moves_exist():
    s = pos("a2:W 6:B 9:W", "WWWW WWW W BBBB BBB BB")
    for a in s.legal_actions():
        text = s.action_to_string(a)
        src, dst = text.split("-")[0], text.split("-")[1].split("*")[0]
        if src[0] in "ab" or src.isdigit():
            d = 99 if dst == "goal" else int(dst.lstrip("ab"))
            assert d > int(src.lstrip("ab"))


# -- Trampoline -----------------------------------------------------------------------
def test_landing_on_the_trampoline_gives_land_or_bounce_by_the_same_distance():
    s = pos("6:BW 8:BBBB", "WWWW WWW W BBB BB")
    assert {"6-8", "6-8*10"} <= set(names(s))
    play(s, "6-8*10")            # bounce distance 2, not the trampoline stack's height
    assert s.stack(s.num_spaces() - 5) == "W" and s.stack(10) == "BBBB"


def test_passing_over_the_trampoline_does_nothing():
    s = pos("7:WW", "WWWW WWW W BBBB BBB BB B")
    assert [m for m in names(s) if m.startswith("7")] == ["7-9"]


def test_bounce_may_reach_the_goal_and_does_not_chain():
    s = pos("2:B", "WWWW WWW WW W BBBB BBB BB", head=HEAD2 + " lane=1 shared=5 trampoline_at=4")
    # B on shared 2? lane=1: spaces a1, b1, 2..6; trampoline at 4
    assert s.current_player() == 0
    t = pos("a1:WWW", "WWWW WWW BBBB BBB BB B", head=HEAD2 + " lane=1 shared=5 trampoline_at=4")
    assert {"a1-4", "a1-4*goal"} <= set(names(t))


def test_mandatory_trampoline_has_only_the_bounce():
    s = pos("6:BW", "WWWW WWW W BBBB BB B", head="lotus players=2 rule=basic trampoline=mandatory")
    moves = [m for m in names(s) if m.startswith("6")]
    assert moves == ["6-8*10"]


# -- No possible move -----------------------------------------------------------------
BLOCKED = ("a1:WB 4:WWWB 9:WB 12:WWB", "BBBB BB")  # every W is covered, W start empty


def test_basic_rule_blocked_player_moves_any_free_stone_of_others_or_passes():
    s = pos(*BLOCKED)
    moves = names(s)
    assert "pass" in moves
    assert {"B4-4", "B2-a2", "B2-b2", "a1-a3", "4-8", "4-8*12", "9-11", "12-goal"} <= set(moves)
    play(s, "4-8*12")      # moving a Black stone, trampoline decided by the mover
    assert s.stack(s.num_spaces() - 3) == "WWBB" and s.current_player() == 1


def test_pro_rule_blocked_player_must_pass():
    s = pos(*BLOCKED, head="lotus players=2 rule=pro trampoline=optional")
    assert names(s) == ["pass"]
    play(s, "pass")
    assert s.current_player() == 1


def test_player_with_a_free_stone_cannot_pass():
    s = pos(*BLOCKED, turn="B")
    assert "pass" not in names(s)
    assert "pass" not in names(LotusState())


# -- Pro opening ----------------------------------------------------------------------
def test_pro_opening_two_stones_second_optional_then_seat_one_moves_once():
    s = LotusState(rule="pro")
    play(s, "W4-4")
    assert s.current_player() == 0 and s.opening == "second"
    assert names(s) == ["W1-a1", "W1-b1", "W2-a2", "W2-b2", "W3-a3", "W3-b3", "pass"]
    play(s, "W3-a3")          # the second stone comes from the tower the first one left
    assert s.stack(2) == "W" and s.start_towers(0) == [3, 2, 2, 1] and s.current_player() == 1
    play(s, "B4-4")
    assert s.current_player() == 0 and s.opening == "done"
    t = LotusState(rule="pro")
    play(t, "W1-a1")
    play(t, "pass")
    assert t.current_player() == 1


def test_pro_opening_only_for_two_players():
    s = LotusState(rule="pro", players=3)
    play(s, "W3-a3")
    assert s.current_player() == 1


def test_pro_opening_trampoline_decision_on_either_stone():
    head = "lotus players=2 rule=pro trampoline=optional lane=1 shared=5 trampoline_at=4"
    s = LotusState.from_notation(head + "; track -; start WWWW WWW WW W BBBB BBB BB B; "
                                 "goal W:0 B:0; turn W opening=first")
    assert {"W4-4", "W4-4*goal"} <= set(names(s))
    play(s, "W3-3")
    assert {"W4-4", "W4-4*goal"} <= set(names(s))


# -- End of the game ------------------------------------------------------------------
def test_first_player_with_all_stones_in_goal_wins_and_returns():
    s = pos("13:BW", "BBBB BBB BB")
    play(s, "13-goal")
    assert s.is_terminal() and s.returns() == [1.0, 0.0] and s.winner() == 0
    assert s.legal_actions() == []
    assert s.stats() == {"goal": [10, 0], "remaining": [0, 9 * 15 + 2]}


def test_blocked_player_can_complete_another_players_set():
    s = pos("13:WB", "")
    assert s.current_player() == 0 and "13-goal" in names(s)
    play(s, "13-goal")
    assert s.winner() == 1
