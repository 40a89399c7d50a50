"""niwa replay, niwa show --moves and niwa review through Click's runner."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.arena.game_record import GameRecord, Move, Seat, read_records
from niwa.analysis.arena.tournament import make_config, run_tournament
from niwa.cli.main import main
from niwa.ext.registry import parse_position

TINY = "lotus towers=2 lane=1 shared=3 trampoline_at=3"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module", params=["lotus", "haru", "bonsai"])
def tournament(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param)
    config, _ = make_config(request.param, ["random", "greedy", "mcts:iters=20"], games=2,
                            seed=3)
    run_tournament(config, str(out), LocalExecutor(1), progress=False)
    return out


def test_replay_reproduces_every_recorded_final_position_exactly(tournament):
    """Haru's hidden draws and Bonsai's deck are chance outcomes held in the record, so the
    replayed end is the very position the game ended in."""
    path = tournament / "games.jsonl"
    lines = path.read_text().splitlines()
    with open(tournament / "games.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(lines) == len(rows) == 6
    for number, (line, row) in enumerate(zip(lines, rows, strict=True), 1):
        recorded = json.loads(line)
        r = run("replay", path, "--game", number, "--no-moves")
        assert r.exit_code == 0, r.output
        shown = r.output.rstrip("\n").splitlines()[-1]
        assert shown == recorded["final"]
        assert f"{row['plies']} plies" in r.output
        final = parse_position(shown)
        assert final.is_terminal()
        assert [repr(float(x)) for x in final.returns()] == [row["result_0"], row["result_1"]]


def test_replay_shows_any_ply_with_the_moves_that_led_there(tournament):
    path = tournament / "games.jsonl"
    record = read_records(str(path))[0]
    r = run("replay", path, "--game", 1, "--ply", 0)
    assert r.exit_code == 0 and r.output.rstrip().endswith(record.start)
    assert "position after ply 0 of" in r.output
    r = run("replay", path, "--game", 1, "--ply", 3)
    assert r.exit_code == 0 and "     3. " in r.output and "     4. " not in r.output
    assert r.output.rstrip().splitlines()[-1] == record.replay(3).to_notation()
    r = run("replay", path, "--ply", 2)
    assert r.exit_code == 2 and "holds 6 games: choose one with --game N" in r.output
    r = run("replay", path, "--game", 1, "--ply", 100_000)
    assert r.exit_code == 2 and "ply 100000 is out of range" in r.output


def test_show_applies_a_move_list_of_names_or_ids():
    r = run("show", "lotus", "--moves", "W1-a1 B1-a1, W2-b2")
    assert r.exit_code == 0, r.output
    assert "after 3 plies: W1-a1 B1-a1 W2-b2" in r.output
    assert r.output.rstrip().endswith("track a1:WB b2:W; start WWWW WWW W BBBB BBB BB; "
                                      "goal W:0 B:0; turn B")
    start = parse_position("lotus")
    first = start.legal_actions()[0]
    r = run("show", "lotus", "--moves", str(first))
    assert f"after 1 plies: {start.action_to_string(first)}" in r.output
    # Bonsai: names with spaces (and a chance outcome) are matched whole
    r = run("show", "bonsai", "--moves", "goals brown+green+orange reveal GF", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["notation"].startswith("bonsai")
    # Haru: a joint move is one move per seat, in seat order
    from niwa.ext.registry import get_game

    haru = get_game("haru").new(seed=1)
    yellow, red = haru.legal_actions(0)[0], haru.legal_actions(1)[0]
    names = f"{haru.action_to_string(yellow, 0)} {haru.action_to_string(red, 1)}"
    r = run("show", haru.to_notation(), "--moves", names)
    assert r.exit_code == 0, r.output
    haru.apply_joint([yellow, red])
    assert r.output.rstrip().splitlines()[-1] == haru.to_notation()
    r = run("show", "lotus", "--moves", "W1-a1 W1-a1")
    assert r.exit_code == 2 and "move 2 ('W1-a1') is not legal; legal: B1-a1" in r.output


def _planted_record() -> GameRecord:
    """A TINY Lotus game in which the mover, with a proven win in hand, plays a losing
    move; afterwards both sides play perfectly to the end."""
    from niwa.analysis.arena.review import alphabeta_values
    from niwa.ext.game import Rng

    state = parse_position(TINY)
    rng = Rng(5)
    history = []
    while not state.is_terminal():
        history.append(state.clone())
        state.apply(rng.choice(state.legal_actions()))
    for before in reversed(history):          # the latest position with both kinds of move
        values, proven = alphabeta_values(before, before.current_player(), 60, 2.0)
        losing = [a for a, v in values.items() if v <= 1e-9]
        if proven and max(values.values()) >= 1 - 1e-9 and losing:
            break
    else:
        raise AssertionError("no position with a winning and a losing move")
    start = before.to_notation()
    moves, state = [], before.clone()
    action = losing[0]
    while not state.is_terminal():
        if action is None:
            values, _ = alphabeta_values(state, state.current_player(), 60, 2.0)
            action = max(values, key=values.get)
        moves.append(Move(state.current_player(), state.action_to_string(action)))
        state.apply(action)
        action = None
    return GameRecord("lotus", dict(state.variant), [Seat("a"), Seat("b")], start,
                      [float(x) for x in state.returns()], "normal", moves,
                      final=state.to_notation())


def test_review_flags_a_planted_losing_move_as_a_proven_blunder(tmp_path):
    record = _planted_record()
    path = tmp_path / "planted.jsonl"
    path.write_text(record.to_line() + "\n")
    r = run("review", path, "--agent", "alphabeta:depth=4", "--threshold", "0.15")
    assert r.exit_code == 0, r.output
    first = r.output.splitlines()[3].split()
    assert first[0] == "1" and first[3] == record.moves[0].move and first[-1] == "blunder"
    assert ", 1 blunder;" in r.output
    with open(tmp_path / "planted-game1-review.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(record.moves) and rows[0]["verdict"] == "blunder"
    assert (float(rows[0]["value_before"]), float(rows[0]["value_after"])) == (1.0, 0.0)
    assert (tmp_path / "planted-game1-review.png").stat().st_size > 0
    # a perfectly played move is never a blunder
    assert all(row["verdict"] != "blunder" for row in rows[1:])


def test_review_lists_chance_and_joint_plies_without_a_verdict(tournament):
    """Haru's joint moves and Bonsai's chance outcomes are rows with no value; every seat
    move gets values from the searcher (open hands), in the mover's perspective."""
    path = tournament / "games.jsonl"
    record = read_records(str(path))[0]
    r = run("review", path, "--game", 1, "--agent", "alphabeta:depth=1", "--prove-time", 0,
            "--out", tournament / "rev")
    assert r.exit_code == 0, r.output
    with open(tournament / "rev.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(record.moves)
    for row, move in zip(rows, record.moves, strict=True):
        if move.by in ("chance", "joint"):
            assert row["by"] == move.by and row["verdict"] == "" and row["value_before"] == ""
        else:
            assert row["value_before"] != "" and row["value_after"] != ""
    assert (tournament / "rev.png").stat().st_size > 0


def test_review_errors_are_one_line(tmp_path):
    r = run("review", "nonexistent.jsonl")
    assert r.exit_code == 2 and "cannot read nonexistent.jsonl" in r.output
    path = tmp_path / "g.jsonl"
    path.write_text(_planted_record().to_line() + "\n")
    r = run("review", path, "--agent", "random")
    assert r.exit_code == 2 and "review needs a searcher" in r.output
