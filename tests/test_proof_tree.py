"""The two-level proof search (solver/proof_tree.py): the same values as plain df-pn and as
an exhaustive search over the reference rules, with one worker, with two worker processes,
and across an interruption and resume from the checkpoint; a damaged checkpoint is a
one-line error."""

from __future__ import annotations

import functools
import json

import pytest
from click.testing import CliRunner

from niwa.analysis.arena.executors import LocalExecutor
from niwa.cli.main import main
from niwa.ext.errors import NiwaError
from niwa.ext.lotus import LotusState
from niwa.ext.reference.lotus import LotusOracle
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_tree import CheckpointError, ProofTree, open_checkpoint

RULES = [dict(rule=r, trampoline=t) for r in ("basic", "pro") for t in ("optional", "mandatory")]
# shortened boards, towers 2..1: a few hundred to a few thousand df-pn nodes, so jobs of
# 40 nodes give a top tree of many jobs and expansions
BOARDS = [dict(towers=2, lane=1, shared=4, trampoline_at=3),
          dict(towers=2, lane=2, shared=3, trampoline_at=4)]
CASES = [dict(b, **r) for b in BOARDS for r in RULES]


def tag(v):
    return "-".join(f"{k}{v[k]}" for k in v)


def reference_value(variant) -> float:
    """Value for the first player by plain minimax over the reference rules (the oracle
    counts the pro opening's second stone as the same player moving again)."""
    return _reference_value(tuple(sorted(variant.items())))


@functools.cache
def _reference_value(items) -> float:
    variant = dict(items)
    memo: dict[str, bool] = {}

    def wins(o) -> bool:
        key = o.to_notation() + o.opening
        if key not in memo:
            mover = o.current_player()
            result = False
            for a in o.legal_actions():
                c = o.clone()
                c.apply(a, check=False)
                if c.is_terminal():
                    result = c.winner() == mover
                else:
                    result = wins(c) == (c.current_player() == mover)
                if result:
                    break
            memo[key] = result
        return memo[key]

    return 1.0 if wins(LotusOracle(**variant)) else 0.0


@pytest.mark.parametrize("variant", CASES, ids=[tag(v) for v in CASES])
def test_two_level_proof_equals_dfpn_and_the_reference_rules(variant):
    state = LotusState(**variant)
    plain = ProofSearch(tt_mb=16).solve(state, root_values=False, pv=False)
    tree = ProofTree(state, job_nodes=40, tt_mb=16)
    r = tree.run()
    assert r.proven and plain.proven
    assert r.value == plain.value == reference_value(variant)
    assert r.jobs > 3, "the top tree was not exercised"
    # every first move the tree decided agrees with df-pn on that move alone
    for a in state.legal_actions():
        name = state.action_to_string(a)
        if r.first_moves.get(name) is not None:
            child = state.clone()
            child.apply(a)
            assert ProofSearch(tt_mb=16).prove_value(child, state.current_player()) == \
                r.first_moves[name]


def test_tiny_budgets_grow_the_tree_or_the_budget_and_still_prove():
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    want = ProofSearch(tt_mb=16).solve(state, root_values=False, pv=False).value
    # a tree capped at a handful of nodes must resubmit with doubled budgets
    capped = ProofTree(state, job_nodes=5, tt_mb=16, max_tree_nodes=8).run()
    assert capped.value == want
    assert capped.peak_tree_nodes <= 8 + 8 and capped.jobs > 3
    deep = ProofTree(state, job_nodes=5, tt_mb=16).run()
    assert deep.value == want and deep.peak_tree_nodes > 16


SHARED_CASES = [dict(BOARDS[0], **r) for r in RULES]


@pytest.mark.parametrize("variant", SHARED_CASES, ids=[tag(v) for v in SHARED_CASES])
def test_two_worker_processes_sharing_a_table_prove_the_same_value(variant, tmp_path):
    """Two local workers write one table at once (tiny, so they overwrite each other's
    entries): the value is the reference rules' on every set-up."""
    state = LotusState(**variant)
    r = ProofTree(state, job_nodes=10, tt_mb=0.05, checkpoint=tmp_path).run(LocalExecutor(2))
    assert r.value == reference_value(variant)
    rows = [json.loads(x) for x in (tmp_path / "jobs.jsonl").read_text().splitlines()]
    assert all(row["shared"] for row in rows), "the workers did not share their table"


def test_two_worker_processes_prove_the_same_value():
    variant = dict(towers=2, lane=2, shared=3, trampoline_at=4, rule="pro", trampoline="optional")
    state = LotusState(**variant)
    r = ProofTree(state, job_nodes=40, tt_mb=8).run(LocalExecutor(2))
    assert r.value == reference_value(variant)
    # which of the two takes the jobs is the scheduler's: on an idle machine the first
    # one up can finish every tiny job before the second has started
    assert 1 <= len(r.workers) <= 2


def test_private_tables_on_request_and_in_one_process():
    variant = dict(BOARDS[0], rule="pro")
    state = LotusState(**variant)
    tree = ProofTree(state, job_nodes=40, tt_mb=4, share=False)
    assert tree.run(LocalExecutor(2)).value == reference_value(variant)
    assert tree.shared_mb == 0.0
    one = ProofTree(state, job_nodes=40, tt_mb=4)
    one.run()
    assert one.shared_mb == 0.0             # this process alone: nothing to share


def test_proof_jobs_are_sent_one_at_a_time():
    """The executors batch short games, but a proof job is chosen from the tree when a
    worker is free: a stream of them is taken one job at a time."""
    from niwa.analysis.arena.executors import BatchSizer, _Pending
    from niwa.solver.proof_tree import _Stream

    sizer = BatchSizer(2)
    for _ in range(10):
        sizer.record({"duration_s": 0.001})     # short: games would go 250 to a batch
    assert _Pending(range(1000)).batch_size(sizer) > 1
    assert _Pending(_Stream(iter(range(1000)))).batch_size(sizer) == 1


def test_an_interrupted_checkpoint_resumes_and_proves_the_same(tmp_path):
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro",
                       trampoline="mandatory")
    whole = ProofTree(state, job_nodes=30, tt_mb=16).run()
    first = ProofTree(state, job_nodes=30, tt_mb=16, checkpoint=tmp_path)
    part = first.run(max_jobs=4)
    first.close()
    assert not part.proven and part.status == "job limit" and part.jobs == 4
    lines = (tmp_path / "jobs.jsonl").read_text().splitlines()
    assert len(lines) == 4
    status = json.loads((tmp_path / "tree.json").read_text())
    assert status["jobs"] == 4 and status["value"] is None
    again = open_checkpoint(tmp_path)        # the position and settings from the checkpoint
    assert again.jobs_replayed == 4 and again.job_nodes == 30
    done = again.run()
    again.close()
    assert done.value == whole.value and done.jobs > 4
    # nothing is lost or run twice: the log holds every job once, numbered in order
    rows = [json.loads(x) for x in (tmp_path / "jobs.jsonl").read_text().splitlines()]
    assert [row["job"] for row in rows] == list(range(1, len(rows) + 1))
    # a finished checkpoint answers at once
    finished = open_checkpoint(tmp_path)
    assert finished.run().value == whole.value and finished.jobs_done == len(rows)
    finished.close()


def test_a_resume_may_raise_the_top_tree_cap_never_lower_it(tmp_path):
    """A checkpoint run at a cap of 8 nodes (its leaves sent again with doubled budgets)
    resumes with a cap of 10,000: every logged job replays (each path is in the larger
    tree), the tree grows past 8 nodes, the value is the same, and meta.json says the new
    cap; a lower cap than the checkpoint's is refused, from the CLI with one line."""
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    want = ProofSearch(tt_mb=16).solve(state, root_values=False, pv=False).value
    first = ProofTree(state, job_nodes=5, tt_mb=16, checkpoint=tmp_path, max_tree_nodes=8)
    part = first.run(max_jobs=12)
    first.close()
    assert part.tree_nodes <= 16 and not part.proven
    assert any(json.loads(x)["budget"] > 5
               for x in (tmp_path / "jobs.jsonl").read_text().splitlines())
    again = open_checkpoint(tmp_path, max_tree_nodes=10_000)
    assert again.jobs_replayed == 12 and again.max_tree_nodes == 10_000
    done = again.run()
    again.close()
    assert done.value == want and done.peak_tree_nodes > 16
    assert json.loads((tmp_path / "meta.json").read_text())["max_tree_nodes"] == 10_000
    assert done.max_tree_nodes == 10_000 and "cap 10,000)" in done.summary()
    with pytest.raises(CheckpointError, match="can be raised, not lowered to 8"):
        open_checkpoint(tmp_path, max_tree_nodes=8)
    r = CliRunner().invoke(main, ["solve", "--checkpoint", str(tmp_path),
                                  "--max-tree-nodes", "9", "--no-tables"])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "not lowered to 9" in r.output
    r = CliRunner().invoke(main, ["solve", "--checkpoint", str(tmp_path), "--status",
                                  "--max-tree-nodes", "20000"])
    assert r.exit_code == 2 and "--max-tree-nodes is for a run" in r.output, r.output


def test_a_torn_last_line_is_dropped_and_the_run_goes_on(tmp_path):
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3)
    tree = ProofTree(state, job_nodes=30, tt_mb=16, checkpoint=tmp_path)
    tree.run(max_jobs=3)
    tree.close()
    with open(tmp_path / "jobs.jsonl", "a") as f:
        f.write('{"job": 4, "path": [1')        # what a kill in mid-write leaves
    size = (tmp_path / "jobs.jsonl").stat().st_size
    look = open_checkpoint(tmp_path, read_only=True)     # --status: reads, never repairs
    assert look.torn_lines == 1 and look.jobs_replayed == 3
    assert (tmp_path / "jobs.jsonl").stat().st_size == size
    again = open_checkpoint(tmp_path)
    assert again.torn_lines == 1 and again.jobs_replayed == 3
    with pytest.raises(CheckpointError, match="in use"):
        open_checkpoint(tmp_path)           # one run per checkpoint at a time
    assert again.run().value == ProofSearch(tt_mb=16).solve(state, pv=False).value
    again.close()


def test_cli_checkpoint_resume_status_and_damage(tmp_path):
    runner = CliRunner()
    pos = "lotus towers=2 lane=1 shared=4 trampoline_at=3 rule=pro"
    d = str(tmp_path / "run")
    r = runner.invoke(main, ["solve", pos, "--checkpoint", d, "--job-nodes", "30",
                             "--tt-mb", "16", "--no-tables", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["proven"] and out["value"] == ProofSearch(tt_mb=16).solve(
        LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro"), pv=False).value
    s = runner.invoke(main, ["solve", "--checkpoint", d, "--status"])
    assert s.exit_code == 0, s.output
    assert "first moves decided" in s.output and "root pn=" in s.output
    # another position into the same folder
    r = runner.invoke(main, ["solve", "lotus towers=2", "--checkpoint", d])
    assert r.exit_code == 2 and r.output.startswith("Error: ") and "another position" in r.output
    # damage: a bad line in the middle of the log, and a broken header
    log = tmp_path / "run" / "jobs.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text(lines[0] + "garbage\n" + "".join(lines[1:]))
    for args in (["solve", "--checkpoint", d, "--status"], ["solve", pos, "--checkpoint", d]):
        r = runner.invoke(main, args)
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
        assert "damaged" in r.output and "line 2" in r.output
    (tmp_path / "run" / "meta.json").write_text("{not json")
    r = runner.invoke(main, ["solve", "--checkpoint", d, "--status"])
    assert r.exit_code == 2 and "damaged" in r.output and len(r.output.strip().splitlines()) == 1
    r = runner.invoke(main, ["solve", "--checkpoint", str(tmp_path / "none"), "--status"])
    assert r.exit_code == 2 and "not a proof checkpoint" in r.output
    r = runner.invoke(main, ["solve", pos, "--workers", "2"])
    assert r.exit_code == 2 and "--checkpoint" in r.output
    for bad in (["--job-nodes", "0"], ["--workers", "-1"], ["--job-nodes", "1e99"],
                ["--executor", "nowhere"]):
        r = runner.invoke(main, ["solve", pos, "--checkpoint", d + "3", *bad])
        assert r.exit_code == 2 and r.output.startswith("Error") and \
            len(r.output.strip().splitlines()) == 1, r.output
    r = runner.invoke(main, ["solve", pos, "--checkpoint", d + "2", "--depth", "3"])
    assert r.exit_code == 2 and "--depth" in r.output


def test_a_checkpoint_of_another_kind_is_refused(tmp_path):
    (tmp_path / "meta.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(CheckpointError, match="damaged"):
        open_checkpoint(tmp_path)


def test_docstring_examples_run():
    import doctest

    import niwa.solver.proof_tree as module

    result = doctest.testmod(module)
    assert result.failed == 0 and result.attempted > 0


class LaggingExecutor:
    """One worker in this process that keeps `workers` jobs out at once: it takes that
    many from the stream before it runs the oldest, so the tree chooses jobs while others
    are busy, as with several workers, but deterministically and without processes."""

    name = "lagging"

    def __init__(self, workers=3):
        self.workers = workers

    def run(self, tasks):
        from collections import deque

        out = deque()
        for task in tasks:
            out.append(task)
            if len(out) >= self.workers:
                yield out.popleft()()
        while out:
            yield out.popleft()()


POLICY_CASES = [dict(BOARDS[1], **r) for r in RULES]


@pytest.mark.parametrize("policy", ["guess", "skip", "win", "loss", "lean"])
@pytest.mark.parametrize("variant", POLICY_CASES, ids=[tag(v) for v in POLICY_CASES])
def test_busy_policies_with_jobs_in_flight_prove_the_reference_value(variant, policy):
    state = LotusState(**variant)
    want = reference_value(variant)
    for transpositions in (True, False):
        tree = ProofTree(state, job_nodes=20, tt_mb=4, busy_policy=policy,
                         transpositions=transpositions)
        r = tree.run(LaggingExecutor(3))
        assert r.value == want and r.jobs > 3, (transpositions, r.summary())
        # every first move is reported, and agrees with df-pn on that move alone
        assert len(r.first_moves) == len(state.legal_actions())
        for a in state.legal_actions():
            v = r.first_moves[state.action_to_string(a)]
            if v is not None:
                child = state.clone()
                child.apply(a)
                assert ProofSearch(tt_mb=4).prove_value(child, state.current_player()) == v


def test_an_unknown_busy_policy_is_refused():
    with pytest.raises(ValueError, match="busy_policy"):
        ProofTree(LotusState(towers=2), busy_policy="maybe")


def test_mirror_first_moves_are_one_node_and_both_are_reported():
    state = LotusState(towers=2, lane=2, shared=3, trampoline_at=4, rule="pro")
    tree = ProofTree(state, job_nodes=20, tt_mb=4)
    r = tree.run(LaggingExecutor(2))
    names = [state.action_to_string(a) for a in state.legal_actions()]
    assert names == ["W1-a1", "W1-b1", "W2-a2", "W2-b2"]
    kids = tree.root.children
    assert kids[0] is kids[1] and kids[2] is kids[3] and kids[0] is not kids[2]
    assert set(r.first_moves) == set(names)
    assert r.first_moves["W1-a1"] == r.first_moves["W1-b1"] is not None
    # a tree of paths keeps them apart, and finds the same values
    paths = ProofTree(state, job_nodes=20, tt_mb=4, transpositions=False)
    assert paths.run(LaggingExecutor(2)).first_moves == r.first_moves
    assert paths.root is not None and len({id(c) for c in paths.root.children}) == 4


def test_the_shipped_checkpoints_replay_to_their_root_numbers():
    """The pro-rule runs' checkpoints replay, read-only, into the kind of tree their header
    names (a tree of paths when written before transpositions were folded), with the root
    numbers they stopped at."""
    from pathlib import Path

    here = Path(__file__).resolve().parent.parent / "bench" / "perfect-play" / "pro-rule"
    folders = sorted(here.glob("checkpoint-pro-*"))
    assert len(folders) == 2
    for d in folders:
        before = {p.name: p.stat().st_mtime_ns for p in d.iterdir()}
        tree = open_checkpoint(d, read_only=True)
        r = tree.result()
        tree.close()
        snap = json.loads((d / "tree.json").read_text())
        assert tree.transpositions == json.loads((d / "meta.json").read_text()).get(
            "transpositions", False)
        assert (r.root_pn, r.root_dn, r.tree_nodes, r.jobs) == \
            (snap["root_pn"], snap["root_dn"], snap["tree_nodes"], snap["jobs"]), d.name
        assert {p.name: p.stat().st_mtime_ns for p in d.iterdir()} == before


def test_a_checkpoint_of_paths_resumes_as_a_tree_of_positions(tmp_path):
    state = LotusState(towers=2, lane=2, shared=3, trampoline_at=4, rule="pro",
                       trampoline="mandatory")
    old = ProofTree(state, job_nodes=20, tt_mb=8, checkpoint=tmp_path, transpositions=False)
    old.run(max_jobs=6)
    old.close()
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["transpositions"] is False
    again = open_checkpoint(tmp_path)           # its own kind unless asked
    assert not again.transpositions and again.jobs_replayed == 6
    again.close()
    folded = open_checkpoint(tmp_path, transpositions=True)
    assert folded.transpositions and folded.jobs_replayed == 6
    assert json.loads((tmp_path / "meta.json").read_text())["transpositions"] is True
    r = folded.run(LaggingExecutor(2))
    folded.close()
    assert r.value == reference_value(dict(towers=2, lane=2, shared=3, trampoline_at=4,
                                           rule="pro", trampoline="mandatory"))
    later = open_checkpoint(tmp_path, read_only=True)
    assert later.transpositions and later.result().value == r.value


def test_an_interrupted_run_leaves_its_snapshot_level_with_its_job_log(tmp_path):
    """Ctrl-C in the middle of a session: tree.json still counts every job the log holds
    (it was left one snapshot behind before) and the session's wall time is added."""
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    tree = ProofTree(state, job_nodes=40, tt_mb=16, checkpoint=tmp_path / "cp")
    seen = []

    def interrupt(t, row):
        seen.append(row)
        if len(seen) == 3:
            raise KeyboardInterrupt

    try:
        with pytest.raises(KeyboardInterrupt):
            tree.run(progress=interrupt)
    finally:
        tree.close()
    snap = json.loads((tmp_path / "cp" / "tree.json").read_text())
    lines = (tmp_path / "cp" / "jobs.jsonl").read_text().splitlines()
    assert snap["jobs"] == len(lines) == 3
    assert snap["wall_s"] > 0


def test_a_resume_records_the_tables_it_was_given(tmp_path):
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3)
    cp = tmp_path / "cp"
    ProofTree(state, job_nodes=40, tt_mb=16, checkpoint=cp).close()
    assert json.loads((cp / "meta.json").read_text())["tables"] is None
    open_checkpoint(cp, tables=str(tmp_path / "tables")).close()
    assert json.loads((cp / "meta.json").read_text())["tables"] == str(tmp_path / "tables")
    open_checkpoint(cp, read_only=True, tables=None).close()     # a look changes nothing
    assert json.loads((cp / "meta.json").read_text())["tables"] == str(tmp_path / "tables")


def test_status_gives_each_open_first_moves_numbers(tmp_path):
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    tree = ProofTree(state, job_nodes=40, tt_mb=16, checkpoint=tmp_path / "cp")
    try:
        r = tree.run(max_jobs=3)
    finally:
        tree.close()
    assert set(r.first_numbers) == set(r.first_moves)
    for name, (pn, dn) in r.first_numbers.items():
        assert (r.first_moves[name] is None) == (pn != 0 and dn != 0)
    assert min(pn for pn, _ in r.first_numbers.values()) == r.root_pn
    out = CliRunner().invoke(main, ["solve", "--checkpoint", str(tmp_path / "cp"), "--status"])
    assert out.exit_code == 0 and "open first moves" in out.output
    as_json = CliRunner().invoke(main, ["solve", "--checkpoint", str(tmp_path / "cp"),
                                        "--status", "--json"])
    assert set(json.loads(as_json.output)["first_numbers"]) == set(r.first_moves)


def test_status_depth_lists_each_open_position_once_with_its_numbers(tmp_path):
    """--status --depth N: the open positions 2..N plies down, each once (a transposed or
    mirrored line is one position), with the numbers its node holds in the root mover's
    perspective; nothing proven among them."""
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    cp = tmp_path / "cp"
    tree = ProofTree(state, job_nodes=20, tt_mb=16, checkpoint=cp)
    try:
        tree.run(LaggingExecutor(2), max_jobs=8)
        below = tree.open_positions(3)
        nodes = {}
        for line, pn, dn, jobs in below:
            s = state.clone()
            for name in line.split():
                s.apply(s.string_to_action(name))
            node = tree.by_key[(s.symmetric_hash(), s.current_player())]
            assert id(node) not in nodes and not node.proven and 2 <= len(line.split()) <= 3
            nodes[id(node)] = node
            seen = (node.pn, node.dn) if node.mover == tree.root.mover else (node.dn, node.pn)
            assert (pn, dn, jobs) == (*seen, node.jobs)
        assert below and tree.open_positions(1) == []
        assert {len(line.split()) for line, *_ in below} == {2, 3}
    finally:
        tree.close()
    out = CliRunner().invoke(main, ["solve", "--checkpoint", str(cp), "--status", "--depth", "3"])
    assert out.exit_code == 0 and "open positions 2 to 3 plies down" in out.output
    # one position a line: its moves, then pn, dn and jobs in columns
    first = min(below, key=lambda b: b[2])
    shown = [x.split() for x in out.output.splitlines() if x.startswith("  ")]
    assert shown[0][-3:] == ["pn", "dn", "jobs"] and len(shown) == len(below) + 1
    assert shown[1][-3:] == [f"{first[1]:,}", f"{first[2]:,}", f"{first[3]:,}"]
    as_json = CliRunner().invoke(main, ["solve", "--checkpoint", str(cp), "--status",
                                        "--depth", "3", "--json"])
    assert [d["line"] for d in json.loads(as_json.output)["open_positions"]] == \
        [line for line, *_ in below]
    out = CliRunner().invoke(main, ["solve", "--checkpoint", str(cp), "--depth", "3"])
    assert out.exit_code == 2 and "--depth does not go with --checkpoint" in out.output


def test_the_answer_time_is_kept_apart_from_the_sessions_teardown(tmp_path):
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    tree = ProofTree(state, job_nodes=40, tt_mb=16, checkpoint=tmp_path / "cp")
    try:
        assert tree.run(max_jobs=2).answer_s is None        # not proven yet
        r = tree.run()
    finally:
        tree.close()
    assert r.proven and 0 < r.answer_s <= r.wall_s
    again = open_checkpoint(tmp_path / "cp", read_only=True)
    assert again.result().answer_s == pytest.approx(r.answer_s, abs=1e-3)
    again.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_huge_pages_prove_the_same_value(workers, tmp_path):
    """--huge-pages changes where the table lives, never the value; where the kernel gives
    no huge pages the run warns and goes on."""
    import niwa.solver.proof_tree as proof_tree

    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    expected = ProofSearch(tt_mb=16).solve(state, pv=False).value
    tree = ProofTree(state, job_nodes=30, tt_mb=8, huge_pages=True)
    assert tree.run(LocalExecutor(workers) if workers > 1 else None).value == expected
    thp = tmp_path / "thp"
    thp.mkdir()
    (thp / "enabled").write_text("always madvise [never]\n")
    (thp / "shmem_enabled").write_text("always within_size advise [never] deny force\n")
    pos = "lotus towers=2 lane=1 shared=4 trampoline_at=3 rule=pro"
    original = proof_tree.THP
    proof_tree.THP = thp
    try:
        r = CliRunner().invoke(main, ["solve", pos, "--checkpoint", str(tmp_path / "cp"),
                                      "--workers", str(workers), "--job-nodes", "30",
                                      "--tt-mb", "8", "--no-tables", "--huge-pages", "--json"])
    finally:
        proof_tree.THP = original
    assert r.exit_code == 0, r.output
    kind = "shmem_enabled" if workers > 1 else "enabled"
    assert "warning: --huge-pages: the kernel gives" in r.output and kind in r.output
    assert json.loads(r.output.strip().splitlines()[-1])["value"] == expected


@pytest.mark.parametrize("policy", ["guess", "skip"])
@pytest.mark.parametrize("lag", [1, 3])
def test_a_focused_first_move_gets_the_jobs_until_it_is_decided(policy, lag, tmp_path):
    """--focus changes the order of the work, never the value. One job at a time, every
    job before the focused move is decided lies below it (a mirror move is the same node);
    with jobs in flight the first ones do (later, its leaves may all be busy)."""
    from niwa.solver.proof_history import checkpoint_history

    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    expected = ProofSearch(tt_mb=16).solve(state, pv=False).value
    names = {state.action_to_string(a): a for a in state.legal_actions()}
    for move in names:
        d = tmp_path / f"{move}-{policy}-{lag}"
        tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d, busy_policy=policy,
                         focus=[move])
        try:
            assert tree.run(LaggingExecutor(lag)).value == expected
        finally:
            tree.close()
        r = tree.root
        node = r.children[r.actions.index(names[move])]
        same = {a for a, c in zip(r.actions, r.children, strict=True) if c is node}
        frame = checkpoint_history(d)
        decided = frame[(frame[f"{move} pn"] == 0) | (frame[f"{move} dn"] == 0)]["job"]
        first = int(decided.iloc[0])
        rows = [json.loads(x) for x in (d / "jobs.jsonl").read_text().splitlines()]
        # the root is expanded at once (no job on the root: the focus is below it)
        chosen_before = rows[:first] if lag == 1 else rows[:1]
        assert chosen_before and all(row["path"][0] in same for row in chosen_before), move
    with pytest.raises(NiwaError, match="not a move of the root"):
        ProofTree(state, focus=["W9"])
    with pytest.raises(NiwaError, match="'W9' is not a move of the position after W1-a1 "
                                        r"\(its moves: W2-2, pass\)"):
        ProofTree(state, focus=["W1-a1 W9"])
    pos = state.to_notation()
    for args, says in (([pos, "--checkpoint", str(tmp_path / "new"), "--focus", "W9"],
                        "not a move of the root"),
                       (["--checkpoint", str(d), "--status", "--focus", "W2-2"], "for a run"),
                       ([pos, "--focus", "W2-2"], "--checkpoint")):
        out = CliRunner().invoke(main, ["solve", *args])
        assert out.exit_code == 2 and says in out.output, out.output
        assert len(out.output.strip().splitlines()) == 1
    assert not (tmp_path / "new").exists()      # refused before a folder was made


def test_several_focus_lines_are_taken_in_order(tmp_path):
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")

    def key(path):
        s = state.clone()
        for a in path:
            s.apply(a)
        return s.symmetric_hash(), s.current_player()

    lines = ["W2-2 pass", "W1-a1 W2-2"]
    d = tmp_path / "run"
    tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d, focus=lines)
    try:
        assert tree.focus_text() == "W2-2 pass, then W1-a1 W2-2"
        tree.run()
        targets = [key(line) for line in tree.focus]
    finally:
        tree.close()
    seen: list = []
    look = open_checkpoint(d, read_only=True, on_replay=lambda t, row: seen.append(
        [t.by_key.get(k) is None or t.by_key[k].proven for k in targets]))
    look.close()
    first = next(j for j, s in enumerate(seen) if s[0]) + 1
    second = next(j for j, s in enumerate(seen) if s[1]) + 1
    rows = [json.loads(x)["path"] for x in (d / "jobs.jsonl").read_text().splitlines()]
    assert second > first > 1
    assert all(len(p) >= 2 and key(p[:2]) == targets[0] for p in rows[:first])
    assert all(len(p) >= 2 and key(p[:2]) == targets[1] for p in rows[first:second])


@pytest.mark.parametrize("line", ["W1-a1 W2-2", "W2-2 pass", "W1-b1,pass"])
def test_a_focused_line_gets_the_jobs_until_its_position_is_decided(line, tmp_path):
    """--focus 'MOVE MOVE': the position the line reaches (the pro opening's two stones,
    here) gets every job until it is decided, whichever path the top tree takes to it (a
    transposed move order is the same node), and the value is the same."""
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    expected = ProofSearch(tt_mb=16).solve(state, pv=False).value

    def key(path):
        s = state.clone()
        for a in path:
            s.apply(a)
        return s.symmetric_hash(), s.current_player()

    d = tmp_path / "run"
    tree = ProofTree(state, job_nodes=30, tt_mb=8, checkpoint=d, focus=[line])
    try:
        assert tree.focus_text() == line.replace(",", " ")
        assert tree.run().value == expected
        target = key(tree.focus[0])
    finally:
        tree.close()
    seen: list = []
    look = open_checkpoint(d, read_only=True, on_replay=lambda t, row: seen.append(
        t.by_key.get(target) is None or t.by_key[target].proven))
    look.close()
    first = seen.index(True) + 1        # the job that decided it
    rows = [json.loads(x) for x in (d / "jobs.jsonl").read_text().splitlines()]
    assert first > 1 and all(len(r["path"]) >= 2 and key(r["path"][:2]) == target
                             for r in rows[:first]), [r["path"] for r in rows[:first]]
    out = CliRunner().invoke(main, ["solve", state.to_notation(), "--checkpoint",
                                    str(tmp_path / "cli"), "--focus", line, "--job-nodes",
                                    "30", "--tt-mb", "8", "--json"])
    assert out.exit_code == 0 and f"jobs below {line.replace(',', ' ')} first" in out.output
    assert json.loads(out.output.strip().splitlines()[-1])["value"] == expected


def test_the_checkpoint_says_how_its_last_session_ran(tmp_path):
    """tree.json keeps the last session's executor, workers and table (meta.json keeps
    the first's, as the defaults of a resume); --status prints it, --json gives it."""
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    d = tmp_path / "cp"
    for workers, tt_mb in ((None, 8), (LocalExecutor(2), 4)):
        tree = open_checkpoint(d, state, job_nodes=30, tt_mb=tt_mb)
        try:
            tree.run(workers, max_jobs=2)
        finally:
            tree.close()
    r = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--status", "--json"])
    run = json.loads(r.output)["last_run"]
    assert run["workers"] == 2 and run["tt_mb"] == 4 and run["shared_mb"] == 8
    assert json.loads((d / "meta.json").read_text())["tt_mb"] == 8
    r = CliRunner().invoke(main, ["solve", "--checkpoint", str(d), "--status"])
    assert "last session: from" in r.output and "2 worker(s), one 8 MB table shared" in r.output


def test_a_forked_process_does_not_keep_the_checkpoint_locked(tmp_path):
    """flock() locks belong to the open file a forked worker shares: a worker still
    exiting after its run must not keep the next run out (seen under load in CI)."""
    import os
    import signal
    import time

    from niwa.solver.proof_tree import checkpoint_in_use

    tree = ProofTree(LotusState(towers=2, rule="pro", trampoline="mandatory"),
                     job_nodes=1000, tt_mb=16, checkpoint=tmp_path)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                        # a worker that outlives the run
        os.close(read)
        os.write(write, b"up")
        time.sleep(60)
        os._exit(0)
    try:
        os.close(write)
        assert os.read(read, 2) == b"up"
        assert checkpoint_in_use(tmp_path)
        tree.close()
        assert not checkpoint_in_use(tmp_path)
        again = ProofTree(LotusState(towers=2, rule="pro", trampoline="mandatory"),
                          job_nodes=1000, tt_mb=16, checkpoint=tmp_path)
        again.close()
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read)
