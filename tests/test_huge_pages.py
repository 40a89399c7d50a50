"""--huge-pages on every command that runs a df-pn proof (solve, solve --certificate, book
build, proof extract): the same answers on 2 MB pages, one warning line where the kernel
gives none, and one error line where nothing is proved. (The two-level proof's own tests
are in test_proof_tree.py.)"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import niwa.solver.proof_tree as proof_tree
from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.solver.certificate import load_certificate
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_tree import ProofTree

POS = "lotus towers=2 lane=1 shared=4 trampoline_at=3 rule=pro"
SMALL = dict(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")


@pytest.fixture(params=["kernel gives them", "kernel gives none"])
def thp(request, tmp_path, monkeypatch):
    """A stand-in for /sys/kernel/mm/transparent_hugepage: huge pages given or not."""
    d = tmp_path / "thp"
    d.mkdir()
    given = request.param == "kernel gives them"
    (d / "enabled").write_text("always [madvise] never\n" if given else
                               "always madvise [never]\n")
    (d / "shmem_enabled").write_text("always within_size [advise] never deny force\n")
    monkeypatch.setattr(proof_tree, "THP", d)
    return given


def _warned(output: str) -> bool:
    return "warning: --huge-pages: the kernel gives memory no huge pages" in output


def test_solve_and_its_certificate_on_huge_pages(thp, tmp_path):
    expected = ProofSearch(tt_mb=16).solve(LotusState(**SMALL), pv=False).value
    r = CliRunner().invoke(main, ["solve", POS, "--algo", "proof", "--no-tables", "--fresh",
                                  "--tt-mb", "16", "--huge-pages", "--json"])
    assert r.exit_code == 0, r.output
    assert _warned(r.output) != thp
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["proven"] and out["value"] == expected
    cert = tmp_path / "c.npz"
    r = CliRunner().invoke(main, ["solve", POS, "--no-tables", "--tt-mb", "16", "--huge-pages",
                                  "--certificate", str(cert)])
    assert r.exit_code == 0, r.output
    assert load_certificate(cert).winner == (0 if expected == 1.0 else 1)


def test_book_build_and_proof_extract_on_huge_pages(thp, tmp_path):
    book = tmp_path / "b.npz"
    r = CliRunner().invoke(main, ["book", "build", "lotus", *sum((["-v", f"{k}={v}"] for k, v in
                                                               SMALL.items()), []),
                                  "--plies", "2", "--tt-mb", "16", "--huge-pages", "--out",
                                  str(book)])
    assert r.exit_code == 0 and book.exists(), r.output
    assert _warned(r.output) != thp
    cp = tmp_path / "cp"
    tree = ProofTree(LotusState(**SMALL), job_nodes=30, tt_mb=16, checkpoint=cp)
    try:
        tree.run()
    finally:
        tree.close()
    r = CliRunner().invoke(main, ["proof", "extract", str(cp), "--no-tables", "--tt-mb", "16",
                                  "--huge-pages", "--out", str(tmp_path / "c.npz"), "--json"])
    assert r.exit_code == 0, r.output
    assert _warned(r.output) != thp
    assert json.loads(r.output.strip().splitlines()[-1])["winner"] == \
        load_certificate(tmp_path / "c.npz").winner


@pytest.mark.parametrize("args", [["--algo", "mcts"], ["--algo", "alphabeta"]])
def test_huge_pages_where_nothing_is_proved_is_one_error_line(args):
    r = CliRunner().invoke(main, ["solve", POS, *args, "--huge-pages"])
    assert r.exit_code == 2 and "--huge-pages is for the df-pn proof table" in r.output
    assert len(r.output.strip().splitlines()) == 1
