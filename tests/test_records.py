"""Game records (analysis/arena/game_record.py): the format, its validation, and the
games.jsonl that tournaments and analyses keep beside games.csv."""

from __future__ import annotations

import csv
import json

import pytest

from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.arena.game_loop import play
from niwa.analysis.arena.game_record import (
    FORMAT,
    RECORD_FIELD,
    VERSION,
    GameRecord,
    RecordError,
    parse_line,
    read_game,
    read_records,
    record_of,
    seats_for,
)
from niwa.analysis.arena.games_csv import play_task
from niwa.analysis.arena.schedule import build_schedule
from niwa.analysis.arena.tournament import make_config, run_tournament
from niwa.analysis.experiments import variants as va
from niwa.ext.game import Rng
from niwa.ext.registry import get_game
from niwa.solver.agents import Agent, make_agent, register_agent


class _Crash(Agent):
    def step(self, state, player):
        raise RuntimeError("boom")


register_agent("t_rec_crash", _Crash, {}, "test")


def _played(game: str, seed: int = 4, specs=("random", "mcts:iters=20")):
    state = get_game(game).new(seed=seed)
    agents = [make_agent(s, seed=k) for k, s in enumerate(specs)]
    result = play(state, agents, chance_rng=Rng(seed))
    return result, record_of(result, seats=seats_for(specs, specs, game), deal_seed=seed)


@pytest.mark.parametrize("game", ["lotus", "haru", "bonsai"])
def test_a_played_game_round_trips_and_replays_to_its_final_position(game):
    result, record = _played(game)
    line = record.to_line()
    assert "\n" not in line
    back = parse_line(line)
    assert back.to_json() == record.to_json()
    assert back.replay().to_notation() == result.state.to_notation() == record.final
    data = json.loads(line)
    assert data["format"] == FORMAT and data["version"] == VERSION
    assert data["termination"] == "normal" and data["plies"] == len(result.actions)
    assert data["seats"][1]["settings"]["iters"] == 20     # resolved agent settings
    assert data["niwa"] and data["date"] and data["start"].startswith(game)
    kinds = {m["by"] if isinstance(m["by"], str) else "seat" for m in data["moves"]}
    expected = {"lotus": {"seat"}, "haru": {"seat", "chance", "joint"},
                "bonsai": {"seat", "chance"}}[game]
    assert kinds == expected
    # every seat move has its thinking time; the searcher's moves carry its comment
    seat_moves = [m for m in data["moves"] if m["by"] in (0, 1, "joint")]
    assert all("time" in m for m in seat_moves)
    assert any("comment" in m and ("visits" in m["comment"] or "1" in m["comment"])
               for m in seat_moves)


def _tamper(line: str, fn) -> str:
    data = json.loads(line)
    fn(data)
    return json.dumps(data)


def test_a_record_that_does_not_replay_is_one_line_naming_the_problem(tmp_path):
    _, record = _played("lotus")
    good = record.to_line()

    def swap_first_move(d):
        d["moves"][0]["move"] = "W9-z9"

    cases = [
        (_tamper(good, swap_first_move), "ply 1 (W9-z9): 'W9-z9' is not legal here"),
        (_tamper(good, lambda d: d["moves"].pop()), "the moves do not lead to the recorded"),
        (_tamper(good, lambda d: d.update(result=[0.5, 0.5])), "differs from the final"),
        (_tamper(good, lambda d: d["moves"][1].update(by=0)), "ply 2 (" ),
        (_tamper(good, lambda d: d.pop("start")), "missing tag 'start'"),
        (_tamper(good, lambda d: d.update(version=99)), "record version 99"),
        ("{not json", "not JSON"),
    ]
    for bad, message in cases:
        path = tmp_path / "bad.jsonl"
        path.write_text(good + "\n\n" + bad + "\n")
        with pytest.raises(RecordError, match="bad.jsonl line 3: ") as info:
            read_records(str(path))
        assert message in str(info.value) and "\n" not in str(info.value)


def test_read_game_picks_one_game_and_says_how_many_there_are(tmp_path):
    path = tmp_path / "two.jsonl"
    path.write_text(_played("lotus", 1)[1].to_line() + "\n" + _played("lotus", 2)[1].to_line()
                    + "\n")
    with pytest.raises(RecordError, match="holds 2 games: choose one with --game N"):
        read_game(str(path))
    with pytest.raises(RecordError, match="--game must be 1..2"):
        read_game(str(path), 3)
    assert read_game(str(path), 2).deal_seed == 2


def test_forfeits_and_caps_are_recorded_as_such():
    config, _ = make_config("lotus", ["random", "t_rec_crash"], games=2, max_plies=None)
    row = play_task(build_schedule(config)[0])
    record = parse_line(row[RECORD_FIELD])
    assert record.termination == "forfeit"
    assert record.forfeit["seat"] == 1 and record.forfeit["reason"] == "crash"
    assert "boom" in record.forfeit["message"] and record.result == [1.0, 0.0]
    config, _ = make_config("haru", ["random", "random"], games=2, max_plies=9)
    record = parse_line(play_task(build_schedule(config)[1])[RECORD_FIELD])
    assert record.termination == "capped" and len(record.moves) == 9
    assert record.event == {"game_id": 1, "round": 0, "table": 0}


def _ids(path) -> list[int]:
    return [json.loads(line)["event"]["game_id"] for line in path.read_text().splitlines()]


def test_tournament_records_match_games_csv_and_survive_a_resume(tmp_path):
    config, _ = make_config("bonsai", ["random", "random", "random"], games=2, seed=8)
    full = tmp_path / "full"
    run_tournament(config, str(full), LocalExecutor(1), progress=False)
    with open(full / "games.csv") as f:
        rows = list(csv.DictReader(f))
    records = read_records(str(full / "games.jsonl"))
    assert _ids(full / "games.jsonl") == [int(r["game_id"]) for r in rows] == list(range(6))
    for row, record in zip(rows, records, strict=True):
        assert len(record.moves) == int(row["plies"])
        assert [f"{x!r}" for x in record.result] == [row["result_0"], row["result_1"]]
        assert [s.agent for s in record.seats] == [row["agent_0"], row["agent_1"]]

    # a killed run: games 0 and 3 in the csv; the jsonl holds their records, a stale
    # record of game 4 (written just before the kill) and a torn line
    part = tmp_path / "part"
    part.mkdir()
    csv_lines = (full / "games.csv").read_text().splitlines(keepends=True)
    (part / "games.csv").write_text(csv_lines[0] + csv_lines[1] + csv_lines[4])
    rec_lines = (full / "games.jsonl").read_text().splitlines(keepends=True)
    (part / "games.jsonl").write_text(rec_lines[3] + rec_lines[0] + rec_lines[4]
                                      + rec_lines[5][:40])
    (part / "tournament.json").write_text((full / "tournament.json").read_text())
    run_tournament(config, str(part), LocalExecutor(1), resume=True, progress=False)
    assert _ids(part / "games.jsonl") == list(range(6))

    def moves(path):
        return [r.to_json()["moves"] for r in read_records(str(path))]

    strip = [[{k: v for k, v in m.items() if k != "time"} for m in g]
             for g in moves(full / "games.jsonl")]
    assert strip == [[{k: v for k, v in m.items() if k != "time"} for m in g]
                     for g in moves(part / "games.jsonl")]


def test_an_analysis_writes_records_beside_its_games(tmp_path):
    exp = va.Experiment("lotus", vary=[["towers", ["1", "2"]]], games=2, seed=5)
    cells, _ = va.plan_cells(exp)
    va.run_experiment(exp, cells, str(tmp_path), LocalExecutor(1), progress=False)
    records = read_records(str(tmp_path / "games.jsonl"))
    assert len(records) == 4
    assert {r.variant["towers"] for r in records} == {1, 2}
    assert {r.event["cell"] for r in records} == {0, 1}


def test_from_json_refuses_what_is_not_a_record():
    with pytest.raises(RecordError, match="not a niwa game record"):
        GameRecord.from_json({"format": "pgn"})
