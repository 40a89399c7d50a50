"""Proof-set numbers (niwa.solver.proof_sets) and the two-level proof's `set_plies`: the
first plies below the focus chosen by proof sets, where a transposed leaf counts once."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_sets import proof_set, set_line
from niwa.solver.proof_tree import INF, Node, ProofTree, open_checkpoint

PRO = dict(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")


def diamond():
    """Seat 0 moves at the root: to `a`, where seat 1's two replies both lead to one leaf
    `shared` (seat 1 to move, dn 4), or to the leaf `b` (seat 1 to move, dn 6). The tree's
    sum says a costs seat 0 8 (4 on each path), the proof set 4."""
    root = Node(1, (), None, 0, 1, 1, 0)                  # inner nodes: numbers unused
    a, b = Node(2, (0,), root, 1, 1, 1, 1), Node(3, (1,), root, 1, 9, 6, 1)
    c1, c2 = Node(4, (0, 0), a, 0, 1, 1, 2), Node(5, (0, 1), a, 0, 1, 1, 2)
    shared = Node(6, (0, 0, 0), c1, 1, 7, 4, 3)
    shared.parents.append(c2)
    root.children, a.children = [a, b], [c1, c2]
    c1.children = c2.children = [shared]
    return root, a, b, shared


def test_a_shared_leaf_counts_once():
    root, a, b, shared = diamond()
    memo: dict = {}
    assert proof_set(a, 0, memo) == (4, frozenset({6}))
    assert proof_set(root, 0, memo) == (4, frozenset({6}))
    # seat 1 refutes the root by refuting both moves: shared's pn 7 (its mover, seat 1,
    # wins through one reply) and b's pn 9
    assert proof_set(root, 1, {}) == (16, frozenset({6, 3}))
    shared.pn, shared.dn = INF, 0                          # seat 0 has won `shared`
    assert proof_set(root, 0, {}) == (0, frozenset())
    assert proof_set(a, 1, {}) == (INF, None)


def test_set_line_takes_the_lightest_proof_set_where_the_tree_sums_twice():
    root, a, b, shared = diamond()
    assert set_line(root, 0) == [root]
    assert set_line(root, 1) == [root, a]          # the tree's numbers would take b (6 < 8)
    assert set_line(root, 5) == [root, a, a.children[0], shared]      # stops at the leaf
    b.dn = 3
    assert set_line(root, 1) == [root, b]


@pytest.mark.parametrize("variant", [dict(PRO), dict(PRO, trampoline="mandatory"),
                                     dict(PRO, rule="basic", lane=2, shared=3,
                                          trampoline_at=4)],
                         ids=["pro-optional", "pro-mandatory", "basic"])
@pytest.mark.parametrize("plies,every", [(1, 1), (3, 4), (40, 2)])
def test_proof_set_choices_never_change_the_value(variant, plies, every):
    state = LotusState(**variant)
    expected = ProofSearch(tt_mb=16).solve(state, pv=False).value
    tree = ProofTree(state, job_nodes=30, tt_mb=8, set_plies=plies, set_every=every)
    assert tree.run().value == expected
    assert tree.set_choices > 0 and tree.jobs_done > 3


def test_each_job_goes_where_the_proof_sets_lead():
    """set_every=1, one job at a time: each selection is the leaf the proof sets reach
    from the root (with no focus), never the tree's own choice where the two differ."""
    state = LotusState(**PRO)
    tree = ProofTree(state, job_nodes=30, tt_mb=8, set_plies=40, set_every=1)
    checked = 0
    for _ in range(40):
        node = tree._select()
        if node is None:
            break
        assert node is set_line(tree.root, 40)[-1]
        checked += 1
        job = tree._job_for(node)
        tree.apply_row(job())
    assert checked >= 10


def test_a_resumed_run_records_and_shows_its_proof_set_choices(tmp_path):
    state = LotusState(**PRO)
    d = tmp_path / "cp"
    tree = open_checkpoint(d, state, job_nodes=30, tt_mb=8, set_plies=2, set_every=3)
    try:
        tree.run(max_jobs=8)
    finally:
        tree.close()
    run = json.loads((d / "tree.json").read_text())["run"]
    assert run["set_plies"] == 2 and run["set_every"] == 3 and run["set_choices"] >= 2
    r = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--status"])
    assert r.exit_code == 0
    assert "2 plies chosen by proof-set numbers every 3 jobs" in r.output
    r = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--set-plies", "2",
                                  "--set-every", "2", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output.strip().splitlines()[-1])["value"] == \
        ProofSearch(tt_mb=16).solve(state, pv=False).value


@pytest.mark.parametrize("args,says", [
    (["--set-every", "4"], "--set-every goes with --set-plies"),
    (["--set-plies", "0", "--set-every", "4"], "--set-every goes with --set-plies"),
    (["--status", "--set-plies", "2"], "--set-plies is for a run"),
    (["--set-plies", "-1"], "--set-plies"),
])
def test_bad_proof_set_options_are_one_line_errors(args, says, tmp_path):
    pos = LotusState(**PRO).to_notation()
    d = tmp_path / "cp"
    head = ["solve"] + ([] if "--status" in args else [pos]) + ["--checkpoint", str(d)]
    if "--status" in args:
        open_checkpoint(d, LotusState(**PRO), job_nodes=30, tt_mb=8).close()
    r = CliRunner().invoke(main, head + args)
    assert r.exit_code == 2 and says in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1, r.output


def test_status_gives_the_open_first_moves_counted_once(tmp_path):
    """--status shows each open first move's numbers counted once beside the tree's: never
    above them, equal where nothing transposes below, and the same in --json."""
    from niwa.solver.proof_sets import first_moves_once

    state = LotusState(**PRO)
    d = tmp_path / "cp"
    tree = open_checkpoint(d, state, job_nodes=30, tt_mb=8)
    try:
        r = tree.run(max_jobs=12)
        once = first_moves_once(tree)
    finally:
        tree.close()
    open_moves = {k for k, v in r.first_moves.items() if v is None}
    assert open_moves and set(once) == open_moves
    for name, (pn, dn) in once.items():
        tree_pn, tree_dn = r.first_numbers[name]
        assert 0 < pn <= tree_pn and 0 < dn <= tree_dn
    out = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--status"])
    assert out.exit_code == 0 and "each leaf counted once (proof sets)" in out.output
    got = json.loads(CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--status",
                                               "--json"]).output)["first_numbers_once"]
    assert {k: tuple(v) for k, v in got.items()} == once
