"""`niwa openings build` and the suites shipped with niwa: a suite is a pure function of
its command (same seed, same file), the shipped ones are what their recorded command
builds, and every shipped position is legal, distinct and usable by name."""

import shlex

import pytest
from click.testing import CliRunner

from niwa.analysis.arena.opening_build import build_suite, parse_search
from niwa.analysis.arena.openings import (
    OpeningSuite,
    load_suite,
    parse_openings,
    shipped_suites,
)
from niwa.analysis.arena.schedule import TournamentError
from niwa.cli.main import main
from niwa.ext.registry import get_game, parse_position

SHIPPED = {"lotus-balanced": "lotus", "haru-balanced": "haru", "bonsai-balanced": "bonsai"}


def run(*args, code=0):
    result = CliRunner().invoke(main, [*map(str, args)])
    assert result.exit_code == code, result.output
    return result


def default_variant(game):
    return dict(get_game(game).new(seed=0).variant)


def positions(text):
    return [x for x in text.splitlines() if x.strip() and not x.startswith("#")]


def build_args(line):
    """The arguments of a '# built by: niwa openings build ...' header line."""
    words = shlex.split(line.split("# built by: ", 1)[1])
    assert words[:3] == ["niwa", "openings", "build"]
    return words[3:]


@pytest.mark.parametrize("game,search", [("lotus", "alphabeta:depth=2"),
                                         ("bonsai", "mcts:iters=40"),
                                         ("haru", "mcts:iters=40")])
def test_same_command_same_file_and_a_new_seed_another(tmp_path, game, search):
    common = [game, "--plies", 4, "--count", 3, "--search", search, "--band", 0.5,
              "--no-progress"]
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        run("openings", "build", *common, "--seed", 7, "--out", tmp_path / name / "s.txt")
    a = (tmp_path / "a" / "s.txt").read_text()
    assert a == (tmp_path / "b" / "s.txt").read_text()
    run("openings", "build", *common, "--seed", 8, "--out", tmp_path / "c.txt")
    assert positions((tmp_path / "c.txt").read_text()) != positions(a)
    lines = positions(a)
    assert len(lines) == 3 and len(set(lines)) == 3
    header = [x for x in a.splitlines() if x.startswith("#")]
    assert any(x.startswith(f"# built by: niwa openings build {game} --plies 4 --count 3 "
                            f"--seed 7 --search {search}") for x in header)
    for line in lines:          # decisions, not chance events nor finished games
        state = parse_position(line)
        assert not state.is_terminal() and not state.is_chance_node()
    suite = load_suite(parse_openings(str(tmp_path / "a" / "s.txt")), game,
                       default_variant(game))
    assert suite["lines"] == lines


def test_the_band_keeps_only_balanced_positions():
    built = build_suite("lotus", {}, plies=6, count=4, seed=3, search="alphabeta:depth=2",
                        band=0.1)
    assert all(abs(v - 0.5) <= 0.1 for v in built.values)
    assert built.drawn >= 4 and len(set(built.positions)) == 4
    with pytest.raises(TournamentError, match="only .* of 40 openings found in 2000 "
                                              "candidates.*ask for fewer"):
        build_suite("lotus", {}, plies=1, count=40, seed=3, search="alphabeta:depth=1",
                    band=0.5)       # there are fewer than 40 positions after one ply


@pytest.mark.parametrize("name,game", SHIPPED.items())
def test_shipped_suite_is_legal_distinct_and_usable_by_name(name, game):
    assert name in shipped_suites()
    text = open(shipped_suites()[name], encoding="utf-8").read()
    lines = positions(text)
    assert 20 <= len(lines) <= 50 and len(set(lines)) == len(lines)
    for line in lines:
        state = parse_position(line)
        assert state.game_name == game and dict(state.variant) == default_variant(game)
        assert not state.is_terminal() and not state.is_chance_node()
        assert state.to_notation() == line
    for text_spec in (f"suite:{game}", f"suite:{name}", name):
        spec = load_suite(parse_openings(text_spec), game, default_variant(game))
        assert spec["lines"] == lines and spec["suite"] == name
    variant = default_variant(game)
    suite = OpeningSuite(load_suite(parse_openings(f"suite:{game}"), game, variant), 1, game,
                         variant)
    assert [suite.for_round(r).start for r in range(len(lines))] == lines
    assert "# built by: niwa openings build " + game in text


@pytest.mark.parametrize("name", SHIPPED)
def test_the_recorded_command_rebuilds_the_shipped_suite(tmp_path, name):
    """The suite is the first COUNT kept candidates: the recorded command with a smaller
    count writes the first lines of the shipped file."""
    text = open(shipped_suites()[name], encoding="utf-8").read()
    args = build_args(next(x for x in text.splitlines() if x.startswith("# built by: ")))
    count = args.index("--count")
    args[count + 1] = "3"
    out = args.index("--out")
    args[out + 1] = str(tmp_path / "again.txt")
    run("openings", "build", *args, "--no-progress")
    assert positions((tmp_path / "again.txt").read_text()) == positions(text)[:3]


def test_a_tournament_plays_a_shipped_suite_by_name(tmp_path):
    import json

    out = tmp_path / "t"
    run("tournament", "lotus", "--agents", "random", "greedy", "--openings", "suite:lotus",
        "--games", 4, "--workers", 1, "--quiet", "--out", out)
    lines = positions(open(shipped_suites()["lotus-balanced"], encoding="utf-8").read())
    with open(out / "games.jsonl", encoding="utf-8") as f:
        recs = [json.loads(x) for x in f]
    assert [r["start"] for r in recs] == [lines[0], lines[0], lines[1], lines[1]]
    listed = run("openings", "list").stdout
    assert all(f"--openings suite:{n}" in listed for n in SHIPPED)


@pytest.mark.parametrize("args,message", [
    (["lotus", "--plies", "0", "--count", "3"], "--plies"),
    (["lotus", "--plies", "4", "--count", "3", "--search", "minimax:depth=2"],
     "expected alphabeta:depth=D or mcts:iters=N"),
    (["lotus", "--plies", "4", "--count", "3", "--search", "mcts:iters=0"],
     "iters must be a whole number"),
    (["lotus", "--plies", "4", "--count", "3", "--search", "mcts:iters=" + "9" * 5000],
     "iters must be a whole number"),
    (["lotus", "--plies", "4", "--count", "3", "--search", "alphabeta:depth=²"],
     "depth must be a whole number"),
    (["lotus", "--plies", "4", "--count", "3", "--band", "0.7"], "--band"),
    (["chess", "--plies", "4", "--count", "3"], "chess"),
    (["lotus", "--plies", "4", "--count", "3", "-v", "rule=nope"], "rule"),
])
def test_bad_build_input_is_one_error_line(tmp_path, args, message):
    result = CliRunner().invoke(main, ["openings", "build", *args, "--out",
                                       str(tmp_path / "x.txt")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.strip().splitlines()[-1].startswith("Error: ")
    assert message in result.output
    assert not (tmp_path / "x.txt").exists()


def test_unknown_suite_name_lists_the_shipped_ones(tmp_path):
    result = CliRunner().invoke(main, ["tournament", "lotus", "--agents", "random", "random",
                                       "--openings", "suite:chess", "--out",
                                       str(tmp_path / "o")])
    assert result.exit_code == 2 and "lotus-balanced" in result.output
    assert parse_search("mcts:iters=5") == ("mcts", 5)


def test_a_shipped_suite_refuses_another_variant_in_one_line(tmp_path):
    result = CliRunner().invoke(main, ["tournament", "lotus", "-v", "rule=pro", "--agents",
                                       "random", "random", "--openings", "suite:lotus",
                                       "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--openings suite:lotus-balanced line 6: the position is not one of this " \
        "tournament's game and variant" in result.output and "rule=pro" in result.output


def test_a_suite_for_three_players_is_centred_on_an_even_share():
    built = build_suite("lotus", {"players": 3}, plies=6, count=3, seed=1,
                        search="alphabeta:depth=2", band=0.1)
    assert all(abs(v - 1 / 3) <= 0.1 for v in built.values)
    assert "within 0.333 (1/3) ± 0.1" in built.text
