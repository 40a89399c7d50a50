"""What the CLI reports where users tripped: batch errors by line, mixed strategies,
standings ranks, a match's Elo line, --agents before the game, resuming another game."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from niwa.analysis.stats.match import match_summary
from niwa.cli.main import main


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def test_solve_batch_names_bad_lines_and_solves_the_rest(tmp_path):
    batch = tmp_path / "batch.txt"
    batch.write_text("lotus towers=1\nlotus; junk\n\n# a comment\nhurray\n"
                     "lotus towers=1 lane=1\n")
    r = run("solve", "--batch", batch, "--time", "0.5")
    assert r.exit_code == 2
    assert r.stdout.count("\n") == 3          # the header and the two good positions
    assert "line 2: lotus notation" in r.stderr and "line 5: position must begin" in r.stderr
    assert "2 of 4 positions could not be solved" in r.stderr


def test_solve_round_prints_the_mixed_strategy_by_name():
    from niwa.ext.registry import get_game

    position = get_game("haru").new(seed=1).to_notation()
    r = run("solve", position, "--round", "--depth", "2")
    assert r.exit_code == 0, r.output
    line = next(x for x in r.stdout.splitlines() if x.startswith("mixed strategy"))
    assert line.startswith("mixed strategy of player 0: Y") and "%" in line
    assert "[(" not in line


def test_agents_given_before_the_game_and_the_match_line(tmp_path):
    out = tmp_path / "t"
    r = run("tournament", "--agents", "greedy", "random", "lotus", "--games", 4,
            "--workers", 1, "--out", out)
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    header = next(x for x in lines if "agent" in x and "rating" in x)
    assert header.split()[0] == "rank"
    assert next(x for x in lines if x.strip().startswith("1 ")).split()[1] == "greedy"
    match = next(x for x in lines if "Elo difference" in x)
    assert match.startswith("greedy vs random: Elo difference") and "LOS" in match
    # the difference is the gap of the two ratings shown (live and in the table), with
    # the table's LOS; fastchess's figure from the score alone is labelled as such
    rating = {x.split()[1]: float(x.split()[7]) for x in lines
              if x.strip().startswith(("1 ", "2 "))}
    table_los = next(x for x in lines if x.strip().startswith("1 ")).split()[-1]
    gap = float(match.split("Elo difference ")[1].split()[0])
    assert gap == pytest.approx(rating["greedy"] - rating["random"], abs=0.11), (match, rating)
    assert f"LOS {100 * float(table_los):.1f}%" in match
    assert f"greedy {rating['greedy']:+.1f} minus random {rating['random']:+.1f}" in match
    score_only = lines[lines.index(match) + 1]
    assert score_only.strip().startswith("from the score alone (as fastchess computes it")
    # resuming it as another game names the folder's game
    r = run("tournament", "haru", "--resume", "--out", out)
    assert r.exit_code == 2 and f"{out} holds a lotus tournament, not haru" in r.stderr


def test_match_summary_is_fastchess_arithmetic():
    s = match_summary(30, 10, 10)          # score 0.7, per-game variance 0.16
    assert s.elo == pytest.approx(147.19, abs=0.01)
    # Elo at 0.7 +- 1.96 * sqrt(0.16 / 50) is 252.9 and 62.6: half the span
    assert s.margin == pytest.approx(95.14, abs=0.01)
    assert s.los == pytest.approx(0.5 * (1 + math.erf(20 / math.sqrt(80))))
    assert s.line().startswith("Elo difference +147.2 ± ")
    even = match_summary(5, 0, 5)
    assert even.elo == 0 and even.los == 0.5
    sweep = match_summary(4, 0, 0)
    assert math.isinf(sweep.elo) and "every game went one way" in sweep.line()


@pytest.mark.parametrize("tt_bits", [10, 12])
def test_a_proven_solve_shows_its_line_to_the_end_of_the_game(tt_bits):
    """A small table loses parts of the proven line: they are searched again."""
    import json

    from niwa.ext.registry import parse_position

    tiny = "lotus towers=2 lane=1 shared=3 trampoline_at=3"
    r = run("solve", tiny, "--tt", tt_bits, "--json")
    result = json.loads(r.stdout)
    assert result["proven"]
    state = parse_position(tiny)
    for move in result["pv"]:
        state.apply(move)
    assert state.is_terminal()
    assert state.returns()[0] == pytest.approx(result["value"])
