"""External engines as cutechess treats them (docs/engine-protocol.md): clocks reach the
engine, every forfeit has its typed reason in games.csv and games.jsonl, an engine that
cannot start stops the run before its first game, the engine's `id name` labels it,
reads are bounded in size and time, and no engine process (nor anything it started)
outlives its game, its worker or its run.

Every engine here is a throw-away Python script written into tmp_path."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from niwa.analysis.arena.clock import TimeControl
from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.arena.game_loop import play
from niwa.analysis.arena.tournament import make_config, run_tournament
from niwa.ext.game import Rng
from niwa.ext.registry import get_game
from niwa.solver.agents import make_agent
from niwa.solver.protocol import (
    MAX_LINE_BYTES,
    EngineAgent,
    EngineError,
    GoRequest,
    capped_lines,
    check_engines,
    serve,
)

ROOT = Path(__file__).resolve().parent.parent
PYTHON = shlex.quote(sys.executable)


pytestmark = pytest.mark.usefixtures("engine_agent_registered")   # conftest.py


SCRIPT = """
import os, random, subprocess, sys, time
def say(line):
    print(line, flush=True)
def note(name, text=""):
    with open(os.path.join({folder!r}, name), "a") as f:
        f.write(text)
note(f"engine-{{os.getpid()}}.pid")
{setup}
legal = []
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "niwa-engine":
{handshake}
    elif words[0] == "legal":
        legal = words[1:]
    elif words[0] == "isready":
{on_isready}
    elif words[0] == "go":
{on_go}
    elif words[0] == "quit":
        break
"""
HELLO = 'say("id name {name}"); say("games *"); say("ok")'
RANDOM_MOVE = 'say("bestmove " + random.choice(legal))'
# a child that inherits the engine's stdout and outlives it unless its group is killed
CHILD = ('child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]); '
         'note(f"child-{child.pid}.pid")')


def engine(folder: Path, name: str = "fake", *, setup: str = "", handshake: str | None = None,
           on_go: str = RANDOM_MOVE, on_isready: str = 'say("readyok")') -> str:
    """The command line of a scripted engine (see SCRIPT): it notes its pid (and those of
    any child its `setup` starts) in `folder`, shakes hands as `name`, answers `go` with
    `on_go` (a random legal move by default)."""
    script = folder / f"engine_{name}_{len(list(folder.glob('engine_*.py')))}.py"
    script.write_text(SCRIPT.format(
        folder=str(folder), setup=setup,
        handshake=textwrap.indent(handshake or HELLO.format(name=name), " " * 8),
        on_go=textwrap.indent(on_go, " " * 8), on_isready=textwrap.indent(on_isready, " " * 8)))
    return f"{PYTHON} {shlex.quote(str(script))}"


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting to be reaped does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def noted_pids(folder: Path, prefix: str = "") -> list[int]:
    return [int(p.name.split("-")[1].split(".")[0]) for p in folder.glob(f"{prefix}*.pid")]


def all_gone(pids, within: float = 5.0) -> list[int]:
    """The pids still running after waiting up to `within` seconds for them to end."""
    deadline = time.monotonic() + within
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def kill_all(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@pytest.fixture
def folder(tmp_path):
    """Where the engines note their pids; whatever is left running is killed after the
    test (which has already failed if anything was)."""
    path = tmp_path / "engines"
    path.mkdir()
    yield path
    kill_all(noted_pids(path))


# ---- 1. clocks --------------------------------------------------------------------------
def test_clocks_reach_the_engine_in_the_documented_go_line(folder):
    log = folder / "go.log"
    cmd = engine(folder, on_go=f"note('go.log', line); {RANDOM_MOVE}")
    agents = [EngineAgent(cmd), make_agent("random", seed=1)]
    play(get_game("lotus").new(), agents, chance_rng=Rng(1), max_plies=4,
         clocks=[TimeControl.parse("60+1")] * 2)
    agents[0].close()
    lines = log.read_text().splitlines()
    assert lines[0] == "go seat 0 time 60000,60000 inc 1000,1000"     # as the doc shows
    later = GoRequest.parse(lines[1].split()[1:])
    assert later.seat == 0 and later.inc == [1000, 1000]
    assert 55000 < later.time[0] <= 61000 and 55000 < later.time[1] <= 61000


def test_a_seat_without_a_clock_is_a_dash_and_periods_give_movestogo(folder):
    log = folder / "go.log"
    cmd = engine(folder, on_go=f"note('go.log', line); {RANDOM_MOVE}")
    agents = [EngineAgent(cmd), make_agent("random", seed=1)]
    play(get_game("lotus").new(), agents, chance_rng=Rng(1), max_plies=1,
         clocks=[TimeControl.parse("40/60+0.5"), None])
    agents[0].close()
    assert log.read_text().splitlines()[0] == "go seat 0 time 60000,- inc 500,- movestogo 40"


def test_a_served_agent_reads_clocks_with_dashes_and_movestogo():
    out = io.StringIO()
    serve("random", io.StringIO("niwa-engine 1\nposition lotus\n"
                                "go seat 0 time 5000,- inc 100,- movestogo 3\n"), out)
    assert out.getvalue().splitlines()[-1].startswith("bestmove ")
    go = GoRequest.parse("seat 0 time 5000,- inc 100,- movestogo 3".split())
    assert go.clock_of(0) == (5000, 100) and go.clock_of(1) is None
    assert go.budget_seconds(0) == pytest.approx(min(2.5, 5 / 3 + 0.08))


def test_an_engine_on_a_clock_may_think_longer_than_its_timeout(folder):
    """On a clock the clock bounds the wait, not `timeout` (the loop rules the flag)."""
    cmd = engine(folder, on_go=f"time.sleep(1.2); {RANDOM_MOVE}")
    agents = [EngineAgent(cmd, timeout=0.5), make_agent("random", seed=1)]
    result = play(get_game("lotus").new(), agents, chance_rng=Rng(1), max_plies=1,
                  clocks=[TimeControl.parse("10"), None])
    agents[0].close()
    assert not result.forfeited and result.plies == 1


# ---- 1b. preparing for a game, off the move clock ----------------------------------------
# An engine that loads something for a game (a book, an endgame table) for 1 s: at
# `isready GAME ...` when it asked for `features prepare`, else at its first `go`.
LOADER = dict(
    setup="loaded = False",
    on_isready='note("isready.log", line)\n'
               'if len(words) > 1: time.sleep(1.0); loaded = True\n'
               'say("readyok")',
    on_go=f"if not loaded: time.sleep(1.0); loaded = True\n{RANDOM_MOVE}")
PREPARES = 'say("id name loader"); say("games *"); say("features prepare"); say("ok")'


@pytest.mark.parametrize("asks", [True, False])
def test_an_engine_that_asks_to_prepare_loads_before_its_first_timed_move(folder, asks):
    """`features prepare` in the handshake: the game loop's prepare sends `isready` with the
    game and its variant before the first move, untimed, and the engine's 1 s load does
    not count against a 0.5 s move limit. Without it the engine is never sent `isready`,
    loads at its first `go` and forfeits that move on time."""
    cmd = engine(folder, "loader", handshake=PREPARES if asks else None, **LOADER)
    agents = [EngineAgent(cmd), make_agent("random", seed=1)]
    start = get_game("lotus").new(rule="pro", trampoline="mandatory")
    result = play(start, agents, chance_rng=Rng(1), max_plies=4, time_limits=[0.5, None])
    agents[0].close()
    said = (folder / "isready.log").read_text() if (folder / "isready.log").exists() else ""
    if asks:
        assert not result.forfeited, result.error
        assert said == "isready lotus players=2 rule=pro trampoline=mandatory\n"
    else:
        assert result.error_seat == 0 and "time" in result.error and said == ""


@pytest.mark.parametrize("answer, words", [
    ('say("error no table for rule=pro")',
     "could not prepare for 'lotus players=2 rule=pro trampoline=optional': "
     "no table for rule=pro"),
    ("pass", "sent no readyok in time (waited 1 s)"),
])
def test_an_engine_that_cannot_prepare_forfeits_before_its_first_move(folder, answer, words):
    """An `error` answer to `isready GAME`, or silence past `timeout`: the seat forfeits
    before the first move, reason `start`, and the engine is stopped."""
    cmd = engine(folder, handshake=PREPARES, on_isready=answer)
    agents = [EngineAgent(cmd, timeout=1), make_agent("random", seed=1)]
    started = time.monotonic()
    result = play(get_game("lotus").new(rule="pro"), agents, chance_rng=Rng(1))
    assert time.monotonic() - started < 5
    assert result.error_seat == 0 and result.plies == 0 and words in result.error
    assert agents[0].engine is None         # killed, not left waiting


def test_a_served_agent_prepares_for_the_game_named_by_isready(monkeypatch):
    """`niwa engine` asks for `features prepare` and, at `isready GAME VARIANT...`, calls
    its agent's prepare with that variant's start before `readyok`; a position or an
    unknown game there is an error line."""
    random_agent = type(make_agent("random"))
    seen = []
    monkeypatch.setattr(random_agent, "prepare", lambda self, state: seen.append(
        state.to_notation()), raising=False)
    out = io.StringIO()
    serve("random", io.StringIO(
        "niwa-engine 1\nisready\nisready lotus rule=pro trampoline=mandatory\n"
        "isready lotus; x\nisready chess\n"), out)
    lines = out.getvalue().splitlines()
    assert lines[lines.index("ok") - 1] == "features prepare"
    after = lines[lines.index("ok") + 1:]
    assert after[:2] == ["readyok", "readyok"]
    assert after[2] == "error isready takes a game and its variant, not a position"
    assert after[3].startswith("error position must begin with a game name")
    assert seen == [get_game("lotus").new(rule="pro", trampoline="mandatory").to_notation()]


# ---- 2, 6. forfeit reasons and labels through a tournament ---------------------------------
def test_each_forfeit_has_its_reason_in_games_csv_and_jsonl_and_engines_their_names(
        folder, tmp_path):
    started_once = folder / "started-once"
    once = (f'if os.path.exists({str(started_once)!r}): sys.exit(1)\n'
            f'open({str(started_once)!r}, "w").close(); say("games *"); say("ok")')
    specs = {
        "illegal": engine(folder, "illegal-engine", on_go='say("bestmove Z9")'),
        "error": engine(folder, "error-engine", on_go='say("error no idea")'),
        "time": engine(folder, "silent-engine", on_go="pass") + ",timeout=1.5",
        "crash": engine(folder, "crash-engine", on_go="os._exit(3)") + ",name=crasher",
        "start": engine(folder, "once", handshake=once),
    }
    specs = {reason: "engine:cmd=" + cmd for reason, cmd in specs.items()}
    config, _ = make_config("lotus", ["random", *specs.values()], fmt="gauntlet", games=2)
    labels = dict(zip(specs, config.labels[1:], strict=True))
    assert labels == {"illegal": "illegal-engine", "error": "error-engine",
                      "time": "silent-engine", "crash": "crasher",
                      "start": specs["start"]}      # no `id name`: the spec itself
    out = tmp_path / "run"
    run_tournament(config, str(out), LocalExecutor(1), progress=False)
    with open(out / "games.csv") as f:
        rows = list(csv.DictReader(f))
    records = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(rows) == len(records) == 10
    for row, record in zip(rows, records, strict=True):
        seat = int(row["error_seat"])
        reason = next(r for r, label in labels.items() if row[f"agent_{seat}"] == label)
        assert row["termination"] == reason, row["error"]
        assert record["termination"] == "forfeit"
        assert record["forfeit"]["reason"] == reason and record["forfeit"]["seat"] == seat
        assert record["seats"][seat]["agent"] == labels[reason]
    with open(out / "standings.csv") as f:
        assert {r["agent"] for r in csv.DictReader(f)} == {"random", *labels.values()}
    assert not all_gone(noted_pids(folder), within=3)


def test_a_tournament_move_limit_reaches_the_engine_in_go(folder, tmp_path):
    """--move-time is the limit past which a move forfeits: `go` carries it as `limit`
    (ms), beside the movetime of the engine's own time= (whose limit adds the margin)."""
    log = folder / "go.txt"
    on_go = f'open({str(log)!r}, "a").write(line); {RANDOM_MOVE}'
    config, _ = make_config("lotus", ["random", f"engine:cmd={engine(folder, on_go=on_go)}"],
                            games=2, move_time=2, max_plies=6)
    run_tournament(config, str(tmp_path / "run"), LocalExecutor(1), progress=False)
    lines = log.read_text().splitlines()
    assert lines and all(x.startswith("go seat ") and x.endswith(" limit 2000") for x in lines)
    log.unlink()
    own = f"engine:cmd={engine(folder, on_go=on_go)},time=0.25"
    config, _ = make_config("lotus", ["random", own], games=2, max_plies=6, time_margin=0.5)
    run_tournament(config, str(tmp_path / "own"), LocalExecutor(1), progress=False)
    lines = log.read_text().splitlines()
    assert lines and all(x.endswith(" movetime 250 limit 750") for x in lines), lines


def test_names_that_would_merge_two_agents_are_not_used(folder):
    twin = [f"engine:cmd={engine(folder, 'twin')}", f"engine:cmd={engine(folder, 'twin')}"]
    config, _ = make_config("lotus", [*twin, "random"], games=2)
    assert config.labels == [*twin, "random"]
    assert check_engines([twin[0]], "lotus") == {twin[0]: "twin"}


# ---- 3. an engine that cannot start stops the run ------------------------------------------
def test_an_engine_that_cannot_start_stops_the_run_before_its_first_game(folder, tmp_path):
    broken = engine(folder, "broken", handshake='sys.stderr.write("no weights file\\n"); '
                                                'sys.exit(3)')
    result = subprocess.run(
        [sys.executable, "-m", "niwa.cli.main", "tournament", "lotus", "--agents", "random",
         f"engine:cmd={broken}", "--games", "2", "--out", str(tmp_path / "run")],
        capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"Error: engine {broken!r} did not start: exited with code 3: no weights file"]
    assert not (tmp_path / "run" / "games.csv").exists()


@pytest.mark.parametrize("cmd, words", [
    ("no-such-program-anywhere", "did not start: cannot start 'no-such-program-anywhere'"),
    ("lotus-only", "did not start: does not play bonsai (it plays: lotus)"),
    ("refuses", "did not start: refused 'niwa-engine 1': version 2 only"),
])
def test_why_an_engine_did_not_start_is_one_line(folder, cmd, words):
    if cmd == "lotus-only":
        cmd = engine(folder, handshake='say("games lotus"); say("ok")')
    elif cmd == "refuses":
        cmd = engine(folder, handshake='say("error version 2 only")')
    with pytest.raises(EngineError, match=re.escape(words)) as failed:
        make_config("bonsai", ["random", f"engine:cmd={cmd}"], games=2)
    assert failed.value.forfeit_reason == "start"


def test_a_solo_analysis_checks_its_engine_before_the_first_game(folder, tmp_path):
    """Solo cells (one seat, Bonsai's solo mode) start their engine once before the run,
    as tournaments and cells of two or more players do: one that cannot start stops the
    analysis in one line, and one that starts is labelled by its `id name`."""
    from niwa.analysis.experiments.variants import Experiment, plan_cells

    broken = engine(folder, "broken", handshake='sys.stderr.write("no weights file\\n"); '
                                                'sys.exit(3)')
    with pytest.raises(EngineError, match="did not start: exited with code 3: no weights"):
        plan_cells(Experiment("bonsai", players=1, agents=[f"engine:cmd={broken}"], games=2))
    named = f"engine:cmd={engine(folder, 'solo-engine')}"
    cells, _ = plan_cells(Experiment("bonsai", players=1, agents=[named], games=2))
    assert [c.config.labels for c in cells] == [["solo-engine"]]


# ---- 5. bounded reads ---------------------------------------------------------------------
FLOOD = 'while True:\n    say("id name flood")'
SLOW_FLOOD = 'while True:\n    say("id name flood"); time.sleep(0.05)'
NO_NEWLINE = 'while True:\n    sys.stdout.write("x" * 65536); sys.stdout.flush()'


@pytest.mark.parametrize("handshake, timeout, words", [
    (FLOOD, 10, "sent 1000 lines without ending its handshake"),
    (SLOW_FLOOD, 1, "sent no handshake .ok. in time"),
    (NO_NEWLINE, 10, f"sent a line longer than {MAX_LINE_BYTES} bytes"),
])
def test_a_flooding_handshake_fails_to_start_in_bounded_time(folder, handshake, timeout,
                                                              words):
    agent = EngineAgent(engine(folder, handshake=handshake), timeout=timeout)
    started = time.monotonic()
    with pytest.raises(EngineError, match=words) as failed:
        agent.start()
    assert failed.value.forfeit_reason == "start"
    assert time.monotonic() - started < min(timeout, 1) + 3
    assert not all_gone(noted_pids(folder), within=2)


@pytest.mark.parametrize("on_go, words, reason", [
    ('while True:\n    sys.stdout.write("x" * 65536); sys.stdout.flush()',
     "longer than 65536 bytes", "error"),
    ('while True:\n    say("info nodes 1")', "sent no bestmove in time", "time"),
    ('say("bestmove")', "played bestmove without a move", "illegal"),
])
def test_a_move_reply_is_bounded_in_size_and_time(folder, on_go, words, reason):
    agent = EngineAgent(engine(folder, on_go=on_go), timeout=10)
    agent.start()               # a slow machine may take a while to start Python
    agent.timeout = 1           # the wait for a move without a time limit
    started = time.monotonic()
    with pytest.raises(EngineError, match=words) as failed:
        agent.step(get_game("lotus").new(), 0)
    assert failed.value.forfeit_reason == reason
    assert time.monotonic() - started < 4
    assert not all_gone(noted_pids(folder), within=2)


def test_writing_to_an_engine_that_stopped_reading_is_bounded_in_time(folder):
    """An engine that no longer reads its input (its pipe full) fails the write in time,
    reason `time`, instead of blocking the player (or a worker without a move limit)
    forever."""
    import threading

    from niwa.solver.protocol import EngineProcess

    deaf = EngineProcess(f"{PYTHON} -c 'import time; time.sleep(60)'", "'deaf'")
    failed = []

    def write():
        try:
            deaf.send("x" * (1 << 20), deadline=time.monotonic() + 1, allowed=1)
        except EngineError as e:
            failed.append(e)

    writer = threading.Thread(target=write, daemon=True)
    started = time.monotonic()
    writer.start()
    writer.join(10)
    blocked = writer.is_alive()
    deaf.kill()                 # (releases a write that blocked)
    assert not blocked, "the write to an engine that does not read blocked"
    assert time.monotonic() - started < 5
    assert [(str(e), e.forfeit_reason) for e in failed] == [
        ("engine 'deaf' did not read its input in time (waited 1 s)", "time")]


def test_endless_stderr_is_read_but_only_its_start_kept(folder):
    """Stderr is not the protocol: a line without end is drained (the engine never
    blocks on it) and only its first characters are kept for messages."""
    flood = 'sys.stderr.write("e" * (1 << 22)); sys.stderr.flush()'
    agent = EngineAgent(engine(folder, on_go=f"{flood}; {RANDOM_MOVE}"), timeout=5)
    state = get_game("lotus").new()
    assert agent.step(state, 0) in state.legal_actions(0)
    time.sleep(0.2)
    assert all(len(line) <= 303 for line in agent.engine.stderr_tail)
    agent.close()


def test_capped_lines_cut_a_long_line_and_keep_reading():
    data = b"a\n" + b"y" * 10 + b"\nb\r\n" + b"z" * 7
    assert list(capped_lines(io.BytesIO(data), 4)) == [
        (b"a", False), (b"yyyy", True), (b"b\r", False), (b"zzzz", True)]


# ---- 4. process groups ----------------------------------------------------------------------
def test_an_engine_whose_child_holds_its_output_plays_on_and_leaves_nothing(folder, tmp_path):
    """The child inherits the engine's stdout: ending the engine must neither wait for
    that pipe nor leave the child running (its process group is killed)."""
    cmd = engine(folder, "parent", setup=CHILD)
    config, _ = make_config("lotus", ["random", f"engine:cmd={cmd}"], games=2, move_time=2,
                            max_plies=6)
    started = time.monotonic()
    run_tournament(config, str(tmp_path / "run"), LocalExecutor(1), progress=False)
    with open(tmp_path / "run" / "games.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 and not any(r["error"] for r in rows)
    assert time.monotonic() - started < 30
    assert len(noted_pids(folder, "child")) == 3     # the check before the run, 2 games
    assert not all_gone(noted_pids(folder))


def test_the_watchdog_kills_a_stuck_engine_with_its_worker(folder, tmp_path):
    cmd = engine(folder, "stuck", setup=CHILD, on_go="time.sleep(60)")
    config, _ = make_config("lotus", ["random", f"engine:cmd={cmd}"], games=2,
                            move_time=0.3)
    run_tournament(config, str(tmp_path / "run"), LocalExecutor(1), progress=False)
    with open(tmp_path / "run" / "games.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["termination"] for r in rows] == ["time", "time"]
    assert "(stopped)" in rows[0]["error"]
    assert not all_gone(noted_pids(folder))
