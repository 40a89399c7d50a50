"""A small certification kept by its check ledger, for the tests of what reads ledgers
(the audit, a book's won positions): a tiny pro-rule Lotus whose certificate stops at one
part per position after the two opening stones, checked into a ledger."""

from __future__ import annotations

from niwa.ext.lotus import LotusState
from niwa.solver.certificate import certificate_folder, check_certificate, extract_certificate
from niwa.solver.proof import ProofSearch

PRO = dict(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")


def pro_certification(folder):
    """(the top certificate, its parts folder, its ledger) written under `folder`."""
    state, search = LotusState(**PRO), ProofSearch(tt_mb=16)
    parts = []
    for a in state.legal_actions():
        first = state.child(a)
        for b in first.legal_actions():
            s = first.child(b)
            if not s.is_terminal() and s.current_player() == 1:
                parts.append(extract_certificate(search, s))
    for k, part in enumerate(parts):
        part.save(folder / "parts" / f"part{k}.npz")
    top = extract_certificate(search, state, parts=parts)
    top.save(folder / "top.npz")
    ledger = folder / "ledger.jsonl"
    check_certificate(top, parts=certificate_folder(folder / "parts"), ledger=ledger)
    return top, folder / "parts", ledger
