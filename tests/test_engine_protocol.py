"""The engine protocol (docs/engine-protocol.md): external programs play as niwa agents,
niwa agents serve as engines, and every way an engine can fail is one clear error."""

from __future__ import annotations

import csv
import io
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from niwa.ext.game import Rng
from niwa.ext.registry import get_game, sample_outcome
from niwa.solver.agents import AgentError, make_agent, parse_spec
from niwa.solver.protocol import (
    EngineAgent,
    EngineError,
    GoRequest,
    decode_joint,
    decode_move,
    encode_joint,
    encode_move,
    parse_info,
    parse_information_state,
    serve,
)

ROOT = Path(__file__).resolve().parent.parent
PYTHON = shlex.quote(sys.executable)
RANDOM_ENGINE = f"{PYTHON} {shlex.quote(str(ROOT / 'docs/examples/random_engine.py'))} 1"
NIWA = f"{PYTHON} -m niwa.cli.main"
MCTS_ENGINE = f"{NIWA} engine mcts iters=200"



pytestmark = pytest.mark.usefixtures("engine_agent_registered")   # conftest.py


def play(game: str, agents, seed: int = 1, **variant):
    """A whole game over the State API; returns the final state and the plies played."""
    state = get_game(game).new(seed=seed, **variant)
    chance = Rng(seed)
    for agent in agents:
        agent.reset()
    plies = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply(sample_outcome(state.chance_outcomes(), chance))
        elif state.is_simultaneous_node():
            state.apply_joint([agents[q].step(state.clone(), q) if state.legal_actions(q) else -1
                               for q in range(state.num_players)])
        else:
            state.apply(agents[state.current_player()].step(state.clone(), state.current_player()))
        plies += 1
    return state, plies


@pytest.fixture
def engines():
    """Engine agents made by a test, always killed afterwards."""
    made = []

    def make(cmd, **params):
        agent = EngineAgent(cmd, **params)
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()


def fake_engine(tmp_path, on_go: str, games: str = "*") -> str:
    """A command line running a scripted engine: it shakes hands properly, then runs the
    Python statement `on_go` whenever it is asked to move."""
    script = tmp_path / "fake_engine.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        def say(line):
            print(line, flush=True)
        for line in sys.stdin:
            word = line.split()[0] if line.split() else ""
            if word == "niwa-engine":
                say("id name fake"); say("games {games}"); say("ok")
            elif word == "go":
                {on_go}
            elif word == "quit":
                break
    """))
    return f"{PYTHON} {shlex.quote(str(script))}"


# ---- wire format -------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["W1-a1", "meditate 1:MA", "goals brown+green+blue",
                                  "odd_name 100%", "W@1,1"])
def test_move_tokens_round_trip_without_spaces(text):
    token = encode_move(text)
    assert " " not in token and decode_move(token) == text


def test_joint_moves_split_by_seat_even_when_a_move_holds_a_plus():
    assert encode_joint(["Y4", "R6"]) == "Y4+R6"
    assert decode_joint(encode_joint(["a+b", "c d"])) == ["a+b", "c d"]


def test_go_line_round_trips_and_gives_a_budget():
    go = GoRequest(seat=1, time=[60000, 30000], inc=[1000, 1000])
    assert go.to_line() == "go seat 1 time 60000,30000 inc 1000,1000"
    assert GoRequest.parse(go.to_line().split()[1:]) == go
    assert 1.0 < go.budget_seconds(1) < 15.0
    assert GoRequest.parse(["movetime", "250", "future", "x"]).budget_seconds(0) == 0.25
    assert GoRequest().budget_seconds(0) is None
    with pytest.raises(ValueError, match="movetime"):
        GoRequest.parse(["movetime", "fast"])


def test_info_lines_are_parsed_and_unknown_keys_skipped():
    info = parse_info("value 0.6 depth 5 nodes 1200 hashfull 3 pv meditate_1:MA stop".split())
    assert info == {"value": 0.6, "depth": 5, "nodes": 1200, "pv": ["meditate 1:MA", "stop"]}
    assert parse_info("string thinking hard".split()) == {"string": "thinking hard"}


# ---- the agent spec ------------------------------------------------------------------------
def test_spec_keeps_spaces_slashes_colons_and_equals_in_cmd():
    assert parse_spec("engine:cmd=python3 docs/examples/random_engine.py") == \
        ("engine", {"cmd": "python3 docs/examples/random_engine.py"})
    assert parse_spec("engine:cmd=niwa engine mcts:iters=200,timeout=5s,name=old") == \
        ("engine", {"cmd": "niwa engine mcts:iters=200", "timeout": 5.0, "name": "old"})


def test_engine_spec_needs_a_command_and_starts_nothing_when_built():
    with pytest.raises(AgentError, match="needs cmd="):
        make_agent("engine")
    agent = make_agent("engine:cmd=no-such-program-anywhere")
    assert agent.engine is None          # started at its first move


# ---- the client against real engines ----------------------------------------------------------
def test_handshake_reports_name_and_games(engines):
    info = engines(RANDOM_ENGINE).start()
    assert (info.name, info.games) == ("random-engine", ("*",))
    info = engines(MCTS_ENGINE).start()
    assert info.name == "niwa mcts:iters=200" and {"lotus", "haru", "bonsai"} <= set(info.games)


@pytest.mark.parametrize("game, variant", [("lotus", {}), ("haru", {}),
                                           ("haru", {"view": "turn"}), ("bonsai", {})])
def test_a_plain_python_engine_plays_a_whole_game_against_a_served_niwa_agent(
        engines, game, variant):
    agents = [engines(RANDOM_ENGINE), engines(MCTS_ENGINE)]
    state, plies = play(game, agents, **variant)
    assert state.is_terminal() and plies > 10
    assert agents[1].analysis().pv and agents[1].analysis().nodes


@pytest.mark.skipif(not Path("/bin/sh").exists(), reason="needs a POSIX shell")
def test_an_engine_in_shell_plays_a_whole_game(engines):
    shell_engine = f"sh {shlex.quote(str(ROOT / 'docs/examples/first_move_engine.sh'))}"
    state, plies = play("bonsai", [engines(shell_engine), engines(RANDOM_ENGINE)])
    assert state.is_terminal() and plies > 10


def test_served_agent_wins_most_lotus_games(engines):
    """Not a strength test: a served agent that ignored the position would lose half."""
    agents = [engines(RANDOM_ENGINE), engines(MCTS_ENGINE)]
    wins = sum(play("lotus", agents, seed=seed)[0].winner() == 1 for seed in range(3))
    assert wins >= 2


def test_same_engine_plays_several_games_after_reset(engines):
    agent = engines(MCTS_ENGINE)
    play("lotus", [agent, engines(RANDOM_ENGINE)], seed=1)
    first = agent.engine.proc.pid
    play("lotus", [agent, engines(RANDOM_ENGINE)], seed=2)
    assert agent.engine.proc.pid == first     # a healthy engine is reused: newgame


# ---- failures ------------------------------------------------------------------------------
def test_killing_the_engine_mid_game_raises_promptly(engines):
    agent = engines(MCTS_ENGINE)
    state = get_game("lotus").new()
    state.apply(agent.step(state, 0))
    os.kill(agent.engine.proc.pid, signal.SIGKILL)
    started = time.monotonic()
    with pytest.raises(EngineError, match=r"exited with code -9"):
        agent.step(state, 1)
    assert time.monotonic() - started < 2.0


def test_a_silent_engine_times_out(engines, tmp_path):
    agent = engines(fake_engine(tmp_path, "pass"), timeout=0.5)
    started = time.monotonic()
    with pytest.raises(EngineError, match="sent no bestmove in time"):
        agent.step(get_game("lotus").new(), 0)
    assert time.monotonic() - started < 2.0
    assert agent.engine is None               # killed: it is not asked again


def test_an_engine_silent_in_the_handshake_times_out(engines):
    agent = engines(f"{PYTHON} -c 'import time; time.sleep(30)'", timeout=0.5)
    with pytest.raises(EngineError, match="no handshake"):
        agent.step(get_game("lotus").new(), 0)


def test_an_illegal_move_is_reported(engines, tmp_path):
    agent = engines(fake_engine(tmp_path, 'say("info value 0.5"); say("bestmove Z9-z9")'))
    with pytest.raises(EngineError, match=r"illegal move 'Z9-z9' for seat 0 in lotus; legal: W1-"):
        agent.step(get_game("lotus").new(), 0)


def test_an_engine_error_reply_is_reported(engines, tmp_path):
    agent = engines(fake_engine(tmp_path, 'say("error out of ideas")'))
    with pytest.raises(EngineError, match="reported an error: out of ideas"):
        agent.step(get_game("lotus").new(), 0)


def test_a_crash_shows_the_engines_last_words(engines, tmp_path):
    agent = engines(fake_engine(tmp_path, 'sys.stderr.write("boom: no table\\n"); sys.exit(3)'))
    with pytest.raises(EngineError, match="exited with code 3: boom: no table"):
        agent.step(get_game("lotus").new(), 0)


def test_an_engine_that_closes_stdout_is_reported(engines, tmp_path):
    agent = engines(fake_engine(tmp_path, "import os; os.close(1); time.sleep(30)"), timeout=5)
    started = time.monotonic()
    with pytest.raises(EngineError, match="closed its output"):
        agent.step(get_game("lotus").new(), 0)
    assert time.monotonic() - started < 2.5


def test_a_missing_program_and_a_game_the_engine_does_not_play(engines, tmp_path):
    with pytest.raises(EngineError, match="cannot start 'no-such-program-anywhere'"):
        engines("no-such-program-anywhere --flag").step(get_game("lotus").new(), 0)
    agent = engines(fake_engine(tmp_path, "pass", games="lotus"))
    with pytest.raises(EngineError, match="does not play bonsai"):
        agent.step(get_game("bonsai").new(seed=1), 0)


def test_close_and_garbage_collection_end_the_process(engines):
    agent = EngineAgent(RANDOM_ENGINE)
    agent.start()
    proc = agent.engine.proc
    agent.close()
    assert proc.poll() is not None
    agent = EngineAgent(RANDOM_ENGINE)
    agent.start()
    proc = agent.engine.proc
    del agent
    proc.wait(timeout=2)


# ---- the server in process -----------------------------------------------------------------
def converse(spec: str, *commands: str) -> list[str]:
    out = io.StringIO()
    serve(spec, io.StringIO("\n".join(commands) + "\n"), out)
    return out.getvalue().splitlines()


def test_server_handshake_and_errors():
    lines = converse("random", "go", "niwa-engine 2", "niwa-engine 1", "fly", "go", "quit",
                     "isready")
    assert lines[0] == "error say 'niwa-engine 1' first"
    assert lines[1].startswith("error unsupported protocol version '2'")
    assert lines[2:4] == ["id name niwa random", "id author niwa " + lines[3].split()[-1]]
    assert lines[4].startswith("games lotus") and lines[5:7] == ["features prepare", "ok"]
    assert lines[7:] == ["error unknown command 'fly'", "error go needs a position first"]


def test_server_applies_moves_and_answers_for_the_given_seat():
    lines = converse("random", "niwa-engine 1", "position lotus", "moves W1-a1 B1-b1",
                     "go", "position bonsai", "go", "position lotus", "moves Q7",
                     "position lotus; nonsense")
    after_ok = lines[lines.index("ok") + 1:]
    assert after_ok[0].startswith("info") and after_ok[1].startswith("bestmove ")
    state = get_game("lotus").new()
    state.apply("W1-a1")
    state.apply("B1-b1")
    assert decode_move(after_ok[1].split()[1]) in {state.action_to_string(a)
                                                   for a in state.legal_actions()}
    assert after_ok[2] == "error the position is a chance node: engines do not choose chance"
    assert after_ok[3].startswith("error unknown or illegal action 'Q7'")
    assert after_ok[4].startswith("error ") and len(after_ok) == 5


def test_server_plays_a_hidden_hand_from_the_information_state_only():
    state = get_game("haru").new(seed=3)
    while not state.is_simultaneous_node():
        state.apply(sample_outcome(state.chance_outcomes(), Rng(1)))
    info = state.information_state(1)
    assert "???" in info
    guessed, hidden = parse_information_state(info)
    assert hidden and guessed.information_state(1) == info
    lines = converse("mcts:iters=100", "niwa-engine 1", "position " + info, "go seat 1",
                     "moves Y1+R1", "go")
    best = decode_move(lines[-3].split()[1])
    assert best in {state.action_to_string(a, 1) for a in state.legal_actions(1)}
    assert lines[-2] == ("error moves cannot follow a position with hidden parts; "
                         "send the new position instead")
    assert lines[-1] == "error go needs 'seat N' at a simultaneous node"


@pytest.mark.parametrize("spec", ["mcts:time=30s", "perfect:time=30,tables=false"])
def test_server_passes_movetime_to_an_agent_with_a_time_parameter(spec):
    """(perfect read its `time` once when made, so a served perfect ignored movetime)"""
    started = time.monotonic()
    lines = converse(spec, "niwa-engine 1", "position lotus rule=pro", "go movetime 200")
    assert lines[-1].startswith("bestmove") and time.monotonic() - started < 5


# ---- through the command line ---------------------------------------------------------------
def _niwa(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "niwa.cli.main", *args], capture_output=True,
                          text=True, cwd=ROOT, **kwargs)


def test_tournament_with_engine_agents(tmp_path):
    """The engine agent reaches `niwa tournament` through the niwa.agents entry point."""
    assert "engine " in _niwa("agents", timeout=60).stdout
    result = _niwa("tournament", "lotus", "--agents", f"engine:cmd={RANDOM_ENGINE}",
                   f"engine:cmd={MCTS_ENGINE}", "--games", "2", "--workers", "1",
                   "--out", str(tmp_path / "run"), timeout=120)
    assert result.returncode == 0, result.stderr
    assert "2 games" in result.stdout
    with open(tmp_path / "run" / "games.csv") as f:
        games = list(csv.DictReader(f))
    assert len(games) == 2 and not any(g["error"] for g in games)


def test_an_engine_killed_mid_game_costs_that_game_only(tmp_path):
    """The random engine behind a wrapper that kills it on its third move of the first
    game it plays (a marker file makes it happen once): that game is a forfeit with the
    reason, and every other game of the tournament is played normally."""
    marker = tmp_path / "killed-once"
    wrapper = tmp_path / "dies_once.py"
    wrapper.write_text(
        "import os, subprocess, sys\n"
        f"engine = subprocess.Popen([sys.executable, {str(ROOT / 'docs/examples/random_engine.py')!r}],\n"
        "                          stdin=subprocess.PIPE, stdout=sys.stdout, text=True)\n"
        "goes = 0\n"
        "for line in sys.stdin:\n"
        "    engine.stdin.write(line); engine.stdin.flush()\n"
        "    goes += line.startswith('go')\n"
        f"    if goes == 3 and not os.path.exists({str(marker)!r}):\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "        engine.kill(); os._exit(1)\n")
    result = _niwa("tournament", "lotus", "--agents", f"engine:cmd={sys.executable} {wrapper}",
                   "random", "--games", "4", "--workers", "1",
                   "--out", str(tmp_path / "run"), timeout=180)
    assert result.returncode == 0, result.stderr
    with open(tmp_path / "run" / "games.csv") as f:
        games = list(csv.DictReader(f))
    failed = [g for g in games if g["error"]]
    assert len(games) == 4 and len(failed) == 1 and marker.exists()
    assert "engine" in failed[0]["error"]


def test_a_served_best_takes_each_moves_movetime():
    """best resolves its agent at the first move; a later `go movetime` still holds
    (it kept the first move's time for every move after it)."""
    lines = converse("best", "niwa-engine 1", "position lotus rule=pro", "go movetime 100",
                     "go movetime 900")
    spent = [parse_info(line.split()[1:])["time"] for line in lines if line.startswith("info")]
    assert len(spent) == 2 and spent[0] < 600 <= spent[1], spent
