"""The position commands (games, new, show, moves, perft, bench) and their error handling."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from niwa.cli.main import main

START = ("lotus players=2 rule=basic trampoline=optional; track -; "
         "start WWWW WWW WW W BBBB BBB BB B; goal W:0 B:0; turn W")


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_games_lists_lotus_with_variants():
    r = run("games")
    assert r.exit_code == 0
    assert "lotus" in r.output and "trampoline_at" in r.output and "default basic" in r.output


def test_new_prints_one_line_of_notation():
    r = run("new", "lotus")
    assert r.exit_code == 0 and r.output.strip() == START
    r = run("new", "lotus", "--players", "3", "--variant", "rule=pro")
    assert r.output.startswith("lotus players=3 rule=pro")


def test_show_draws_the_board_and_json_is_machine_readable():
    r = run("show", START)
    assert r.exit_code == 0 and "White to move" in r.output and "8*" in r.output
    data = json.loads(run("show", "lotus", "--json").output)
    assert data["to_move"] == "W" and data["start"]["B"] == [4, 3, 2, 1]
    assert data["legal"][0] == "W1-a1"


def test_moves_lists_readable_actions():
    r = run("moves", "lotus")
    assert r.exit_code == 0
    assert [line.split()[1] for line in r.output.splitlines()] == \
        ["W1-a1", "W1-b1", "W2-a2", "W2-b2", "W3-a3", "W3-b3", "W4-4"]


def test_perft_last_line_is_the_bare_total():
    r = run("perft", "lotus", "--depth", "4", "--divide")
    lines = r.output.strip().splitlines()
    assert r.exit_code == 0 and lines[-1] == "1764"
    assert sum(int(line.split(": ")[1]) for line in lines[:-1]) == 1764
    assert run("perft", "lotus rule=pro", "-d", "3").output.strip() == "301"


@pytest.mark.parametrize("args,message", [
    (["show", "lotus; track zz"], "5 ';'-separated"),
    (["show", "checkers"], "position must begin with a game name"),
    (["new", "chess"], "unknown game 'chess'"),
    (["new", "lotus", "--players", "5"], "players=5"),
    (["new", "lotus", "-v", "colour=red"], "unknown lotus variant key"),
    (["moves", START.replace("B:0", "B:1")], "Black has 11 stones"),
    (["perft", "lotus", "--depth", "1", "--divide", "-d", "0"], "--divide needs"),
])
def test_bad_input_gives_one_line_error_and_status_2(args, message):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_console_script_reports_errors_without_traceback():
    p = subprocess.run([sys.executable, "-m", "niwa.cli.main", "show", "lotus players=9"],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip() == "Error: lotus variant players=9 is out of range; expected 2, 3, 4"


def test_bench_measures_engine_and_oracle_in_one_run():
    r = run("bench", "lotus", "--seconds", "0.3")
    assert r.exit_code == 0 and "ratio" in r.output and "oracle" in r.output
