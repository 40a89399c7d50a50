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
    positions one decided first move from its start and the lines its top tree decided
    a few plies down (`decided`), each naming its own certificate once one is checked, or
    a named certificate whose tree holds it (`inside`), whose winner's move it plays.
A position not known itself may be one move from known ones (known_moves): one move to a
known loss for the opponent wins it, every move known and lost loses it
(decided_by_moves), and otherwise a search's result marks the moves known to lose
(with_known_moves), so that `niwa solve` never recommends them. known_answer is that chain
in one call, as its users ask it.
Certificates are looked up in $NIWA_CERTIFICATES (folders separated by ':'), else in
~/.cache/niwa/certificates/; a folder holds its certificates as regular files (a symbolic
link there is skipped, as an opening book linked into the books folder is refused).

>>> from niwa.ext.lotus import LotusState
>>> known_result(LotusState(towers=2), folders=[]) is None
True
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import time
from pathlib import Path
from typing import NamedTuple

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
    from niwa.solver.book import IN_BOOK, BookError, canonical_variant, find_book, move_from

    try:
        path = find_book(state.game_name, state.variant)
    except NiwaError:
        return None
    if path is None:
        return None
    try:
        stat = path.stat()
        book = _loaded_book(path, stat.st_mtime_ns, stat.st_size)
    except (BookError, OSError):
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


@functools.lru_cache(maxsize=4)
def _loaded_book(path: Path, mtime_ns: int, size: int):
    """load_book(path), kept while the file is unchanged (its time and size in the key):
    known_moves asks the book about every move of a position."""
    from niwa.solver.book import load_book

    return load_book(path)


def _start_notation(game, variant) -> str:
    from niwa.ext.registry import get_game

    return get_game(game).new(**variant).to_notation()


def _certificate_roots(dirs) -> dict[str, Path]:
    """Each certificate's root in the folders `dirs` -> its file (the first folder, then
    the first file by name, wins): the headers alone are read, each once while its file
    is unchanged (a review asks at every position)."""
    roots: dict[str, Path] = {}
    for folder in dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.npz")):
            if path.is_symlink():   # the folder holds its certificates, not links elsewhere
                continue
            try:
                stat = path.stat()
            except OSError:
                continue
            root = _root_of(path, stat.st_mtime_ns, stat.st_size)
            if root is not None:
                roots.setdefault(root, path)
    return roots


@functools.lru_cache(maxsize=4096)
def _root_of(path: Path, mtime_ns: int, size: int) -> str | None:
    """The root notation in the header of the certificate `path` (None: not one)."""
    import numpy as np

    try:    # the header alone: the arrays are read only for a match
        with np.load(path, allow_pickle=False) as z:
            root = json.loads(str(z["meta"])).get("root")
    except Exception:   # noqa: BLE001 (any unreadable file is just not a match)
        return None
    return root if isinstance(root, str) else None


def _from_certificates(state, roots: dict[str, Path]):
    """(value for the mover, best action or None, source text) from the certificate whose
    root is `state` (`roots`: _certificate_roots'), or None."""
    from niwa.solver.certificate import CertificateError, load_certificate

    path = roots.get(state.to_notation())
    if path is None:
        return None
    try:
        cert = load_certificate(path)
    except CertificateError:
        return None
    mover = state.current_player()
    value = 1.0 if mover == cert.winner else 0.0
    move = int(cert.actions[0]) if mover == cert.winner else None
    return value, move, f"certificate {path.name}, checksum ok"


PROOF_RECORDS = Path(__file__).with_name("books") / "proofs.json"
RECORDS_FORMAT = "niwa-proof-records-1"


class ProofRecordError(NiwaError):
    """A checkpoint that cannot give a proof record (unfinished, or not a two-player game)."""


def proof_record(checkpoint, certificate: str | None = None, looked=None,
                 open_proof: bool = False, certificates: dict | None = None,
                 plies: int = 1, certificate_dir=None) -> dict:
    """The record of the finished two-level proof kept in the folder `checkpoint`: its
    game, variant and root, the winner, the value of every first move the proof decided
    (for the root's mover; a won root needs only one), and what it took; `certificate`:
    the file name of its checked certificate, if any. `looked`: the checkpoint's
    (tree, result) if the caller has replayed it already (proof_tree.look_at_checkpoint).
    `open_proof`: the record of a proof not finished yet (`open`, winner None), which
    needs a first move decided; `certificates`: a decided first move (or line) -> the file
    name of the checked certificate of the position it leads to. `plies` >= 2: also every
    position the top tree has decided 2..plies plies down (`decided`: its first line ->
    its value for the root's mover), each standing for its transpositions and lane
    mirror (the proof's own key for a position: the game's symmetric hash and mover).
    `certificate_dir`: where the `certificates` are; each whose root is its line's
    position with the winner to move gives that position's winning move
    (`winning_moves`), which the answer then plays."""
    from niwa.solver.proof_tree import line_text, look_at_checkpoint

    tree, r = looked or look_at_checkpoint(checkpoint)
    state = tree.root_state
    first = {m: int(v) for m, v in r.first_moves.items() if v is not None}
    if state.num_players != 2 or not (r.proven or open_proof and first):
        wanted = "two-level proof with a first move decided" if open_proof else \
            "finished proof"
        raise ProofRecordError(f"{checkpoint}: not a {wanted} of a two-player game "
                               f"(root pn {r.root_pn}, dn {r.root_dn})")
    decided = {line_text(state, node.path): int(tree.root_view(node)[0] == 0)
               for ply, node in tree.nodes_below(plies) if ply >= 2 and node.proven}
    known = {**first, **decided}
    for line in set(certificates or {}) - set(known):
        value = _decided_through_loser(state, line, known)
        if value is not None:
            decided[line] = value
    unknown = set(certificates or {}) - set(first) - set(decided)
    if unknown:
        raise ProofRecordError(f"{checkpoint}: certificates for lines the proof has not "
                               f"decided: {sorted(unknown)}")
    mover = state.current_player()
    record = {"game": state.game_name, "variant": dict(sorted(state.variant.items())),
              "root": state.to_notation(),
              "winner": (mover if r.value == 1.0 else 1 - mover) if r.proven else None,
              "first_moves": first,
              "proof": "two-level proof-number search", "jobs": r.jobs,
              "nodes": int(r.nodes), "cpu_s": round(r.cpu_s, 1), "certificate": certificate}
    if plies >= 2:
        record.update(plies=plies, decided=dict(sorted(decided.items())))
    if not r.proven:
        record.update(open=True, certificates=dict(sorted((certificates or {}).items())))
        moves, inside = _certified_lines(state, certificates or {}, certificate_dir,
                                         {**first, **decided})
        if inside:
            record["inside"] = inside
        if moves:
            record["winning_moves"] = moves
    return record


def _decided_through_loser(root, line: str, lines: dict) -> int | None:
    """The value of `line` for the root's mover if a decided line (`lines`: line -> that
    value) is a prefix of it and every move after that prefix is the loser's (a lost
    position stays lost whatever its loser plays), else None. The top tree drops what
    lies below a decided node, so a line certified before its first move fell (pro's
    second stone after a losing first one) is known this way."""
    moves = line.split()
    mover = root.current_player()
    for cut in range(len(moves) - 1, 0, -1):
        value = lines.get(" ".join(moves[:cut]))
        if value is None:
            continue
        loser = 1 - mover if value == 1 else mover
        try:
            at = _after(root, " ".join(moves[:cut]))
            for name in moves[cut:]:
                if at.current_player() != loser:
                    return None
                at.apply(at.string_to_action(name))
        except ValueError:
            return None
        return value
    return None


def _certified_lines(root, certificates: dict, folder, lines: dict) -> tuple[dict, dict]:
    """(winning_moves, inside) of the decided `lines` (line -> value for the root's mover)
    from the checked `certificates` named (line -> file in `folder`). A line's position
    found in a certificate's own tree (positions_in) under the proof's key (symmetric
    hash and mover), its own certificate looked at first, is `inside` that certificate
    when it is not its own, and with the winner to move there gives its winning move, as
    the move of the line's position. A certificate whose winner disagrees with a line's
    value is a ProofRecordError (the proof and its certificates contradict each other)."""
    from niwa.solver.certificate import load_certificate, positions_in

    if folder is None or not certificates:
        return {}, {}
    trees = {}      # certificate -> {key: (position, the winner's move or None)}, winner
    for name in sorted(set(certificates.values())):
        cert = load_certificate(Path(folder) / name)
        trees[name] = {}, cert.winner
        for position, move in positions_in(cert):
            trees[name][0].setdefault(_key(position), (position, move))
    mover = root.current_player()
    moves, inside = {}, {}
    for line, value in sorted(lines.items()):
        at = _after(root, line)
        own = certificates.get(line)
        for name in ([own] if own else []) + [n for n in trees if n != own]:
            positions, winner = trees[name]
            if _key(at) not in positions:
                continue
            if (winner == mover) != (value == 1):
                raise ProofRecordError(f"{line}: decided {value} for the root's mover, "
                                       f"but certificate {name} has seat {winner} win it")
            if name != own:
                inside[line] = name
            position, move = positions[_key(at)]
            if move is not None and at.current_player() == winner:
                action = _move_to(at, _key(position.child(move)))
                if action is not None:
                    moves[line] = at.action_to_string(action)
            break
    return moves, inside


def _key(state) -> tuple[int, int]:
    """The proof's own key for a position: its symmetric hash (a transposition or the
    lane mirror is the same position) and its mover."""
    return state.symmetric_hash(), state.current_player()


def _move_to(state, key) -> int | None:
    """The move of `state` reaching the position of proof key `key`, or None."""
    return next((a for a in state.legal_actions() if _key(state.child(a)) == key), None)


def _after(root, line: str):
    """The position `line` (move names, space-separated) reaches from `root`."""
    at = root.clone()
    for name in line.split():
        at.apply(at.string_to_action(name))
    return at


def read_proof_records(path=None) -> list[dict]:
    """The records in `path` (default: the shipped PROOF_RECORDS); [] when the file is
    missing or damaged (a damaged record proves nothing: the caller proves afresh)."""
    try:
        return _records_in(Path(path or PROOF_RECORDS).read_text())
    except OSError:
        return []


def _records_in(text: str) -> list[dict]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict) or data.get("format") != RECORDS_FORMAT or \
            not isinstance(data.get("records"), list):
        return []
    return [r for r in data["records"] if isinstance(r, dict)]


class _Record(NamedTuple):
    """A proof record made ready for lookups (_prepared_records): its root state and
    what identifies the positions it answers. Its states are only read, never changed."""

    record: dict
    game: str
    variant: dict
    root: object            # the root state
    root_notation: str
    is_open: bool
    winner: int | None
    first: dict             # decided first move -> its value for the root's mover
    nodes: int
    certificates: dict      # (of an open proof) decided line -> its certificate
    inside: dict            # (of an open proof) decided line -> a certificate holding it
    decided: tuple          # (action, move) of each decided first move, in legal order
    children: dict          # notation one decided first move down -> (action, move)
    lines: dict             # _decided_lines'
    winning: dict           # (of an open proof) decided line -> its winner's move (a name)


@functools.lru_cache(maxsize=4)
def _prepared_records(text: str) -> tuple[_Record, ...]:
    """The records of a records file's `text`, each replayed once (known_moves asks about
    every move of a position, and a review about every position of a game): a record the
    rules refuse is left out; a decided line they refuse, or whose value is not 0 or 1,
    proves nothing and is left out of its record's `lines`."""
    from niwa.ext.registry import get_game

    out = []
    for record in _records_in(text):
        try:
            game = str(record["game"])
            root = get_game(game).from_notation(record["root"])
            is_open = record.get("open") is True
            winner = None if is_open else int(record["winner"])
            first = {str(k): v for k, v in dict(record["first_moves"]).items()
                     if v in (0, 1)}     # (a damaged value proves nothing)
            nodes = int(record["nodes"])
            certificates = dict(record.get("certificates") or {})
            variant = dict(record["variant"])
        except (KeyError, TypeError, ValueError, NiwaError):
            continue
        try:
            inside = {str(k): str(v) for k, v in dict(record.get("inside") or {}).items()}
        except (TypeError, ValueError):
            inside = {}     # (damaged: no certificate named, the values still stand)
        try:
            winning = {str(k): str(v)
                       for k, v in dict(record.get("winning_moves") or {}).items()}
        except (TypeError, ValueError):
            winning = {}    # (damaged: no move named, the values still stand)
        decided = tuple((a, name) for a in root.legal_actions()
                        if (name := root.action_to_string(a)) in first)
        children = {}
        for a, name in decided:
            children.setdefault(root.child(a).to_notation(), (a, name))
        out.append(_Record(record, game, variant, root, root.to_notation(), is_open,
                           winner, first, nodes, certificates, inside, decided,
                           children, _decided_lines(record, root), winning))
    return tuple(out)


def _decided_lines(record, root) -> dict:
    """The record's decided positions (`decided`, 2 plies down or more) under the proof's
    own key for a position (symmetric hash and mover: a transposition or the lane mirror
    of the line's position is the same) -> (line, value for the root's mover, the line's
    position); the first line of a key kept."""
    try:
        lines = dict(record.get("decided") or {})
    except (TypeError, ValueError):
        return {}
    out = {}
    for line, value in lines.items():
        try:
            at = _after(root, str(line))
        except (NiwaError, ValueError, KeyError):
            continue        # a line the rules refuse proves nothing
        if value in (0, 1) and at.current_player() >= 0:
            out.setdefault(_key(at), (str(line), float(value), at))
    return out


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


def _source(where: str, nodes: int, certificate, move: str | None = None,
            inside: str | None = None) -> str:
    """What an answer from a proof record (in the records file named `where`) says it rests
    on: the proof's `nodes` and its checked `certificate` (None: none yet); `move`: the
    decided first move (or line) of an open proof whose position is answered, and `inside`:
    a checked certificate whose tree holds that position when it has none of its own."""
    if move is not None:
        return (f"proof record {where}: {move} decided by a two-level proof still open "
                f"({nodes:,} nodes so far), "
                + (f"certificate {certificate} checked" if certificate else
                   f"inside certificate {inside}, checked" if inside else
                   "no certificate of its own yet"))
    return (f"proof record {where}: two-level proof of {nodes:,} nodes, certificate "
            + (f"{certificate} checked" if certificate else "not yet checked"))


class _OpenAnswer(NamedTuple):
    """An open proof's record answering a position: the records file, the proof's nodes so
    far, the decided line, its own checked certificate (None: none yet) and, without one,
    a checked certificate whose tree holds the position (`inside`). Shown as _source's
    text; kept whole so that the answers of one record can be said together (_said)."""

    where: str
    nodes: int
    line: str
    certificate: str | None
    inside: str | None = None

    def __str__(self) -> str:
        return _source(self.where, self.nodes, self.certificate, self.line, self.inside)


def _from_proof_records(state, path=None):
    """(value for the mover, best action or None, source text, the first moves' values)
    from a proof record whose root is `state` or one of whose first moves leads to it, or
    None."""
    from niwa.solver.results import ActionStat

    try:
        text = Path(path or PROOF_RECORDS).read_text()
    except OSError:
        return None
    where = PROOF_RECORDS.name if path is None else Path(path).name
    notation = state.to_notation()
    for rec in _prepared_records(text):
        if rec.game != state.game_name or rec.variant != dict(state.variant):
            continue
        root, first, nodes = rec.root, rec.first, rec.nodes
        mover = root.current_player()
        if notation == rec.root_notation and not rec.is_open:
            actions = [ActionStat(a, name, float(first[name]), proven=True)
                       for a, name in rec.decided]
            best = next((x.action for x in actions if x.value == 1.0), None) \
                if mover == rec.winner else None
            return (1.0 if mover == rec.winner else 0.0), best, \
                _source(where, nodes, rec.record.get("certificate")), actions
        if notation in rec.children:        # one first move in: that move's value
            name = rec.children[notation][1]
            v = float(first[name])
            source = _OpenAnswer(where, nodes, name, rec.certificates.get(name)) \
                if rec.is_open else _source(where, nodes, rec.record.get("certificate"))
            return (v if state.current_player() == mover else 1.0 - v), None, source, []
        found = _decided_line(rec, state)
        if found is not None:
            line, v, at = found
            source = _source(where, nodes, rec.record.get("certificate"))
            if rec.is_open:
                own = rec.certificates.get(line)
                source = _OpenAnswer(where, nodes, line, own,
                                     None if own else rec.inside.get(line))
            value = v if state.current_player() == mover else 1.0 - v
            best = _winning_move(rec.winning.get(line), at, state) if value == 1.0 else None
            return value, best, source, []
    return None


def _winning_move(name: str | None, at, state) -> int | None:
    """The record's certified winning move `name` at a decided line's position `at`
    (`winning_moves`), as the move of `state` (that position, a transposition or its
    mirror) reaching the same position under the proof's key; None if the record names
    none or no move matches."""
    if name is None:
        return None
    try:
        target = at.child(at.string_to_action(name))
    except (NiwaError, TypeError, ValueError, KeyError):
        return None
    return _move_to(state, _key(target))


def _decided_line(rec, state):
    """(line, value for the root's mover, the line's position) of the prepared record
    `rec`'s decided position (`decided`, 2 plies down or more) that `state` is under the
    proof's own key (symmetric hash and mover: a transposition or the lane mirror of the
    line's position), or None."""
    if not rec.lines or state.current_player() < 0:
        return None
    return rec.lines.get(_key(state))


def known_result(state, folders=None, books: bool = True):
    """The SearchResult of `state` if a shipped book, a certificate or a shipped proof
    record already proves its value (algo "book", "certificate" or "record",
    `status` saying where from), else None.
    `folders`: where to look for certificates (default: certificate_dirs()); `books`:
    False leaves the opening books out."""
    import numpy  # noqa: F401  (imported before the clock starts: process start-up, not lookup)

    from niwa.solver import book  # noqa: F401

    if state.is_terminal() or state.num_players != 2:
        return None
    t0 = time.perf_counter()
    found = _known(state, lambda: _certificate_roots(_folders(folders)), books)
    return None if found is None else dataclasses.replace(
        found, time_s=time.perf_counter() - t0)


def _folders(folders) -> list[Path]:
    return certificate_dirs() if folders is None else [Path(d) for d in folders]


def _found(state, roots, books: bool = True):
    """(algo, value for the mover, best action or None, source, first moves' rows) of what
    already proves `state`, or None: the book first, then a certificate, then a proof
    record (whose `source` may be an _OpenAnswer). `roots()` gives _certificate_roots',
    read only if the book does not answer; `books`: False leaves the opening books out."""
    found = _from_book(state) if books else None
    algo = "book"
    if found is None:
        found = _from_certificates(state, roots())
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
    return algo, value, move, source, actions


def _known(state, roots, books: bool = True):
    """known_result's answer (its time not set), from _found."""
    from niwa.solver.results import SearchResult

    found = _found(state, roots, books)
    if found is None:
        return None
    algo, value, move, source, actions = found
    name = state.action_to_string(move) if move is not None else None
    return SearchResult(
        algo=algo, value=value, player=state.current_player(), proven=True, best=move,
        best_name=name, actions=actions, pv=[name] if name else [], depth=1 if name else 0,
        nodes=0, nps=0.0, status=f"proven ({source})")


class KnownMove(NamedTuple):
    """A move whose resulting position is already proven (known_moves)."""

    action: int
    name: str
    value: float        # for the player who makes the move: 1 a win, 0 a loss
    source: object      # where the position after it is proven: text, or an _OpenAnswer


def known_moves(state, folders=None, books: bool = True) -> list[KnownMove]:
    """The moves of `state` whose resulting positions a book, a certificate or a proof
    record already proves (known_result one ply down), in the order of legal_actions():
    a position not known itself may be one move from known ones (the start of a proof
    still open, whose decided first moves its record answers). `books`: False leaves the
    opening books out (an agent told to play without one).

    >>> from niwa.ext.lotus import LotusState
    >>> known_moves(LotusState(towers=2), folders=[])
    []
    """
    if state.is_terminal() or state.num_players != 2 or state.current_player() < 0:
        return []
    mover = state.current_player()
    roots = functools.cache(lambda: _certificate_roots(_folders(folders)))
    out = []
    for action in state.legal_actions():
        child = state.child(action)
        if child.is_terminal() or child.current_player() < 0:
            continue        # (an end of game is the search's own business; chance: none)
        found = _found(child, roots, books)
        if found is not None:
            _, value, _, source, _ = found      # (value for the child's mover)
            if child.current_player() != mover:
                value = 1.0 - value
            out.append(KnownMove(action, state.action_to_string(action), value, source))
    return out


def decided_by_moves(state, moves: list[KnownMove]):
    """The SearchResult (algo "known moves") of `state` if its known moves decide it: one
    wins, or every legal move is known and loses; else None."""
    from niwa.solver.results import ActionStat, SearchResult

    mover = state.current_player()
    won = next((m for m in moves if m.value == 1.0), None)
    if won is None and len(moves) < len(state.legal_actions()):
        return None
    rows = [ActionStat(m.action, m.name, m.value, proven=True) for m in moves]
    return SearchResult(
        algo="known moves", value=1.0 if won else 0.0, player=mover, proven=True,
        best=won.action if won else None, best_name=won.name if won else None, actions=rows,
        pv=[won.name] if won else [], depth=1 if won else 0,
        status=f"proven: {_why_decided(won, moves)}")


def _why_decided(won: KnownMove | None, moves: list[KnownMove]) -> str:
    """Why known `moves` decide their position: the winning move `won` and its source, or
    that every move loses; said once here for the status of decided_by_moves and for a
    record's answer that takes its winning move from them (known_answer)."""
    if won is not None:
        return f"{won.name} wins ({won.source})"
    return (f"every move loses ({len(moves)} moves, e.g. {moves[0].name}: "
            f"{moves[0].source})")


def known_answer(state, folders=None, books: bool = True):
    """What is already known of `state`, the one chain `niwa solve`, a review and the
    `perfect` agent share: (its SearchResult or None, its known moves).
    The result is the position's own (known_result), else the one its known moves decide
    (decided_by_moves). The known moves are looked up only where the position's own answer
    does not settle the move to play: none known, or a win whose answer names no move (a
    record's decided line without a certified move), which then takes the winning move its
    known moves give. A known loss needs no move (every move loses).

    >>> from niwa.ext.lotus import LotusState
    >>> known_answer(LotusState(towers=2), folders=[])
    (None, [])
    """
    here = known_result(state, folders, books)
    if here is not None and (here.best is not None or here.value != 1.0):
        return here, []
    moves = known_moves(state, folders, books)
    decided = decided_by_moves(state, moves)
    if here is None:
        return decided, moves
    if decided is not None and decided.best is not None:
        won = next(m for m in moves if m.action == decided.best)
        here = dataclasses.replace(
            here, best=decided.best, best_name=decided.best_name, pv=decided.pv, depth=1,
            status=f"{here.status}; {_why_decided(won, moves)}")
    return here, moves


def with_known_moves(state, result, moves: list[KnownMove]):
    """An unproven search `result` of `state` with `moves` known (none of them a win, or
    decided_by_moves would have answered): their rows proven, the best move one not known
    to lose (the one with the best estimate) when there is such a move, and the status
    saying which moves are known and where from."""
    if not moves or result.proven:
        return result
    from niwa.solver.results import ActionStat

    flip = result.player != state.current_player()      # (values are for result.player)
    known = {m.action: (1.0 - m.value if flip else m.value) for m in moves}
    rows = [dataclasses.replace(x, value=known[x.action], proven=True)
            if x.action in known else x for x in result.actions]
    shown = {x.action for x in result.actions}
    rows += [ActionStat(m.action, m.name, known[m.action], proven=True)
             for m in moves if m.action not in shown]
    best, name, value, pv = result.best, result.best_name, result.value, result.pv
    if best in known:
        open_rows = [x for x in rows if x.action not in known and x.value is not None]
        if open_rows:
            chosen = (min if flip else max)(open_rows, key=lambda x: x.value)
            best, name, value, pv = chosen.action, chosen.name, chosen.value, [chosen.name]
    status = (f"{result.status + '; ' if result.status else ''}{len(moves)} of "
              f"{len(state.legal_actions())} moves known to lose: {_said(moves)}")
    return dataclasses.replace(result, actions=rows, best=best, best_name=name, value=value,
                               pv=pv, status=status)


def _said(moves: list[KnownMove]) -> str:
    """The known moves and their sources, the moves of one source together. An open
    proof's record is named once for all its answers, with whether each has a checked
    certificate ("W3-a3, W3-b3, W4-4 (the open proof's record proofs.json, N nodes so far;
    each with a checked certificate)"); `niwa solve` on a move's position names its own."""
    groups: dict[object, list[KnownMove]] = {}
    for m in moves:
        key = (m.source.where, m.source.nodes) if isinstance(m.source, _OpenAnswer) \
            else str(m.source)
        groups.setdefault(key, []).append(m)
    out = []
    for key, group in groups.items():
        names = ", ".join(m.name for m in group)
        if isinstance(key, str):
            out.append(f"{names} ({key})")
            continue
        bare = [m.name for m in group
                if m.source.certificate is None and m.source.inside is None]
        certified = "each with a checked certificate" if not bare else \
            f"{', '.join(bare)} with no certificate of its own yet"
        out.append(f"{names} (the open proof's record {key[0]}, {key[1]:,} nodes so far; "
                   f"{certified})")
    return "; ".join(out)
