"""`niwa play` through Click's runner: numbered moves, undo, hidden cards, the saved record."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from niwa.analysis.arena.game_record import read_records
from niwa.cli.main import main


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)     # `niwa play` saves its record in the working folder


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def test_play_bots_to_the_end_and_save_the_record_in_the_working_folder(tmp_path):
    r = run("play", "lotus", "--variant", "towers=1", "--p0", "random", "--p1", "greedy")
    assert r.exit_code == 0, r.output
    assert "final returns" in r.output and "plays" in r.output
    saved = list(tmp_path.glob("niwa-play-lotus-*.jsonl"))
    assert len(saved) == 1 and f"game record saved to {saved[0].name}" in r.output
    (record,) = read_records(str(saved[0]))       # replays legally to its result
    assert record.termination == "normal" and record.seats[1].spec == "greedy"


def test_play_numbers_moves_and_takes_a_number_or_a_name_with_undo_and_quit():
    r = run("play", "lotus", "--p1", "mcts:iters=50", "--record", "g.jsonl",
            input="W4-4\nundo\n1\nbogus\n99\nquit\n")
    assert r.exit_code == 0, r.output
    assert "Legal moves:" in r.output and "  1. W1-a1" in r.output and "undone" in r.output
    assert "unknown or illegal move 'bogus'" in r.output
    assert "there is no move 99: choose 1..6" in r.output and "bye" in r.output
    assert "player 1 (mcts:iters=50) plays" in r.output and "visits" in r.output
    (record,) = read_records("g.jsonl")
    # the undone W4-4 is gone; move 1 of the list was W1-a1, then the bot's reply
    assert record.termination == "quit" and [m.move for m in record.moves][0] == "W1-a1"
    assert len(record.moves) == 2 and record.moves[1].comment["visits"] > 0


def test_play_unknown_agent_lists_the_agents():
    r = run("play", "lotus", "--p1", "wizard")
    assert r.exit_code == 2
    listed = r.output.split("available: ")[1].split(", ")
    assert r.output.startswith("Error: unknown agent 'wizard'; available: alphabeta, ")
    assert {"alphabeta", "greedy", "human", "mcts", "random"} <= {a.strip() for a in listed}


def test_play_never_shows_a_human_the_opponents_hidden_hand_or_draws():
    from niwa.ext.registry import get_game

    start = get_game("haru").new(seed=1)
    hidden_hand = start.to_notation().split("hands ")[1].split(";")[0].split()[1][2:]
    r = run("play", "haru", "--p1", "random", "--seed", "1", "--no-record",
            input="Y4\n" + "1\n" * 6 + "quit\n")
    assert r.exit_code == 0, r.output
    assert "Legal moves:" in r.output and "revealed: player 0: Y4" in r.output
    before_reveal = r.output.split("revealed")[0]
    assert f"hand {hidden_hand}" not in before_reveal and "Red    score 0  hand ???" in r.output
    # the pond is drawn as a 5x5 grid; Red's draws stay hidden (while Red has a choice of
    # cards to draw from), Yellow's show
    assert r.output.count("~~~") >= 5 and "chance: a hidden draw" in r.output
    assert "chance: draw-R" not in r.output and "chance: draw-Y" in r.output
    assert not list(__import__("pathlib").Path(".").glob("*.jsonl"))
