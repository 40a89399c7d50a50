"""`niwa solve` through Click's runner (`niwa play`: test_play_cli.py)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from niwa.cli.main import main

TINY = "lotus towers=2 lane=1 shared=3 trampoline_at=3"
WIN_IN_ONE = ("lotus players=2 rule=basic trampoline=optional lane=1 shared=3 trampoline_at=3 "
              "towers=2; track a1:BW; start BB; goal W:2 B:0; turn W")


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def test_solve_json_has_exactly_the_documented_keys():
    r = run("solve", TINY, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert set(out) == {"value", "proven", "best", "actions", "pv", "nodes", "time_s", "nps",
                        "source"}
    assert out["source"] == "search"
    assert out["proven"] is True and out["value"] == 0.0   # tiny set-up: seat 0 loses
    assert len(out["actions"]) == 3 and all(a["value"] == 0.0 for a in out["actions"])


def test_solve_reports_a_proven_win_with_its_winning_line():
    r = run("solve", WIN_IN_ONE)
    assert r.exit_code == 0, r.output
    assert "proven win for player 0: winning line" in r.output
    assert "value 1.0000 (proven)" in r.output
    for word in ("best", "actions:", "pv", "depth", "nodes", "nodes/s", "time", "tt fill"):
        assert word in r.output


def test_solve_with_mcts_and_a_budget():
    r = run("solve", "lotus", "--algo", "mcts", "--iters", "2000", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["proven"] is False and 0 < out["value"] < 1 and out["best"]
    assert sum(1 for _ in out["actions"]) == 7
    r = run("solve", "lotus", "--depth", "4")
    assert r.exit_code == 0 and "(estimate)" in r.output


def test_solve_batch_writes_csv(tmp_path):
    f = tmp_path / "positions.txt"
    f.write_text(f"{TINY}\n# a comment\n{WIN_IN_ONE}\n")
    r = run("solve", "--batch", str(f))
    assert r.exit_code == 0, r.output
    lines = r.output.strip().splitlines()
    assert lines[0].startswith("position,value,proven,best,pv")
    assert len(lines) == 3 and ",1.000000,True," in lines[2]


def test_solve_errors_are_one_line_with_status_2():
    r = run("solve", "lotus; nonsense")
    assert r.exit_code == 2 and r.output.startswith("Error:")
    assert run("solve").exit_code == 2
