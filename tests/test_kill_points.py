"""The kill-point audit: a tournament, an analysis and a tuning run killed (SIGKILL of the
`niwa` process alone, its workers left to notice) at several points, then resumed, end
with every game of the schedule in games.csv AND games.jsonl, equal to an uninterrupted
run with the same seed (tables included), and no process of theirs left behind.
"""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

NIWA = [sys.executable, "-m", "niwa.cli.main"]

RUNS = {
    "tournament": (["tournament", "lotus", "--agents", "random", "random", "greedy",
                    "--games", "8", "--seed", "8", "--no-progress", "-q", "-j", "2",
                    "--resume"], 24, ["standings.csv", "pairs.csv", "seats.csv"]),
    "analyse": (["analyse", "lotus", "--vary", "rule=basic,pro", "--games", "10", "--seed",
                 "3", "-j", "2", "--proof-time", "0", "--resume"], 20, ["variants.csv"]),
    "tune": (["tune", "lotus", "--agent", "mcts:iters=10,c=1", "--param", "c=0.5:3",
              "--iterations", "5", "--seed", "4", "-j", "2", "--resume"], 10,
             ["trajectory.csv"]),
}


def _rows(out) -> list[dict]:
    path = os.path.join(out, "games.csv")
    with open(path, newline="", encoding="utf-8") as f:
        return [{k: v for k, v in row.items() if k != "duration_s"}
                for row in csv.DictReader(f)]


def _records(out) -> list[dict]:
    """Each record without what differs between two plays of the same game (its date and
    thinking times; its checksum leaves them out)."""
    out_records = []
    with open(os.path.join(out, "games.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            r = {k: v for k, v in r.items() if k != "date"}
            r["moves"] = [{k: v for k, v in m.items() if k != "time"} for m in r["moves"]]
            out_records.append(r)
    return out_records


def _result(out, tables) -> dict:
    return {"games": _rows(out), "records": _records(out),
            **{t: open(os.path.join(out, t), encoding="utf-8").read() for t in tables}}


def _session_processes(sid: int) -> list[int]:
    """The processes still alive in session `sid` (the killed run's workers, if any)."""
    alive = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8") as f:
                fields = f.read().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":     # session id; not a zombie
            alive.append(int(name))
    return alive


def _kill_when(args, out, ready, timeout=120) -> None:
    """Start the run in its own session, SIGKILL the `niwa` process alone once ready(out)
    holds, and check that its workers end by themselves."""
    proc = subprocess.Popen([*NIWA, *args, "-o", str(out)], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline and not ready(out):
            time.sleep(0.002)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _session_processes(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _session_processes(proc.pid)
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
    assert not left, f"processes left behind by the killed run: {left}"


def _games_at_least(n):
    def ready(out):
        path = os.path.join(out, "games.csv")
        return os.path.exists(path) and open(path, "rb").read().count(b"\n") > n
    return ready


def _exists(name):
    return lambda out: os.path.exists(os.path.join(out, name))


def _after(seconds):
    """Ready `seconds` after its first call (the run's start)."""
    start: list[float] = []

    def ready(out):
        if not start:
            start.append(time.monotonic())
        return time.monotonic() - start[0] > seconds
    return ready


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Each run uninterrupted, as computed once."""
    done = {}

    def get(kind):
        if kind not in done:
            args, _, tables = RUNS[kind]
            out = tmp_path_factory.mktemp("reference") / kind
            r = subprocess.run([*NIWA, *args, "-o", str(out)], capture_output=True,
                               text=True, timeout=600)
            assert r.returncode == 0, r.stderr
            done[kind] = _result(out, tables)
        return done[kind]
    return get


def _audit(kind, kills, tmp_path, reference) -> None:
    args, total, tables = RUNS[kind]
    out = tmp_path / kind
    for ready in kills:
        _kill_when(args, out, ready)
    r = subprocess.run([*NIWA, *args, "-o", str(out)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    got, want = _result(out, tables), reference(kind)
    assert len(got["games"]) == total
    assert [int(row["game_id"]) for row in got["games"]] \
        == [rec["event"]["game_id"] for rec in got["records"]]
    assert got == want


def test_a_tournament_killed_mid_run_resumes_with_every_record(tmp_path, reference):
    _audit("tournament", [_games_at_least(6)], tmp_path, reference)


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(RUNS))
def test_kill_points_then_resume_equal_the_uninterrupted_run(tmp_path, reference, kind):
    rng = random.Random(kind)
    total = RUNS[kind][1]
    record = {"tournament": "tournament.json", "analyse": "analysis.json",
              "tune": "tune.json"}[kind]
    kills = [_after(0), _exists(record), _exists("games.csv"), _games_at_least(1),
             _games_at_least(total // 3), _games_at_least(2 * total // 3),
             *(_after(rng.uniform(0.5, 3.0)) for _ in range(3))]
    _audit(kind, kills, tmp_path, reference)
