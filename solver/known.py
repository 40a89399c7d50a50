"""Values already proven: a position answered from a shipped opening book or a certificate
instead of a fresh proof (the full Lotus game takes minutes and gigabytes to prove again).

What counts as known, and why it is sound:
  * a book's start position: the book was read off a finished proof of it, and its meta
    names the winner (the book's checksum is verified when it is loaded);
  * a position whose full 64-bit hash is one of a book's keys with the winner to move and
    the book's move legal there: the book stores only positions of the winner's solution
    tree, each a proven win (a 64-bit collision could confuse two positions; the legality
    test is the same guard the `perfect` agent uses);
  * a certificate's root (the certificate's checksum is verified; `niwa proof check`
    verifies the proof itself with the reference rules, which takes longer than an answer
    "at once" may).
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
    from niwa.solver.book import BookError, canonical_variant, find_book, load_book

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
    move = book.lookup(state) if mover == book.winner else None
    legal = state.legal_actions()
    if move is not None and move not in legal:
        move = None
    if not start and move is None:
        return None
    if move is None and mover == book.winner and len(legal) == 1:
        move = legal[0]
    value = 1.0 if mover == book.winner else 0.0
    source = (f"opening book {path.name} ({book.game} {_variant_words(book.variant)}), "
              f"checksum ok")
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


def known_result(state, folders=None):
    """The SearchResult of `state` if a shipped book or a certificate already proves its
    value (algo "book" or "certificate", `status` saying where from), else None.
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
    if found is None:
        return None
    value, move, source = found
    name = state.action_to_string(move) if move is not None else None
    elapsed = time.perf_counter() - t0
    return SearchResult(
        algo=algo, value=value, player=state.current_player(), proven=True, best=move,
        best_name=name, actions=[], pv=[name] if name else [], depth=1 if name else 0,
        nodes=0, time_s=elapsed, nps=0.0, status=f"proven ({source})")
