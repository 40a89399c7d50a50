"""The deck-known solo Bonsai search (solver/solo.py, solver/solo_search.pyx): exact values
against a plain exhaustive search of the engine, the bound's admissibility, a recorded
game's round trip and `niwa solve --deck-known`'s errors."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

from niwa.analysis.arena.game_loop import play
from niwa.analysis.arena.game_record import append_record, read_game, record_of, seats_for
from niwa.cli.main import main
from niwa.ext.bonsai import new_initial
from niwa.ext.game import PLAYER_CHANCE, Rng
from niwa.solver.agents import make_agent
from niwa.solver.solo import (
    SoloError,
    deck_order,
    from_record,
    play_line,
    solve_solo,
    turns_of,
    unseen_cards,
    with_deck,
    with_deck_seed,
)
from niwa.solver.solo_search import SoloSearch, bound_of, canonical_hash


def run(*args):
    return CliRunner().invoke(main, list(args))


def resolve(s):
    while s.current_player() == PLAYER_CHANCE:
        s.apply(s.chance_outcomes()[0][0])
    return s


def exhaustive(s, memo):
    """The best final score below s, by trying everything (memo on the engine's own hash,
    which keeps the placement order: nothing of the search under test is used)."""
    if s.is_terminal():
        return s.scores()[0]
    key = s.hash()
    if key not in memo:
        best = -1
        for a in s.legal_actions():
            c = s.clone()
            c.apply(a)
            best = max(best, exhaustive(resolve(c), memo))
        memo[key] = best
    return memo[key]


def late_position(seed, deck_left, final_turn=False):
    """A deal played at random (seeded) to the first turn start with at most `deck_left`
    cards in the deck (or the last turn), its deck order known."""
    rng = random.Random(seed)
    s = with_deck_seed(new_initial(seed=seed, players=1), seed)
    while not s.is_terminal():
        if s.phase in ("action", "remove"):
            left = s.to_json()["deck_left"]
            if (final_turn and left == 0 and s.to_json()["final"] == 0) or \
                    (not final_turn and left <= deck_left):
                return s
        s.apply(rng.choice(s.legal_actions()))
        resolve(s)
    raise AssertionError("the game ended first")


@pytest.mark.parametrize("seed", range(8))
def test_last_turn_exact_equals_exhaustive_and_every_bound_holds(seed):
    s = late_position(seed, 0, final_turn=True)
    memo = {}
    truth = exhaustive(s.clone(), memo)
    r = SoloSearch(16).run(s, 0, -10000, [], 10**9, 60.0)
    assert r["complete"] and r["best"] == r["upper"] == truth
    assert play_line(s, r["line"]).scores()[0] == truth
    # the bound of the position and of every state one decision later
    assert bound_of(s) >= truth
    for a in s.legal_actions():
        c = resolve(s.child(a))
        assert bound_of(c) >= exhaustive(c, memo)


@pytest.mark.parametrize("seed", range(20, 26))
def test_two_turn_endings_exact_equals_exhaustive(seed):
    s = late_position(seed, 0)        # the deck just ran out: this turn and one more
    memo = {}
    truth = exhaustive(s.clone(), memo)
    r = SoloSearch(18).run(s, 0, -10000, [], 10**9, 60.0)
    assert r["complete"] and r["best"] == truth
    assert bound_of(s) >= truth


def test_bound_holds_along_a_searched_line_and_exact_never_exceeds_it():
    """Deeper endings (two cards left): the exact search's value never exceeds the bound,
    at the root and at every state of its best line."""
    for seed in range(30, 34):
        s = late_position(seed, 2)
        r = SoloSearch(18).run(s, 0, -10000, [], 10**9, 60.0)
        assert r["complete"]
        assert bound_of(s) >= r["best"]
        state = resolve(s.clone())
        for a in r["line"]:
            assert bound_of(state) >= r["best"]
            state.apply(a)
            resolve(state)
        assert state.is_terminal() and state.scores()[0] == r["best"]


def test_winning_mode_only_counts_lines_with_every_colour():
    s = late_position(3, 1)
    search = SoloSearch(18)
    score = search.run(s, 0, -10000, [], 10**9, 60.0)
    won = search.run(s, 1, -10000, [], 10**9, 60.0)
    assert score["complete"] and won["complete"]
    assert won["best"] <= score["best"]
    if won["best"] > -10000:
        final = play_line(s, won["line"])
        assert len(final.goals_claimed(0)) == 3 and final.scores()[0] == won["best"]


def test_the_table_hash_ignores_the_order_tiles_were_placed_in():
    a = new_initial(seed=1, players=1).resample_hidden(0, Rng(1))
    b = a.clone()
    # cultivate: wood then leaf, or leaf then wood, on the same cells
    for s, order in ((a, ("W", "L")), (b, ("L", "W"))):
        s.apply(s.string_to_action("cultivate"))
        for t in order:
            s.apply(s.string_to_action(f"place {t}"))
            cells = {"W": "W@1,1", "L": "L@0,1"}
            s.apply(s.string_to_action(cells[t]))
    assert a.tiles(0) != b.tiles(0) and sorted(a.tiles(0)) == sorted(b.tiles(0))
    assert canonical_hash(a) == canonical_hash(b)
    assert a.hash() != b.hash()


def test_deck_from_seed_is_reproducible_and_is_the_unseen_cards():
    start = new_initial(seed=4, players=1)
    one, two = with_deck_seed(start, 9), with_deck_seed(start, 9)
    assert deck_order(one) == deck_order(two) != deck_order(with_deck_seed(start, 10))
    assert sorted(deck_order(one)) == sorted(unseen_cards(start))
    header = with_deck_seed(solo_header(), 9)       # 'bonsai players=1': dealt from the seed
    assert deck_order(header) is not None and header.phase == "action"


def solo_header():
    from niwa.ext.registry import parse_position

    return parse_position("bonsai players=1")


def test_with_deck_refuses_unknown_and_wrong_cards():
    start = new_initial(seed=4, players=1)
    cards = unseen_cards(start)
    assert deck_order(with_deck(start, list(reversed(cards)))) == list(reversed(cards))
    with pytest.raises(SoloError, match="unknown card 'XX'"):
        with_deck(start, cards[:-1] + ["XX"])
    with pytest.raises(SoloError, match="does not match"):
        with_deck(start, cards[:-1])
    with pytest.raises(SoloError, match="players=1"):
        with_deck(new_initial(seed=4, players=2), cards)


def test_turns_of_cuts_a_line_at_each_action():
    names = ["keep", "cultivate", "place W", "W@1,1", "meditate 1:T", "gain L",
             "remove L@0,1", "meditate 0:PW"]
    assert turns_of(names) == [["keep", "cultivate", "place W", "W@1,1"],
                               ["meditate 1:T", "gain L"], ["remove L@0,1", "meditate 0:PW"]]


@pytest.fixture(scope="module")
def solo_record(tmp_path_factory):
    """A solo game played by a seeded MCTS agent and recorded as niwa records it."""
    path = tmp_path_factory.mktemp("solo") / "games.jsonl"
    spec = "mcts:iters=60"
    result = play(new_initial(seed=11, players=1), [make_agent(spec, seed=5)],
                  chance_rng=Rng(11))
    append_record(str(path), record_of(result, seats=seats_for([spec], [spec], "bonsai", [5]),
                                       deal_seed=11))
    return path


def test_record_round_trip_finds_at_least_the_score_obtained(solo_record):
    record = read_game(str(solo_record), 1)
    state, final = from_record(record)
    reveals = [m.move.split()[1] for m in record.moves
               if m.by == "chance" and m.move.startswith("reveal ")]
    assert deck_order(state) == reveals
    r = solve_solo(state, time_s=1.5, final=final)
    assert r.obtained == final.scores()[0]
    assert r.best_score >= r.obtained and r.upper_bound >= r.best_score
    assert r.win in ("yes", "no", "unknown")
    if r.obtained_won:
        assert r.win == "yes"
    assert play_line(state, [state.string_to_action(r.best_line[0])]) is not None


def test_cli_record_answers_could_it_have_been_won(solo_record):
    r = run("solve", "--record", str(solo_record), "--time", "1", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["best_score"] >= out["obtained"] and out["upper_bound"] >= out["best_score"]
    assert out["source"]["record"] == str(solo_record)
    text = run("solve", "--record", str(solo_record), "--time", "0.5")
    assert text.exit_code == 0, text.output
    for words in ("best score", "upper bound", "win possible", "the game    scored",
                  "best line (turn by turn):", "nodes"):
        assert words in text.output


def test_cli_late_position_is_exact():
    s = late_position(21, 0)
    r = run("solve", s.to_notation(), "--deck-known", "--time", "20", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["exact"] is True and out["best_score"] == out["upper_bound"]
    assert out["best_score"] == exhaustive(s.clone(), {})


@pytest.mark.parametrize("args, message", [
    (["bonsai", "--deck-seed", "1"], "players=1"),
    (["lotus", "--deck-seed", "1"], "solo Bonsai; this is a lotus position"),
    (["bonsai players=1", "--deck-known"], "goals are not drawn yet"),
    ([new_initial(seed=4, players=1).to_notation(), "--deck-known"], "deck order is not known"),
    (["bonsai players=1", "--deck-seed", "1", "--deck", "T"], "one deck source"),
    (["bonsai players=1", "--deck-seed", "1", "--algo", "mcts"], "--algo does not go"),
    (["bonsai players=1", "--deck-seed", "1", "--game", "2"], "--game and --ply go with"),
    (["--deck-known"], "give a POSITION"),
    (["lotus", "--ply", "3"], "--ply goes with --record"),
])
def test_cli_errors_are_one_line_with_status_2(args, message):
    r = run("solve", *args)
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_cli_deck_inconsistent_or_unknown_card():
    start = new_initial(seed=4, players=1)
    notation = start.to_notation()
    cards = unseen_cards(start)
    r = run("solve", notation, "--deck", " ".join(cards[:-1]))
    assert r.exit_code == 2 and "does not match the position's unseen cards" in r.output
    r = run("solve", notation, "--deck", " ".join(cards[:-1] + ["ZZ"]))
    assert r.exit_code == 2 and "unknown card 'ZZ'" in r.output


def test_cli_record_of_a_two_player_game_is_refused_with_deck_known(tmp_path):
    spec = "random"
    result = play(new_initial(seed=2, players=2), [make_agent(spec, seed=1),
                                                   make_agent(spec, seed=2)],
                  chance_rng=Rng(2))
    path = tmp_path / "two.jsonl"
    append_record(str(path), record_of(result, seats=seats_for([spec, spec], [spec, spec],
                                                               "bonsai", [1, 2]),
                                       deal_seed=2))
    r = run("solve", "--record", str(path), "--deck-known")
    assert r.exit_code == 2 and "2-player Bonsai game" in r.output
    # without --deck-known a record of any other game gives the position to solve
    r = run("solve", "--record", str(path), "--ply", "4", "--time", "0.5", "--json")
    assert r.exit_code == 0, r.output


def test_json_is_the_result_as_a_dict_and_a_node_budget_repeats_exactly():
    start = late_position(6, 6).information_state(0)        # its deck as a set again
    a = run("solve", start, "--deck-seed", "2", "--nodes", "3000", "--json")
    b = run("solve", start, "--deck-seed", "2", "--nodes", "3000", "--json")
    assert a.exit_code == 0 and b.exit_code == 0, a.output
    one, two = json.loads(a.output), json.loads(b.output)
    from dataclasses import fields

    from niwa.solver.solo import SoloResult

    assert set(one) == {f.name for f in fields(SoloResult)}
    assert one["source"] == {"deck_seed": 2} and one["threshold"] == 80
    assert sorted(one["deck"]) == sorted(unseen_cards(late_position(6, 6)))
    drop = ("time_s",)
    assert {k: v for k, v in one.items() if k not in drop} == \
        {k: v for k, v in two.items() if k not in drop}
    assert one["upper_bound"] >= one["best_score"] >= one["incumbent_score"]
    assert one["win"] in ("yes", "no", "unknown")
    if one["win"] == "yes":
        assert one["best_winning_score"] >= 80 and one["winning_line"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 140))
def test_slow_many_endings_exact_equals_exhaustive_and_bounds_hold(seed):
    """More deals than the default run: the last turn (or the last two) exactly, the bound
    at the position and at every state one decision later."""
    s = late_position(seed, 0, final_turn=seed % 2 == 0)
    memo = {}
    truth = exhaustive(s.clone(), memo)
    r = SoloSearch(18).run(s, 0, -10000, [], 10**9, 120.0)
    assert r["complete"] and r["best"] == truth
    assert bound_of(s) >= truth
    for a in s.legal_actions():
        c = resolve(s.child(a))
        assert bound_of(c) >= exhaustive(c, memo)
