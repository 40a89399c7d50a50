"""A spot audit of a check ledger: a random sample of the facts it records, derived again.

A long certification keeps a ledger (certificate.CheckLedger) of the parts that passed
the reference checker; once the parts' files are gone, a certificate that stops at them
is checked against that ledger, which is trusted as the run that wrote it was. An audit
trusts nothing of it but the parts' roots: it draws `sample` parts at random (numpy,
seeded: the same seed draws the same parts on any machine), and for each one proves its
root again from nothing (a fresh df-pn table, no parts, no ledger, no endgame table
unless asked), reads that proof's certificate off the table and checks it with the
reference rules, then compares the winner with the ledger's. Each part so audited is
certified a second time, independently of the first.

What a clean audit shows. If a fraction f of the parts the audit can decide were wrong,
n decided draws would all miss them with probability (1 - f)^n; the bound reported is the
one-sided 95% Clopper-Pearson upper bound on f (Clopper and Pearson 1934), for 0 wrong
of n: 1 - 0.05^(1/n), about 3/n (the "rule of three"). Parts whose proof does not finish
within the node budget, or whose certificate is larger than the check's bound, are left
undecided and reported as such: the bound covers the parts small enough to audit, not
the few large ones near the top (those the whole certificate's check covers).
"""

from __future__ import annotations

import csv
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from niwa.solver.certificate import (
    CertificateError,
    LeavesTooBig,
    PartHeader,
    TreeTooBig,
    check_certificate,
    extract_certificate,
    ledger_parts,
)

AGREES, DISAGREES, UNDECIDED = "agrees", "disagrees", "undecided"
CONFIDENCE = 0.95


@dataclass(frozen=True)
class AuditRow:
    """One audited part: the ledger's claim and what a fresh proof and check found."""

    sha256: str
    root: str
    ledger_winner: int
    winner: int | None          # None: undecided
    verdict: str                # AGREES, DISAGREES or UNDECIDED
    why: str                    # why undecided ("" otherwise)
    proof_nodes: int
    certificate_positions: int
    prove_s: float
    check_s: float


def draw_parts(ledger, sample: int, seed: int) -> list[PartHeader]:
    """`sample` distinct parts of the ledger (all if it has fewer), drawn at random with
    `seed` from its parts ordered by sha256: the draw depends on what the ledger holds,
    not on the order of its lines, and a larger sample with the same seed begins with the
    smaller one's parts (the first of one random order), so an audit can be extended."""
    parts = sorted(ledger_parts(ledger), key=lambda p: p.sha256)
    if not parts:
        raise CertificateError(f"the ledger {ledger} names no part with its root: "
                               "nothing to audit")
    order = np.random.default_rng(seed).permutation(len(parts))
    return [parts[i] for i in order[:sample]]


def audit_part(part: PartHeader, max_nodes: int = 20_000_000, tt_mb: float = 256,
               tables=None, max_positions: int = 2_000_000,
               leaf_budget: int = 2_000_000) -> AuditRow:
    """Prove `part`'s root again within `max_nodes` df-pn nodes (a budget in nodes, not
    seconds, so that which parts come out undecided does not depend on the machine or its
    load), in a fresh table (`tables`: an endgame tables folder whose positions become
    table leaves, which the checker solves again itself; None: none, every leaf a game's
    end), certify and check that proof, and compare."""
    from niwa.ext.registry import parse_position
    from niwa.solver.proof import ProofSearch
    from niwa.solver.tables import resolve_tables

    state = parse_position(part.root)
    table = resolve_tables(state, tables)
    search = ProofSearch(tt_mb=tt_mb, tables=table)
    t0 = time.perf_counter()

    def undecided(why: str) -> AuditRow:
        return AuditRow(part.sha256, part.root, part.winner, None, UNDECIDED, why,
                        search.nodes, 0, time.perf_counter() - t0, 0.0)

    if search.prove_value(state, state.current_player(), max_nodes=max_nodes) is None:
        return undecided(f"not proven in {max_nodes:,} nodes")
    try:    # (the root is in the table now: the walk reads the proof off it)
        cert = extract_certificate(search, state, tables=table,
                                   max_positions=max_positions)
    except TreeTooBig:
        return undecided(f"certificate over {max_positions:,} positions")
    proved = time.perf_counter()
    try:    # the table orders the moves its leaves are solved again with (never a value)
        check_certificate(cert, leaf_budget=leaf_budget, tables=tables)
    except LeavesTooBig:                # a limit of the check, not a verdict
        return undecided(f"table leaves over {leaf_budget:,} positions to solve again")
    except CertificateError as e:       # a fresh proof the checker refuses: a niwa bug
        raise CertificateError(f"the audit's own certificate of {part.root!r} was refused "
                               f"by the checker: {e}") from None
    verdict = AGREES if cert.winner == part.winner else DISAGREES
    return AuditRow(part.sha256, part.root, part.winner, cert.winner, verdict, "",
                    search.nodes, cert.nodes, proved - t0, time.perf_counter() - proved)


@dataclass(frozen=True)
class AuditJob:
    """One part audited in a worker (local pool or Dask): audit_part's row as a dict, or
    {"error": ...} when the checker refused the audit's own certificate (reported, not
    retried)."""

    part: PartHeader
    max_nodes: int
    tt_mb: float
    tables: str | None
    max_positions: int
    leaf_budget: int = 2_000_000

    def __repr__(self):
        return f"AuditJob({self.part.sha256[:16]}...)"

    def __call__(self) -> dict:
        t0 = time.perf_counter()
        try:
            row = asdict(audit_part(self.part, max_nodes=self.max_nodes, tt_mb=self.tt_mb,
                                    tables=self.tables, max_positions=self.max_positions,
                                    leaf_budget=self.leaf_budget))
        except CertificateError as e:
            row = {"error": str(e)}
        row["duration_s"] = time.perf_counter() - t0
        return row


def audit_parts(parts, executor=None, max_nodes: int = 20_000_000, tt_mb: float = 256,
                tables=None, max_positions: int = 2_000_000, leaf_budget: int = 2_000_000):
    """The AuditRow of each of `parts`, as each is audited: in this process one after the
    other (`executor` None), else as jobs on an executor of the arena (LocalExecutor(n),
    DaskExecutor(...)), in the order they finish. The verdicts do not depend on which:
    each part's proof has its node budget and a fresh table."""
    jobs = [AuditJob(part, max_nodes, tt_mb, None if tables is None else str(tables),
                     max_positions, leaf_budget) for part in parts]
    stream = (job() for job in jobs) if executor is None else executor.run(jobs)
    try:
        for row in stream:
            if row.get("error"):
                raise CertificateError(row["error"])
            yield AuditRow(**{f.name: row[f.name] for f in fields(AuditRow)})
    finally:
        stream.close()


def wrong_rate_bound(wrong: int, decided: int, confidence: float = CONFIDENCE) -> float:
    """One-sided upper confidence bound on the fraction of wrong parts, from `wrong` of
    `decided` audited (exact binomial, Clopper-Pearson; nan for none decided).

    >>> round(wrong_rate_bound(0, 100), 4)      # 1 - 0.05 ** (1 / 100)
    0.0295
    """
    if decided <= 0:
        return float("nan")
    if wrong == 0:
        return 1 - (1 - confidence) ** (1 / decided)
    from scipy import stats

    return float(stats.beta.ppf(confidence, wrong + 1, decided - wrong))


def read_rows(path) -> list[AuditRow]:
    """The rows of an audit CSV written before (none if it does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        with open(path, newline="") as f:
            return [AuditRow(r["sha256"], r["root"], int(r["ledger_winner"]),
                             None if r["winner"] == "" else int(r["winner"]), r["verdict"],
                             r["why"], int(r["proof_nodes"]), int(r["certificate_positions"]),
                             float(r["prove_s"]), float(r["check_s"]))
                    for r in csv.DictReader(f)]
    except (KeyError, ValueError, TypeError) as e:
        raise CertificateError(f"{path} is not an audit's CSV ({e})") from None


def append_row(path, row: AuditRow) -> None:
    """Append `row` to the CSV at `path` (its header first if new), flushed at once."""
    path = Path(path)
    new = not path.exists() or path.stat().st_size == 0
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, [f.name for f in fields(AuditRow)])
        if new:
            writer.writeheader()
        values = asdict(row)
        values["winner"] = "" if row.winner is None else row.winner
        values["prove_s"], values["check_s"] = round(row.prove_s, 3), round(row.check_s, 3)
        writer.writerow(values)
