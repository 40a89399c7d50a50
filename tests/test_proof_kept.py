"""Proofs kept between the sessions of a checkpointed proof (DIR/proven.npy): a resume loads
the largest proofs of the stopped session's table instead of proving them again."""

import json

import numpy as np
import pytest

from niwa.analysis.arena.executors import LocalExecutor
from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_tree import CheckpointError, ProofTree, open_checkpoint

PRO = dict(towers=2, rule="pro", trampoline="mandatory")     # 18,650 df-pn nodes


def test_proven_entries_round_trip_into_a_fresh_table():
    state = LotusState(**PRO)
    first = ProofSearch(tt_mb=16)
    assert first.solve(state).value == 0.0
    rows = first.proven_entries(min_work=10)
    assert len(rows) > 0 and rows.dtype == np.uint64 and rows.shape[1] == 3
    pn, dn = rows[:, 1] & 0xFFFFFFFF, rows[:, 1] >> np.uint64(32)
    assert np.all((pn == 0) != (dn == 0))                       # proofs only
    work = rows[:, 2] & 0xFFFFFFFF
    assert np.all(work >= 10) and np.all(np.diff(work.astype(np.int64)) <= 0)
    assert len(first.proven_entries(min_work=10, max_entries=3)) == 3
    fresh = ProofSearch(tt_mb=16)
    assert fresh.load_proven(rows) == len(rows)
    again = fresh.solve(state)
    assert again.value == 0.0 and again.nodes == 0            # the root proof was kept


def test_rows_that_are_not_proofs_are_refused():
    search = ProofSearch(tt_mb=1)
    with pytest.raises(ValueError, match="not a proven entry"):
        search.load_proven(np.array([[12345, 1 | (1 << 32), 0]], dtype=np.uint64))


def _stopped_then_resumed(tmp_path, executor=None, keep=100_000):
    state = LotusState(**PRO)
    first = ProofTree(state, job_nodes=1000, tt_mb=16, checkpoint=tmp_path, keep_proven=keep,
                      keep_min_work=1)
    r = first.run(executor() if executor else None, max_jobs=4)
    first.close()
    assert not r.proven
    again = open_checkpoint(tmp_path, keep_proven=keep, keep_min_work=1)
    r = again.run(executor() if executor else None)
    again.close()
    return first, again, r


@pytest.mark.parametrize("executor", [None, lambda: LocalExecutor(2)], ids=["in-process", "local-2"])
def test_a_resume_loads_the_kept_proofs_and_proves_the_same(tmp_path, executor):
    whole = ProofSearch(tt_mb=16).solve(LotusState(**PRO), pv=False).value
    first, again, r = _stopped_then_resumed(tmp_path, executor)
    assert first.proven_saved > 0 and again.proven_loaded == first.proven_saved
    assert r.value == whole
    head = json.loads((tmp_path / "proven.json").read_text())
    assert head["rows"] == again.proven_saved and head["position"] == again.notation


def test_kept_proofs_can_be_switched_off(tmp_path):
    first, again, r = _stopped_then_resumed(tmp_path, keep=0)
    assert first.proven_saved == again.proven_loaded == 0
    assert not (tmp_path / "proven.npy").exists()


def test_damaged_kept_proofs_are_refused_and_foreign_keys_ignored(tmp_path):
    state = LotusState(**PRO)
    tree = ProofTree(state, job_nodes=1000, tt_mb=16, checkpoint=tmp_path, keep_min_work=1)
    tree.run(max_jobs=4)
    tree.close()
    head_path = tmp_path / "proven.json"
    head = json.loads(head_path.read_text())
    # keys from a build that hashes positions otherwise name other positions: not used
    head_path.write_text(json.dumps({**head, "root_key": "0123456789abcdef"}))
    other = open_checkpoint(tmp_path, keep_min_work=1)
    other.run(max_jobs=1)
    other.close()
    assert other.proven_loaded == 0
    # (that session saved its own proofs again, with the right keys)
    data = bytearray((tmp_path / "proven.npy").read_bytes())
    data[-1] ^= 0xFF
    (tmp_path / "proven.npy").write_bytes(bytes(data))
    damaged = open_checkpoint(tmp_path)
    with pytest.raises(CheckpointError, match="proven.npy does not match its checksum"):
        damaged.run(max_jobs=1)
    damaged.close()


def test_status_names_the_kept_proofs(tmp_path):
    from click.testing import CliRunner

    from niwa.cli.main import main

    tree = ProofTree(LotusState(**PRO), job_nodes=1000, tt_mb=16, checkpoint=tmp_path,
                     keep_min_work=1)
    tree.run(max_jobs=4)
    tree.close()
    out = CliRunner().invoke(main, ["solve", "--checkpoint", str(tmp_path), "--status"])
    assert out.exit_code == 0, out.output
    assert f"kept proofs: {tree.proven_saved:,} positions in proven.npy" in out.output


@pytest.mark.parametrize("name", ["meta.json", "jobs.jsonl", "proven.npy"])
def test_a_checkpoint_file_that_is_a_link_is_refused(tmp_path, name):
    folder = tmp_path / "run"
    tree = ProofTree(LotusState(**PRO), job_nodes=1000, tt_mb=16, checkpoint=folder,
                     keep_min_work=1)
    tree.run(max_jobs=4)
    tree.close()
    elsewhere = tmp_path / name
    (folder / name).rename(elsewhere)
    (folder / name).symlink_to(elsewhere)
    with pytest.raises(CheckpointError, match=f"{name} is a symbolic link"):
        open_checkpoint(folder)
    with pytest.raises(CheckpointError, match=f"{name} is a symbolic link"):
        open_checkpoint(folder, read_only=True)


def test_keep_proven_from_the_command_line_bounds_the_rows_kept(tmp_path):
    """`niwa solve --checkpoint DIR --keep-proven N`: at most N proofs kept (0: none, no
    file); the option is for a run, refused with --status or without --checkpoint."""
    from click.testing import CliRunner

    from niwa.cli.main import main

    def solve(folder, *more):
        return CliRunner().invoke(main, [
            "solve", "lotus towers=2 rule=pro trampoline=mandatory", "--checkpoint",
            str(folder), "--job-nodes", "1000", "--tt-mb", "16", "--no-tables", *more])

    rows = {}
    for keep in (None, 5, 0):
        folder = tmp_path / f"keep-{keep}"
        r = solve(folder, *(() if keep is None else ("--keep-proven", str(keep))))
        assert r.exit_code == 0, r.output
        kept = folder / "proven.json"
        rows[keep] = json.loads(kept.read_text())["rows"] if kept.exists() else 0
    assert rows[None] > 5 and rows[5] == 5 and rows[0] == 0
    for args in (["--checkpoint", str(tmp_path / "keep-5"), "--status", "--keep-proven", "3"],
                 ["lotus", "--keep-proven", "3"]):
        r = CliRunner().invoke(main, ["solve", *args])
        assert r.exit_code == 2 and "--keep-proven" in r.output, r.output


def test_kept_rows_reach_tables_made_in_a_worker_process_and_come_back_merged():
    """What a worker elsewhere (Dask) does with kept proofs, in this process: rows stashed
    for a run go into each table made for it, are collected back from all of them, and a
    build that files positions under other keys stashes none."""
    from niwa.solver import proof_tree as pt

    state = LotusState(**PRO)
    solved = ProofSearch(tt_mb=16)
    solved.solve(state, pv=False)
    rows = solved.proven_entries(min_work=10)
    root, key = state.to_notation(), solved.table_key(state)
    assert pt._stash_kept("run-a", rows, root, key ^ 1) == 0        # another build's keys
    assert pt._stash_kept("run-a", rows, root, key) == len(rows)
    table = pt._worker_search(8, None, state, "run-a")
    assert all(table._probe_key(int(k)) is not None for k in rows[:50, 0])
    got_key, back = pt._collect_kept("run-a", root, 10, 0)
    assert got_key == key and set(back[:, 0].tolist()) >= set(rows[:, 0].tolist())
    merged = pt.merge_kept([back, back[:5]], 3)
    assert len(merged) == 3 and len(set(merged[:, 0].tolist())) == 3
    work = merged[:, 2] & np.uint64(0xFFFFFFFF)
    assert list(work) == sorted(work, reverse=True)
    pt._worker_search(8, None, state, "run-b")      # a new run: the old one's are let go
    assert "run-a" not in pt._RUN_SEARCHES and "run-a" not in pt._KEPT_ROWS
