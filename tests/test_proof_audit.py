"""`niwa proof audit`: a random sample of a check ledger's parts proved again from nothing,
certified, checked with the reference rules and compared (niwa.solver.audit)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from part_ledgers import pro_certification
from scipy import stats

from niwa.cli.main import main
from niwa.solver import audit
from niwa.solver.certificate import CheckLedger


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    """The ledger of a certificate of a tiny pro-rule Lotus checked over its parts."""
    _, _, path = pro_certification(tmp_path_factory.mktemp("audit"))
    assert len(CheckLedger(path).rows) > 4
    return path


def _audit(*args):
    return CliRunner().invoke(main, ["proof", "audit", *map(str, args)])


def test_every_part_of_a_true_ledger_agrees_and_the_draw_follows_the_seed(ledger, tmp_path):
    result = _audit(ledger, "--sample", 3, "--seed", 5, "--out", tmp_path / "a.csv")
    assert result.exit_code == 0, result.output
    assert "3 agree, 0 disagree, 0 undecided" in result.output
    assert "at most 63% (95%, one-sided)" in result.output      # 1 - 0.05 ** (1 / 3)
    rows = audit.read_rows(tmp_path / "a.csv")
    assert [r.verdict for r in rows] == ["agrees"] * 3
    assert all(r.certificate_positions > 0 and r.proof_nodes > 0 for r in rows)
    drawn = [p.sha256 for p in audit.draw_parts(ledger, 3, 5)]
    assert [r.sha256 for r in rows] == drawn
    assert drawn != [p.sha256 for p in audit.draw_parts(ledger, 3, 6)]


def test_an_audit_resumes_from_its_csv_and_refuses_another_draws(ledger, tmp_path,
                                                                  monkeypatch):
    out = tmp_path / "a.csv"
    assert _audit(ledger, "--sample", 2, "--out", out).exit_code == 0
    audited = []
    real = audit.audit_part
    monkeypatch.setattr(audit, "audit_part", lambda part, **kw: audited.append(part) or
                        real(part, **kw))
    again = _audit(ledger, "--sample", 3, "--out", out)
    assert again.exit_code == 0 and len(audited) == 1     # the two done are not proved again
    assert len(audit.read_rows(out)) == 3
    other = _audit(ledger, "--sample", 3, "--seed", 9, "--out", out)
    assert other.exit_code == 2
    assert "holds" in other.output and "another ledger or --seed" in other.output


def test_a_ledger_line_with_a_false_winner_is_found_out(ledger, tmp_path):
    """A ledger edited to claim the other winner for one part: the fresh proof disagrees,
    one line, exit 2."""
    lines = ledger.read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    k = next(i for i, row in enumerate(rows) if row.get("refs") == [] and "root" in row)
    rows[k]["winner"] = 1 - rows[k]["winner"]
    forged = tmp_path / "forged.jsonl"
    forged.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = _audit(forged, "--sample", len(rows))
    assert result.exit_code == 2
    assert f"disagrees: the ledger says seat {rows[k]['winner']} wins" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_part_beyond_the_audits_bounds_is_left_undecided(ledger):
    result = _audit(ledger, "--sample", 2, "--max-positions", 1)
    assert result.exit_code == 0, result.output
    assert "0 agree, 0 disagree, 2 undecided" in result.output
    assert "at most" not in result.output
    part = audit.draw_parts(ledger, 1, 1)[0]
    row = audit.audit_part(part, max_positions=1)
    assert row.verdict == "undecided" and row.why == "certificate over 1 positions"
    row = audit.audit_part(part, max_nodes=1)
    assert row.verdict == "undecided" and row.why == "not proven in 1 nodes"


def test_the_bound_on_wrong_parts_is_the_exact_binomial_one():
    for wrong, n in [(0, 1), (0, 20), (0, 300), (2, 50)]:
        assert audit.wrong_rate_bound(wrong, n) == pytest.approx(
            stats.beta.ppf(0.95, wrong + 1, n - wrong))
    assert audit.wrong_rate_bound(0, 0) != audit.wrong_rate_bound(0, 0)    # nan


def test_a_ledger_without_roots_is_one_line(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = _audit(empty)
    assert result.exit_code == 2 and "names no part with its root" in result.output


def test_two_workers_audit_the_same_parts_to_the_same_rows(ledger, tmp_path):
    """Each part's proof has its node budget and a fresh table: the rows are the same
    whichever process made them, only their order may differ."""
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    assert _audit(ledger, "--sample", 4, "--out", one).exit_code == 0
    result = _audit(ledger, "--sample", 4, "--out", two, "--workers", 2)
    assert result.exit_code == 0, result.output

    def same(path):
        return sorted((r.sha256, r.verdict, r.winner, r.proof_nodes, r.certificate_positions)
                      for r in audit.read_rows(path))
    assert same(one) == same(two) and len(same(one)) == 4


def test_undecided_parts_are_audited_again_with_other_settings(ledger, tmp_path,
                                                               monkeypatch):
    first = tmp_path / "first.csv"
    assert _audit(ledger, "--sample", 2, "--out", first).exit_code == 0
    assert _audit(ledger, "--sample", 4, "--nodes", 1, "--out", first).exit_code == 0
    assert [r.verdict for r in audit.read_rows(first)] == ["agrees"] * 2 + ["undecided"] * 2
    middle = tmp_path / "middle.csv"        # a retry that decides nothing: a chain of two
    assert _audit(ledger, "--sample", 4, "--nodes", 1, "--retry-undecided", first,
                  "--out", middle).exit_code == 0
    assert [r.verdict for r in audit.read_rows(middle)] == ["undecided"] * 2
    audited = []
    real = audit.audit_part
    monkeypatch.setattr(audit, "audit_part", lambda part, **kw: audited.append(part) or
                        real(part, **kw))
    again = _audit(ledger, "--sample", 4, "--retry-undecided", first, "--retry-undecided",
                   middle, "--out", tmp_path / "again.csv")
    assert again.exit_code == 0, again.output
    assert [p.sha256 for p in audited] == [r.sha256 for r in audit.read_rows(first)][2:]
    assert "audited 2 of the ledger's parts (seed 1): 2 agree" in again.output
    assert "4 of the 4 parts agree, 0 undecided" in again.output
    assert "at most 53% (95%, one-sided)" in again.output      # 1 - 0.05 ** (1 / 4)
    same = _audit(ledger, "--sample", 4, "--retry-undecided", first, "--out", first)
    assert same.exit_code == 2 and "another --out" in same.output
    other = _audit(ledger, "--sample", 3, "--retry-undecided", first)
    assert other.exit_code == 2 and "not an audit of this draw" in other.output


def test_table_leaves_beyond_the_check_budget_leave_a_part_undecided(ledger, tmp_path):
    """With endgame tables a part's certificate has table leaves, which the checker solves
    again (the table ordering its moves); more than `leaf_budget` positions of that is a
    limit of the audit, not a refusal of its own certificate."""
    from part_ledgers import PRO

    from niwa.solver.tables import build_table

    build_table(PRO, 2, directory=tmp_path, progress=False)
    results = [(audit.audit_part(part, tables=str(tmp_path)),
                audit.audit_part(part, tables=str(tmp_path), leaf_budget=1))
               for part in audit.draw_parts(ledger, 6, 1)]
    assert all(full.verdict == "agrees" for full, _ in results)
    starved = [tight for _, tight in results if tight.verdict == "undecided"]
    assert starved and all(r.why == "table leaves over 1 positions to solve again"
                           for r in starved)
