"""Records that never lose a move, and resumes that restore them and start nothing the
user did not type.

A move stopped by the watchdog (or a worker killed mid-move) keeps every move played
before it in games.csv and games.jsonl; a damaged games.jsonl is restored on --resume by
replaying the games it lost (or the run stops naming the game); a tuning run killed at
its first write resumes; a resume refuses to start an engine command read from the
folder's record unless it is typed again or --trust-engines is given.
"""

from __future__ import annotations

import csv
import faulthandler
import json
import os
import shutil
import signal
import time

import pytest
from click.testing import CliRunner

from niwa.analysis.arena import executors
from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.arena.game_record import parse_line, sealed_line, unsealed
from niwa.analysis.arena.games_csv import start_position
from niwa.analysis.arena.schedule import identity_digest
from niwa.analysis.arena.tournament import make_config, run_tournament
from niwa.analysis.experiments import tune as tu
from niwa.analysis.experiments import variants as va
from niwa.cli.main import main
from niwa.solver.agents import Agent, register_agent

PLAYED_FIRST = 3      # moves the faulty agents below play before they fail


class _FailsLater(Agent):
    """Plays PLAYED_FIRST random moves in each game, then fails as its subclass says."""

    def reset(self):
        self.moves = 0

    def step(self, state, player):
        self.moves = getattr(self, "moves", 0) + 1
        if self.moves > PLAYED_FIRST:
            self.fail()
        return self.rng.choice(state.legal_actions(player))


class HangsLater(_FailsLater):
    def fail(self):
        time.sleep(3600)


class OverrunsLater(_FailsLater):
    def fail(self):
        time.sleep(10 * self.params["time"])


class SegfaultsLater(_FailsLater):
    def fail(self):
        faulthandler.disable()      # no crash dump in the test output
        os.kill(os.getpid(), signal.SIGSEGV)


class Whim(Agent):
    """Plays the first legal move, or the last one when NIWA_TEST_WHIM is set: the same
    seed, another game (what a clock or time= budget does to a replay)."""

    def step(self, state, player):
        legal = state.legal_actions(player)
        return legal[-1] if os.environ.get("NIWA_TEST_WHIM") else legal[0]


register_agent("t_hang_later", HangsLater, {}, "test: hangs after a few moves")
register_agent("t_overrun_later", OverrunsLater, {"time": (float, 0.1, "budget")}, "test")
register_agent("t_segv_later", SegfaultsLater, {}, "test: a native crash after a few moves")
register_agent("t_whim", Whim, {}, "test: plays by an environment variable")


def rows_of(out) -> list[dict]:
    with open(os.path.join(out, "games.csv"), newline="") as f:
        return list(csv.DictReader(f))


def records_of(out) -> list[dict]:
    with open(os.path.join(out, "games.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def played(record: dict) -> dict:
    """What a record says of the game itself (not when it was written or how long each
    move took: its checksum leaves those out too)."""
    keep = {k: v for k, v in record.items() if k not in ("date", "moves")}
    keep["moves"] = [{k: v for k, v in m.items() if k != "time"} for m in record["moves"]]
    return keep


def checked(line: str) -> bool:
    return unsealed(line)[1] is True


# ---- 1. a stopped move keeps the record ---------------------------------------------------
@pytest.mark.parametrize("faulty,move_time,reason,termination", [
    ("t_hang_later", 0.3, "time", "time"),
    ("t_overrun_later:time=0.2", None, "time", "time"),
    ("t_segv_later", None, "crash", "crash"),      # games.csv names the forfeit's reason
])
def test_a_stopped_move_keeps_every_move_before_it(tmp_path, faulty, move_time, reason,
                                                   termination):
    config, _ = make_config("lotus", ["random", faulty], games=2, seed=3, move_time=move_time,
                            time_margin=0.1)
    out = tmp_path / "t"
    run_tournament(config, str(out), LocalExecutor(2), progress=False)
    rows, records = rows_of(out), records_of(out)
    assert [int(r["game_id"]) for r in rows] == [r["event"]["game_id"] for r in records] \
        == [0, 1]
    label = config.labels[1]
    for row, record in zip(rows, records, strict=True):
        seat = [row["agent_0"], row["agent_1"]].index(label)
        assert row["error_seat"] == str(seat) and row["termination"] == termination
        # every move before the stop: the faulty seat's PLAYED_FIRST, and its opponent's
        assert record["plies"] == len(record["moves"]) == int(row["plies"]) > PLAYED_FIRST
        assert sum(m["by"] == seat for m in record["moves"]) == PLAYED_FIRST
        assert record["termination"] == "forfeit"
        assert record["forfeit"]["seat"] == seat and record["forfeit"]["reason"] == reason
        assert all(m["time"] >= 0 for m in record["moves"])
        # and the position it stopped at, the faulty seat to move
        game = parse_line(json.dumps(record))
        stopped = game.replay()
        assert stopped.to_notation() == record["final"] != record["start"]
        assert stopped.current_player() == seat


def test_a_game_longer_than_the_ply_buffer_keeps_every_move(tmp_path, monkeypatch):
    """The worker sends its ply buffer to the parent whenever it is full."""
    monkeypatch.setattr(executors, "PLY_SLOTS", executors._HEADER + 4 * 2)   # two plies
    test_a_stopped_move_keeps_every_move_before_it(tmp_path, "t_hang_later", 0.3, "time",
                                                   "time")


@pytest.mark.parametrize("base,used,expected", [
    (8, 4, "sent + held"),       # the usual case: the buffer goes on where the pipe left
    (0, 8, "sent"),              # killed after sending the buffer, before emptying it
    (16, 4, "sent"),             # a buffer sent but never received: the plies before it
])
def test_the_plies_of_a_stopped_worker_are_counted_once(base, used, expected):
    from types import SimpleNamespace

    from niwa.analysis.arena.schedule import build_schedule

    task = build_schedule(make_config("lotus", ["random", "random"], games=2)[0])[0]
    sent = [0, -1, 1, 5, 1, -1, 1, 6]
    held = sent if base == 0 else [0, -1, 1, 7]
    plies = [task.game_id, used, base, *held, *([0] * 16)]
    worker = SimpleNamespace(plies=plies, spilled=list(sent))
    got = executors._Worker.plies_played(worker, task)
    assert got == (sent + held if expected == "sent + held" else sent)


def test_a_game_lost_between_moves_is_recorded_unfinished_with_its_moves():
    from niwa.analysis.arena.game_record import RECORD_FIELD
    from niwa.analysis.arena.schedule import build_schedule

    task = build_schedule(make_config("lotus", ["random", "random"], games=2)[0])[0]
    state = start_position(task)
    first = state.legal_actions()[0]
    no_move = [0.0, 0.0, 1.0, 0.0]          # no deadline, no move in progress
    row = executors._lost_game_row(task, no_move, "crashed the worker process twice", 0.1,
                                   [0, 1500, 1, first])
    assert row["plies"] == 1 and row["termination"] == "forfeit" and row["error_seat"] == ""
    record = parse_line(row[RECORD_FIELD])
    assert record.termination == "quit" and len(record.moves) == 1
    assert record.moves[0].time == 0.0015 and record.result == [0.5, 0.5]


# ---- 2. resume restores damaged records ---------------------------------------------------
@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("finished") / "t"
    r = CliRunner().invoke(main, ["tournament", "lotus", "--agents", "random", "greedy",
                                  "--games", "6", "--seed", "2", "-j", "1", "--no-progress",
                                  "-q", "-o", str(out)])
    assert r.exit_code == 0, r.output
    return out


def _damage(path, how: str) -> None:
    lines = path.read_bytes().split(b"\n")[:-1]
    if how == "flipped-byte":
        line = bytearray(lines[2])
        at = line.index(b'"moves"') + 30
        line[at] ^= 0x01
        lines[2] = bytes(line)
    elif how == "deleted-line":
        del lines[4]
    elif how == "truncated":
        data = b"\n".join(lines) + b"\n"
        path.write_bytes(data[:len(data) - len(lines[-1]) // 2 - len(lines[-2])])
        return
    elif how == "garbage-line":
        lines.insert(1, b"\x00\xff not a record")
        del lines[3]
    elif how == "file-deleted":
        path.unlink()
        return
    path.write_bytes(b"\n".join(lines) + b"\n")


@pytest.mark.parametrize("how", ["flipped-byte", "deleted-line", "truncated",
                                 "garbage-line", "file-deleted"])
def test_resume_restores_a_damaged_games_jsonl(finished, tmp_path, how):
    out = tmp_path / "t"
    shutil.copytree(finished, out)
    _damage(out / "games.jsonl", how)
    r = CliRunner().invoke(main, ["tournament", "--resume", "--out", str(out), "-j", "1",
                                  "--no-progress", "-q"])
    assert r.exit_code == 0, r.output
    assert "restored the record" in r.output
    if how == "garbage-line":
        assert "1 damaged line (line 2) match no game" in r.output
    assert [played(x) for x in records_of(out)] \
        == [played(x) for x in records_of(finished)]
    assert rows_of(out) == rows_of(finished)
    assert all(checked(line) for line in (out / "games.jsonl").read_text().splitlines())
    # nothing is thrown away: the damaged lines are set aside
    if how in ("flipped-byte", "garbage-line"):
        assert (out / "games.jsonl.damaged").exists()
    again = CliRunner().invoke(main, ["tournament", "--resume", "--out", str(out), "-j", "1",
                                      "--no-progress", "-q"])
    assert again.exit_code == 0 and "restored" not in again.output


def test_a_restored_game_that_replays_differently_stops_naming_it(tmp_path, monkeypatch):
    out = tmp_path / "t"
    args = ["tournament", "lotus", "--agents", "random", "t_whim", "--games", "2", "--seed",
            "5", "-j", "1", "--no-progress", "-q", "-o", str(out)]
    assert CliRunner().invoke(main, args).exit_code == 0
    lines = (out / "games.jsonl").read_text().splitlines(keepends=True)
    (out / "games.jsonl").write_text(lines[0])          # game 1's record is lost
    monkeypatch.setenv("NIWA_TEST_WHIM", "1")           # and its replay plays otherwise
    resume = ["tournament", "--resume", "--out", str(out), "-j", "1", "--no-progress", "-q"]
    r = CliRunner().invoke(main, resume)
    assert r.exit_code == 2 and "Traceback" not in r.output
    error = r.output.strip().splitlines()[-1]
    assert error.startswith("Error: game 1 has no good record") and "--on-bad-rows drop" in error
    assert len(records_of(out)) == 1 and len(rows_of(out)) == 2      # nothing changed
    r = CliRunner().invoke(main, [*resume, "--on-bad-rows", "drop"])
    assert r.exit_code == 0, r.output
    assert "rows are replaced by the new games" in r.output
    rows, records = rows_of(out), records_of(out)
    assert [r["event"]["game_id"] for r in records] == [int(r["game_id"]) for r in rows] \
        == [0, 1]
    assert records[1]["plies"] == int(rows[1]["plies"])


def test_records_written_before_the_check_tag_are_kept_and_sealed(finished, tmp_path):
    out = tmp_path / "t"
    shutil.copytree(finished, out)
    lines = (out / "games.jsonl").read_text().splitlines()

    (out / "games.jsonl").write_text("".join(unsealed(x)[0] + "\n" for x in lines))
    r = CliRunner().invoke(main, ["tournament", "--resume", "--out", str(out), "-j", "1",
                                  "--no-progress", "-q"])
    assert r.exit_code == 0 and "restored" not in r.output, r.output
    assert (out / "games.jsonl").read_text().splitlines() == lines
    assert sealed_line(json.loads(unsealed(lines[0])[0])) == lines[0]


def test_analyse_resume_restores_its_records(tmp_path):
    exp = va.Experiment("lotus", vary=[["towers", ["1", "2"]]], games=2, seed=5)
    cells, _ = va.plan_cells(exp)
    va.run_experiment(exp, cells, str(tmp_path), LocalExecutor(1), progress=False)
    before = [played(x) for x in records_of(tmp_path)]
    lines = (tmp_path / "games.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "games.jsonl").write_text("".join(lines[:1] + lines[2:]))
    result = va.run_experiment(exp, cells, str(tmp_path), LocalExecutor(1), resume=True,
                               progress=False)
    assert any("restored the record of 1 game (1)" in n for n in result.notes)
    assert [played(x) for x in records_of(tmp_path)] == before


# ---- 3. tune writes its identity first ----------------------------------------------------
TUNE = ["tune", "lotus", "--agent", "mcts:iters=10,c=1", "--param", "c=0.5:3",
        "--iterations", "2", "--seed", "4", "-j", "1"]


@pytest.mark.parametrize("left", ["nothing", "tune.json", "tune.json+header",
                                  "header-only (older niwa)"])
def test_a_tune_killed_at_its_first_writes_resumes(tmp_path, left):
    reference = tmp_path / "ref"
    r = CliRunner().invoke(main, [*TUNE, "--out", str(reference)])
    assert r.exit_code == 0, r.output
    out = tmp_path / "killed"
    out.mkdir()
    if "tune.json" in left:
        meta = json.loads((reference / "tune.json").read_text())
        meta["runs"] = meta["runs"][:1]
        (out / "tune.json").write_text(json.dumps(meta))
    if "header" in left:
        header = (reference / "games.csv").read_text().splitlines(keepends=True)[0]
        (out / "games.csv").write_text(header)
    r = CliRunner().invoke(main, [*TUNE, "--resume", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert (out / "trajectory.csv").read_text() == (reference / "trajectory.csv").read_text()
    assert len(records_of(out)) == len(rows_of(out)) == 4


def test_tune_writes_tune_json_before_games_csv(tmp_path, monkeypatch):
    seen = []
    real = tu.RecordedGameLog

    def log(path, *args, **kwargs):
        seen.append(os.path.exists(os.path.join(os.path.dirname(path), "tune.json")))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(tu, "RecordedGameLog", log)
    config = tu.make_tune_config("lotus", "mcts:iters=10,c=1", ["c=0.5:3"], iterations=1)
    tu.run_tune(config, str(tmp_path / "t"), LocalExecutor(1))
    assert seen and all(seen)


# ---- 4. resume never starts a command the user did not type ---------------------------
def _plant_engine(out, marker) -> str:
    """Rewrite a tournament.json to name an engine that would create `marker`, with the
    identity digest recomputed (as anyone can)."""
    meta = json.loads((out / "tournament.json").read_text())
    spec = f"engine:cmd=touch {marker}"
    meta["config"]["agents"][1] = spec
    meta["identity_digest"] = identity_digest(meta["config"])
    (out / "tournament.json").write_text(json.dumps(meta))
    return spec


def test_resume_refuses_an_engine_read_from_the_folder(tmp_path):
    out = tmp_path / "t"
    r = CliRunner().invoke(main, ["tournament", "lotus", "--agents", "random", "greedy",
                                  "--games", "2", "--seed", "1", "-j", "1", "--no-progress",
                                  "-q", "-o", str(out)])
    assert r.exit_code == 0
    (out / "games.csv").write_text((out / "games.csv").read_text().splitlines()[0] + "\n")
    (out / "games.jsonl").write_text("")
    marker = tmp_path / "ran"
    spec = _plant_engine(out, marker)
    resume = ["tournament", "--resume", "--out", str(out), "-j", "1", "--no-progress", "-q"]
    r = CliRunner().invoke(main, resume)
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    error = r.output.strip().splitlines()[-1]
    assert error.startswith("Error: ") and spec in error
    assert "--agents" in error and "--trust-engines" in error
    assert not marker.exists()
    # typed again, or trusted: it is started (and, failing its handshake, stops the run
    # before the first game with one line, as any engine that cannot start does)
    for extra in (["--agents", "random", spec], ["--trust-engines"]):
        r = CliRunner().invoke(main, [*resume, *extra])
        assert r.exit_code == 2 and "did not start" in r.output.strip().splitlines()[-1], \
            r.output
        assert marker.exists()
        marker.unlink()
        (out / "games.csv").write_text((out / "games.csv").read_text().splitlines()[0] + "\n")


def test_analyse_resume_refuses_engines_and_house_rules_read_from_the_folder(tmp_path):
    exp = va.Experiment("lotus", vary=[["towers", ["1", "2"]]], games=2, seed=5)
    meta = {"experiment": {**exp.__dict__, "agents": ["engine:cmd=touch x"]}}
    meta["identity_digest"] = identity_digest(va.Experiment(**meta["experiment"]).identity())
    (tmp_path / "analysis.json").write_text(json.dumps(meta))
    with pytest.raises(va.AnalysisError, match="engine:cmd=touch x.*--trust-engines"):
        va.experiment_from_options(None, vary=(), lineup=[], strengths=(), games=2,
                                   players=None, seed=5, given=set(), out_dir=str(tmp_path),
                                   resume=True)
    meta["experiment"].update(agents=["random"], house=["evil.py:Rules"])
    meta["identity_digest"] = identity_digest(va.Experiment(**meta["experiment"]).identity())
    (tmp_path / "analysis.json").write_text(json.dumps(meta))
    with pytest.raises(va.AnalysisError, match="house rule 'evil.py:Rules'"):
        va.experiment_from_options(None, vary=(), lineup=[], strengths=(), games=2,
                                   players=None, seed=5, given=set(), out_dir=str(tmp_path),
                                   resume=True)
    trusted = va.experiment_from_options(None, vary=(), lineup=[], strengths=(), games=2,
                                         players=None, seed=5, given=set(),
                                         out_dir=str(tmp_path), resume=True,
                                         trust_engines=True)
    assert trusted.house == ["evil.py:Rules"]
