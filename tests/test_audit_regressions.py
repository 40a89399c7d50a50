"""One test per class of failure the fault-injection audit (bench/audit/) found and that was
fixed: each input now ends in exactly one `Error: ...` line on stderr and exit status 2
(or is accepted), never a usage block, a warning's source line, or a traceback."""

from __future__ import annotations

import hashlib
import json

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from niwa.cli.main import main

TINY = ["-v", "lane=1", "-v", "shared=3", "-v", "trampoline_at=3", "-v", "towers=2"]


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, prog_name="niwa")


def assert_one_error_line(r, *needles):
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert "Traceback" not in r.output
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def _commands(group, prefix=()):
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*prefix, name))
        else:
            yield [*prefix, name]


# ---- usage errors: Click printed 'Usage: ...' and a hint around the error --------------
@pytest.mark.parametrize("path", list(_commands(main)), ids=" ".join)
def test_an_unknown_option_is_one_error_line_for_every_command(path):
    assert_one_error_line(run(*path, "--no-such-option"), "No such option",
                          f"niwa {' '.join(path)} --help")


def test_unknown_command_and_missing_argument_are_one_line():
    assert_one_error_line(run("bogus"), "No such command")
    assert_one_error_line(run("tables", "build"), "Missing argument")
    assert_one_error_line(run("solve", "lotus", "--algo", "bogus"), "--algo")


def test_help_and_no_arguments_still_show_the_usage():
    assert run("--help").exit_code == 0 and "Usage:" in run("--help").output
    assert "Usage:" in run("new", "--help").output


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(option=st.sampled_from(["--seed", "--players"]),
       value=st.one_of(st.text(max_size=30), st.integers().map(str),
                       st.floats(allow_nan=True, allow_infinity=True).map(str)))
def test_plain_int_options_are_accepted_or_refused_in_one_line(option, value):
    r = run("new", "lotus", option, value)
    if r.exit_code == 0:
        assert r.stdout.startswith("lotus ") and not r.stderr
    else:
        assert_one_error_line(r)


# ---- tables build: the status line was printed before the error -------------------------
def test_tables_build_refusals_are_one_line(tmp_path):
    assert_one_error_line(run("tables", "build", "lotus", "-k", "1", "-v", "rule=bogus",
                              "--dir", tmp_path / "t"), "rule")
    assert_one_error_line(run("tables", "build", "lotus", "-k", "1", "--dir", "x" * 300),
                          "cannot create the tables folder")
    ok = run("tables", "build", "lotus", "-k", "1", *TINY, "--dir", tmp_path / "t",
             "--no-progress")
    assert ok.exit_code == 0, ok.output
    assert_one_error_line(run("tables", "build", "lotus", "-k", "1", *TINY, "--dir",
                              tmp_path / "t"), "exists already")


# ---- tables folders and headers: OSError and OverflowError tracebacks ------------------
def test_a_tables_folder_name_too_long_is_one_line():
    assert_one_error_line(run("tables", "info", "--dir", "x" * 300),
                          "cannot read the tables folder")


@pytest.fixture(scope="module")
def tiny_table(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables")
    r = run("tables", "build", "lotus", "-k", "1", *TINY, "--dir", folder, "--no-progress")
    assert r.exit_code == 0, r.output
    start = run("new", "lotus", *TINY).stdout.strip()
    return folder, start


def _copy(folder, tmp_path):
    import shutil

    shutil.copytree(folder, tmp_path / "t")
    return tmp_path / "t", next((tmp_path / "t").glob("*.json"))


def _redigest(header: dict) -> dict:
    fields = {k: v for k, v in header.items() if k != "sha256"}
    header["sha256"] = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
    return header


@pytest.mark.parametrize("stones", [10**30, -1, 0])
def test_a_header_with_impossible_stones_is_refused_in_one_line(tiny_table, tmp_path, stones):
    folder, start = tiny_table
    copy, header_path = _copy(folder, tmp_path)
    header = json.loads(header_path.read_text())
    header["stones"] = stones
    header_path.write_text(json.dumps(_redigest(header), indent=2) + "\n")
    r = run("tables", "info", "--dir", copy)
    assert r.exit_code == 2 and "Traceback" not in r.output
    probe = run("tables", "probe", start, "--dir", copy)
    assert_one_error_line(probe)


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete-payload"])
def test_probing_past_a_damaged_table_is_one_line_naming_it(tiny_table, tmp_path, damage):
    folder, start = tiny_table
    copy, header_path = _copy(folder, tmp_path)
    if damage == "truncate":
        header_path.write_text(header_path.read_text()[:40])
    elif damage == "flip":
        text = bytearray(header_path.read_bytes())
        text[len(text) // 2] ^= 4
        header_path.write_bytes(bytes(text))
    else:
        next(copy.glob("*.npy")).unlink()
    r = run("tables", "probe", start, "--dir", copy)
    assert r.exit_code == 2 and "Traceback" not in r.output
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr


def test_a_skipped_table_warns_in_one_line_and_the_search_answers(tiny_table, tmp_path):
    folder, start = tiny_table
    copy, header_path = _copy(folder, tmp_path)
    header_path.write_text(header_path.read_text()[:40])
    # a process of its own: pytest records warnings instead of printing them
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", "from niwa.cli.main import main; main()",
                        "solve", start, "--tables", str(copy), "--algo", "mcts", "--iters",
                        "20"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith("warning: endgame table skipped") for line in lines)


# ---- solve --batch: a line per bad position, then the error ----------------------------
def test_a_batch_file_that_is_not_utf8_is_one_error_line(tmp_path):
    batch = tmp_path / "batch.txt"
    batch.write_bytes(b"lotus\n\xff\xfe bad\n")
    r = run("solve", "--batch", batch, "--algo", "mcts", "--iters", "5")
    assert_one_error_line(r, "1 of 2 positions could not be solved", "line 2:")


def test_a_batch_with_bad_lines_ends_in_one_error_line_naming_them(tmp_path):
    batch = tmp_path / "batch.txt"
    batch.write_text("lotus; junk\nhurray\nlotus players=\nlotus towers=1\nbonsai;;\n")
    r = run("solve", "--batch", batch, "--algo", "mcts", "--iters", "10")
    assert_one_error_line(r, "4 of 5 positions could not be solved", "line 1:", "line 2:",
                          "and 1 more")
    assert r.stdout.count("\n") == 2      # the header and the one good position


# ---- play --record: a path that cannot be written was a traceback after the game -------
@pytest.mark.parametrize("where", ["/proc/niwa-no-such/x.jsonl", "/proc/x.jsonl", "x" * 300])
def test_play_refuses_a_record_path_it_cannot_write_before_the_game(where):
    r = run("play", "lotus", "--p0", "random", "--p1", "random", "--record", where)
    assert_one_error_line(r, "--record")
    assert "final returns" not in r.stdout       # refused before any move


def test_play_saves_its_record_where_asked(tmp_path):
    path = tmp_path / "deep" / "game.jsonl"
    r = run("play", "lotus", "--p0", "random", "--p1", "random", "--record", path)
    assert r.exit_code == 0, r.output
    assert len(path.read_text().splitlines()) == 1


# ---- book info: a WHERE too long to be a file name was an OSError traceback ------------
def test_book_info_with_a_name_too_long_is_one_line():
    assert_one_error_line(run("book", "info", "x" * 5000), "unknown game")


# ---- an output folder where no file can be made (/proc, even for root) ------------------
@pytest.mark.parametrize("command", [
    ["tournament", "lotus", "--agents", "random", "random", "--games", "1", "-o", "/proc"],
    ["book", "build", "lotus", *TINY, "--plies", "1", "-o", "/proc/book.npz"],
])
def test_an_output_folder_that_takes_no_file_is_one_line_before_any_work(command):
    assert_one_error_line(run(*command), "/proc")


# ---- the audit itself, on a handful of cases -------------------------------------------
def test_the_audit_harness_runs_a_small_seeded_sample(tmp_path):
    """bench/audit/run.py end to end on ~10 move-text cases: it writes its counts and
    failures and leaves no temporary folder behind."""
    import csv
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "bench" / "audit" / "run.py"
    assert script.exists(), f"the audit harness {script} is missing"
    before = set(Path("/tmp").glob("niwa-audit-*"))
    r = subprocess.run([sys.executable, str(script), "--classes", "moves", "--sample",
                        "0.012", "--no-confirm", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = {row["class"]: row for row in csv.DictReader(open(tmp_path / "counts.csv"))}
    assert int(rows["moves"]["cases"]) >= 5
    assert int(rows["all"]["cases"]) == int(rows["moves"]["cases"])
    assert (tmp_path / "failures.csv").read_text().startswith("class,case,outcome")
    assert set(Path("/tmp").glob("niwa-audit-*")) <= before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(st.text(max_size=40),
                                st.sampled_from(["lotus", "haru", "lotus; junk", "bonsai;;",
                                                 "lotus players=3", "# comment", ""])),
                      min_size=1, max_size=6))
def test_any_batch_is_solved_or_refused_in_one_line(tmp_path, lines):
    batch = tmp_path / "batch.txt"
    batch.write_text("\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines),
                     encoding="utf-8", errors="surrogatepass")   # lone surrogates: bad UTF-8
    r = run("solve", "--batch", batch, "--algo", "mcts", "--iters", "5", "--out",
            tmp_path / "out.csv")
    if r.exit_code != 0:
        assert_one_error_line(r, "could not be solved")


@pytest.mark.parametrize("command", [
    ["tournament", "lotus", "--agents", "greedy:w_bogus=1", "random", "--games", "2"],
    ["analyse", "lotus", "--vary", "rule=basic,pro", "--games", "2", "--agent", "greedy:w_bogus=1"],
    ["tune", "lotus", "--agent", "mcts:iters=5", "--opponent", "greedy:w_bogus=1",
     "--param", "c=0.5:2", "--iterations", "1"],
])
def test_an_evaluation_weight_the_game_lacks_is_one_line_before_any_game(command, tmp_path):
    """It used to pass the start-up checks and forfeit every game (analyse then failed
    drawing game lengths from no game)."""
    out = tmp_path / "out"
    r = CliRunner().invoke(main, [*command, "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines()[-1].startswith("Error: ")
    assert "w_bogus" in r.output and "Traceback" not in r.output
    assert not (out / "games.csv").exists()


def test_resume_refusing_a_damaged_row_prints_only_its_error_line(tmp_path):
    """The run's header (schedule, agents) comes once the folder's games are checked, so
    a refused folder gets exactly one line."""
    out = tmp_path / "t"
    base = ["tournament", "lotus", "--agents", "random", "greedy", "--games", "4",
            "--seed", "5", "-j", "1", "--no-progress", "-q", "--out", str(out)]
    assert CliRunner().invoke(main, base).exit_code == 0
    lines = (out / "games.csv").read_text().splitlines()
    lines[2] = lines[2].replace(",", ";", 3)          # one damaged row
    (out / "games.csv").write_text("\n".join(lines) + "\n")
    r = CliRunner().invoke(main, ["tournament", "--resume", "--out", str(out), "-j", "1",
                                  "--no-progress", "-q"])
    assert r.exit_code == 2, r.output
    assert len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith("Error: ") and "games.csv line" in r.output


# ---- files: a table without its header, a header of another game, a typeless record ---
def test_values_without_their_header_make_tables_info_fail_naming_them(tiny_table, tmp_path):
    folder, _ = tiny_table
    copy, header_path = _copy(folder, tmp_path)
    header_path.unlink()
    r = run("tables", "info", "--dir", copy)
    payload = header_path.with_suffix(".npy")
    assert_one_error_line(r, "damaged")
    assert f"{payload} has no header {header_path.name}" in r.stdout


def test_a_header_of_a_game_without_tables_is_refused(tiny_table, tmp_path):
    folder, start = tiny_table
    copy, header_path = _copy(folder, tmp_path)
    header = json.loads(header_path.read_text())
    header["game"] = "haru"
    header_path.write_text(json.dumps(_redigest(header), indent=2) + "\n")
    r = run("tables", "info", "--dir", copy)
    assert_one_error_line(r, "damaged")
    assert "a table of 'haru'; endgame tables exist for lotus only" in r.stdout


def test_an_analysis_record_with_a_field_of_the_wrong_type_is_one_line(tmp_path):
    out = tmp_path / "t"
    r = run("analyse", "lotus", "--vary", "rule=basic,pro", "--games", 2, "--workers", 1,
            "--out", out)
    assert r.exit_code == 0, r.output
    saved = json.loads((out / "analysis.json").read_text())
    for value in (None, "x", 1.5, True, []):
        meta = json.loads(json.dumps(saved))
        meta["experiment"]["games"] = value        # games is not in the identity digest
        (out / "analysis.json").write_text(json.dumps(meta))
        assert_one_error_line(run("analyse", "--resume", "--out", out, "--workers", 1),
                              "experiment field 'games'", "not a whole number")
