"""`--focus auto`: the two-level proof chooses its own focus, the open position a few plies
down nearest to being decided, and keeps it until it is decided (and across a resume)."""

from __future__ import annotations

import itertools
import json

import pytest
from click.testing import CliRunner

from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_tree import (
    AutoFocus,
    FocusError,
    ProofTree,
    look_at_checkpoint,
    open_checkpoint,
)

PRO = dict(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")


def position_key(state, path):
    """The position a line of actions reaches, under the lane mirror (as the top tree keys it)."""
    s = state.clone()
    for a in path:
        s.apply(a)
    return s.symmetric_hash(), s.current_player()


class Recording:
    """One job at a time, in this process; notes the tree's auto choice as each job is
    sent (jobs.jsonl then has the jobs in the same order)."""

    name = "recording"
    workers = 1

    def __init__(self):
        self.tree, self.chosen = None, []

    def run(self, tasks):
        for task in tasks:
            self.chosen.append(self.tree.auto_line)
            yield task()


def _paths(d):
    return [json.loads(x)["path"] for x in (d / "jobs.jsonl").read_text().splitlines()]


def test_auto_focus_keeps_each_choice_until_it_is_decided_and_proves_the_value(tmp_path):
    state = LotusState(**PRO)
    expected = ProofSearch(tt_mb=16).solve(state, pv=False).value
    d = tmp_path / "run"
    ex = Recording()
    tree = ex.tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d, focus=["auto"])
    try:
        assert tree.focus_text() == "the open position 2 plies down nearest to being decided"
        assert tree.run(ex).value == expected
    finally:
        tree.close()
    paths = _paths(d)
    assert len(paths) == len(ex.chosen)
    # every job lies below the position chosen when it was sent
    for path, line in zip(paths, ex.chosen, strict=True):
        assert line is not None
        assert len(path) >= len(line)
        assert position_key(state, path[:len(line)]) == position_key(state, line)
    # several positions were chosen in turn, and none came back: each kept its jobs until
    # it was decided
    turns = [k for k, _ in itertools.groupby(position_key(state, line) for line in ex.chosen)]
    assert len(turns) >= 2 and len(turns) == len(set(turns))
    # a choice was dropped only once the jobs so far had decided it (the log replayed)
    decided: list = []
    look = open_checkpoint(d, read_only=True, on_replay=lambda t, row: decided.append(
        {k for k in turns if k in t.by_key and t.by_key[k].proven}))
    look.close()
    for j in range(1, len(ex.chosen)):
        old = position_key(state, ex.chosen[j - 1])
        if position_key(state, ex.chosen[j]) != old:
            assert old in decided[j - 1], f"the choice was dropped at job {j} while open"


def test_the_choice_is_saved_and_a_resumed_auto_focus_goes_on_with_it(tmp_path):
    state = LotusState(**PRO)
    d = tmp_path / "run"
    ex = Recording()
    tree = ex.tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d, focus=["auto"])
    try:
        r = tree.run(ex, max_jobs=3)
    finally:
        tree.close()
    assert not r.proven
    chosen = ex.chosen[-1]
    look, _ = look_at_checkpoint(d)
    assert look.auto_line == chosen
    out = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--status"])
    assert out.exit_code == 0 and "--focus auto chose" in out.output, out.output
    assert not look.node_at(chosen).proven      # (three jobs do not decide it here)
    again = Recording()
    tree = again.tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d, focus=["auto"])
    try:
        tree.run(again, max_jobs=1)
    finally:
        tree.close()
    assert again.chosen == [chosen]
    path = _paths(d)[-1]
    assert position_key(state, path[:len(chosen)]) == position_key(state, chosen)


def test_auto_focus_words(tmp_path):
    assert AutoFocus.parse("auto") == AutoFocus(2) and AutoFocus.parse("AUTO:3") == AutoFocus(3)
    assert AutoFocus.parse("W2-a2") is None
    state = LotusState(**PRO)
    for bad in ("auto:0", "auto:x", "auto:21"):
        with pytest.raises(FocusError, match="auto:PLIES wants PLIES from 1 to 20"):
            ProofTree(state, focus=[bad])
    out = CliRunner().invoke(main, ["solve", state.to_notation(), "--checkpoint", str(tmp_path / "x"),
                                    "--focus", "auto:0"])
    assert out.exit_code == 2 and "auto:PLIES" in out.output
    assert len(out.output.strip().splitlines()) == 1 and not (tmp_path / "x").exists()
