"""Values already proven: a position answered from a shipped opening book or a certificate
instead of a fresh proof (the full Lotus game takes minutes and gigabytes to prove again).

What counts as known, and why it is sound:
  * a book's start position: the book was read off a finished proof of it, and its meta
    names the winner (the book's checksum is verified when it is loaded);
  * a position whose full 64-bit hash is one of a book's keys with the winner to move and
    the book's move legal there: the book stores only positions of the winner's solution
    tree, each a proven win (a 64-bit collision could confuse two positions; the legality
    test is the same guard the `perfect` agent uses);
  * a position among a book's won positions (Book.won: the roots of the parts its
    certification's check ledger holds checked), or one where the winner is to move and
    book.won_move finds a move reaching them within a few plies;
  * a certificate's root (the certificate's checksum is verified; `niwa proof check`
    verifies the proof itself with the reference rules, which takes longer than an answer
    "at once" may);
  * a start (or a position one first move from it) in the shipped record of a finished
    two-level proof (books/proofs.json, written by proof_record from the checkpoint the
    repository keeps, and a test holds it equal to what that checkpoint proves): the
    answer says so, and whether a certificate has been checked yet. This is the weakest
    of the three (the search's own claim until its certificate passes), so it is looked
    at last. The record of a proof still open (`open: true`, no winner) answers only the
    positions one decided first move from its start, each naming its own certificate
    once one is checked.
Certificates are looked up in $NIWA_CERTIFICATES (folders separated by ':'), else in
~/.cache/niwa/certificates/; a folder holds its certificates as regular files (a symbolic
link there is skipped, as an opening book linked into the books folder is refused).

>>> from niwa.ext.lotus import LotusState
>>> known_result(LotusState(towers=2), folders=[]) is None
True
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from niwa.ext.errors import NiwaError


def certificate_dirs() -> list[Path]:
    """Where certificates are looked up: $NIWA_CERTIFICATES (':'-separated), else
    ~/.cache/niwa/certificates."""
    env = os.environ.get("NIWA_CERTIFICATES")
    if env is not None:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [Path.home() / ".cache" / "niwa" / "certificates"]


def _variant_words(variant: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(variant.items()))


def _from_book(state):
    """(value for the mover, best action or None, source text) from the opening book of
    `state`'s variant, or None."""
    from niwa.solver.book import (
        IN_BOOK,
        BookError,
        canonical_variant,
        find_book,
        load_book,
        move_from,
    )

    try:
        path = find_book(state.game_name, state.variant)
    except NiwaError:
        return None
    if path is None:
        return None
    try:
        book = load_book(path)
    except BookError:
        return None     # a damaged book proves nothing: the caller proves afresh
    if not book.matches(state):
        return None
    mover = state.current_player()
    start = book.game == state.game_name and \
        state.to_notation() == _start_notation(state.game_name, canonical_variant(
            book.game, book.variant))
    legal = state.legal_actions()
    move, where = move_from(book, state, legal) if mover == book.winner else (None, "")
    source = (f"opening book {path.name} ({book.game} {_variant_words(book.variant)}), "
              f"checksum ok")
    if move is not None and where != IN_BOOK:
        source = f"{where}, {source}"
    elif move is None and not start:
        if not book.is_won(state):
            return None
        source = "a won position of " + source
    if move is None and mover == book.winner and len(legal) == 1:
        move = legal[0]
    value = 1.0 if mover == book.winner else 0.0
    return value, move, source


def _start_notation(game, variant) -> str:
    from niwa.ext.registry import get_game

    return get_game(game).new(**variant).to_notation()


def _from_certificates(state, dirs):
    import numpy as np

    from niwa.solver.certificate import CertificateError, load_certificate

    notation = state.to_notation()
    for folder in dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.npz")):
            if path.is_symlink():   # the folder holds its certificates, not links elsewhere
                continue
            try:    # the header alone first: the arrays are read only for a match
                with np.load(path, allow_pickle=False) as z:
                    root = json.loads(str(z["meta"])).get("root")
            except Exception:   # noqa: BLE001 (any unreadable file is just not a match)
                continue
            if root != notation:
                continue
            try:
                cert = load_certificate(path)
            except CertificateError:
                continue
            mover = state.current_player()
            value = 1.0 if mover == cert.winner else 0.0
            move = int(cert.actions[0]) if mover == cert.winner else None
            return value, move, f"certificate {path.name}, checksum ok"
    return None


PROOF_RECORDS = Path(__file__).with_name("books") / "proofs.json"
RECORDS_FORMAT = "niwa-proof-records-1"


class ProofRecordError(NiwaError):
    """A checkpoint that cannot give a proof record (unfinished, or not a two-player game)."""


def proof_record(checkpoint, certificate: str | None = None, looked=None,
                 open_proof: bool = False, certificates: dict | None = None) -> dict:
    """The record of the finished two-level proof kept in the folder `checkpoint`: its
    game, variant and root, the winner, the value of every first move the proof decided
    (for the root's mover; a won root needs only one), and what it took; `certificate`:
    the file name of its checked certificate, if any. `looked`: the checkpoint's
    (tree, result) if the caller has replayed it already (proof_tree.look_at_checkpoint).
    `open_proof`: the record of a proof not finished yet (`open`, winner None), which
    needs a first move decided; `certificates`: first move -> the file name of the
    checked certificate of the position it leads to."""
    from niwa.solver.proof_tree import look_at_checkpoint

    tree, r = looked or look_at_checkpoint(checkpoint)
    state = tree.root_state
    first = {m: int(v) for m, v in r.first_moves.items() if v is not None}
    if state.num_players != 2 or not (r.proven or open_proof and first):
        wanted = "two-level proof with a first move decided" if open_proof else \
            "finished proof"
        raise ProofRecordError(f"{checkpoint}: not a {wanted} of a two-player game "
                               f"(root pn {r.root_pn}, dn {r.root_dn})")
    if set(certificates or {}) - set(first):
        raise ProofRecordError(f"{checkpoint}: certificates for first moves the proof has "
                               f"not decided: {sorted(set(certificates) - set(first))}")
    mover = state.current_player()
    record = {"game": state.game_name, "variant": dict(sorted(state.variant.items())),
              "root": state.to_notation(),
              "winner": (mover if r.value == 1.0 else 1 - mover) if r.proven else None,
              "first_moves": first,
              "proof": "two-level proof-number search", "jobs": r.jobs,
              "nodes": int(r.nodes), "cpu_s": round(r.cpu_s, 1), "certificate": certificate}
    if not r.proven:
        record.update(open=True, certificates=dict(sorted((certificates or {}).items())))
    return record


def read_proof_records(path=None) -> list[dict]:
    """The records in `path` (default: the shipped PROOF_RECORDS); [] when the file is
    missing or damaged (a damaged record proves nothing: the caller proves afresh)."""
    try:
        data = json.loads(Path(path or PROOF_RECORDS).read_text())
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict) or data.get("format") != RECORDS_FORMAT or \
            not isinstance(data.get("records"), list):
        return []
    return [r for r in data["records"] if isinstance(r, dict)]


def add_proof_record(record: dict, path=None) -> Path:
    """Put `record` (proof_record's) into the records file `path` (default: the shipped
    one), replacing the record of the same game and variant; written atomically."""
    path = Path(path or PROOF_RECORDS)
    key = (record["game"], json.dumps(record["variant"], sort_keys=True))
    kept = [r for r in read_proof_records(path)
            if (r.get("game"), json.dumps(r.get("variant"), sort_keys=True)) != key]
    records = sorted([*kept, record], key=lambda r: (r["game"], json.dumps(
        r["variant"], sort_keys=True)))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"format": RECORDS_FORMAT, "records": records}, indent=1,
                              sort_keys=True) + "\n")
    tmp.replace(path)
    return path


def _source(where: str, nodes: int, certificate, move: str | None = None) -> str:
    """What an answer from a proof record (in the records file named `where`) says it rests
    on: the proof's `nodes` and its checked `certificate` (None: none yet); `move`: the
    decided first move of an open proof whose position is answered."""
    if move is not None:
        return (f"proof record {where}: {move} decided by a two-level proof still open "
                f"({nodes:,} nodes so far), certificate "
                + (f"{certificate} checked" if certificate else "not yet made"))
    return (f"proof record {where}: two-level proof of {nodes:,} nodes, certificate "
            + (f"{certificate} checked" if certificate else "not yet checked"))


def _from_proof_records(state, path=None):
    """(value for the mover, best action or None, source text, the first moves' values)
    from a proof record whose root is `state` or one of whose first moves leads to it, or
    None."""
    from niwa.solver.results import ActionStat

    notation = state.to_notation()
    for record in read_proof_records(path):
        try:
            if record["game"] != state.game_name or \
                    dict(record["variant"]) != dict(state.variant):
                continue
            root = type(state).from_notation(record["root"])
            is_open = record.get("open") is True
            winner = None if is_open else int(record["winner"])
            first = dict(record["first_moves"])
            where = PROOF_RECORDS.name if path is None else Path(path).name
            nodes = int(record["nodes"])
            certificates = dict(record.get("certificates") or {})   # (of an open proof)
        except (KeyError, TypeError, ValueError, NiwaError):
            continue
        # first_moves: each first move's value for the root's mover
        mover = root.current_player()
        decided = [(a, name) for a in root.legal_actions()
                   if (name := root.action_to_string(a)) in first]
        if notation == root.to_notation() and not is_open:
            actions = [ActionStat(a, name, float(first[name]), proven=True)
                       for a, name in decided]
            best = next((x.action for x in actions if x.value == 1.0), None) \
                if mover == winner else None
            return (1.0 if mover == winner else 0.0), best, \
                _source(where, nodes, record.get("certificate")), actions
        for a, name in decided:             # one first move in: that move's value
            if root.child(a).to_notation() == notation:
                v = float(first[name])
                source = _source(where, nodes, certificates.get(name), name) \
                    if is_open else _source(where, nodes, record.get("certificate"))
                return (v if state.current_player() == mover else 1.0 - v), None, source, []
    return None


def known_result(state, folders=None):
    """The SearchResult of `state` if a shipped book, a certificate or a shipped proof
    record already proves its value (algo "book", "certificate" or "record",
    `status` saying where from), else None.
    `folders`: where to look for certificates (default: certificate_dirs())."""
    import numpy  # noqa: F401  (imported before the clock starts: process start-up, not lookup)

    from niwa.solver import book  # noqa: F401
    from niwa.solver.results import SearchResult

    if state.is_terminal() or state.num_players != 2:
        return None
    t0 = time.perf_counter()
    found = _from_book(state)
    algo = "book"
    if found is None:
        dirs = certificate_dirs() if folders is None else [Path(d) for d in folders]
        found = _from_certificates(state, dirs)
        algo = "certificate"
    actions = []
    recorded = _from_proof_records(state)
    if found is None and recorded is not None:
        *found, actions = recorded
        algo = "record"
    elif found is not None and recorded is not None and recorded[0] == found[0]:
        actions = recorded[-1]      # (a book knows the winner's moves, not every first move)
    if found is None:
        return None
    value, move, source = found
    name = state.action_to_string(move) if move is not None else None
    elapsed = time.perf_counter() - t0
    return SearchResult(
        algo=algo, value=value, player=state.current_player(), proven=True, best=move,
        best_name=name, actions=actions, pv=[name] if name else [], depth=1 if name else 0,
        nodes=0, time_s=elapsed, nps=0.0, status=f"proven ({source})")
