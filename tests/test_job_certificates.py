"""Certificates written as a two-level proof goes (ProofTree's `certify`, `niwa solve
--checkpoint DIR --certify-jobs`): each job that proves its position certifies it from its
worker's table into DIR/parts, and the proof's certificate stops there instead of proving
those positions again."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.solver.certificate import (
    CertificateError,
    JobCertifier,
    certificate_folder,
    certificate_from_checkpoint,
    check_certificate,
    load_certificate,
)
from niwa.solver.proof_tree import JOB_PARTS, ProofTree

PRO = dict(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")


def _prove(cp, certify, executor=None):
    tree = ProofTree(LotusState(**PRO), job_nodes=30, tt_mb=16, checkpoint=cp, certify=certify)
    try:
        result = tree.run(executor)
    finally:
        tree.close()
    assert result.value == 0.0
    return [json.loads(line) for line in open(cp / "jobs.jsonl")]


def test_proven_jobs_write_certificates_the_proof_certificate_stops_at(tmp_path):
    rows = _prove(tmp_path / "cp", JobCertifier())
    named = [r for r in rows if r.get("part")]
    assert named and all(r["pn"] == 0 or r["dn"] == 0 for r in named)
    assert all(r["certified"] > 0 and r["certify_nodes"] >= 0 for r in named)
    # each job certificate proves its job's position on its own
    for r in named:
        job = load_certificate(tmp_path / "cp" / JOB_PARTS / r["part"])
        assert check_certificate(job).nodes == job.nodes == r["certified"]
    cert = certificate_from_checkpoint(tmp_path / "cp", tt_mb=16, tables=None,
                                       parts_out=tmp_path / "out")
    cert.save(tmp_path / "out" / "top.npz")
    report = check_certificate(load_certificate(tmp_path / "out" / "top.npz"),
                               parts=certificate_folder(tmp_path / "out"))
    assert cert.info["job_parts"] >= 1 and report.parts >= 1
    # the same proof without job certificates: its certificate proves the jobs again
    _prove(tmp_path / "plain", None)
    plain = certificate_from_checkpoint(tmp_path / "plain", tt_mb=16, tables=None)
    assert not plain.parts and "job_parts" not in plain.info
    assert cert.info["extract_nodes"] < plain.info["extract_nodes"]


def test_job_certificates_come_back_from_worker_processes(tmp_path):
    from niwa.analysis.arena.executors import LocalExecutor

    rows = _prove(tmp_path / "cp", JobCertifier(), LocalExecutor(2))
    assert any(r.get("part") for r in rows) and len({r["pid"] for r in rows}) >= 1
    cert = certificate_from_checkpoint(tmp_path / "cp", tt_mb=16, tables=None,
                                       parts_out=tmp_path / "out")
    cert.save(tmp_path / "out" / "top.npz")
    check_certificate(load_certificate(tmp_path / "out" / "top.npz"),
                      parts=certificate_folder(tmp_path / "out"))


def test_a_solution_tree_over_the_cap_is_left_to_the_end_when_not_cut(tmp_path):
    rows = _prove(tmp_path / "cp", JobCertifier(max_positions=1, split=False))
    proven = [r for r in rows if r["pn"] == 0 or r["dn"] == 0]
    assert proven and not any(r.get("part") for r in rows)
    assert any("more than 1 positions" in r.get("certify_skipped", "") for r in proven)
    cert = certificate_from_checkpoint(tmp_path / "cp", tt_mb=16, tables=None)
    assert check_certificate(cert).nodes == cert.nodes and not cert.parts


def _check_from_checkpoint(cp, out):
    cert = certificate_from_checkpoint(cp, tt_mb=16, tables=None, parts_out=out)
    cert.save(out / "top.npz")
    return cert, check_certificate(load_certificate(out / "top.npz"),
                                   parts=certificate_folder(out))


def test_a_solution_tree_over_the_cap_is_cut_into_parts(tmp_path):
    """Over the cap, a job's tree stops at parts of its own (job-N-i.npz), each within the
    cap too; every proven job is certified and the whole checks."""
    rows = _prove(tmp_path / "cp", JobCertifier(max_positions=4))
    proven = [r for r in rows if r["pn"] == 0 or r["dn"] == 0]
    assert proven and all(r.get("part") for r in proven)
    assert sum(r.get("certify_parts", 0) for r in proven) >= 1
    folder = tmp_path / "cp" / JOB_PARTS
    cut = sorted(folder.glob("job-*-*.npz"))
    assert len(cut) == sum(r.get("certify_parts", 0) for r in proven)
    for path in sorted(folder.glob("*.npz")):
        assert load_certificate(path).nodes <= 4
    assert sum(r.get("certify_part_positions", 0) for r in proven) == \
        sum(load_certificate(path).nodes for path in cut)
    cert, report = _check_from_checkpoint(tmp_path / "cp", tmp_path / "out")
    assert cert.info["job_parts"] >= 1 and report.parts >= len(cut)


def test_parts_cut_from_a_tree_given_up_are_kept(tmp_path):
    """A cap so small that a tree cannot be cut within it either: the job is left
    uncertified, but the parts finished on the way are saved, and the proof's certificate
    stops at them."""
    rows = _prove(tmp_path / "cp", JobCertifier(max_positions=2))
    given_up = [r for r in rows if "certify_skipped" in r and r.get("certify_parts")]
    assert given_up, "no certification gave up after cutting parts"
    for r in given_up:
        assert "part" not in r
        assert (tmp_path / "cp" / JOB_PARTS / f"job-{r['job']}-1.npz").exists()
    cert, report = _check_from_checkpoint(tmp_path / "cp", tmp_path / "out")
    assert report.parts >= 1 and cert.nodes == report.nodes


def test_a_certification_past_its_time_budget_is_given_up_uncut(tmp_path):
    rows = _prove(tmp_path / "cp", JobCertifier(max_positions=4, time_budget=1e-9))
    proven = [r for r in rows if r["pn"] == 0 or r["dn"] == 0]
    assert proven and not any(r.get("certify_parts") for r in proven)
    assert not list((tmp_path / "cp" / JOB_PARTS).glob("*-*.npz"))


def test_a_walk_past_its_deadline_is_refused():
    import time

    from niwa.solver.certificate import TreeTooBig, extract_certificate
    from niwa.solver.proof import ProofSearch

    state = LotusState(**PRO)
    search = ProofSearch(tt_mb=16)
    with pytest.raises(TreeTooBig, match="not walked in time"):
        extract_certificate(search, state, deadline=time.perf_counter() - 1)
    assert extract_certificate(search, state, deadline=time.perf_counter() + 600).nodes > 1


def test_job_certificates_need_a_checkpoint_and_a_damaged_one_is_one_error(tmp_path):
    with pytest.raises(ValueError, match="needs a checkpoint"):
        ProofTree(LotusState(**PRO), job_nodes=30, tt_mb=16, certify=JobCertifier())
    _prove(tmp_path / "cp", JobCertifier())
    (tmp_path / "cp" / JOB_PARTS / "job-999999.npz").write_bytes(b"not a certificate")
    with pytest.raises(CertificateError, match="job-999999.npz is not a readable certificate"):
        certificate_from_checkpoint(tmp_path / "cp", tt_mb=16, tables=None,
                                    parts_out=tmp_path / "out")


def test_certify_jobs_from_the_cli(tmp_path):
    cp, runner = tmp_path / "cp", CliRunner()
    position = "lotus towers=2 lane=1 shared=4 trampoline_at=3 rule=pro"
    r = runner.invoke(main, ["solve", position, "--checkpoint", str(cp), "--job-nodes", "30",
                             "--tt-mb", "16", "--no-tables", "--certify-jobs", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output.strip().splitlines()[-1])["job_certificates"] >= 1
    r = runner.invoke(main, ["solve", "--checkpoint", str(cp), "--status"])
    assert r.exit_code == 0 and "job certificates:" in r.output and "jobs certified" in r.output
    assert "(the proof's certificate stops at them)" in r.output
    # a copy of the checkpoint without its certificates (as the repository keeps one)
    import shutil

    shutil.copytree(cp, tmp_path / "copy", ignore=shutil.ignore_patterns("*.npz", "*.lock"))
    r = runner.invoke(main, ["solve", "--checkpoint", str(tmp_path / "copy"), "--status"])
    assert r.exit_code == 0 and "none of them in" in r.output, r.output
    r = runner.invoke(main, ["solve", "--checkpoint", str(tmp_path / "copy"), "--status",
                             "--json"])
    assert json.loads(r.output)["job_certificates_kept"] == 0
    (tmp_path / "certs").mkdir()
    out = tmp_path / "certs" / "top.npz"
    r = runner.invoke(main, ["proof", "extract", str(cp), "--out", str(out), "--no-tables",
                             "--tt-mb", "16", "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["parts"] >= 1, r.output
    r = runner.invoke(main, ["proof", "check", str(out)])      # the parts beside it
    assert r.exit_code == 0 and "valid" in r.output, r.output
    for args in (["solve", position, "--certify-jobs"],
                 ["solve", "--checkpoint", str(cp), "--status", "--certify-jobs"]):
        r = runner.invoke(main, args)
        assert r.exit_code == 2 and "--certify-jobs" in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1


def test_a_split_certification_copies_the_job_certificates_into_its_parts_folder(tmp_path):
    _prove(tmp_path / "cp", JobCertifier())
    parts = tmp_path / "parts"
    r = CliRunner().invoke(main, ["proof", "extract", str(tmp_path / "cp"), "--no-tables",
                                  "--tt-mb", "16", "--parts", str(parts), "--split", "2",
                                  "--workers", "2", "--out", str(tmp_path / "top.npz")])
    assert r.exit_code == 0, r.output
    assert list(parts.glob("job-*.npz"))
    r = CliRunner().invoke(main, ["proof", "check", str(tmp_path / "top.npz"), "--parts",
                                  str(parts), "-j", "2"])
    assert r.exit_code == 0 and "valid" in r.output, r.output


def test_a_worker_certifies_a_position_once_and_a_dangling_nested_part_is_left_out(tmp_path):
    """A job certificate stops at the ones its worker made before (nested parts); the
    whole still checks. A job certificate whose nested part was never saved is not used
    (its position is proved again), and the certificate still checks."""
    from niwa.solver.certificate import part_headers

    cp = tmp_path / "cp"
    tree = ProofTree(LotusState(**PRO), job_nodes=5, tt_mb=16, checkpoint=cp,
                     certify=JobCertifier())
    try:
        assert tree.run().value == 0.0
    finally:
        tree.close()
    headers = part_headers(cp / JOB_PARTS)
    nested = [h for h in headers if h.parts]
    assert nested, "no job certificate stops at another"

    def certify(out):
        cert = certificate_from_checkpoint(cp, tt_mb=16, tables=None, parts_out=out)
        cert.save(out / "top.npz")
        return check_certificate(load_certificate(out / "top.npz"),
                                 parts=certificate_folder(out))

    whole = certify(tmp_path / "out")
    by_sha = {h.sha256: h for h in headers}
    inner = by_sha[nested[0].parts[0]]
    (cp / JOB_PARTS / inner.path.rsplit("/", 1)[1]).unlink()
    left = {h.sha256 for h in part_headers(cp / JOB_PARTS)}
    assert nested[0].sha256 not in left and inner.sha256 not in left
    again = certify(tmp_path / "again")
    assert again.nodes >= 1 and whole.nodes >= 1


def test_workers_stop_at_the_job_certificates_in_the_folder(tmp_path):
    """Two worker processes, small jobs: a certificate may stop at one the other worker
    made (read from DIR/parts); a file there that is no certificate is passed over; the
    whole checks."""
    from niwa.analysis.arena.executors import LocalExecutor
    from niwa.solver.certificate import part_headers

    cp = tmp_path / "cp"
    (cp / JOB_PARTS).mkdir(parents=True)
    (cp / JOB_PARTS / "stray.npz").write_bytes(b"no certificate")
    tree = ProofTree(LotusState(**PRO), job_nodes=5, tt_mb=16, checkpoint=cp,
                     certify=JobCertifier())
    try:
        assert tree.run(LocalExecutor(2)).value == 0.0
    finally:
        tree.close()
    rows = [json.loads(line) for line in open(cp / "jobs.jsonl")]
    assert len({r["pid"] for r in rows if r.get("part")}) == 2
    (cp / JOB_PARTS / "stray.npz").unlink()
    headers = part_headers(cp / JOB_PARTS)
    assert any(h.parts for h in headers)
    cert = certificate_from_checkpoint(cp, tt_mb=16, tables=None, parts_out=tmp_path / "out")
    cert.save(tmp_path / "out" / "top.npz")
    check_certificate(load_certificate(tmp_path / "out" / "top.npz"),
                      parts=certificate_folder(tmp_path / "out"))


def test_certify_budget_from_the_cli(tmp_path):
    """--certify-budget sets the seconds a job's certification may take (the session's
    settings record it, --status shows it); it goes only with --certify-jobs."""
    cp, runner = tmp_path / "cp", CliRunner()
    position = "lotus towers=2 lane=1 shared=4 trampoline_at=3 rule=pro"
    r = runner.invoke(main, ["solve", position, "--checkpoint", str(cp), "--job-nodes", "30",
                             "--tt-mb", "16", "--no-tables", "--certify-jobs",
                             "--certify-budget", "7.5", "--json"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["solve", "--checkpoint", str(cp), "--status"])
    assert r.exit_code == 0 and "jobs certified (within 7.5 s a job)" in r.output, r.output
    r = runner.invoke(main, ["solve", position, "--checkpoint", str(tmp_path / "nolimit"),
                             "--job-nodes", "30", "--tt-mb", "16", "--no-tables",
                             "--certify-jobs", "--certify-budget", "0"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["solve", "--checkpoint", str(tmp_path / "nolimit"), "--status"])
    assert "jobs certified (no time limit)" in r.output, r.output
    for args, message in (
            (["solve", position, "--checkpoint", str(tmp_path / "x"), "--certify-budget", "5"],
             "--certify-budget goes with --certify-jobs"),
            (["solve", position, "--checkpoint", str(tmp_path / "x"), "--certify-jobs",
              "--certify-budget", "-1"], "--certify-budget"),
            (["solve", "--checkpoint", str(cp), "--status", "--certify-jobs",
              "--certify-budget", "5"], "--certify-jobs")):
        r = runner.invoke(main, args)
        assert r.exit_code == 2 and message in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()
