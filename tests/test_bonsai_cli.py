"""The generic commands and `niwa score` on Bonsai positions."""

import json

from click.testing import CliRunner

from niwa.cli.main import main
from niwa.ext.bonsai import from_notation, new_initial


def run(*args):
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_new_show_moves_perft():
    code, out = run("new", "bonsai", "--seed", "1")
    assert code == 0
    text = out.strip()
    assert text == new_initial(seed=1).to_notation()
    code, out = run("show", text)
    assert code == 0 and "Player 0 (to move)" in out and "Market" in out and "Goals:" in out
    assert "=" in out and "W" in out                       # pot outline and the bud
    code, out = run("moves", text)
    assert code == 0 and "cultivate" in out and "meditate 0:" in out
    code, out = run("perft", text, "--depth", "3")
    assert code == 0 and int(out.split()[-1]) == from_notation(text).perft(3)
    code, out = run("new", "bonsai", "--players", "1", "-v", "solo_level=3", "--seed", "2")
    assert code == 0 and "players=1" in out and "solo_level=3" in out
    code, out = run("show", "--json", text)
    assert code == 0 and json.loads(out)["game"] == "bonsai"


def test_score_breakdown_text_and_json():
    s = new_initial(seed=4, players=3)
    s.random_playout(5)
    text = s.to_notation()
    code, out = run("score", text)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["player", "leaves", "flowers", "fruits", "parchments", "goals",
                                "total"]
    for p, row in enumerate(s.score_breakdown()):
        assert [int(x) for x in lines[1 + p].split()] == [
            p, row["leaves"], row["flowers"], row["fruits"], row["parchments"], row["goals"],
            row["total"]]
    assert "game over" in out
    code, out = run("score", "--json", text)
    data = json.loads(out)
    assert code == 0 and data["winner"] == s.winner()
    assert [dict((k, v) for k, v in p.items() if k != "player") for p in data["players"]] == \
        s.score_breakdown()


def test_score_errors_are_one_line():
    code, out = run("score", "bonsai players=2; goals ?")
    assert code == 2 and out.startswith("Error:") and len(out.strip().splitlines()) == 1
    code, out = run("score", "lotus")
    assert code == 2 and "no score breakdown" in out


def test_bench_runs_for_bonsai():
    code, out = run("bench", "bonsai", "--seconds", "0.05")
    assert code == 0 and "ratio" in out
