"""Each option the audit found unbounded or crashing is now one `Error:` line and exit
status 2: times, sizes and counts have upper bounds where they are parsed, move text is
ASCII digits or a name, output folders are checked before any work, and executor
addresses are read strictly."""

import os
import stat
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from niwa.analysis.arena import executors
from niwa.analysis.arena.clock import TimeControl, TimeControlError
from niwa.cli.main import main

LOTUS = "lotus towers=1 lane=1 shared=3 trampoline_at=3"


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def refused(r, *words):
    """Exit 2 with one 'Error:' line (no traceback) that holds each of `words`."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    errors = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in r.output, r.output
    for w in words:
        assert w in errors[0], errors[0]


@pytest.mark.parametrize("seconds", ["nan", "0", "-1", "inf", "1e308"])
def test_bench_seconds_are_bounded(seconds):
    refused(run("bench", "lotus", "--seconds", seconds), "--seconds")


@pytest.mark.parametrize("tc", ["1e308", "1e18", "86401", "1e308+0", "1+1e308",
                                "1" * 5000 + "/10", "99999999999999/10"])
def test_huge_time_controls_are_refused(tc, tmp_path):
    refused(run("tournament", "lotus", "--agents", "random", "random", "--games", 2,
                "--tc", tc, "--out", tmp_path / "t"))
    refused(run("tournament", "lotus", "--agents", f"mcts:tc={tc}", "random", "--games", 2,
                "--out", tmp_path / "u"))


@settings(max_examples=60, deadline=None)
@given(base=st.floats(allow_nan=True, allow_infinity=True),
       inc=st.floats(allow_nan=True, allow_infinity=True))
def test_a_time_control_is_finite_and_at_most_a_day_or_refused(base, inc):
    try:
        tc = TimeControl.parse(f"{base!r}+{inc!r}")
    except TimeControlError as e:
        assert "\n" not in str(e)
        return
    assert 0 < tc.base <= 86_400 and 0 <= tc.increment <= 86_400


@pytest.mark.parametrize("move", ["²", "1" * 5000, "٣", "-" + "9" * 30])
def test_odd_move_text_in_show_is_refused(move):
    refused(run("show", LOTUS, "--moves", move), "move 1")


@pytest.mark.parametrize("move, answer", [("²", "unknown or illegal move '²'"),
                                          ("٣", "unknown or illegal move"),
                                          ("1" * 5000, "there is no move 111111111111...")])
def test_odd_move_text_in_play_is_asked_again(move, answer):
    r = run("play", "lotus", "-v", "towers=1", "--p1", "random", "--no-record",
            input=f"{move}\nquit\n")
    assert answer in r.output and "Traceback" not in r.output, r.output
    assert not isinstance(r.exception, ValueError)


@settings(max_examples=80, deadline=None)
@given(text=st.text(min_size=1, max_size=30).filter(lambda t: t.strip() and "\n" not in t))
def test_any_move_text_in_show_is_a_move_or_one_error(text):
    r = run("show", LOTUS, "--moves", text)
    assert r.exit_code in (0, 2) and "Traceback" not in r.output
    if r.exit_code == 2:
        assert r.output.startswith("Error:") and len(r.output.strip().splitlines()) == 1


def _blocked(tmp_path):
    """A path whose parent is a file: no folder can be made there."""
    (tmp_path / "file").write_text("x")
    return tmp_path / "file" / "out"


@pytest.mark.parametrize("command", [
    ["tournament", "lotus", "--agents", "random", "random", "--games", "2", "--workers", "1"],
    ["analyse", "lotus", "--vary", "towers=1,2", "--games", "2", "--workers", "1"],
    ["tune", "lotus", "--agent", "mcts:iters=5,c=1", "--param", "c=0.5:2", "--iterations",
     "1", "--workers", "1"],
])
def test_an_out_folder_that_cannot_be_made_is_one_error(command, tmp_path):
    refused(run(*command, "--out", _blocked(tmp_path)), "--out")


def test_a_book_out_that_cannot_be_made_is_one_error(tmp_path):
    refused(run("book", "build", "lotus", "-v", "towers=1", "-v", "lane=1", "-v", "shared=3",
                "-v", "trampoline_at=3", "--plies", 2, "--tt-mb", 8, "--out",
                _blocked(tmp_path) / "b.npz"), "--out")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_out_folder_is_one_error(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    refused(run("tournament", "lotus", "--agents", "random", "random", "--games", 2,
                "--out", ro / "t"), "--out")


@pytest.mark.parametrize("args, word", [
    (["--games-per-iteration", str(2**63)], "--games-per-iteration"),
    (["--iterations", str(2**63)], "--iterations"),
    (["--max-plies", "0"], "--max-plies"),
    (["--c-frac", "nan"], "--c-frac"),
    (["--seed", "-1"], "--seed"),
])
def test_tune_counts_are_bounded(args, word, tmp_path):
    refused(run("tune", "lotus", "--agent", "mcts:iters=5,c=1", "--param", "c=0.5:2",
                *args, "--out", tmp_path / "t"), word)


@pytest.mark.parametrize("param", ["c=-1e308:1e308", "c=0:1e10", "c=-1e12:0"])
def test_tune_param_ranges_are_bounded(param, tmp_path):
    refused(run("tune", "lotus", "--agent", "mcts:iters=5,c=1", "--param", param,
                "--out", tmp_path / "t"), "--param")


@pytest.mark.parametrize("mb", ["1048576", "900000"])
def test_a_proof_table_above_the_limit_or_the_memory_is_one_error(mb):
    refused(run("solve", LOTUS, "--tt-mb", mb, "--no-tables"))


def test_memory_error_under_a_memory_limit_is_one_error(tmp_path):
    """Under `ulimit -v` the table's mapping fails: one line, not a traceback."""
    import subprocess

    niwa = os.path.join(os.path.dirname(sys.executable), "niwa")
    r = subprocess.run(["bash", "-c", f"ulimit -v 1500000; {niwa} solve '{LOTUS}' "
                        f"--tt-mb 4000 --no-tables"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().startswith("Error:")


def test_too_many_workers_for_the_open_file_limit_is_one_error(monkeypatch, tmp_path):
    monkeypatch.setattr(executors, "most_local_workers", lambda: 200)
    refused(run("tournament", "lotus", "--agents", "random", "random", "--games", 2,
                "--workers", 1000, "--out", tmp_path / "t"), "--workers 1000", "ulimit")


@pytest.mark.parametrize("spec", ["dask://", "dask://host", "dask://:8786", "dask://host:",
                                  "dask://host:99999", "dask://ho st:1", "dask://h:1/x",
                                  "tls://", "dask://[::1]", "tcp://h:abc", "dask:/h:1"])
def test_malformed_dask_addresses_are_one_error(spec, tmp_path):
    refused(run("tournament", "lotus", "--agents", "random", "random", "--games", 2,
                "--executor", spec, "--out", tmp_path / "t"), "--executor")


@pytest.mark.parametrize("spec, address", [("dask://10.0.0.5:8786", "tcp://10.0.0.5:8786"),
                                           ("tls://sched.example:8786",
                                            "tls://sched.example:8786"),
                                           ("dask://[::1]:8786", "tcp://[::1]:8786")])
def test_dask_and_tls_addresses_reach_the_executor(spec, address, monkeypatch):
    seen = {}

    class Stub:
        def __init__(self, where, workers):
            seen["address"] = where

    monkeypatch.setattr(executors, "DaskExecutor", Stub)
    executors.make_executor(spec, None)
    assert seen["address"] == address
