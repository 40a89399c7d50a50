"""One test (at least) per sentence of rules/bonsai.md, on hand-built positions."""

import pytest

from niwa.ext.bonsai import CARDS, DECK_COUNTS, MAX_TREE_TILES, BonsaiState, from_notation
from niwa.ext.errors import NotationError

TILE = "WLFR"


def make(players=2, colours=("brown", "green", "orange"), status=None,
         market=("GW", "GL", "GF", "GR"), trees=None, supply=None, cards=None, gone=(),
         deck_first=None, top=None, turn="p0 phase=action", final="-", turns=4, **variant):
    """A position from its parts; the deck is whatever the rest leaves of the full deck
    (as an unknown set, or as a known order starting with `deck_first`)."""
    n = players
    head = {"players": n, "goals": "on" if colours else "off", "tokonoma": "off",
            "solo_level": 1, "discard_before_reveal": "off", **variant}
    sizes = "sl" if n <= 2 else "sml"
    status = status or {}
    goals = "goals " + (" ".join(f"{c}.{s}:{status.get(f'{c}.{s}', '-')}" for c in colours
                                 for s in sizes) if colours else "off")
    counts = dict(zip(CARDS, DECK_COUNTS[max(2, n)], strict=True))
    for c in list(market) + list(gone) + " ".join((cards or {}).values()).split():
        if c in counts:
            counts[c] -= 1
    if deck_first is not None:
        for c in deck_first:
            counts[c] -= 1
        order = list(deck_first) + [c for c in CARDS for _ in range(counts[c])]
        deck = "deck order " + (" ".join(order) or "-")
    else:
        deck = "deck set " + (" ".join(f"{c}*{k}" for c, k in counts.items() if k > 0) or "-")
    if top is not None:
        deck += f" top={top}"
    parts = ["bonsai " + " ".join(f"{k}={v}" for k, v in head.items()), goals,
             "market " + " ".join(market), deck, "gone " + (" ".join(gone) or "-")]
    for p in range(n):
        parts.append(f"p{p} tree {(trees or {}).get(p, '-')} supply "
                     f"{(supply or {}).get(p, 'W0 L0 F0 R0')} cards {(cards or {}).get(p, '-')}")
    parts.append(f"turn {turn} final={final} turns={turns}")
    return from_notation("; ".join(parts))


def names(s):
    return [s.action_to_string(a) for a in s.legal_actions()]


def cells(s, t):
    """Cells where the mover may place tile type t now (the state must offer 'place t')."""
    if f"place {t}" not in names(s):
        return set()
    c = s.clone()
    c.apply(f"place {t}")
    return {c.cell_of_action(a) for a in c.legal_actions()}


CULTIVATE = "p0 phase=place by=cultivate any=1 allow=W1,L1,F0,R0"
FULL_SUPPLY = "W3 L3 F3 R3"


def grow(tree, supply=FULL_SUPPLY, **kw):
    return make(trees={0: tree}, supply={0: supply}, turn=CULTIVATE, **kw)


# ---- components, deck, setup ------------------------------------------------------------
def test_deck_totals_by_player_count():
    assert [sum(DECK_COUNTS[n]) for n in (2, 3, 4)] == [32, 43, 47]
    for n, total in ((1, 32), (2, 32), (3, 43), (4, 47)):
        assert BonsaiState(players=n).to_json()["deck_left"] == total


def test_tile_bound_from_the_deck():
    # 1 bud + starting tiles (seat 3 has 4) + 2 slot tiles per card + every Master's tiles
    master_tiles = {"MA": 1, "MWW": 2, "MWL": 2, "MWLF": 3, "MWLR": 3, "MLL": 2, "MLF": 2,
                    "MLFF": 3, "MLR": 2}
    for n in (1, 2, 3, 4):
        counts = dict(zip(CARDS, DECK_COUNTS[max(2, n)], strict=True))
        bound = 1 + (2 if n == 1 else n) + 2 * sum(counts.values()) + sum(
            k * counts[c] for c, k in master_tiles.items())
        assert bound == MAX_TREE_TILES[n] <= 128


def test_starting_tiles_by_seat_and_solo():
    s = BonsaiState(players=4)
    assert [s.supply(p) for p in range(4)] == [
        {"W": 1, "L": 0, "F": 0, "R": 0}, {"W": 1, "L": 1, "F": 0, "R": 0},
        {"W": 1, "L": 1, "F": 1, "R": 0}, {"W": 1, "L": 1, "F": 1, "R": 1}]
    assert BonsaiState(players=1).supply(0) == {"W": 1, "L": 1, "F": 0, "R": 0}


def test_setup_goal_draw_then_four_cards_then_seat_0():
    s = BonsaiState(players=2)
    assert s.is_chance_node() and len(s.chance_outcomes()) == 10
    s.apply(s.legal_actions()[0])                       # brown, green, orange
    assert s.goals_in_play() == ["brown.s", "brown.l", "green.s", "green.l", "orange.s",
                                 "orange.l"]           # 1-2 players drop the middle tile
    for _ in range(4):
        assert s.is_chance_node()
        s.apply(s.legal_actions()[0])
    assert s.current_player() == 0 and None not in s.market()
    s3 = BonsaiState(players=3)
    s3.apply(s3.legal_actions()[-1])                     # orange, pink, blue
    assert s3.goals_in_play() == [f"{c}.{z}" for c in ("orange", "pink", "blue") for z in "sml"]


def test_goals_off_has_no_goal_draw():
    s = BonsaiState(players=3, goals="off")
    assert s.legal_actions() and all(s.action_to_string(a).startswith("reveal")
                                     for a in s.legal_actions())
    assert "goals off" in s.to_notation()


# ---- geometry and placement ---------------------------------------------------------------
def test_bud_neighbours_outside_the_pot():
    # even row: (x+1,y+1) (x+1,y) (x+1,y-1) (x,y-1) (x-1,y) (x,y+1); only two are off the pot
    s = grow("-")
    assert cells(s, "W") == {(1, 1), (0, 1)} == cells(s, "L")


def test_odd_row_neighbours():
    # odd row: (x,y+1) (x+1,y) (x,y-1) (x-1,y-1) (x-1,y) (x-1,y+1)
    s = grow("W0,1")
    assert cells(s, "W") == {(1, 1), (0, 2), (-1, 2), (-1, 1)}


def test_pot_feet_are_free_and_pot_cells_never_are():
    s = grow("W0,1 W-1,1 W-2,1 W-3,0 W-2,-1")
    assert (-2, -2) in cells(s, "W")
    s = grow("W1,1 W2,1 W3,1 W4,1 W4,0 W4,-1")
    got = cells(s, "W")
    assert (3, -2) in got
    pot = {(x, 0) for x in range(-2, 4) if x} | {(x, -1) for x in range(-1, 4)} | \
        {(x, -2) for x in range(-1, 3)}
    assert len(pot) + 1 == 15 and not got & pot
    with pytest.raises(NotationError, match="pot"):
        grow("W1,0")


def test_leaf_needs_wood_flower_needs_leaf():
    s = grow("W0,1 L1,1")
    assert cells(s, "L") == {(0, 2), (-1, 2), (-1, 1)}            # next to a wood
    assert cells(s, "F") == {(1, 2), (2, 1), (0, 2)}              # next to the leaf


def test_fruit_needs_two_adjacent_leaves_and_no_fruit():
    s = grow("W0,1 L1,1 L0,2")
    # (1, 2) sees the leaves (1, 1) and (0, 2) on consecutive sides; (2, 1) sees only one
    assert cells(s, "R") == {(1, 2)}
    s = grow("W0,1 L1,1 L-1,1")          # two leaves, not next to each other around a cell
    assert cells(s, "R") == set()
    tree = "W0,1 W0,2 L1,1 L1,2 L1,3 L-1,1 L-1,2 L0,3"
    assert cells(grow(tree), "R") == {(2, 1), (2, 3), (0, 4), (-2, 2), (-1, 3)}
    # a fruit on (-2, 2) rules out its neighbour (-1, 3)
    assert cells(grow(tree + " R-2,2"), "R") == {(2, 1), (2, 3), (0, 4)}


def test_wood_must_touch_wood_not_leaf():
    s = grow("L1,1")
    assert cells(s, "W") == {(0, 1)}


def test_notation_rejects_tiles_not_connected_by_the_rules():
    for tree, what in (("W2,2", "joined"), ("L2,2", "leaf"), ("W0,1 F2,2", "flower"),
                       ("W0,1 L1,1 R2,1", "fruit"), ("W0,1 L1,1 L0,2 R1,2 R0,3", "fruit")):
        with pytest.raises(NotationError, match=what):
            make(trees={0: tree})


# ---- a turn: Meditate ----------------------------------------------------------------
@pytest.mark.parametrize("slot,gain", [(0, {}), (2, {"W": 1, "F": 1}), (3, {"L": 1, "R": 1})])
def test_slot_rewards(slot, gain):
    s = make(market=("PW", "PL", "PF", "PR"))
    s.apply(900 + slot)
    want = {t: gain.get(t, 0) for t in TILE}
    assert s.supply(0) == want
    assert s.cards(0) == {("PW", "PL", "PF", "PR")[slot]: 1}


def test_slot_1_gives_wood_or_leaf():
    s = make(market=("PW", "PL", "PF", "PR"))
    s.apply("meditate 1:PL")
    assert names(s) == ["gain W", "gain L"]
    s.apply("gain L")
    assert s.supply(0)["L"] == 1


def test_market_slides_away_from_the_deck_and_refills_slot_0():
    s = make(market=("PW", "PL", "PF", "PR"), deck_first=["PG"])
    s.apply("meditate 2:PF")
    assert s.market() == [None, "PW", "PL", "PR"]
    assert s.is_chance_node() and s.chance_outcomes() == [(960 + CARDS.index("PG"), 1.0)]
    s.apply("reveal PG")
    assert s.market() == ["PG", "PW", "PL", "PR"]


@pytest.mark.parametrize("card,gain", [("MWW", "WW"), ("MWL", "WL"), ("MWLF", "WLF"),
                                       ("MWLR", "WLR"), ("MLL", "LL"), ("MLF", "LF"),
                                       ("MLFF", "LFF"), ("MLR", "LR")])
def test_each_master_gives_its_tiles(card, gain):
    s = make(players=4, colours=None, market=(card, "T", "T", "T"))
    s.apply(f"meditate 0:{card}")
    assert s.supply(0) == {t: gain.count(t) for t in TILE}
    assert s.cards(0) == {card: 1}


def test_master_any_lets_the_player_choose():
    s = make(market=("MA", "T", "T", "T"))
    s.apply("meditate 0:MA")
    assert names(s) == ["gain W", "gain L", "gain F", "gain R"]
    s.apply("gain R")
    assert s.supply(0)["R"] == 1


@pytest.mark.parametrize("card,kind", [("HW", "W"), ("HL", "L"), ("HF", "F"), ("HR", "R")])
def test_each_helper_places_one_any_and_one_of_its_type(card, kind):
    tree = "W0,1 W0,2 W0,3 W0,4 L1,1 L1,2 L1,3 L-1,1 L-1,2"
    s = make(market=(card, "T", "T", "T"), trees={0: tree}, supply={0: "W2 L2 F2 R2"})
    s.apply(f"meditate 0:{card}")
    assert "phase=place by=helper any=1 allow=" + ",".join(
        f"{t}{int(t == kind)}" for t in TILE) in s.to_notation()
    placed = 0
    while s.phase in ("place", "cell"):
        s.apply(f"place {kind}")
        s.apply(s.legal_actions()[0])
        placed += 1
    assert placed == 2 and s.supply(0)[kind] == 0    # its own type, then "any" as that type
    assert s.cards(0) == {card: 1}


def test_helper_may_use_tiles_just_taken_with_the_card():
    s = make(market=("T", "T", "HW", "T"))
    s.apply("meditate 2:HW")                          # slot 2 gives wood + flower
    assert names(s) == ["place W", "stop"]            # the new wood may go on the tree
    s.apply("place W")
    s.apply(s.legal_actions()[0])
    assert s.supply(0) == {"W": 0, "L": 0, "F": 1, "R": 0}


def test_tool_growth_and_parchment_go_to_the_display_or_the_pile():
    s = make(market=("T", "GW", "PW", "T"))
    s.apply("meditate 0:T")
    assert s.cards(0) == {"T": 1} and s.capacity(0) == 7


# ---- Cultivate ---------------------------------------------------------------------
def test_seishi_allows_one_any_one_wood_one_leaf():
    s = make(trees={0: "W0,1 W0,2 L1,1 L1,2"}, supply={0: "W3 L3 F3 R3"})
    s.apply("cultivate")
    assert "allow=W1,L1,F0,R0" in s.to_notation() and "any=1" in s.to_notation()
    for t in "WWL":                                   # wood, wood (the "any"), leaf
        s.apply(f"place {t}")
        s.apply(s.legal_actions()[0])
    assert s.phase not in ("place", "cell")           # nothing left to place with
    assert s.tiles(0).__len__() == 8


def test_growth_cards_add_placements_of_their_type():
    s = make(trees={0: "W0,1 W0,2 L1,1 L1,2"}, supply={0: "W0 L0 F3 R0"},
             cards={0: "GF GF"}, market=("PW", "PL", "PF", "PR"))
    s.apply("cultivate")
    for _ in range(3):                                 # two Growth flowers + the any
        s.apply("place F")
        s.apply(s.legal_actions()[0])
    assert s.supply(0)["F"] == 0


def test_cultivate_may_place_nothing():
    s = make(supply={0: "W0 L0 F0 R0"})
    s.apply("cultivate")
    assert s.current_player() == 1 and s.phase == "action"


# ---- goals ----------------------------------------------------------------------
def chain(n):
    """Bud plus n-1 woods straight up."""
    return " ".join(f"W0,{y}" for y in range(1, n))


@pytest.mark.parametrize("woods,met", [(7, ""), (8, "s"), (10, "sm"), (12, "sml")])
def test_brown_goal_levels(woods, met):
    s = make(players=3, trees={0: chain(woods)})
    assert [z for z in "sml" if s.goal_met(0, f"brown.{z}")] == list(met)


@pytest.mark.parametrize("right,left,met", [(4, 0, ""), (5, 0, "s"), (4, 3, ""), (7, 0, "sm"),
                                            (3, 9, "sml")])
def test_green_goal_counts_the_largest_leaf_group(right, left, met):
    leaves = [f"L1,{y}" for y in range(1, right + 1)] + [f"L-1,{y}" for y in range(2, left + 2)]
    s = make(players=3, trees={0: chain(12) + " " + " ".join(leaves)})
    assert s.largest_leaf_group(0) == max(right, left)
    assert [z for z in "sml" if s.goal_met(0, f"green.{z}")] == list(met)


@pytest.mark.parametrize("fruits,met", [(2, ""), (3, "s"), (4, "sm"), (5, "sml")])
def test_orange_goal_levels(fruits, met):
    tree = chain(11) + " " + " ".join(f"L1,{y}" for y in range(1, 11)) + " " + \
        " ".join(f"R2,{y}" for y in range(1, 2 * fruits, 2))
    s = make(players=3, trees={0: tree})
    assert [z for z in "sml" if s.goal_met(0, f"orange.{z}")] == list(met)


def side_flowers(right, left):
    woods = [f"W{x},1" for x in range(1, 8)] + ["W0,1"] + [f"W{-x},1" for x in range(1, 8)]
    leaves = [f"L{x},2" for x in range(-8, 8)]
    flowers = [f"F{x},3" for x in range(4, 4 + right)] + [f"F{x},3" for x in range(-2, -2 - left, -1)]
    return " ".join(woods + leaves + flowers)


@pytest.mark.parametrize("right,left,met", [(2, 2, ""), (3, 0, "s"), (0, 3, "s"), (2, 4, "sm"),
                                            (5, 1, "sml"), (1, 5, "sml")])
def test_pink_goal_flowers_on_one_same_side(right, left, met):
    s = make(players=3, colours=("pink", "blue", "green"), trees={0: side_flowers(right, left)})
    assert [z for z in "sml" if s.goal_met(0, f"pink.{z}")] == list(met)


BELOW_LEFT = "W0,1 W-1,1 W-2,1 W-3,0 W-2,-1 W-2,-2"
RIGHT = "W1,1 W2,1 W3,1 W4,1"
BELOW_RIGHT = RIGHT + " W4,0 W4,-1 W3,-2"
LEFT = "W0,1 W-1,1 W-2,1"


@pytest.mark.parametrize("tree,met", [
    ("W1,1 W2,1 W3,1", ""),              # (3, 1) is odd row, x = 3: not past the pot
    (LEFT, ""),                          # left only: the crack is on the right
    (RIGHT, "s"),
    ("W1,1 W2,1 W2,2 W3,2", "s"),        # even row, x = 3 protrudes
    (RIGHT + " " + LEFT, "sm"),
    (RIGHT + " " + BELOW_LEFT, "sml"),
    (BELOW_RIGHT + " " + LEFT, "sml"),
    ("W1,1 W2,1 W2,2 W3,2 W0,1 W-1,1", "s"),   # (-1, 1): odd row, x = -1 is not past the pot
])
def test_blue_goal_levels(tree, met):
    tree = " ".join(dict.fromkeys(tree.split()))
    s = make(players=3, colours=("pink", "blue", "green"), trees={0: tree})
    assert [z for z in "sml" if s.goal_met(0, f"blue.{z}")] == list(met)


def after_action(tree, supply, status=None, players=2, **kw):
    """Seat 0 places one wood by Cultivate and stops; the goal check follows."""
    s = make(players=players, trees={0: tree}, supply={0: supply}, status=status,
             turn="p0 phase=place by=cultivate any=0 allow=W1,L0,F0,R0", **kw)
    s.apply("place W")
    s.apply(s.legal_actions()[0])
    return s


def test_claim_a_goal_after_the_action():
    s = after_action(chain(7), "W1 L0 F0 R0")
    assert s.phase == "goals" and names(s) == ["claim brown.s", "renounce brown.s"]
    s.apply("claim brown.s")
    assert s.goals_claimed(0) == ["brown.s"] and s.score_breakdown()[0]["goals"] == 5
    assert "brown.s:c0" in s.to_notation()


def test_goals_are_checked_once_after_the_whole_action():
    s = make(trees={0: chain(6)}, supply={0: "W3 L0 F0 R0"}, cards={0: "GW"})
    s.apply("cultivate")
    for _ in range(2):
        s.apply("place W")
        s.apply(s.legal_actions()[0])
        assert s.phase in ("place", "cell")           # 8 woods already, no goal node yet
    s.apply("stop")
    assert s.phase == "goals"


def test_renounced_tile_is_lost_but_harder_ones_stay_open():
    s = after_action(chain(7), "W1 L0 F0 R0", players=3)
    s.apply("renounce brown.s")
    assert s.current_player() == 1 and "brown.s:x0" in s.to_notation()
    s = make(players=3, trees={0: chain(9)}, supply={0: "W1 L0 F0 R0"},
             status={"brown.s": "x0"}, turn="p0 phase=place by=cultivate any=0 allow=W1,L0,F0,R0")
    s.apply("place W")
    s.apply(s.legal_actions()[0])
    assert names(s) == ["claim brown.m", "renounce brown.m"]


def test_two_tiles_of_one_colour_met_at_once_claim_at_most_one():
    s = after_action(chain(11), "W1 L0 F0 R0", players=3)
    assert names(s) == ["claim brown.s", "renounce brown.s"]
    s.apply("renounce brown.s")
    assert names(s) == ["claim brown.m", "renounce brown.m"]
    s.apply("claim brown.m")
    assert s.current_player() == 1                     # brown.l (met) is not offered
    assert s.goals_claimed(0) == ["brown.m"]


def test_a_claimed_tile_is_gone_for_the_others_and_one_per_colour():
    s = after_action(chain(7), "W1 L0 F0 R0", status={"brown.s": "c1"})
    assert s.current_player() == 1                     # brown.s taken, brown.l not met
    s = after_action(chain(11), "W1 L0 F0 R0", status={"brown.s": "c0"})
    assert s.current_player() == 1                     # seat 0 already has a brown tile


def test_claimed_goals_are_kept_when_tiles_are_removed():
    s = make(trees={1: "L1,1 L0,1"}, status={"green.s": "c1"},
             turn="p1 phase=remove")
    s.apply("remove L@1,1")
    assert s.goals_claimed(1) == ["green.s"] and s.score_breakdown()[1]["goals"] == 6


# ---- removal -----------------------------------------------------------------------
def test_removal_offered_at_turn_start_when_no_wood_fits():
    s = make(trees={1: "L1,1 L0,1"}, turn="p0 phase=action")
    s.apply("cultivate")                              # seat 0 places nothing: turn over
    assert s.current_player() == 1 and s.phase == "remove"
    assert names(s) == ["remove L@1,1", "remove L@0,1", "keep"]
    s.apply("keep")
    assert s.phase == "action"


def test_removal_takes_the_fewest_tiles_with_unsupported_flowers_and_fruits():
    s = make(trees={0: "L1,1 L0,1 F1,2"}, turn="p0 phase=remove")
    assert names(s) == ["remove L@0,1", "keep"]       # L1,1 would take the flower too
    s = make(trees={0: "L1,1 F0,1"}, turn="p0 phase=remove")
    assert names(s) == ["remove F@0,1", "keep"]
    s = make(trees={0: "L1,1 L0,1 F1,2 F0,2"}, turn="p0 phase=remove")
    # (0, 2) touches both leaves, (1, 2) only (1, 1): removing L0,1 loses nothing else
    assert names(s) == ["remove L@0,1", "keep"]
    s.apply("remove L@0,1")
    assert [t for t in s.tiles(0)] == [(0, 0, "W"), (1, 1, "L"), (1, 2, "F"), (0, 2, "F")]
    s = make(trees={0: "L1,1 L0,1 F1,2 F-1,2"}, turn="p0 phase=remove")
    assert names(s) == ["remove L@1,1", "remove L@0,1", "keep"]
    s.apply("remove L@1,1")
    assert s.tiles(0) == [(0, 0, "W"), (0, 1, "L"), (-1, 2, "F")]
    assert s.phase == "action" and not s.wood_blocked(0)


# ---- discard, capacity, reveal order -----------------------------------------------
def test_discard_down_to_capacity_after_the_reveal():
    s = make(market=("T", "T", "GW", "PW"), supply={0: "W3 L2 F0 R0"})
    s.apply("meditate 3:PW")                          # +leaf +fruit: 7 tiles, capacity 5
    assert s.is_chance_node()                         # the reveal comes first
    s.apply(s.legal_actions()[0])
    # 2 to discard: a fruit first would leave nothing of type >= R for the second
    assert s.phase == "discard" and names(s) == ["discard W", "discard L"]
    s.apply("discard L")
    assert names(s) == ["discard L", "discard R"]     # non-decreasing order: L or later
    s.apply("discard L")
    assert s.supply(0) == {"W": 3, "L": 1, "F": 0, "R": 1} and s.current_player() == 1


def test_discard_before_reveal_variant():
    s = make(market=("T", "T", "GW", "PW"), supply={0: "W3 L2 F0 R0"},
             discard_before_reveal="on")
    s.apply("meditate 3:PW")
    assert s.phase == "discard"
    s.apply("discard W")
    s.apply("discard W")
    assert s.is_chance_node()


def test_each_tool_adds_two_capacity():
    s = make(market=("T", "T", "GW", "PW"), supply={0: "W3 L2 F0 R0"}, cards={0: "T"})
    s.apply("meditate 3:PW")
    s.apply(s.legal_actions()[0])
    assert s.current_player() == 1                    # 7 tiles fit a capacity of 7


# ---- end of the game ------------------------------------------------------------------
@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_last_reveal_gives_everyone_one_more_turn(players):
    market = ("T", "T", "T", "GW") if players > 1 else ("T", "T", "T", "GW")
    s = make(players=players, colours=("brown", "green", "orange"), market=market,
             deck_first=None)
    # leave exactly one card in the deck: put every other card in seat 0's hand
    counts = dict(zip(CARDS, DECK_COUNTS[max(2, players)], strict=True))
    for c in market:
        counts[c] -= 1
    hand = [c for c in CARDS for _ in range(counts[c])]
    last = hand.pop()
    s = make(players=players, market=market, cards={0: " ".join(hand)})
    assert s.to_json()["deck_left"] == 1
    s.apply("meditate 3:GW")
    s.apply(f"reveal {last}")
    while s.phase in ("discard", "goals"):
        s.apply(s.legal_actions()[0])
    turns = 0
    while not s.is_terminal():
        assert s.current_player() == (turns + 1) % players
        s.apply("cultivate")
        while s.phase in ("discard", "goals", "place", "cell"):
            s.apply(s.legal_actions()[-1])
        turns += 1
    assert turns == players


# ---- scoring --------------------------------------------------------------------------
def test_worked_scoring_example_by_hand():
    # Tree of seat 0 (bud W0,0):   W0,1  L1,1  L0,2  L-1,2  R1,2  F2,1  F-1,1
    # leaves:  3 leaves x 3                                  =  9
    # flowers: F2,1 touches L1,1 and R1,2; its other 4 sides are empty or pot -> 4
    #          F-1,1 touches L-1,2 and W0,1; 4 free sides (two of them pot)   -> 4   =  8
    # fruits:  1 x 7                                         =  7
    # parchments: PL 1 per leaf (3) + PM 2 per Master (MWL, MA: 4) + PG 2 per Growth
    #          (GW: 2)                                        =  9
    # goals:   green.s claimed earlier                        =  6
    # total 9 + 8 + 7 + 9 + 6                                 = 39
    s = make(trees={0: "W0,1 L1,1 L0,2 L-1,2 R1,2 F2,1 F-1,1"},
             cards={0: "PL PM PG MWL MA GW"}, status={"green.s": "c0"})
    assert s.score_breakdown()[0] == {"leaves": 9, "flowers": 8, "fruits": 7,
                                      "parchments": 9, "goals": 6, "total": 39}


def test_flower_sides_next_to_the_pot_count_and_supply_scores_nothing():
    s = make(trees={0: "L1,1 F2,1"}, supply={0: "W5 L0 F0 R0"})
    # F2,1: neighbours (2,2) (3,1) empty, (2,0) (1,0) pot, (1,1) leaf, (1,2) empty -> 5
    assert s.score_breakdown()[0]["flowers"] == 5
    assert s.score_breakdown()[0]["total"] == 3 + 5


@pytest.mark.parametrize("card,want", [("PW", 3), ("PL", 3), ("PF", 2), ("PR", 2),
                                       ("PG", 4), ("PH", 2), ("PM", 6)])
def test_each_parchment(card, want):
    # tree: wood bud W0,1 W1,1 (3), leaves L0,2 L1,2 L2,1 (3), flower F1,3 (1), fruit R2,2 (1);
    # held: GW GL (2 Growth), HW (1 Helper), MWW MLL MA (3 Masters)
    tree = "W0,1 W1,1 L0,2 L1,2 L2,1 R2,2 F1,3"
    s = make(trees={0: tree}, cards={0: f"{card} GW GL HW MWW MLL MA"},
             market=("T", "T", "T", "GR"))
    assert s.score_breakdown()[0]["parchments"] == want


def over(scores_trees, players=2):
    counts = dict(zip(CARDS, DECK_COUNTS[max(2, players)], strict=True))
    hand = [c for c in CARDS for _ in range(counts[c]) if c not in ("T",)]
    tools = ["T"] * counts["T"]
    return make(players=players, market=("-", "-", "-", "-"), trees=scores_trees,
                cards={0: " ".join(hand + tools)}, turn="p1 phase=over", final=0, turns=30)


def test_tie_goes_to_the_latest_seat():
    counts = dict(zip(CARDS, DECK_COUNTS[2], strict=True))
    hand = " ".join(c for c in CARDS if not c.startswith("P") for _ in range(counts[c]))
    s = make(market=("PW", "PL", "PF", "PR"), cards={0: hand, 1: "PG PH PM"},
             trees={0: "L1,1", 1: "L1,1"}, turn="p1 phase=over", final=0, turns=30)
    # seat 0: leaf 3; seat 1: leaf 3 + PG/PH/PM with no Growth/Helper/Master = 3
    assert s.scores() == [3, 3] and s.returns() == [0.0, 1.0]
    s = make(market=("PW", "PL", "PF", "PR"), cards={0: hand, 1: "PG PH PM"},
             trees={0: "L1,1 L0,1", 1: "L1,1"}, turn="p1 phase=over", final=0, turns=30)
    assert s.returns() == [1.0, 0.0]


# ---- solo --------------------------------------------------------------------------
def solo(**kw):
    return make(players=1, colours=("brown", "green", "orange"), **kw)


def test_solo_meditate_discards_the_card_nearer_the_deck():
    s = solo(market=("T", "GW", "GL", "GF"), deck_first=["PW", "PL"])
    s.apply("meditate 2:GL")
    assert s.market() == [None, None, "T", "GF"] and "gone GW" in s.to_notation()
    s.apply("reveal PW")
    s.apply("reveal PL")
    assert s.market() == ["PL", "PW", "T", "GF"]


def test_solo_meditate_slot_0_reveals_and_discards_the_next_card():
    s = solo(market=("T", "GW", "GL", "GF"), deck_first=["PW", "PL"])
    s.apply("meditate 0:T")
    assert "burn=1" in s.to_notation()
    s.apply("reveal PW")                              # discarded
    s.apply("reveal PL")                              # refills slot 0
    assert s.market() == ["PL", "GW", "GL", "GF"] and "gone PW" in s.to_notation()


def test_solo_cultivate_discards_the_slot_3_card():
    s = solo(market=("T", "GW", "GL", "GF"), deck_first=["PW"])
    s.apply("cultivate")
    assert s.market() == [None, "T", "GW", "GL"] and "gone GF" in s.to_notation()
    s.apply("reveal PW")
    assert s.market() == ["PW", "T", "GW", "GL"]


@pytest.mark.parametrize("level,threshold", [(1, 80), (2, 100), (3, 120), (4, 140)])
def test_solo_win_levels(level, threshold):
    counts = dict(zip(CARDS, DECK_COUNTS[2], strict=True))
    leaves = " ".join(f"L1,{y}" for y in range(1, 11)) + " " + \
        " ".join(f"L-1,{y}" for y in range(2, 12))
    tree = chain(12) + " " + leaves                  # 20 leaves: 60 points
    # goals brown.l (15), green.l (12), orange.s (9): 36 -> 96 points before parchments
    hand = " ".join(c for c in CARDS for _ in range(counts[c]) if not c.startswith("P"))
    for extra, total in ((False, 96), (True, 96 + 12 + 20)):   # PW: 12 woods, PL: 20 leaves
        cards = hand + " PW PL" if extra else hand
        gone = [c for c in CARDS if c.startswith("P") and not (extra and c in ("PW", "PL"))]
        s = make(players=1, market=("-", "-", "-", "-"), trees={0: tree}, cards={0: cards},
                 gone=gone, status={"brown.l": "c0", "green.l": "c0", "orange.s": "c0"},
                 turn="p0 phase=over", final=0, turns=20, solo_level=level)
        assert s.scores() == [total]
        assert s.returns() == [1.0 if total >= threshold else 0.0]


def test_solo_needs_a_goal_of_each_colour():
    counts = dict(zip(CARDS, DECK_COUNTS[2], strict=True))
    hand = " ".join(c for c in CARDS for _ in range(counts[c]))
    tree = chain(12) + " " + " ".join(f"L1,{y}" for y in range(1, 11))
    s = make(players=1, market=("-", "-", "-", "-"), trees={0: tree}, cards={0: hand},
             status={"brown.l": "c0", "green.l": "c0"}, turn="p0 phase=over", final=0,
             turns=20)
    assert s.scores()[0] >= 80 and s.returns() == [0.0]


def test_solo_forbids_goals_off():
    from niwa.ext.errors import VariantError
    with pytest.raises(VariantError):
        BonsaiState(players=1, goals="off")


# ---- tokonoma, information -----------------------------------------------------------
def test_tokonoma_puts_parchments_in_the_top_half():
    s = BonsaiState(players=2, goals="off", tokonoma="on")
    # 25 other cards: top half 12 + 7 parchments = 19
    assert "top=19" in s.to_notation()
    probs = dict((s.action_to_string(a), p) for a, p in s.chance_outcomes())
    assert probs["reveal PW"] == pytest.approx(1 / 19)
    assert probs["reveal T"] == pytest.approx(12 / 19 * 3 / 25)
    assert sum(probs.values()) == pytest.approx(1)
    s = make(tokonoma="on", top=2, market=("-", "T", "T", "GW"),
             cards={0: "PW PL PF PR PG"}, turn="p0 phase=reveal")
    probs = dict((s.action_to_string(a), p) for a, p in s.chance_outcomes())
    assert probs == {"reveal PH": 0.5, "reveal PM": 0.5}


def test_resample_hidden_orders_the_unseen_deck_only():
    s = make(market=("T", "T", "GW", "PW"))
    r = s.resample_hidden(0, 5)
    before, after = s.to_notation().split("; "), r.to_notation().split("; ")
    assert "deck order" in after[3] and before[:3] == after[:3] and before[4:] == after[4:]
    assert sorted(after[3].split()[2:]) == sorted(
        c for tok in before[3].split()[2:] for c in [tok.split("*")[0]] *
        int(tok.split("*")[1] if "*" in tok else 1))
    assert r.information_state(0) == s.to_notation()


def test_notation_rejects_card_counts_above_the_deck_and_unknown_cards():
    with pytest.raises(NotationError, match="above"):
        make(cards={0: "T T T T"})
    with pytest.raises(NotationError, match="unknown card"):
        make(cards={0: "XYZ"})


def test_tile_bound_enforced_by_notation():
    tree = " ".join(f"W0,{y}" for y in range(1, 125))   # 125 tiles with the bud
    assert len(make(players=4, trees={0: tree}).tiles(0)) == 125
    with pytest.raises(NotationError, match="at most 125"):
        make(players=4, trees={0: tree + " W0,125"})
    with pytest.raises(NotationError, match="at most 79"):
        make(players=2, trees={0: " ".join(f"W0,{y}" for y in range(1, 80))})
    with pytest.raises(NotationError, match="at most 125"):
        make(players=4, trees={0: tree}, supply={0: "W1 L0 F0 R0"})   # 126 acquired tiles
    # 124 tiles with the bud plus one wood in the supply: the 125th tile goes 124 rows up
    s = make(players=4, trees={0: " ".join(tree.split()[:-1])}, supply={0: "W1 L0 F0 R0"},
             turn=CULTIVATE)
    got = cells(s, "W")
    assert (0, 124) in got and (-1, 124) in got and (1, 1) in got and len(got) == 2 * 123 + 2
    s.apply("place W")
    s.apply(s.legal_actions()[-1])
    assert len(s.tiles(0)) == 125
