"""Certificates in parts: a certificate that stops at the roots of other certificates
(niwa.solver.certificate, PART_BASE edges), extracted with `parts=` / `niwa proof extract
--parts DIR` and checked part by part with the reference rules."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from damaged_certificates import cut_one_reply

from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.ext.registry import parse_position
from niwa.solver.certificate import (
    PART_BASE,
    CertificateError,
    certificate_folder,
    check_certificate,
    extract_certificate,
    load_certificate,
)
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_tree import ProofTree

PRO = dict(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")


@pytest.fixture
def proven_checkpoint(tmp_path):
    """The checkpoint of a finished two-level proof of PRO (the second player wins)."""
    cp = tmp_path / "cp"
    tree = ProofTree(LotusState(**PRO), job_nodes=30, tt_mb=16, checkpoint=cp)
    try:
        assert tree.run().value == 0.0
    finally:
        tree.close()
    return cp


def _two_stone_positions(state):
    """The positions after the pro opening's two stones (player 1 to move), each once."""
    out = {}
    for a in state.legal_actions():
        first = state.child(a)
        for b in first.legal_actions():
            s = first.child(b)
            if not s.is_terminal() and s.current_player() == 1:
                out.setdefault(s.hash(), ((a, b), s))
    return list(out.values())


def _parts(tmp_path, search, state, count):
    folder = tmp_path / "parts"
    made = []
    for k, (_, s) in enumerate(_two_stone_positions(state)[:count]):
        part = extract_certificate(search, s)
        part.save(folder / f"part{k}.npz")
        made.append(load_certificate(folder / f"part{k}.npz"))
    return folder, made


def test_a_certificate_in_parts_proves_what_the_whole_one_does(tmp_path):
    state = LotusState(**PRO)
    search = ProofSearch(tt_mb=16)
    whole = extract_certificate(search, state)
    folder, parts = _parts(tmp_path, search, state, 3)
    assert all(p.winner == whole.winner == 1 for p in parts)
    top = extract_certificate(search, state, parts=parts)
    assert (top.winner, top.value) == (whole.winner, whole.value)
    assert {p["sha256"] for p in top.parts} == {p.sha256 for p in parts}
    assert top.nodes < whole.nodes and np.count_nonzero(top.children <= PART_BASE) >= 3
    top.save(tmp_path / "top.npz")
    top = load_certificate(tmp_path / "top.npz")
    report = check_certificate(top, parts=certificate_folder(folder))
    nodes = {p.sha256: p.nodes for p in parts}
    # a part also stands for its lane mirror (checked in the mirror: once each way)
    assert any(p.get("mirror") for p in top.parts) and len(top.parts) > 3
    assert report.parts == len(top.parts)
    assert report.part_nodes == sum(nodes[p["sha256"]] for p in top.parts)
    assert report.part_leaves == np.count_nonzero(top.children <= PART_BASE)
    assert "part certificates" in report.summary()
    with pytest.raises(CertificateError, match="give their folder"):
        check_certificate(top)
    (folder / "part1.npz").unlink()
    with pytest.raises(CertificateError, match="is not found in"):
        check_certificate(top, parts=certificate_folder(folder))


def test_the_part_index_learns_the_parts_a_walk_is_given(tmp_path):
    """A certification indexes its parts once (part_index) for all its walks: the parts
    make_part gives a walk join the index, so a later walk stops at them unasked."""
    state = LotusState(**PRO)
    search = ProofSearch(tt_mb=16)
    made, plies = [], []

    def make_part(position, below):
        plies.append(below)
        part = extract_certificate(search, position)
        part.save(tmp_path / f"part{len(made)}.npz")
        made.append(part)
        return part

    index: dict = {}
    top = extract_certificate(search, state, split=2, make_part=make_part, part_index=index)
    assert made and {p["sha256"] for p in top.parts} == {p.sha256 for p in made}
    assert min(plies) >= 2          # (each part's plies below the walk's root, given)
    assert {part.sha256 for part, _ in index[top.winner].values()} == \
        {p.sha256 for p in made}
    count = len(made)
    again = extract_certificate(search, state, part_index=index)    # no split: stops anyway
    assert len(made) == count and again.nodes == top.nodes
    assert check_certificate(again, parts=certificate_folder(tmp_path)).parts == \
        len(again.parts)


def test_a_certificate_checks_in_the_mirror_and_a_wrong_mirror_move_is_refused():
    state = LotusState(**PRO)
    s = state.child(state.legal_actions()[0])       # W1-a1: not its own mirror
    cert = extract_certificate(ProofSearch(tt_mb=16), s)
    assert check_certificate(cert, mirror=True).nodes == cert.nodes
    # a loser's reply dropped is refused in the mirror as it is unmirrored
    loser = next(i for i in range(cert.nodes) if cert.offsets[i + 1] - cert.offsets[i] > 1)
    cert.actions = cert.actions.copy()
    j = int(cert.offsets[loser])
    cert.actions[j] = cert.actions[j + 1]
    for mirror in (False, True):
        with pytest.raises(CertificateError, match="listed twice|missing"):
            check_certificate(cert, mirror=mirror)


def test_a_bad_part_or_a_wrong_part_edge_is_refused(tmp_path):
    state = LotusState(**PRO)
    search = ProofSearch(tt_mb=16)
    folder, parts = _parts(tmp_path, search, state, 1)
    top = extract_certificate(search, state, parts=parts)
    top.save(tmp_path / "top.npz")
    # an edge marked as reaching the part from a position it does not reach
    j = int(np.flatnonzero(top.children <= PART_BASE)[0])
    other = int(np.flatnonzero(top.children > 0)[0])
    bent = load_certificate(tmp_path / "top.npz")
    bent.children = bent.children.copy()
    bent.children[other] = bent.children[j]
    with pytest.raises(CertificateError, match="does not reach the root of part 0"):
        check_certificate(bent, parts=certificate_folder(folder))
    # a part that claims the other seat
    turned = load_certificate(tmp_path / "top.npz")
    turned.parts = [dict(turned.parts[0], winner=0)]
    with pytest.raises(CertificateError, match="part 0 claims seat 0 wins"):
        check_certificate(turned, parts=certificate_folder(folder))
    # a part with one loser reply removed: refused when the parts are checked
    part = cut_one_reply(parts[0])
    bad = tmp_path / "bad"
    part.save(bad / "part.npz")
    top2 = extract_certificate(search, state, parts=[load_certificate(bad / "part.npz")])
    with pytest.raises(CertificateError, match="missing"):
        check_certificate(top2, parts=certificate_folder(bad))


def test_proof_extract_parts_and_check_from_the_cli(tmp_path, proven_checkpoint):
    """The campaign's flow: certify decided two-stone positions of a checkpoint one by one
    (--move LINE), then the root with --parts, and check it all with `niwa proof check`."""
    state, cp = LotusState(**PRO), proven_checkpoint
    runner = CliRunner()
    parts = tmp_path / "parts"
    parts.mkdir()
    made = 0
    for (a, b), _ in _two_stone_positions(state):
        line = f"{state.action_to_string(a)} {state.child(a).action_to_string(b)}"
        r = runner.invoke(main, ["proof", "extract", str(cp), "--move", line, "--out",
                                 str(parts / f"p{made}.npz"), "--no-tables", "--tt-mb", "16"])
        if r.exit_code == 0:
            assert f"the position after {line}" in r.output
            made += 1
        else:       # the top tree never held that position (a job proved it below)
            assert "not decided yet" in r.output and r.exit_code == 2, r.output
    assert made >= 1
    top = tmp_path / "top.npz"
    r = runner.invoke(main, ["proof", "extract", str(cp), "--out", str(top), "--no-tables",
                             "--tt-mb", "16", "--parts", str(parts)])
    assert r.exit_code == 0 and "part certificates" in r.output, r.output
    r = runner.invoke(main, ["proof", "check", str(top), "--parts", str(parts)])
    assert r.exit_code == 0 and "valid" in r.output and "part certificates" in r.output
    r = runner.invoke(main, ["proof", "check", str(top)])       # its own folder has none
    assert r.exit_code == 2 and "give their folder" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = runner.invoke(main, ["proof", "extract", str(cp), "--out", str(tmp_path / "x.npz"),
                             "--parts", str(tmp_path / "cp")])
    assert r.exit_code == 2 and "no certificate (.npz)" in r.output


def test_a_book_follows_a_certificate_into_its_parts(tmp_path):
    """book from-certificate on a certificate in parts walks on into the parts: the same
    book as the whole certificate's when the parts were read off the same table, and every
    move verified by fresh proofs."""
    from niwa.solver.book import BookError, book_from_certificate, verify_book

    state = LotusState(**PRO)
    search = ProofSearch(tt_mb=16)
    whole = extract_certificate(search, state)
    folder, parts = _parts(tmp_path, search, state, 100)
    top = extract_certificate(search, state, parts=parts)
    top.save(tmp_path / "top.npz")
    for max_nodes in (None, 20):
        book = book_from_certificate(top, plies=5, max_nodes=max_nodes,
                                     parts=certificate_folder(folder))
        plain = book_from_certificate(whole, plies=5, max_nodes=max_nodes)
        assert book.info["certificate_parts"] == len(top.parts) and book.info["deepest"] >= 5
        assert book.keys.tolist() == plain.keys.tolist()
        assert book.actions.tolist() == plain.actions.tolist()
        if max_nodes is None:       # (verify_book walks to the book's plies only)
            assert verify_book(book, tt_mb=16) >= book.entries > 0
    with pytest.raises(BookError, match="give the folder of its parts"):
        book_from_certificate(top, plies=5)
    r = CliRunner().invoke(main, ["book", "from-certificate", str(tmp_path / "top.npz"),
                                  "--plies", "5", "--parts", str(folder), "--out",
                                  str(tmp_path / "b.npz")])
    assert r.exit_code == 0 and '"certificate_parts"' in r.output, r.output


@pytest.mark.parametrize("variant", [dict(rule="basic"), dict(rule="pro", trampoline="mandatory"),
                                     dict(players=3, lane=2, shared=6, trampoline_at=5),
                                     dict(towers=2, lane=1, shared=4, trampoline_at=3,
                                          rule="pro")])
def test_the_lane_mirror_maps_moves_and_positions_alike_in_the_reference_and_the_engine(
        variant):
    """What a mirrored part rests on: in the mirror of a position, the mirrors of its legal
    moves are exactly the legal moves and lead to the mirrors of its children (reference
    rules), and the engine agrees (same legal moves, same symmetric key)."""
    import random

    from niwa.ext.reference.lotus import LotusOracle
    from niwa.ext.registry import parse_position

    rng = random.Random(7)
    for _ in range(30):
        o = LotusOracle(**variant)
        while not o.is_terminal():
            m = o.mirrored()
            legal = o.legal_actions()
            assert sorted(o.mirror_action(a) for a in legal) == m.legal_actions()
            engine, mirror = parse_position(o.to_notation()), parse_position(m.to_notation())
            assert sorted(o.mirror_action(a) for a in engine.legal_actions()) == \
                mirror.legal_actions()
            assert engine.symmetric_hash() == mirror.symmetric_hash()
            a = rng.choice(legal)
            m.apply(o.mirror_action(a))
            o.apply(a)
            assert m.to_notation() == o.mirrored().to_notation()


def test_extract_split_certifies_each_position_as_a_part_and_resumes(tmp_path, proven_checkpoint):
    """`niwa proof extract DIR --parts P --split 2`: every position two plies down becomes a
    part of its own (a mirror is served by its twin), the top certificate stops at them,
    the whole checks, and a second run makes no part again."""
    state, cp = LotusState(**PRO), proven_checkpoint
    parts = tmp_path / "parts"
    args = ["proof", "extract", str(cp), "--no-tables", "--tt-mb", "16", "--parts", str(parts),
            "--split", "2", "--json"]
    r = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "top.npz")])
    assert r.exit_code == 0, r.output
    made = sorted(p.name for p in parts.glob("*.npz"))
    top = load_certificate(tmp_path / "top.npz")
    assert made and top.info["parts_made"] == len(made) and len(top.parts) >= len(made)
    assert {p["sha256"] for p in top.parts} == \
        {load_certificate(parts / m).sha256 for m in made}
    # the top walk stops at the first position of the loser's to move two or more plies
    # down: every part starts at one, and the top holds none
    loser = 1 - top.winner
    for part in top.parts:
        assert parse_position(part["root"]).current_player() == loser
    stack, seen = [(0, state, 0)], set()
    while stack:
        i, s, depth = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        assert depth < 2 or s.current_player() != loser, (depth, s.to_notation())
        for e in range(int(top.offsets[i]), int(top.offsets[i + 1])):
            if top.children[e] >= 0:
                stack.append((int(top.children[e]), s.child(int(top.actions[e])), depth + 1))
    assert len(seen) == top.nodes
    r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                  str(parts), "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["parts"] == len(top.parts), r.output
    again = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "again.npz")])
    assert again.exit_code == 0 and sorted(p.name for p in parts.glob("*.npz")) == made
    assert "parts_made" not in load_certificate(tmp_path / "again.npz").info
    r = CliRunner().invoke(main, ["proof", "extract", str(cp), "--out", str(tmp_path / "x.npz"),
                                  "--split", "2"])
    assert r.exit_code == 2 and "--split needs --parts" in r.output


def _positions_at(state, plies):
    """Every position `plies` plies below `state` (the game tree, small here)."""
    level = [state]
    for _ in range(plies):
        level = [s.child(a) for s in level if not s.is_terminal() for a in s.legal_actions()]
    return level


def _lock_all(folder, positions, holder):
    folder.mkdir(parents=True, exist_ok=True)
    for s in positions:
        (folder / f"part-{s.symmetric_hash():016x}.lock").write_text(holder)


def _check_split(cp, parts, out):
    from niwa.solver.certificate import certificate_from_checkpoint

    top = certificate_from_checkpoint(cp, tt_mb=16, tables=None, split=2, parts_dir=parts)
    top.save(out)
    report = check_certificate(load_certificate(out), parts=certificate_folder(parts))
    assert report.nodes == top.nodes
    return top


def test_a_part_locked_by_a_live_process_is_waited_for_then_made_if_no_part_comes(
        tmp_path, proven_checkpoint, monkeypatch):
    """Parts another process holds (lock file, live pid on this host) are left to it; the
    walk goes on and at its end waits; a lock that goes away without a part is made here."""
    import os
    import socket
    import threading

    from niwa.solver.certificate import PartsFolder

    monkeypatch.setattr(PartsFolder, "POLL_S", 0.05)
    parts = tmp_path / "parts"
    state = LotusState(**PRO)
    _lock_all(parts, _positions_at(state, 3), f"{socket.gethostname()} {os.getpid()}\n")
    locks = sorted(parts.glob("*.lock"))
    waits = []
    real_wait = PartsFolder.wait

    def wait(self, positions, progress=False):
        waits.append(len(positions))
        threading.Timer(0.3, lambda: [p.unlink() for p in locks]).start()
        return real_wait(self, positions, progress)

    monkeypatch.setattr(PartsFolder, "wait", wait)
    top = _check_split(proven_checkpoint, parts, tmp_path / "top.npz")
    assert waits and waits[0] >= 1          # every part was left pending, then made here
    assert top.info["parts_made"] == len(list(parts.glob("*.npz")))
    assert not list(parts.glob("*.lock"))


@pytest.mark.parametrize("holder", ["a dead process of this host", "an old lock of another host",
                                    "an empty lock a minute old"])
def test_a_stale_lock_is_taken_over(holder, tmp_path, proven_checkpoint):
    """A lock whose process is gone (this host), or that nobody has touched for STALE_S
    seconds (a machine that died), does not stop the part being made."""
    import os
    import socket
    import subprocess
    import sys

    from niwa.solver.certificate import PartsFolder

    parts = tmp_path / "parts"
    positions = _positions_at(LotusState(**PRO), 3)
    if holder == "a dead process of this host":
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout.strip()
        _lock_all(parts, positions, f"{socket.gethostname()} {gone}\n")
    else:
        old = holder == "an old lock of another host"
        _lock_all(parts, positions, "another-host 1\n" if old else "")
        then = os.path.getmtime(parts) - (PartsFolder.STALE_S if old else 60) - 1
        for lock in parts.glob("*.lock"):
            os.utime(lock, (then, then))
    top = _check_split(proven_checkpoint, parts, tmp_path / "top.npz")
    assert top.info["parts_made"] == len(list(parts.glob("*.npz"))) >= 1


def test_two_processes_share_one_parts_folder(tmp_path, proven_checkpoint):
    """Two `niwa proof extract --split` on one folder at once: each part is made once (one
    file per position and its mirror), and both tops check."""
    import subprocess
    import sys

    parts = tmp_path / "parts"
    cmd = [sys.executable, "-m", "niwa.cli.main", "proof", "extract", str(proven_checkpoint),
           "--no-tables", "--tt-mb", "16", "--parts", str(parts), "--split", "2", "--json"]
    runs = [subprocess.Popen([*cmd, "--out", str(tmp_path / f"top{k}.npz")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for k in range(2)]
    outs = [r.communicate(timeout=300) for r in runs]
    assert all(r.returncode == 0 for r in runs), outs
    files = list(parts.glob("*.npz"))
    roots = [parse_position(load_certificate(f).root).symmetric_hash() for f in files]
    assert len(set(roots)) == len(roots)        # no part made twice
    assert not list(parts.glob("*.lock"))
    for k in range(2):
        r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / f"top{k}.npz"),
                                      "--parts", str(parts)])
        assert r.exit_code == 0 and "valid" in r.output, r.output


def test_extract_workers_share_one_df_pn_table(tmp_path, proven_checkpoint, monkeypatch):
    """The processes of a split extraction work in one table of workers x tt_mb MB, mapped
    before the helpers fork (what one proves again, the others find)."""
    import niwa.solver.proof as proof
    from niwa.solver.certificate import certificate_from_checkpoint, check_certificate

    made = []

    class Recorded(proof.SharedProofTable):
        def __init__(self, tt_mb, huge_pages=False):
            made.append((tt_mb, huge_pages))
            super().__init__(tt_mb, huge_pages)

    monkeypatch.setattr(proof, "SharedProofTable", Recorded)
    cert = certificate_from_checkpoint(proven_checkpoint, tt_mb=8, tables=None, split=2,
                                       parts_dir=tmp_path / "parts", workers=2)
    assert made == [(16, False)]
    check_certificate(cert, parts=certificate_folder(tmp_path / "parts"))


def test_extract_workers_make_the_parts_together_and_leave_no_process(tmp_path,
                                                                       proven_checkpoint):
    """`niwa proof extract --split 2 --workers 2`: the helper processes share the parts
    folder (each part made once), the certificate checks, and no helper outlives the
    command."""
    import os

    parts = tmp_path / "parts"
    before = set(os.listdir("/proc")) if os.path.isdir("/proc") else set()
    r = CliRunner().invoke(main, ["proof", "extract", str(proven_checkpoint), "--no-tables",
                                  "--tt-mb", "16", "--parts", str(parts), "--split", "2",
                                  "--workers", "2", "--out", str(tmp_path / "top.npz")])
    assert r.exit_code == 0, r.output
    roots = [parse_position(load_certificate(f).root).symmetric_hash()
             for f in parts.glob("*.npz")]
    assert roots and len(set(roots)) == len(roots)
    # a helper stopped while it made a part this walk did not need lets go of its lock
    assert not [lock for lock in parts.glob("*.lock") if lock.read_text().strip()
                and os.path.exists(f"/proc/{lock.read_text().split()[1]}")]
    r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                  str(parts)])
    assert r.exit_code == 0 and "valid" in r.output, r.output
    if before:
        children = [p for p in set(os.listdir("/proc")) - before if p.isdigit()
                    and _parent_of(p) == os.getpid()]
        assert children == []
    r = CliRunner().invoke(main, ["proof", "extract", str(proven_checkpoint), "--workers", "2",
                                  "--out", str(tmp_path / "x.npz")])
    assert r.exit_code == 2 and "--workers needs --split" in r.output


def _parent_of(pid: str) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


# ---- checking the parts on workers (niwa proof check --workers / --executor) ------------
def _nested(tmp_path, damaged=False):
    """A top certificate of PRO over one part per two-stone position, the first of which
    stops in turn at parts two plies below it (`damaged`: the first of those with a loser
    reply cut); all saved in one folder."""
    state, search = LotusState(**PRO), ProofSearch(tt_mb=16)
    folder = tmp_path / "nested"
    (_, first), *others = _two_stone_positions(state)
    deeper = [s for s in _positions_at(first, 2)
              if not s.is_terminal() and s.current_player() == 1][:4]
    below = []
    for k, s in enumerate(deeper):
        cert = extract_certificate(search, s)
        if damaged and k == 0:
            cert = cut_one_reply(cert)
        cert.save(folder / f"below{k}.npz")
        below.append(load_certificate(folder / f"below{k}.npz"))
    parts = [extract_certificate(search, first, parts=below)]
    assert parts[0].parts, "the first part stops at parts of its own"
    parts += [extract_certificate(search, s) for _, s in others]
    for k, p in enumerate(parts):
        p.save(folder / f"part{k}.npz")
    top = extract_certificate(search, state, parts=parts)
    top.save(tmp_path / "top.npz")
    return load_certificate(tmp_path / "top.npz"), folder


def test_parts_checked_on_workers_give_the_report_of_the_parts_checked_in_turn(tmp_path):
    from dataclasses import asdict

    from niwa.analysis.arena.executors import LocalExecutor

    top, folder = _nested(tmp_path)
    alone = asdict(check_certificate(top, parts=certificate_folder(folder)))
    on_two = asdict(check_certificate(top, parts=certificate_folder(folder),
                                      executor=LocalExecutor(2)))
    assert alone.pop("time_s") > 0 and on_two.pop("time_s") > 0
    assert on_two == alone
    # every part once per orientation it is met in, the parts' parts included
    assert alone["parts"] > len(top.parts) and alone["part_nodes"] > 0


def test_a_bad_or_missing_part_is_refused_on_workers_and_no_worker_is_left(tmp_path):
    import os

    from niwa.analysis.arena.executors import LocalExecutor

    top, folder = _nested(tmp_path, damaged=True)
    with pytest.raises(CertificateError, match="missing"):
        check_certificate(top, parts=certificate_folder(folder), executor=LocalExecutor(2))
    (folder / "part1.npz").unlink()
    with pytest.raises(CertificateError, match="is not found in"):
        check_certificate(top, parts=certificate_folder(folder), executor=LocalExecutor(2))
    with pytest.raises(CertificateError, match="needs them in a folder"):
        check_certificate(top, parts=lambda sha: None, executor=LocalExecutor(2))
    before = {p for p in os.listdir("/proc") if p.isdigit()} if os.path.isdir("/proc") else set()
    r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                  str(folder), "-j", "2"])
    assert r.exit_code == 2 and "is not found in" in r.output
    assert len(r.output.strip().splitlines()) == 1, r.output
    if before:
        children = [p for p in {p for p in os.listdir("/proc") if p.isdigit()} - before
                    if _parent_of(p) == os.getpid()]
        assert children == []


def test_check_workers_from_the_cli(tmp_path):
    top, folder = _nested(tmp_path)
    r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                  str(folder), "--workers", "2", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["valid"] and out["parts_checked_by"] == "local, 2 workers"
    r1 = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                   str(folder), "--json"])
    one = json.loads(r1.output)
    assert one["parts_checked_by"] == "this process"
    assert (one["parts"], one["part_nodes"]) == (out["parts"], out["part_nodes"])
    r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                  str(folder), "--executor", "carrier-pigeon"])
    assert r.exit_code == 2 and "unknown --executor" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_a_check_with_a_ledger_resumes_where_it_stopped(tmp_path):
    from dataclasses import asdict

    from niwa.solver.certificate import CheckLedger

    top, folder = _nested(tmp_path)
    ledger = tmp_path / "check.jsonl"
    first = asdict(check_certificate(top, parts=certificate_folder(folder), ledger=ledger))
    rows = ledger.read_text().splitlines()
    # every part, then the whole (recorded once all of it has passed)
    assert len(rows) == first["parts"] + 1 and first["parts_from_ledger"] == 0
    assert json.loads(rows[-1])["sha256"] == top.sha256
    # again: every part from the ledger, the same report otherwise
    again = asdict(check_certificate(top, parts=certificate_folder(folder), ledger=ledger))
    assert again["parts_from_ledger"] == again["parts"] == first["parts"]
    for report in (first, again):
        report.pop("time_s"), report.pop("parts_from_ledger")
    assert again == first
    # a check that stopped after two parts, its last line cut short by the kill: the two
    # kept, the rest checked (and recorded) now
    ledger.write_text("\n".join(rows[:2]) + "\n" + rows[2][:25])
    resumed = check_certificate(top, parts=certificate_folder(folder), ledger=ledger)
    assert resumed.parts_from_ledger == 2 and resumed.parts == first["parts"]
    assert len(CheckLedger(ledger).rows) == first["parts"] + 1
    assert "checked by an earlier run" in resumed.summary()
    # parts checked on workers are recorded as they come back
    from niwa.analysis.arena.executors import LocalExecutor

    on_two = tmp_path / "on-two.jsonl"
    check_certificate(top, parts=certificate_folder(folder), ledger=on_two,
                      executor=LocalExecutor(2))
    assert len(CheckLedger(on_two).rows) == first["parts"] + 1
    # a part checked alone beforehand is taken from the ledger inside the whole
    alone = tmp_path / "alone.jsonl"
    part = load_certificate(sorted(folder.glob("*.npz"))[0])
    check_certificate(part, parts=certificate_folder(folder), ledger=alone)
    whole = check_certificate(top, parts=certificate_folder(folder), ledger=alone)
    assert whole.parts_from_ledger >= 1 and whole.parts == first["parts"]
    # a part changed since (another sha256) is not taken from the ledger: checked, refused
    damaged, folder2 = _nested(tmp_path / "damaged", damaged=True)
    with pytest.raises(CertificateError, match="missing"):
        check_certificate(damaged, parts=certificate_folder(folder2), ledger=ledger)
    # the command line, and an unwritable ledger refused before any work
    r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                  str(folder), "--ledger", str(ledger), "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["parts_from_ledger"] == first["parts"]
    r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                  str(folder), "--ledger", str(tmp_path / "no" / "x.jsonl")])
    assert r.exit_code == 2 and "--ledger" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_a_long_lived_checker_sees_what_others_add_to_the_ledger_and_the_folder(tmp_path):
    """A ledger and a parts folder read once take in, at refresh(), only what was added
    since: a line another checker appended (one cut short waits until it is whole) and a
    part file saved since; a file replaced by a shorter one is read anew."""
    import shutil

    from niwa.solver.certificate import CheckLedger

    top, folder = _nested(tmp_path)
    ledger = tmp_path / "check.jsonl"
    check_certificate(top, parts=certificate_folder(folder), ledger=ledger)
    lines = ledger.read_text().splitlines(keepends=True)
    shared = tmp_path / "shared.jsonl"
    shared.write_text(lines[0])
    reader = CheckLedger(shared)
    assert len(reader.rows) == 1
    with open(shared, "a") as f:
        f.write(lines[1][:20])
    assert len(reader.refresh().rows) == 1          # (being written: not yet)
    with open(shared, "a") as f:
        f.write(lines[1][20:] + "".join(lines[2:]))
    assert reader.refresh().rows == CheckLedger(ledger).rows
    shared.write_text(lines[0])
    assert len(reader.refresh().rows) == 1
    half = tmp_path / "half"
    half.mkdir()
    files = sorted(folder.glob("*.npz"))
    shutil.copy(files[0], half)
    found = certificate_folder(half)
    assert len(found.paths) == 1
    shutil.copy(files[1], half)       # asked for before any refresh: it looks again itself
    second = load_certificate(files[1]).sha256
    assert found(second).sha256 == second and len(found.paths) == 2
    for path in files[2:]:
        shutil.copy(path, half)
    assert found.refresh() is found
    assert set(found.paths) == set(certificate_folder(folder).paths) and len(files) > 1
    assert check_certificate(top, parts=found).parts > 0


def test_a_ledger_rolled_up_into_archives_reads_as_before(tmp_path):
    """CheckLedger.roll: the lines move into numbered gzip archives beside the file, which
    starts empty; the ledger reads the same, a check takes its parts from it, and a
    damaged archive is refused in one line."""
    from niwa.solver.certificate import CheckLedger

    top, folder = _nested(tmp_path)
    ledger = tmp_path / "check.jsonl"
    first = check_certificate(top, parts=certificate_folder(folder), ledger=ledger)
    rows = CheckLedger(ledger).rows
    lines = ledger.read_text().splitlines(keepends=True)
    ledger.write_text("".join(lines[:2]))
    reader = CheckLedger(ledger)
    assert reader.roll() == tmp_path / "check.0001.jsonl.gz" and ledger.read_text() == ""
    assert reader.roll() is None                        # (nothing left to roll)
    ledger.write_text("".join(lines[2:]))
    assert CheckLedger(ledger).roll().name == "check.0002.jsonl.gz"
    assert CheckLedger(ledger).rows == rows and len(reader.refresh().rows) == len(rows)
    again = check_certificate(top, parts=certificate_folder(folder), ledger=ledger)
    assert again.parts_from_ledger == first.parts and ledger.read_text() == ""
    (tmp_path / "check.0002.jsonl.gz").write_bytes(b"not gzip")
    with pytest.raises(CertificateError, match="archive .* cannot be read"):
        CheckLedger(ledger)


def test_a_part_known_by_its_ledger_alone_is_met_only_the_ways_it_was_checked(
        tmp_path, proven_checkpoint):
    """A part whose file is gone can no longer be checked: a walk stops at it only at its
    root, or at its root's lane mirror, as the ledger holds it checked; met another way,
    the walk goes on below it (and makes a part there, checked as any)."""
    from niwa.solver.certificate import (
        _part_roots,
        certificate_from_checkpoint,
        ledger_parts,
        parse_reference_position,
    )

    def mirror_hash(root):
        return parse_position(parse_reference_position(root).mirrored().to_notation()).hash()

    cp, parts, ledger = proven_checkpoint, tmp_path / "parts", tmp_path / "ledger.jsonl"
    certificate_from_checkpoint(cp, tt_mb=16, tables=None, split=2, parts_dir=parts)
    made = [load_certificate(p) for p in sorted(parts.glob("part-*.npz"))]
    part = next(p for p in made if parse_position(p.root).hash() != mirror_hash(p.root))
    check_certificate(part, parts=certificate_folder(parts), ledger=ledger)
    (header,) = [h for h in ledger_parts(ledger) if h.sha256 == part.sha256]
    assert header.orientations == (False,)
    root = parse_position(part.root)
    assert set(_part_roots([header], root, part.winner)) == {root.hash()}
    check_certificate(part, parts=certificate_folder(parts), ledger=ledger, mirror=True)
    (header,) = [h for h in ledger_parts(ledger) if h.sha256 == part.sha256]
    assert header.orientations == (False, True)
    assert set(_part_roots([header], root, part.winner)) == \
        {root.hash(), mirror_hash(part.root)}


def test_a_part_with_a_file_is_met_mirrored_only_if_its_own_parts_can_be(
        tmp_path, proven_checkpoint):
    """A check of a part's mirror goes down through its parts mirrored. A part it stops at
    that is known by a ledger line of one orientation alone (its file gone) cannot be
    checked the other way, so neither can the part above it: a walk stops at that part only
    the way it was made (on a new machine, every check stopped at the first such part)."""
    from dataclasses import replace

    from niwa.solver.certificate import (
        PartHeader,
        PartWays,
        _part_roots,
        certificate_from_checkpoint,
        parse_reference_position,
        usable_ways,
    )

    def ways_of(known: dict, strict=False) -> PartWays:
        return PartWays(strict, dict(known))

    def mirror_hash(root):
        return parse_position(parse_reference_position(root).mirrored().to_notation()).hash()

    parts = tmp_path / "parts"
    certificate_from_checkpoint(proven_checkpoint, tt_mb=16, tables=None, split=2,
                                parts_dir=parts)
    made = [load_certificate(p) for p in sorted(parts.glob("part-*.npz"))]
    upper, lower = [p for p in made
                    if parse_position(p.root).hash() != mirror_hash(p.root)][:2]
    header = PartHeader(upper.game, upper.variant, upper.root, upper.winner, upper.sha256,
                        "upper.npz")
    below = PartHeader(lower.game, lower.variant, lower.root, lower.winner, lower.sha256,
                       "", from_ledger=True,
                       ledger_refs=((False, ()),))
    root, mirror = parse_position(upper.root).hash(), mirror_hash(upper.root)
    for used, ways in ((False, (False,)), (True, (True,))):
        above = replace(header, refs=((lower.sha256, used),))
        index = _part_roots([above, below], parse_position(upper.root), upper.winner)
        assert {h for h, (p, _) in index.items() if p is above} == \
            {root if ways == (False,) else mirror}
        assert usable_ways(above, ways_of({lower.sha256: {False}})) == ways
    # with the part below checked both ways, or no part below, both ways
    both = replace(header, refs=((lower.sha256, True),))
    assert usable_ways(both, ways_of({lower.sha256: {False, True}})) == (False, True)
    assert usable_ways(header, ways_of({})) == (False, True)
    # a part below not known at all is taken as a file (a walk given a part, not its
    # parts), unless the record knows all the parts (a certification's)
    assert usable_ways(both, ways_of({})) == (False, True)
    assert usable_ways(both, ways_of({}, strict=True)) == ()
    # ... which first asks to learn the parts it does not know (made by another process)
    learned = ways_of({}, strict=True)
    learned.resolve = lambda: learned.usable.update({lower.sha256: {True}})
    assert usable_ways(both, learned) == (False,) and learned.resolve is not None
    # a ledger line stands for the part's own tree: its check goes on to the parts the
    # line names, as named, so the part is usable that way only if they are
    for named, ways in (((lower.sha256, False),), (False,)), (((lower.sha256, True),), ()):
        line = replace(below, sha256="a" * 64, ledger_refs=((False, named),))
        assert usable_ways(line, ways_of({lower.sha256: {False}}, strict=True)) == ways


def test_a_certification_carried_by_its_ledger_alone_needs_no_part_files(
        tmp_path, proven_checkpoint):
    """A split certification checked part by part into a ledger, then its part files lost
    (a new machine): the extraction given the ledger makes no part again and stops where
    the ledger's parts are, and the check takes them from the ledger, though their files
    are gone; a ledger row that disagrees with the entry naming its part is refused."""
    import shutil

    from niwa.solver.book import book_from_certificate
    from niwa.solver.certificate import (
        CheckLedger,
        certificate_from_checkpoint,
        ledger_parts,
    )

    cp, parts, ledger = proven_checkpoint, tmp_path / "parts", tmp_path / "ledger.jsonl"
    first = certificate_from_checkpoint(cp, tt_mb=16, tables=None, split=2, parts_dir=parts)
    first.save(tmp_path / "first.npz")
    made = sorted(parts.glob("part-*.npz"))
    for path in made:           # as certify.py --check-as-made does: each part alone,
        for mirror in (False, True):        # in both orientations
            check_certificate(load_certificate(path), parts=certificate_folder(parts),
                              ledger=ledger, mirror=mirror)
    headers = {h.sha256: h for h in ledger_parts(ledger)}
    assert set(headers) == {load_certificate(p).sha256 for p in made}
    for path in made:
        part = load_certificate(path)
        h = headers[part.sha256]
        assert (h.root, h.winner, h.game, h.variant, h.path) == \
            (part.root, part.winner, "lotus", part.variant, "")
    shutil.rmtree(parts)        # the files are gone; the ledger is all that is kept
    r = CliRunner().invoke(main, ["proof", "extract", str(cp), "--no-tables", "--tt-mb", "16",
                                  "--parts", str(parts), "--split", "2", "--ledger",
                                  str(ledger), "--out", str(tmp_path / "top.npz"), "--json"])
    assert r.exit_code == 0, r.output
    assert list(parts.glob("part-*.npz")) == []     # nothing made again
    top = load_certificate(tmp_path / "top.npz")
    assert {p["sha256"] for p in top.parts} == {p["sha256"] for p in first.parts}
    assert "parts_made" not in top.info
    r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                  str(tmp_path), "--ledger", str(ledger), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["parts_from_ledger"] == out["parts"] >= len(made)
    # without the ledger the parts are missing
    r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                  str(tmp_path)])
    assert r.exit_code == 2 and "is not found" in r.output
    # a row whose root is not the one the top's entry names is not taken as that part
    rows = [json.loads(line) for line in ledger.read_text().splitlines()]
    wrong = [{**row, "root": top.root} if row["sha256"] == top.parts[0]["sha256"] else row
             for row in rows]
    forged = tmp_path / "forged.jsonl"
    forged.write_text("".join(json.dumps(row) + "\n" for row in wrong))
    assert len(CheckLedger(forged).rows) == len(rows)
    with pytest.raises(CertificateError, match="recorded it with another root"):
        check_certificate(top, parts=certificate_folder(tmp_path), ledger=forged)
    # the book of what is kept: the lines end where the parts' files are missing
    book = book_from_certificate(top, plies=8, parts=certificate_folder(tmp_path),
                                 missing_parts=True)
    assert book.info["lines_cut"] >= 1
    with pytest.raises(Exception, match="not given"):
        book_from_certificate(top, plies=8, parts=certificate_folder(tmp_path))
    r = CliRunner().invoke(main, ["proof", "extract", str(cp), "--out", str(tmp_path / "x.npz"),
                                  "--ledger", str(tmp_path / "none.jsonl")])
    assert r.exit_code == 2 and "--ledger: no file" in r.output


def _uncut_and_a_bound(cp, tmp_path):
    """The certificate of `cp` split 2 plies down with no bound (parts in tmp_path/uncut),
    and a part bound a quarter of its largest part: (certificate, bound)."""
    from niwa.solver.certificate import certificate_from_checkpoint

    whole = certificate_from_checkpoint(cp, tt_mb=16, tables=None, split=2,
                                        parts_dir=tmp_path / "uncut")
    biggest = max(load_certificate(p).nodes for p in (tmp_path / "uncut").glob("*.npz"))
    return whole, max(2, biggest // 4)


def test_a_part_too_big_is_cut_into_parts_below_it(tmp_path, proven_checkpoint):
    """--max-part-positions: a part whose walk passes the bound is made instead as a small
    top over parts further down (saved as each is made); the whole
    checks, every part within the bound or cut, and a run again makes nothing anew."""
    from niwa.solver.certificate import certificate_from_checkpoint

    cp, parts = proven_checkpoint, tmp_path / "parts"
    whole, bound = _uncut_and_a_bound(cp, tmp_path)
    top = certificate_from_checkpoint(cp, tt_mb=16, tables=None, split=2, parts_dir=parts,
                                      max_part_positions=bound)
    top.save(tmp_path / "top.npz")
    made = [load_certificate(p) for p in parts.glob("part-*.npz")]
    cut = {p.sha256 for p in made if "cut_at_positions" in p.info}
    assert all(p.info["cut_depth"] >= 1 for p in made if p.sha256 in cut)
    assert cut and len(made) > len(list((tmp_path / "uncut").glob("*.npz")))
    saved = {p.sha256 for p in made}
    for part in made:
        assert part.nodes <= bound or part.sha256 in cut
        # a part stops at parts saved before it (those of a cut, or one met again), never
        # at one the folder lacks
        assert all(ref["sha256"] in saved for ref in part.parts)
    report = check_certificate(load_certificate(tmp_path / "top.npz"),
                               parts=certificate_folder(parts))
    assert report.winner_nodes >= 0 and top.winner == whole.winner
    before = sorted(p.name for p in parts.glob("part-*.npz"))
    r = CliRunner().invoke(main, ["proof", "extract", str(cp), "--no-tables", "--tt-mb", "16",
                                  "--parts", str(parts), "--split", "2", "--out",
                                  str(tmp_path / "again.npz"), "--max-part-positions",
                                  str(bound), "--json"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in parts.glob("part-*.npz")) == before
    r = CliRunner().invoke(main, ["proof", "extract", str(cp), "--out", str(tmp_path / "x.npz"),
                                  "--max-part-positions", "5"])
    assert r.exit_code == 2 and "needs --split" in r.output


def test_a_run_again_cuts_at_once_where_an_earlier_run_cut(tmp_path, proven_checkpoint,
                                                           monkeypatch):
    """The cuts of --max-part-positions are kept (PartCuts, DIR/cuts.jsonl): a run into a
    new folder given them cuts each such part at once, without walking it to the bound
    first, and its certificate checks as the first one does."""
    import niwa.solver.certificate as certificate
    from niwa.solver.certificate import PartCuts, certificate_from_checkpoint

    cp = proven_checkpoint
    whole, bound = _uncut_and_a_bound(cp, tmp_path)
    walks = []
    plain = certificate.extract_certificate

    def counted(*args, **kw):
        walks.append(kw.get("max_positions", 0))
        return plain(*args, **kw)

    monkeypatch.setattr(certificate, "extract_certificate", counted)
    first = tmp_path / "first"
    certificate_from_checkpoint(cp, tt_mb=16, tables=None, split=2, parts_dir=first,
                                max_part_positions=bound)
    lines = [json.loads(line) for line in (first / "cuts.jsonl").read_text().splitlines()]
    rows = [row for row in lines if "bound" in row]
    assert rows and all(row["bound"] == bound and row["depth"] >= 1 for row in rows)
    # the first time, every part is walked to the bound first
    assert walks.count(bound) == len(list(first.glob("part-*.npz")))
    walks.clear()
    again = tmp_path / "again"
    top = certificate_from_checkpoint(cp, tt_mb=16, tables=None, split=2, parts_dir=again,
                                      max_part_positions=bound, cuts=first / "cuts.jsonl")
    made = [load_certificate(p) for p in again.glob("part-*.npz")]
    recalled = [p for p in made if p.info.get("cut_recalled")]
    # each part the file names is cut at once, at the depth kept; only the others are
    # walked to the bound first
    assert recalled and walks.count(bound) == len(made) - len(recalled)
    depth_of = {int(row["key"], 16): row["depth"] for row in rows}
    assert all(depth_of[parse_position(p.root).symmetric_hash()] == p.info["cut_depth"]
               for p in recalled)
    report = check_certificate(top, parts=certificate_folder(again))
    assert report.winner_nodes >= 0 and top.winner == whole.winner
    # walked by the first run's plans, the tops meet the parts the first run made
    assert sorted(p.name for p in again.glob("part-*.npz")) == \
        sorted(p.name for p in first.glob("part-*.npz"))
    # a walk to a larger bound than the one recorded is not known to pass it; a line a
    # kill cut short is skipped and the next one is written on a line of its own
    cuts = PartCuts(first / "cuts.jsonl")
    position = parse_position(rows[0]["root"])
    assert cuts.depth(position, bound) == rows[0]["depth"]
    assert cuts.depth(position, bound + 1) is None
    with open(first / "cuts.jsonl", "a") as f:
        f.write('{"key": "0')
    cuts.add(position, bound + 9, 5)
    assert cuts.depth(position, bound + 9) == 5 and cuts.depth(position, bound) == 5
    # a reader that has read the file finds the lines another process appends since
    PartCuts(first / "cuts.jsonl").add(position, bound + 20, 7)
    assert cuts.depth(position, bound + 20) == 7
    r = CliRunner().invoke(main, ["proof", "extract", str(cp), "--out", str(tmp_path / "x.npz"),
                                  "--parts", str(again), "--split", "2",
                                  "--cuts", str(tmp_path / "c.jsonl")])
    assert r.exit_code == 2 and "--cuts needs --max-part-positions" in r.output


def test_each_cut_top_is_planned_first_and_walked_by_its_plan(tmp_path, proven_checkpoint):
    """Before the parts below a cut are made, the top's plan is kept beside the cuts
    (PartPlan: the winner's moves above the cut, the parts below): the top and every cut
    part stop at exactly the parts their plans list, a move read back that is not legal
    is not played, and a plan needs a split."""
    from niwa.solver.certificate import (
        PartCuts,
        PartPlan,
        certificate_from_checkpoint,
        extract_certificate,
    )
    from niwa.solver.proof import ProofSearch

    cp, parts = proven_checkpoint, tmp_path / "parts"
    whole, bound = _uncut_and_a_bound(cp, tmp_path)
    top = certificate_from_checkpoint(cp, tt_mb=16, tables=None, split=2, parts_dir=parts,
                                      max_part_positions=bound)
    cuts = PartCuts(parts / "cuts.jsonl")
    made = {p.sha256: p for p in map(load_certificate, parts.glob("part-*.npz"))}
    made[top.sha256] = top
    cut = [c for c in made.values() if "cut_depth" in c.info] + [top]
    assert len(cut) >= 2
    for c in cut:
        position = parse_position(c.root)
        plan = cuts.plan(position, c.info.get("cut_depth", 2))
        assert plan is not None and plan.positions >= 1 and plan.moves
        below = {parse_position(p["root"]).symmetric_hash() for p in c.parts}
        assert set(plan.children) == below and len(plan.children) == len(below)
        # (made before its parts: a reader takes those made since as the walk's order; a
        # part made before is one another walk met first, through a transposition)
        assert all(plan.planned <= made[p["sha256"]].info["made"] or
                   any(p["sha256"] in {q["sha256"] for q in other.parts}
                       for other in made.values() if other is not c)
                   for p in c.parts)
        assert PartPlan.from_json(plan.root, plan.to_json()) == plan
        assert cuts.plan(position, plan.depth + 1) is None
    state = parse_position(top.root)
    search = ProofSearch(tt_mb=16)
    plain = extract_certificate(search, state)
    first = next(iter(cuts.plan(state, 2).moves))
    odd = extract_certificate(search, state, moves={first: 4095})
    assert all(np.array_equal(getattr(odd, a), getattr(plain, a))
               for a in ("offsets", "actions", "children"))
    with pytest.raises(CertificateError, match="a plan needs split"):
        extract_certificate(search, state, plan=True)


def test_a_certification_keeps_its_costliest_proofs_and_a_run_again_loads_them(
        tmp_path, proven_checkpoint, monkeypatch):
    """`niwa proof extract --keep-proofs DIR`: the df-pn table's proofs are kept in DIR as
    parts are made (as a proof checkpoint keeps its own), a run again loads them and its
    certificate still checks; kept files that do not read are a one-line error (exit 2)."""
    from niwa.solver import certificate as cert_module
    from niwa.solver.proof_tree import kept_header

    monkeypatch.setattr(cert_module._KeptProofs, "min_work", 1)     # (tiny proofs)
    keep = tmp_path / "kept"
    args = ["proof", "extract", str(proven_checkpoint), "--no-tables", "--tt-mb", "16",
            "--split", "2", "--json", "--keep-proofs", str(keep)]
    r = CliRunner().invoke(main, [*args, "--parts", str(tmp_path / "p1"), "--keep-every", "0",
                                  "--out", str(tmp_path / "first.npz")])
    assert r.exit_code == 0, r.output
    first = load_certificate(tmp_path / "first.npz")
    rows = kept_header(keep)["rows"]
    assert first.info["kept_proofs_saves"] >= 1 and first.info["kept_proofs_loaded"] == 0
    assert rows > 0
    r = CliRunner().invoke(main, [*args, "--parts", str(tmp_path / "p2"),
                                  "--out", str(tmp_path / "again.npz")])
    assert r.exit_code == 0, r.output
    again = load_certificate(tmp_path / "again.npz")
    assert again.info["kept_proofs_loaded"] == rows and again.info["kept_proofs_saves"] == 0
    assert check_certificate(again, parts=certificate_folder(tmp_path / "p2")).nodes > 0
    (keep / "proven.npy").write_bytes(b"not a table")
    r = CliRunner().invoke(main, [*args, "--parts", str(tmp_path / "p3"),
                                  "--out", str(tmp_path / "third.npz")])
    assert r.exit_code == 2 and "kept proofs" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1
