"""Fuzz the numbers of tournament, analyse and solve options and of agent specs: every
value is either refused with exit 2 and one `Error:` line, or reaches the run finite and
within its range. (Positions are fuzzed elsewhere, with show/moves/perft/score.)

The runs themselves are replaced by stubs that record what they were given, so the fuzz
is fast and never starts a game.
"""

import math

import pytest
from click.testing import CliRunner

from niwa.analysis.arena import tournament as tournament_mod
from niwa.analysis.arena.schedule import MAX_GAME_ID, MAX_MOVE_SECONDS, MAX_SEED, Schedule
from niwa.analysis.experiments import variants as variants_mod
from niwa.cli import solve as solve_mod
from niwa.cli.main import main
from niwa.solver.agents import parse_spec

NUMBERS = ["2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295",
           "4294967296", "9223372036854775807", "9223372036854775808",
           "-9223372036854775809", "18446744073709551615", "18446744073709551616",
           "1e30", "1" + "0" * 30, "nan", "NaN", "inf", "-inf", "1e309", "-1", "0", "-0",
           "0.0", "1.5", "-0.5", "0x10", "", "abc", " 7", "1e-300"]

ACCEPTED = object()


class Accepted(Exception):
    """Raised by the stubs: the options were accepted and reached the run."""


@pytest.fixture
def stubs(monkeypatch):
    seen = {}

    def run_tournament(config, out_dir, executor=None, **_):
        seen["config"], seen["executor"] = config, executor
        raise Accepted

    def analyse(exp, out_dir, executor=None, **_):
        seen["experiment"], seen["executor"] = exp, executor
        raise Accepted

    def solve_position(state, algo, time_s, depth, iters, seed, tt_bits, round_only, tt_mb,
                       tables=None, fresh=False, huge_pages=False):
        seen["solve"] = dict(time_s=time_s, depth=depth, iters=iters, seed=seed, tt=tt_bits,
                             tt_mb=tt_mb)
        raise Accepted

    monkeypatch.setattr(tournament_mod, "run_tournament", run_tournament)
    monkeypatch.setattr(variants_mod, "analyse", analyse)
    monkeypatch.setattr(solve_mod, "solve_position", solve_position)
    return seen


def invoke(args, tmp_path):
    result = CliRunner().invoke(main, args)
    if isinstance(result.exception, Accepted):
        return ACCEPTED
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, (args, result.output, result.exception)
    assert lines and lines[-1].startswith("Error: "), (args, result.output)
    assert sum(line.startswith("Error") for line in lines) == 1, (args, result.output)
    assert "Traceback" not in result.output
    return lines[-1]


def _finite_params(spec: str) -> None:
    for key, value in parse_spec(spec)[1].items():
        if isinstance(value, float):
            assert math.isfinite(value) and value >= 0, (spec, key, value)
        if isinstance(value, int) and not isinstance(value, bool):
            assert -1 <= value < 2**31, (spec, key, value)


def _check_tournament(seen) -> None:
    config = seen["config"]
    assert 1 <= len(Schedule(config)) <= MAX_GAME_ID and 0 <= config.seed <= MAX_SEED
    assert config.move_time is None or 0 < config.move_time <= MAX_MOVE_SECONDS
    assert 0 <= config.time_margin <= MAX_MOVE_SECONDS
    assert config.max_plies is None or 1 <= config.max_plies <= 10**9
    assert 1 <= seen["executor"].workers <= 4096
    for spec in config.agents:
        _finite_params(spec)


TOURNAMENT_OPTIONS = ["--games", "--rounds", "--players", "--seed", "--max-plies",
                      "--move-time", "--time-margin", "--workers"]


@pytest.mark.parametrize("option", TOURNAMENT_OPTIONS)
def test_tournament_numbers(option, stubs, tmp_path):
    for value in NUMBERS:
        args = ["tournament", "lotus", "--agents", "random", "random", option, value,
                "-o", str(tmp_path / "t")]
        if invoke(args, tmp_path) is ACCEPTED:
            _check_tournament(stubs)


@pytest.mark.parametrize("option", ["--games", "--players", "--seed", "--workers"])
def test_analyse_numbers(option, stubs, tmp_path):
    for value in NUMBERS:
        args = ["analyse", "lotus", "--vary", "rule=basic,pro", option, value,
                "-o", str(tmp_path / "a")]
        if invoke(args, tmp_path) is ACCEPTED:
            exp = stubs["experiment"]
            assert 1 <= exp.games <= 1_000_000 and 0 <= exp.seed <= MAX_SEED


@pytest.mark.parametrize("option", ["--time", "--depth", "--iters", "--seed", "--tt", "--tt-mb"])
def test_solve_numbers(option, stubs, tmp_path):
    for value in NUMBERS:
        if invoke(["solve", "lotus", option, value], tmp_path) is ACCEPTED:
            got = stubs["solve"]
            assert got["time_s"] is None or 0 < got["time_s"] <= MAX_MOVE_SECONDS
            assert got["iters"] is None or 1 <= got["iters"] <= 10**9
            assert got["depth"] is None or 1 <= got["depth"] <= 500
            assert 0 <= got["seed"] <= MAX_SEED and 10 <= got["tt"] <= 28
            assert 1 <= got["tt_mb"] <= 1 << 20


def test_sprt_numbers(stubs, tmp_path):
    for key in ("elo0", "elo1", "alpha", "beta"):
        for value in NUMBERS:
            args = ["tournament", "lotus", "--agents", "random", "greedy", "--sprt",
                    f"{key}={value}", "-o", str(tmp_path / "s")]
            if invoke(args, tmp_path) is ACCEPTED:
                sprt = stubs["config"].sprt
                assert all(math.isfinite(v) for v in sprt.values()), sprt


SPEC_KEYS = {"mcts": ["iters", "time", "c", "cutoff", "gamma", "nodes"],
             "ismcts": ["iters", "time", "c"],
             "alphabeta": ["depth", "time", "tt", "dets"]}


@pytest.mark.parametrize("agent", sorted(SPEC_KEYS))
def test_agent_spec_numbers(agent, stubs, tmp_path):
    for key in SPEC_KEYS[agent]:
        for value in [*NUMBERS, "1s", "-1s", "nans", "1e309s"]:
            args = ["tournament", "lotus", "--agents", "random", f"{agent}:{key}={value}",
                    "-o", str(tmp_path / "t")]
            if invoke(args, tmp_path) is ACCEPTED:
                _check_tournament(stubs)


@pytest.mark.parametrize("spec", [
    "mcts:iters=10,iters=20", "alphabeta:time=1,time=2", "mcts:", "mcts:iters", "mcts:=3",
    ":", "", "mcts:iters=1,,c=1", "mcts:iters==3", "mcts:c=1.4.2", "mcts:solver=maybe",
    "mcts:playout=nope", "nosuch:iters=1", "mcts:iters=1:c=2", "alphabeta:time=1e309",
    "alphabeta:time=inf", "alphabeta:time=nan", "alphabeta:time=-1", "mcts:c=nan",
    "mcts:c=inf", "mcts:c=-1", "mcts:iters=99999999999999999999",
])
def test_bad_agent_specs(spec, stubs, tmp_path):
    for command in (["tournament", "lotus", "--agents", "random", spec],
                    ["analyse", "lotus", "--agent", spec]):
        result = invoke([*command, "-o", str(tmp_path / "x")], tmp_path)
        # empty parts are harmless; `analyse --agent ""` is no --agent (self-play random)
        if spec not in ("mcts:", "mcts:iters=1,,c=1", ""):
            assert result is not ACCEPTED, (command, spec)
