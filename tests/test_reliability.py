"""Issue 13: runs that always finish and files that are never silently wrong.

Faulty agents (a move that never returns, one 10x over its time, a native crash) cost
exactly their games; a kill -9 at any moment is finished by --resume to the files of an
uninterrupted run; a corrupt or edited games.csv / tournament.json is recovered or
refused in one line naming the file and line; a huge schedule starts at once and runs
in constant memory.
"""

import csv
import faulthandler
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from click.testing import CliRunner

from niwa.analysis.arena import games_csv
from niwa.analysis.arena.executors import WATCHDOG_GRACE_S, LocalExecutor
from niwa.analysis.arena.games_csv import CHECK_COLUMN, GameLog, IdSet, csv_columns, row_check
from niwa.analysis.arena.tournament import make_config, run_tournament
from niwa.cli.main import main
from niwa.solver.agents import Agent, register_agent

NIWA = [sys.executable, "-m", "niwa.cli.main"]


# ---- faulty agents (registered here; the forked workers inherit them) -----------------
class SleepsForever(Agent):
    def step(self, state, player):
        time.sleep(3600)


class TenTimesOverItsTime(Agent):
    """Takes 10x its own time= budget on every move."""

    def step(self, state, player):
        time.sleep(10 * self.params["time"])
        return self.rng.choice(state.legal_actions(player))


class Segfaults(Agent):
    def step(self, state, player):
        faulthandler.disable()      # no crash dump in the test output
        os.kill(os.getpid(), signal.SIGSEGV)


register_agent("t_forever", SleepsForever, {}, "test: never returns")
register_agent("t_overrun", TenTimesOverItsTime, {"time": (float, 0.1, "budget")}, "test")
register_agent("t_segv", Segfaults, {}, "test: a native crash")


def games_of(out) -> pd.DataFrame:
    return pd.read_csv(os.path.join(out, "games.csv"), dtype=str, keep_default_na=False)


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["duration_s"]).reset_index(drop=True)


@pytest.mark.parametrize("faulty,move_time,limit,reason", [
    ("t_forever", 0.3, 0.3, "exceeded its time budget: no move after"),
    ("t_overrun:time=0.2", None, 0.2 + 0.1, "exceeded its time budget"),
    ("t_segv", None, None, "crashed the worker process twice (killed by SIGSEGV)"),
])
def test_a_faulty_agent_costs_exactly_its_games(tmp_path, faulty, move_time, limit, reason):
    agents = ["random", "random", faulty]
    config, _ = make_config("lotus", agents, games=2, seed=4, move_time=move_time,
                            time_margin=0.1)
    start = time.monotonic()
    outcome = run_tournament(config, str(tmp_path / "faulty"), LocalExecutor(2),
                             progress=False)
    assert outcome.finished and time.monotonic() - start < 30
    games = games_of(tmp_path / "faulty")
    label = config.labels[2]
    involved = (games["agent_0"] == label) | (games["agent_1"] == label)
    assert involved.sum() == 4 and len(games) == 6
    records = open(tmp_path / "faulty" / "games.jsonl").read().splitlines()
    assert [json.loads(r)["event"]["game_id"] for r in records] == list(range(6))
    for _, row in games[involved].iterrows():
        seat = int(row["error_seat"])
        assert row[f"agent_{seat}"] == label and reason in row["error"]
        assert row[f"result_{seat}"] == "0.0"
        if limit is not None:
            # the forfeit arrives within the limit (margin included) + 1 s (+ polling)
            assert float(row["duration_s"]) < limit + WATCHDOG_GRACE_S + 0.5
    # the other games are those of a run without the faulty agent
    clean, _ = make_config("lotus", ["random", "random", "random"], games=2, seed=4,
                           move_time=move_time, time_margin=0.1)
    run_tournament(clean, str(tmp_path / "clean"), LocalExecutor(2), progress=False)
    reference = games_of(tmp_path / "clean")
    pd.testing.assert_frame_equal(comparable(games[~involved]),
                                  comparable(reference[~involved]))


# ---- kill -9 at any moment, then --resume ---------------------------------------------
TOURNAMENT = ["tournament", "lotus", "--agents", "random", "random", "greedy", "--games",
              "30", "--seed", "8", "--no-progress", "-j", "2", "--resume"]


def _files(out) -> dict:
    names = ("standings.csv", "pairs.csv", "seats.csv")
    return {"games": comparable(games_of(out)).to_csv(),
            **{n: open(os.path.join(out, n)).read() for n in names}}


def _kill_when(args, out, ready, timeout=60):
    """Start the CLI, SIGKILL it (and its workers) as soon as ready(out) holds."""
    proc = subprocess.Popen([*NIWA, *args, "-o", str(out)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline and not ready(out):
            time.sleep(0.001)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def _exists(name):
    return lambda out: os.path.exists(os.path.join(out, name))


def _rows_at_least(n):
    def ready(out):
        path = os.path.join(out, "games.csv")
        return os.path.exists(path) and open(path, "rb").read().count(b"\n") > n
    return ready


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "t"
    r = subprocess.run([*NIWA, *TOURNAMENT, "-o", str(out)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return _files(out)


@pytest.mark.parametrize("when", [
    pytest.param(lambda out: True, id="at-once"),
    pytest.param(_exists("tournament.json"), id="first-write"),
    pytest.param(_exists("games.csv"), id="log-created"),
    pytest.param(_rows_at_least(20), id="mid-run"),
])
def test_kill_9_then_resume_gives_the_uninterrupted_files(tmp_path, uninterrupted, when):
    out = tmp_path / "t"
    _kill_when(TOURNAMENT, out, when)
    r = subprocess.run([*NIWA, *TOURNAMENT, "-o", str(out)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert _files(out) == uninterrupted


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.3, 0.6, 0.9, 1.2, 1.5, 2.0, 3.0])
def test_kill_9_at_timed_moments_then_resume(tmp_path, uninterrupted, delay):
    out = tmp_path / "t"
    start = time.monotonic()
    _kill_when(TOURNAMENT, out, lambda _: time.monotonic() - start > delay)
    for _ in range(2):      # a second kill-and-resume cycle on the same folder
        _kill_when(TOURNAMENT, out, _rows_at_least(40))
    r = subprocess.run([*NIWA, *TOURNAMENT, "-o", str(out)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert _files(out) == uninterrupted


ANALYSE = ["analyse", "lotus", "--vary", "rule=basic,pro", "--games", "20", "--seed", "3",
           "-j", "2", "--resume"]


@pytest.mark.parametrize("when", [
    pytest.param(_exists("analysis.json"), id="first-write"),
    pytest.param(_rows_at_least(15), id="mid-run"),
])
def test_analyse_kill_9_then_resume_gives_the_uninterrupted_files(tmp_path, when):
    reference, out = tmp_path / "ref", tmp_path / "killed"
    r = subprocess.run([*NIWA, *ANALYSE, "-o", str(reference)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    _kill_when(ANALYSE, out, when)
    r = subprocess.run([*NIWA, *ANALYSE, "-o", str(out)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    pd.testing.assert_frame_equal(comparable(games_of(out)), comparable(games_of(reference)))
    assert open(out / "variants.csv").read() == open(reference / "variants.csv").read()


# ---- corrupt or edited files -----------------------------------------------------------
def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(r) -> str:
    """The error of a CLI result that failed with exit 2 and one `Error:` line (after the
    run's announcement lines, if it got that far), no traceback."""
    lines = r.output.strip().splitlines()
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit), r.output
    assert lines[-1].startswith("Error: "), r.output
    assert sum(line.startswith("Error") for line in lines) == 1, r.output
    assert "Traceback" not in r.output
    return lines[-1]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("finished") / "t"
    r = cli("tournament", "lotus", "--agents", "random", "greedy", "--games", "6",
            "--seed", "2", "-j", "1", "-o", out)
    assert r.exit_code == 0, r.output
    return out


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def _edit_line(path, number, edit):
    lines = open(path, "rb").read().split(b"\n")
    lines[number - 1] = edit(lines[number - 1])
    open(path, "wb").write(b"\n".join(lines))


def _field(index, value):
    def edit(line: bytes) -> bytes:
        fields = line.split(b",")
        fields[index] = value
        return b",".join(fields)
    return edit


COLUMNS = [*csv_columns(2), CHECK_COLUMN]
col = COLUMNS.index


@pytest.mark.parametrize("edit,what", [
    (_field(col("result_0"), b"abc"), "checksum"),
    (_field(col("result_0"), b""), "checksum"),
    (_field(col("game_id"), b"x1"), "game_id 'x1' is not an integer"),
    (lambda line: line + b",extra", "fields, expected"),
    (lambda line: line.rsplit(b",", 1)[0], "fields, expected"),
    (lambda line: line.replace(b"random", b"rand\xffom"), "not UTF-8"),
    (lambda line: _swap_results(line), "checksum"),
    (_field(col("plies"), b"7"), "checksum"),
    (_field(col("deal_seed"), b"12345"), "deal_seed"),
])
def test_a_corrupt_row_is_refused_in_one_line_or_dropped_and_replayed(finished, tmp_path,
                                                                      edit, what):
    out = _copy(finished, tmp_path / "t")
    _edit_line(out / "games.csv", 4, edit)
    if what == "deal_seed":     # an edit that keeps the checksum: the schedule still knows
        _edit_line(out / "games.csv", 4, _recheck)
    error = one_line_error(cli("tournament", "--resume", "-o", out))
    assert "games.csv line 4" in error and what in error, error
    r = cli("tournament", "--resume", "-o", out, "--on-bad-rows", "drop")
    assert r.exit_code == 0, r.output
    pd.testing.assert_frame_equal(comparable(games_of(out)), comparable(games_of(finished)))
    assert open(out / "standings.csv").read() == open(finished / "standings.csv").read()


def _csv_line(fields) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(fields)
    return buffer.getvalue().encode()


def _recheck(line: bytes) -> bytes:
    """The row with its checksum recomputed (an edit made by someone who knows it)."""
    fields = next(csv.reader([line.decode()]))
    return _csv_line([*fields[:-1], row_check(fields[:-1], COLUMNS)])


def _swap_results(line: bytes) -> bytes:
    fields = next(csv.reader([line.decode()]))
    a, b = col("result_0"), col("result_1")
    fields[a], fields[b] = fields[b], fields[a]
    return _csv_line(fields)


def test_blank_lines_and_a_torn_last_line_are_recovered(finished, tmp_path):
    out = _copy(finished, tmp_path / "t")
    _edit_line(out / "games.csv", 3, lambda line: line + b"\n\n")
    with open(out / "games.csv", "ab") as f:
        f.write(b"7,3,0,lot")
    r = cli("tournament", "--resume", "-o", out)
    assert r.exit_code == 0, r.output
    assert open(out / "games.csv").read() == open(finished / "games.csv").read()


@pytest.mark.parametrize("edit", [
    lambda meta: {**meta, "seed": 3, "config": {**meta["config"], "seed": 3}},
    lambda meta: {**meta, "config": {**meta["config"], "seed": 3}},
    lambda meta: {**meta, "seed": 3},
])
def test_an_edited_seed_in_tournament_json_is_refused(finished, tmp_path, edit):
    out = _copy(finished, tmp_path / "t")
    meta = json.loads(open(out / "tournament.json").read())
    open(out / "tournament.json", "w").write(json.dumps(edit(meta)))
    error = one_line_error(cli("tournament", "--resume", "-o", out))
    assert "tournament.json" in error and "edited" in error


@pytest.mark.parametrize("text", ["", "{", "[]", '{"config": 3}', "\xff"])
def test_a_broken_tournament_json_is_one_line(finished, tmp_path, text):
    out = _copy(finished, tmp_path / "t")
    open(out / "tournament.json", "w", encoding="latin-1").write(text)
    assert "tournament.json" in one_line_error(cli("tournament", "--resume", "-o", out))


def test_analyse_refuses_a_corrupt_row_and_an_edited_seed(tmp_path):
    out = tmp_path / "a"
    r = cli("analyse", "lotus", "--vary", "rule=basic,pro", "--games", "4", "-j", "1",
            "-o", out)
    assert r.exit_code == 0, r.output
    before = games_of(out)
    _edit_line(out / "games.csv", 3, lambda line: line.replace(b",1.0,", b",0.5,", 1))
    assert "games.csv line 3" in one_line_error(cli("analyse", "--resume", "-o", out))
    r = cli("analyse", "--resume", "-o", out, "--on-bad-rows", "drop")
    assert r.exit_code == 0, r.output
    pd.testing.assert_frame_equal(comparable(games_of(out)), comparable(before))
    meta = json.loads(open(out / "analysis.json").read())
    meta["experiment"]["seed"] = 9
    open(out / "analysis.json", "w").write(json.dumps(meta))
    error = one_line_error(cli("analyse", "--resume", "-o", out))
    assert "analysis.json" in error and "edited" in error


# ---- a schedule of any length ----------------------------------------------------------
class _StopAfter:
    """The local executor, stopped (as by Ctrl-C) after k games; notes when rows arrive."""

    def __init__(self, k):
        self.k, self.arrivals = k, []

    def describe(self):
        return "local, stopped"

    def run(self, tasks):
        for i, row in enumerate(LocalExecutor(2).run(tasks)):
            self.arrivals.append(time.monotonic())
            if i == self.k:
                raise KeyboardInterrupt
            yield row


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))


def test_a_hundred_million_games_start_at_once_in_constant_memory(tmp_path):
    start = time.monotonic()
    config, _ = make_config("lotus", ["random", "random"], games=100_000_000)
    ex = _StopAfter(4000)
    rss = []
    original_append = GameLog.append

    def append(log, row):       # the parent's memory as the log grows
        original_append(log, row)
        if len(log.done) in (1000, 4000):
            rss.append(_rss_kb())
            assert len(log.done.starts) <= 8      # the logged ids: a few ranges

    GameLog.append = append
    try:
        with pytest.raises(KeyboardInterrupt):
            run_tournament(config, str(tmp_path / "big"), ex, progress=False)
    finally:
        GameLog.append = original_append
    assert ex.arrivals[0] - start < 2.0
    assert rss[1] - rss[0] < 2_000, rss     # 3000 more games: under 2 MB more


def test_id_set_keeps_ranges():
    ids = IdSet()
    for gid in [5, 3, 4, 0, 1, 2, 9]:
        ids.add(gid)
    assert (ids.starts, ids.ends, len(ids)) == ([0, 9], [6, 10], 7)
    assert 4 in ids and 7 not in ids and ids.next_missing(0) == 6 and ids.next_missing(7) == 7


@pytest.mark.parametrize("state", ["empty-folder", "record-only", "header-only"])
def test_every_state_of_a_run_killed_before_its_first_game_is_finished(tmp_path, state):
    args = ["tournament", "lotus", "--agents", "random", "greedy", "--games", "4", "-j", "1"]
    reference = tmp_path / "ref"
    assert cli(*args, "-o", reference).exit_code == 0
    out = tmp_path / "t"
    out.mkdir()
    if state == "record-only":
        (out / "tournament.json").write_text((reference / "tournament.json").read_text())
    if state == "header-only":      # the state the old order (log, then record) could leave
        (out / "games.csv").write_text(open(reference / "games.csv").readline())
        r = cli(*args, "-o", out)   # a fresh run accepts it too
        assert r.exit_code == 0, r.output
    else:
        r = cli(*args, "--resume", "-o", out)
        assert r.exit_code == 0, r.output
    pd.testing.assert_frame_equal(comparable(games_of(out)), comparable(games_of(reference)))


def test_the_final_sort_merges_chunks_and_keeps_only_what_counts(tmp_path, monkeypatch):
    monkeypatch.setattr(games_csv, "SORT_CHUNK_ROWS", 3)     # many chunks of 3 rows
    path = str(tmp_path / "games.csv")
    log = GameLog(path, csv_columns(2))
    order = [5, 0, 9, 3, 1, 8, 2, 7, 4, 6, 11, 10]
    for gid in order:
        log.append({c: "" for c in csv_columns(2)} | {
            "game_id": gid, "result_0": "1.0", "result_1": "0.0", "plies": gid, "capped": 0})
    log.rewrite_sorted(keep=lambda gid: gid != 7)
    ids = [int(r["game_id"]) for r in GameLog(path, csv_columns(2)).read_rows()]
    assert ids == [g for g in range(12) if g != 7]
    assert sorted(os.listdir(tmp_path)) == ["games.csv"]     # no chunk files left behind
