"""Steering a running two-level proof: `niwa solve --checkpoint DIR --focus LINE` while a
run holds DIR hands it the new focus (DIR/focus.steer); the run takes it within seconds,
without a restart, and its jobs go below the new line from then on."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_focus_auto import PRO, position_key

import niwa.solver.proof_tree as proof_tree
from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_tree import CheckpointError, ProofTree, steer_checkpoint


@pytest.fixture(autouse=True)
def at_once(monkeypatch):
    monkeypatch.setattr(proof_tree, "STEER_EVERY_S", 0.0)


def idle_checkpoint(state, d):
    """A checkpoint in `d` after one job, with no run on it."""
    tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d)
    tree.run(max_jobs=1)
    tree.close()


def test_a_running_proof_takes_a_new_focus_without_a_restart(tmp_path):
    state = LotusState(**PRO)
    expected = ProofSearch(tt_mb=16).solve(state, pv=False).value
    d = tmp_path / "run"
    tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d)
    try:
        tree.run(max_jobs=2)        # (the run holds the lock from here to close())
        line = "W1-a1 W2-2"
        r = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--focus", line])
        assert r.exit_code == 0 and "takes the focus W1-a1 W2-2" in r.output, r.output
        assert (d / "focus.steer").exists()
        before = len((d / "jobs.jsonl").read_text().splitlines())
        assert tree.run().value == expected
        assert tree.steered == 1 and tree.focus_text() == line
        assert not (d / "focus.steer").exists()
    finally:
        tree.close()
    rows = [json.loads(x) for x in (d / "jobs.jsonl").read_text().splitlines()][before:]
    target = position_key(state, tree.focus[0])
    decided = next(i for i, row in enumerate(rows)
                   if len(row["path"]) >= 2 and position_key(state, row["path"][:2]) == target
                   and (row["pn"] == 0 or row["dn"] == 0))
    assert all(len(row["path"]) >= 2 and position_key(state, row["path"][:2]) == target
               for row in rows[:decided + 1])
    snap = json.loads((d / "tree.json").read_text())
    assert snap["focus"] == line


def test_steering_needs_a_running_proof_a_good_line_and_nothing_else(tmp_path):
    state, d = LotusState(**PRO), tmp_path / "run"
    idle_checkpoint(state, d)
    with pytest.raises(CheckpointError, match="no proof is running"):
        steer_checkpoint(d, ["W1-a1"])
    assert not (d / "focus.steer").exists()
    tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d)
    try:
        for args, says in ((["--focus", "W9"], "not a move of the root"),
                           (["--focus", "auto", "--workers", "2"], "--workers cannot change"),
                           (["--focus", "auto", "--tt-mb", "64"], "--tt-mb cannot change")):
            r = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), *args])
            assert r.exit_code == 2 and says in r.output, r.output
            assert len(r.output.strip().splitlines()) == 1
        assert not (d / "focus.steer").exists()
        r = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--focus", "auto",
                                      "--json"])
        assert r.exit_code == 0 and json.loads(r.output)["steered"], r.output
        # a steering file that does not parse is dropped, not taken
        (d / "focus.steer").write_text("{not json")
        tree.run(max_jobs=1)
        assert tree.steered == 0 and not (d / "focus.steer").exists()
    finally:
        tree.close()
    # one left behind by a run that ended first is not taken by the next run
    (d / "focus.steer").write_text('["W1-a1"]')
    tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d)
    try:
        assert not (d / "focus.steer").exists()
        tree.run(max_jobs=1)
        assert tree.steered == 0 and not tree.focus
    finally:
        tree.close()


def test_a_focus_steered_while_a_resumed_run_replays_its_log_is_taken(tmp_path):
    """A resumed run holds its checkpoint from the start of its replay (a long log takes
    minutes), so `--steer` accepts a new focus then: the run takes it, it does not drop it
    as a file an earlier run left behind."""
    state, d = LotusState(**PRO), tmp_path / "run"
    idle_checkpoint(state, d)
    said = []

    def steer_once(tree, row):
        if not said:
            said.append(steer_checkpoint(d, ["W1-a1"]))

    tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d, on_replay=steer_once)
    try:
        assert said == ["W1-a1"] and (d / "focus.steer").exists()
        tree.run(max_jobs=1)
        assert tree.steered == 1 and tree.focus_text() == "W1-a1"
    finally:
        tree.close()


def test_steer_flag_steers_a_running_proof_and_never_starts_one(tmp_path):
    state, d = LotusState(**PRO), tmp_path / "run"
    idle_checkpoint(state, d)
    jobs = (d / "jobs.jsonl").read_text()
    for args, says in ((["--focus", "W1-a1", "--steer"], "no proof is running"),
                       (["--steer"], "--steer needs --focus"),
                       (["--status", "--steer", "--focus", "auto"], "--focus is for a run")):
        r = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), *args])
        assert r.exit_code == 2 and says in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1
    # nothing ran: no job added, no steering file left
    assert (d / "jobs.jsonl").read_text() == jobs
    assert not (d / "focus.steer").exists()
    r = CliRunner().invoke(main, ["solve", "--checkpoint", str(tmp_path / "none"), "--focus",
                                  "W1-a1", "--steer"])
    assert r.exit_code == 2 and "no proof is running" in r.output
    assert not (tmp_path / "none").exists()
    tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d)
    try:
        r = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--focus", "W1-a1",
                                      "--steer", "--json"])
        assert r.exit_code == 0 and json.loads(r.output)["steered"], r.output
        tree.run(max_jobs=1)
        assert tree.steered == 1 and tree.focus_text() == "W1-a1"
    finally:
        tree.close()
