"""A checkpoint's history (niwa.solver.proof_history, `niwa solve --checkpoint DIR
--history FILE`): the proof replayed job by job, each row what `--status` says of the log
cut after that job."""

from __future__ import annotations

import json
import math
import shutil

import pandas as pd
import pytest
from click.testing import CliRunner

from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.solver.proof_history import checkpoint_history, first_move_groups, plot_history
from niwa.solver.proof_tree import INF, ProofTree, open_checkpoint

PRO = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A proven checkpoint of many small jobs."""
    d = tmp_path_factory.mktemp("history") / "cp"
    tree = ProofTree(PRO, job_nodes=30, tt_mb=16, checkpoint=d)
    try:
        result = tree.run()
    finally:
        tree.close()
    assert result.proven and result.jobs > 10
    return d, result


def _seen(x):
    return math.inf if x >= INF else float(x)


def test_each_row_is_the_status_of_the_log_cut_after_that_job(finished, tmp_path):
    d, result = finished
    frame = checkpoint_history(d)
    assert frame["job"].tolist() == list(range(1, result.jobs + 1))
    assert frame["nodes"].iloc[-1] == result.nodes
    assert frame["nodes"].is_monotonic_increasing and frame["cpu_s"].is_monotonic_increasing
    lines = (d / "jobs.jsonl").read_text().splitlines(keepends=True)
    for k in (1, 2, len(lines) // 2, len(lines)):
        cut = tmp_path / f"cut{k}"
        shutil.copytree(d, cut)
        (cut / "jobs.jsonl").write_text("".join(lines[:k]))
        tree = open_checkpoint(cut, read_only=True)
        r = tree.result()
        tree.close()
        row = frame.iloc[k - 1]
        assert (row["root_pn"], row["root_dn"]) == (_seen(r.root_pn), _seen(r.root_dn))
        assert row["tree_nodes"] == r.tree_nodes
        assert row["first_moves_decided"] == sum(v is not None for v in r.first_moves.values())
        for name, (pn, dn) in r.first_numbers.items():
            assert (row[f"{name} pn"], row[f"{name} dn"]) == (_seen(pn), _seen(dn)), (k, name)
    # the last row is the finished proof: the root decided for its player's value
    last = frame.iloc[-1]
    assert (last["root_pn"] == 0) == (result.value == 1.0)
    assert (last["root_dn"] == 0) == (result.value == 0.0)
    assert all(pd.notna(frame["started_utc"])) and frame["started_utc"].iloc[0].endswith("Z")


def test_depth_follows_each_deeper_position_as_status_depth_sees_it(finished, tmp_path):
    """--history --depth 2: a column pair for every position the tree held two plies
    down; where it is open, row k has the numbers `--status --depth 2` gives of the log
    cut after job k; once decided it stays decided, after the proof dropped it too."""
    d, result = finished
    frame = checkpoint_history(d, depth=2)
    assert frame.equals(checkpoint_history(d, depth=2))
    plain = checkpoint_history(d)
    assert frame[plain.columns].equals(plain)
    deep = [c[:-3] for c in frame.columns if c.endswith(" pn") and c.count(" ") == 2]
    assert deep and all(len(line.split()) == 2 for line in deep)
    lines = (d / "jobs.jsonl").read_text().splitlines(keepends=True)
    for k in (2, len(lines) // 2, len(lines) - 1):
        cut = tmp_path / f"cut{k}"
        shutil.copytree(d, cut)
        (cut / "jobs.jsonl").write_text("".join(lines[:k]))
        tree = open_checkpoint(cut, read_only=True)
        row = frame.iloc[k - 1]
        for line, pn, dn, _ in tree.open_positions(2):
            assert (row[f"{line} pn"], row[f"{line} dn"]) == (_seen(pn), _seen(dn)), line
        tree.close()
    for line in deep:
        pn, dn = frame[f"{line} pn"], frame[f"{line} dn"]
        decided = ((pn == 0) | (dn == 0)).to_numpy()
        if decided.any():
            assert decided[decided.argmax():].all(), line     # decided for good
    plot_history(frame, tmp_path / "deep.png")
    r = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--history",
                                  str(tmp_path / "deep.csv"), "--depth", "2"])
    assert r.exit_code == 0 and pd.read_csv(tmp_path / "deep.csv").shape == frame.shape


def test_every_kth_job_and_always_the_last(finished):
    d, result = finished
    frame = checkpoint_history(d, every=4)
    assert frame["job"].tolist()[:-1] == list(range(4, result.jobs, 4))[:len(frame) - 1]
    assert frame["job"].iloc[-1] == result.jobs
    with pytest.raises(ValueError, match="every"):
        checkpoint_history(d, every=0)


def test_mirror_first_moves_are_grouped_and_plotted(finished, tmp_path):
    d, _ = finished
    frame = checkpoint_history(d)
    groups = first_move_groups(frame)
    flat = sorted(m for g in groups for m in g)
    assert flat == sorted(c[:-3] for c in frame.columns if c.endswith(" pn"))
    # the pro rule's root is symmetric: W1-a1 and W1-b1 are one position
    assert any(set(g) == {"W1-a1", "W1-b1"} for g in groups)
    plot_history(frame, tmp_path / "h.png")
    assert (tmp_path / "h.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_torn_last_line_is_left_out(finished, tmp_path):
    d, result = finished
    torn = tmp_path / "torn"
    shutil.copytree(d, torn)
    with open(torn / "jobs.jsonl", "a") as f:
        f.write('{"job": 99, "path": [1')
    frame = checkpoint_history(torn)
    assert len(frame) == result.jobs and frame["job"].iloc[-1] == result.jobs


def test_cli_writes_csv_and_plot_and_refuses_bad_requests(finished, tmp_path):
    d, result = finished
    runner = CliRunner()
    before = {p.name: p.stat().st_mtime_ns for p in d.iterdir()}
    out = tmp_path / "progress.csv"
    r = runner.invoke(main, ["solve", "--checkpoint", str(d), "--history", str(out)])
    assert r.exit_code == 0, r.output
    assert f"history of {result.jobs:,} jobs" in r.output
    back = pd.read_csv(out)
    assert len(back) == result.jobs and back["nodes"].iloc[-1] == result.nodes
    assert (tmp_path / "progress.png").stat().st_size > 1000
    assert {p.name: p.stat().st_mtime_ns for p in d.iterdir()} == before   # only read
    r = runner.invoke(main, ["solve", "--checkpoint", str(d), "--history",
                             str(tmp_path / "h.csv"), "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["jobs"] == result.jobs
    for args, says in (
            (["--history", str(tmp_path / "x.png")], "beside it"),
            (["--history", str(tmp_path / "no" / "x.csv")], "no folder"),
            (["--history", str(out), "--certificate", str(tmp_path / "c.npz")], "--certificate"),
    ):
        r = runner.invoke(main, ["solve", "--checkpoint", str(d), *args])
        assert r.exit_code == 2 and says in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1, r.output
    r = runner.invoke(main, ["solve", "lotus", "--checkpoint", str(d), "--history", str(out)])
    assert r.exit_code == 2 and "leave out POSITION" in r.output
    r = runner.invoke(main, ["solve", "--history", str(out)])
    assert r.exit_code == 2 and "--checkpoint" in r.output
    r = runner.invoke(main, ["solve", "--checkpoint", str(tmp_path / "none"), "--history",
                             str(out)])
    assert r.exit_code == 2 and "not a proof checkpoint" in r.output
