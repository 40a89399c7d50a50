"""Certificates of two-level proofs (certificate.certificate_from_checkpoint): read off a
finished checkpoint, they pass the reference-rules checker with the value the proof found,
for every rule on two shortened boards, with one worker and with the proof's kept proofs
loaded; an unfinished proof writes none, with one line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from test_proof_tree import BOARDS, CASES, tag

from niwa.cli.main import main
from niwa.ext.errors import NiwaError
from niwa.ext.lotus import LotusState
from niwa.solver.certificate import (
    CertificateError,
    certificate_from_checkpoint,
    check_certificate,
    load_certificate,
)
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_moves import winning_move
from niwa.solver.proof_tree import ProofTree, proven_jobs


def finished_checkpoint(tmp_path, variant, job_nodes=40):
    state = LotusState(**variant)
    tree = ProofTree(state, job_nodes=job_nodes, tt_mb=16, checkpoint=tmp_path / "cp",
                     keep_min_work=1)
    try:
        r = tree.run()
    finally:
        tree.close()
    assert r.proven and r.jobs > 3, "the top tree was not exercised"
    return state, r, tmp_path / "cp"


@pytest.mark.parametrize("variant", CASES, ids=[tag(v) for v in CASES])
def test_a_finished_two_level_proof_gives_a_certificate_the_reference_rules_accept(
        tmp_path, variant):
    state, r, cp = finished_checkpoint(tmp_path, variant)
    assert (cp / "proven.npy").exists()     # its kept proofs are loaded by the extraction
    cert = certificate_from_checkpoint(cp, tt_mb=16)
    assert cert.value == r.value
    assert cert.winner == (state.current_player() if r.value == 1.0
                           else 1 - state.current_player())
    assert cert.info["proof"] == "two-level" and cert.info["proof_jobs"] == r.jobs
    report = check_certificate(load_certificate(cert.save(tmp_path / "c.npz")))
    assert report.nodes == cert.nodes


def test_the_jobs_proofs_decide_the_root_and_its_moves(tmp_path):
    """What the jobs proved (and what follows from it in the top tree) gives the root's
    value without a search; the winner's moves read off it are ones df-pn proves."""
    from niwa.solver.certificate import _JobProofs

    variant = dict(BOARDS[0], rule="pro", trampoline="optional")
    state, r, cp = finished_checkpoint(tmp_path, variant)
    proven, tree = proven_jobs(cp, state)
    assert proven and tree
    jobs = _JobProofs(proven, tree)
    assert jobs.value(state) == r.value
    winner = state.current_player() if r.value == 1.0 else 1 - state.current_player()
    checked, frontier = 0, [state]
    for _ in range(3):      # the winner's positions behind the loser's first replies
        later = []
        for s in frontier:
            if s.is_terminal():
                continue
            if s.current_player() != winner:
                later.extend(s.child(a) for a in s.legal_actions())
                continue
            move = jobs.winning_move(s, winner)
            if move is not None:
                assert ProofSearch(tt_mb=16).prove_value(s.child(move), winner) == 1
                checked += 1
        frontier = later
    assert checked
    # what it remembers is bounded by the top tree, not by the positions it was asked about
    # (the walk asks about every child of every winner's position: hundreds of millions)
    assert {(h, player) for h, player, _ in jobs.memo} <= tree


def _won_alone():
    """A won position, its winner, and a table that holds its proof alone (as a kept
    proof is loaded: no child known)."""
    state = LotusState(**dict(BOARDS[1], rule="basic", trampoline="optional"))
    full = ProofSearch(tt_mb=16)
    value = full.prove_value(state, 0)
    winner = 0 if value == 1 else 1
    s = state if winner == 0 else state.child(state.legal_actions()[0])
    assert full.prove_value(s, winner) == 1
    rows = full.proven_entries(0, 0)
    only = ProofSearch(tt_mb=16)
    key = only.table_key(s)
    assert only.load_proven(rows[rows[:, 0] == key]) == 1
    assert only.known_value(s, winner) == 1
    assert only.cheapest_known_win(s, winner) == -1
    return s, winner, only


def test_winning_move_finds_a_win_below_an_entry_loaded_without_its_subtree():
    """A kept proof answers for its position alone; the position is then proved again from
    its children (prove_below)."""
    s, winner, only = _won_alone()
    a = winning_move(only, s, winner)
    assert ProofSearch(tt_mb=16).prove_value(s.child(a), winner) == 1


def test_prove_below_stops_at_its_budget_and_winning_move_then_tries_each_move():
    """prove_below out of budget says so (-1); winning_move then tries the moves with
    growing budgets, and still finds a win."""
    s, winner, only = _won_alone()
    assert only.prove_below(s, winner, 0.0, 2) == -1

    class Spent:            # a search whose prove_below always runs out
        def __init__(self, search):
            self.search = search

        def prove_below(self, *args):
            return -1

        def __getattr__(self, name):
            return getattr(self.search, name)

    _, _, fresh = _won_alone()
    a = winning_move(Spent(fresh), s, winner)
    assert ProofSearch(tt_mb=16).prove_value(s.child(a), winner) == 1
    with pytest.raises(NiwaError, match="is not to move"):
        only.prove_below(s, 1 - winner)


def test_an_unfinished_proof_writes_no_certificate(tmp_path):
    state = LotusState(**dict(BOARDS[0], rule="pro", trampoline="mandatory"))
    tree = ProofTree(state, job_nodes=40, tt_mb=16, checkpoint=tmp_path / "cp")
    try:
        r = tree.run(max_jobs=2)
    finally:
        tree.close()
    assert not r.proven
    with pytest.raises(CertificateError, match="not finished"):
        certificate_from_checkpoint(tmp_path / "cp", tt_mb=16)


def test_solve_checkpoint_certificate_from_the_cli(tmp_path):
    runner = CliRunner()
    pos = "lotus towers=2 lane=1 shared=4 trampoline_at=3 rule=pro"
    cp, cert = tmp_path / "cp", tmp_path / "c.npz"
    # a session that stops before the proof is done: the progress is kept, no certificate
    stopped = runner.invoke(main, ["solve", pos, "--checkpoint", str(cp), "--job-nodes", "40",
                                   "--tt-mb", "16", "--no-tables", "--time", "0.001",
                                   "--certificate", str(cert)])
    assert stopped.exit_code == 2, stopped.output
    assert "no certificate written" in stopped.output and not cert.exists()
    done = runner.invoke(main, ["solve", "--checkpoint", str(cp), "--tt-mb", "16",
                                "--no-tables", "--certificate", str(cert)])
    assert done.exit_code == 0, done.output
    assert "certificate" in done.output and cert.exists()
    checked = runner.invoke(main, ["proof", "check", str(cert)])
    assert checked.exit_code == 0 and "valid" in checked.output
    again = runner.invoke(main, ["solve", "--checkpoint", str(cp), "--status",
                                 "--certificate", str(cert)])
    assert again.exit_code == 2 and again.output.count("\n") == 1


@pytest.mark.parametrize("rule", ["basic", "pro"])
def test_a_decided_first_move_gets_a_certificate_while_the_root_is_open(rule, tmp_path):
    """`niwa proof extract DIR --move MOVE`: once one first move is decided, its position
    is certified from the checkpoint alone, the root still open (the pro opening's first
    stone leaves the same player to move; the basic rule's move passes the turn)."""
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule=rule)
    expected = {state.action_to_string(a): ProofSearch(tt_mb=16).solve(
        state.child(a), pv=False).value for a in state.legal_actions()}
    d = tmp_path / "cp"
    tree = ProofTree(state, job_nodes=30, tt_mb=16, checkpoint=d, keep_min_work=1)
    decided = {}
    try:
        while not decided:
            r = tree.run(max_jobs=1)
            decided = {m: v for m, v in r.first_moves.items() if v is not None}
            open_moves = [m for m, v in r.first_moves.items() if v is None]
    finally:
        tree.close()
    move = next(iter(decided))
    cert = certificate_from_checkpoint(d, move=move, tables=None)
    child = state.child(state.legal_actions()[list(r.first_moves).index(move)])
    assert cert.root == child.to_notation() and cert.value == expected[move]
    assert cert.info["line"] == move
    check_certificate(cert)
    out = tmp_path / "move.npz"
    res = CliRunner().invoke(main, ["proof", "extract", str(d), "--move", move, "--out",
                                    str(out), "--no-tables", "--tt-mb", "16"])
    assert res.exit_code == 0 and f"the position after {move}" in res.output, res.output
    assert CliRunner().invoke(main, ["proof", "check", str(out)]).exit_code == 0
    refusals = [(["--move", "W9"], "'W9' is not a move of the root")]
    if open_moves:
        refusals.append((["--move", open_moves[0]], "not decided yet"))
    if not r.proven:
        refusals.append(([], "not finished"))
    for args, says in refusals:
        res = CliRunner().invoke(main, ["proof", "extract", str(d), "--out",
                                        str(tmp_path / "x.npz"), "--no-tables", *args])
        assert res.exit_code == 2 and says in res.output, res.output
        assert len(res.output.strip().splitlines()) == 1
    res = CliRunner().invoke(main, ["proof", "extract", str(d), "--move", move, "--out",
                                    str(tmp_path / "no" / "x.npz")])
    assert res.exit_code == 2 and "--out: cannot write into" in res.output, res.output
    # (basic: the root stays open after the first decision; pro's two first moves are
    # decided by one job, which proves the root)
    assert bool(open_moves) == (rule == "basic")
