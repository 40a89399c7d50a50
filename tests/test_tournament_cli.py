"""`niwa tournament` end to end: outputs, one-line errors, and resume after SIGKILL."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from click.testing import CliRunner

from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.arena.tournament import make_config, run_tournament
from niwa.cli.main import main

NIWA = [sys.executable, "-m", "niwa.cli.main"]


def read_tables(out):
    return {name: open(os.path.join(out, name)).read()
            for name in ("standings.csv", "pairs.csv", "seats.csv")}


def games_without_durations(out):
    return pd.read_csv(os.path.join(out, "games.csv"), dtype=str,
                       keep_default_na=False).drop(columns="duration_s")


def test_three_agent_round_robin_writes_every_file(tmp_path):
    out = tmp_path / "t"
    result = CliRunner().invoke(main, [
        "tournament", "lotus", "--agents", "random", "random", "random", "--games", "4",
        "--workers", "1", "--seed", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    for name in ("games.csv", "standings.csv", "pairs.csv", "seats.csv", "tournament.json",
                 "ratings.png"):
        assert (out / name).stat().st_size > 0
    assert "rating" in result.output and "head to head" in result.output
    meta = json.loads((out / "tournament.json").read_text())
    assert meta["seed"] == 3 and meta["status"] == "finished"
    assert meta["config"]["agents"] == ["random"] * 3
    assert meta["versions"]["niwa"]
    assert meta["command"] == ("niwa tournament lotus --agents random random random --games 4 "
                               f"--workers 1 --seed 3 --out {out}")
    assert len(pd.read_csv(out / "games.csv")) == 12


@pytest.mark.parametrize("args,message", [
    (["lotus", "--agents", "random", "random", "--players", "5"], "players=5"),
    (["lotus", "--agents", "random", "mystery"], "unknown agent 'mystery'"),
    (["nogame", "--agents", "random", "random"], "unknown game"),
    (["lotus", "--agents", "random"], "at least two agents"),
    (["lotus", "--agents", "random", "random", "--executor", "ssh://x"], "unknown --executor"),
    (["lotus", "--agents", "random", "random", "--sprt", "elo1=-3"], "elo1 > elo0"),
    (["lotus", "--agents", "random", "random", "--workers", "0"], "--workers"),
])
def test_bad_input_is_a_one_line_error_with_status_2(args, message, tmp_path):
    result = CliRunner().invoke(main, ["tournament", *args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0]


def test_resume_into_a_different_tournament_is_refused(tmp_path):
    out = str(tmp_path / "t")
    base = ["tournament", "lotus", "--agents", "random", "random", "-n", "2", "-j", "1",
            "-o", out]
    assert CliRunner().invoke(main, base).exit_code == 0
    again = CliRunner().invoke(main, base)
    assert again.exit_code == 2 and "already holds a tournament" in again.output
    other = CliRunner().invoke(main, [*base, "--resume", "--seed", "4"])
    assert other.exit_code == 2 and "different tournament: seed" in other.output
    assert len(other.output.strip().splitlines()) == 1
    # --resume alone takes everything from tournament.json
    alone = CliRunner().invoke(main, ["tournament", "--resume", "-o", out])
    assert alone.exit_code == 0, alone.output


def test_sigkill_then_resume_loses_and_duplicates_nothing(tmp_path):
    args = ["tournament", "lotus", "--agents", "random", "random", "random",
            "--games", "1000", "--seed", "21", "--no-progress"]
    killed = str(tmp_path / "killed")
    proc = subprocess.Popen([*NIWA, *args, "-j", "2", "-o", killed], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    games = os.path.join(killed, "games.csv")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if os.path.exists(games) and os.path.getsize(games) > 6_000:   # ~30 games
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)     # the CLI and its pool workers, at once
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    with open(games) as f:
        saved = sum(1 for _ in f) - 1
    assert 0 < saved < 3000
    resumed = subprocess.run([*NIWA, *args, "-j", "2", "-o", killed, "--resume"],
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    log = pd.read_csv(games)
    assert list(log["game_id"]) == list(range(3000))          # none lost, none twice

    # the uninterrupted run (in this process, one worker)
    reference = str(tmp_path / "reference")
    config, _ = make_config("lotus", ["random"] * 3, games=1000, seed=21)
    run_tournament(config, reference, LocalExecutor(1), progress=False)
    assert games_without_durations(killed).equals(games_without_durations(reference))
    assert read_tables(killed) == read_tables(reference)
    meta = json.loads(open(os.path.join(killed, "tournament.json")).read())
    assert [r["executor"] for r in meta["runs"]] == ["local, 2 workers"] * 2


def test_sprt_from_the_command_line(tmp_path):
    out = tmp_path / "s"
    result = CliRunner().invoke(main, [
        "tournament", "lotus", "--agents", "random", "random", "--sprt",
        "elo0=0,elo1=150", "--workers", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "tournament.json").read_text())
    assert meta["status"] == "sprt-stopped" and meta["sprt"]["decision"] == "H0"
    assert "SPRT: llr" in result.output and "H0 accepted" in result.output
    assert len(pd.read_csv(out / "games.csv")) == 2 * meta["sprt"]["pairs"] < 2000
