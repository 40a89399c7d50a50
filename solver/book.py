"""Opening books read off df-pn proofs: {position -> proven winning move} for the winning
side, to a fixed depth, so that the `perfect` agent can play the first moves of a game whose
proof takes minutes (full Lotus: ~9 minutes and 6 GB) without proving them live.

Building (build_book). Prove the start position, then walk the winning side's solution
tree to depth `plies`: at the winner's positions one proven winning move (of those the
table already knows to win, the one whose proof was the smallest, i.e. the quickest to
prove again), at the loser's positions every legal move. A position the table lost
(overwritten entries) is proved again before it is used; transpositions are walked once.

Selective depth (max_work). A position D plies in can still need a long proof, and a line
whose proof is cheap needs no book at all. With `max_work` W the walk goes on past D while
the position's proof took more than W expansions (the table's `work`, which undercounts a
fresh proof: subtrees proven elsewhere are not in it) and stops where it took at most W.
Measured on towers 3..1 pro/mandatory (14.4M-node proof), book to 8 plies, 30 positions
just past the book each proved from an empty table: W = 20,000: 1,134 entries, fresh
proofs up to 631K nodes; W = 5,000: 2,655 entries, up to 531K; W = 1,000: 5,309 entries,
median 1.9K, 90th percentile 43K, max 63K nodes.

The file (.npz, written and read with numpy, no pickle), format niwa-book-2:
    keys     uint64, sorted: State.hash() of each winner's position (the game's full 64-bit
             Zobrist key: stones, towers, side to move, opening state), NOT the symmetric
             key the proof search uses, so the stored move belongs to this exact position
    actions  int32: the winning action in that position
    won      (optional) uint64, sorted: State.symmetric_hash() of positions the winner is
             known to win, whoever is to move (the roots of a certification's checked
             parts, add_won_positions): below the book's plies, `won_move` finds the
             winner a move whose every line reaches one of them within a few plies
    meta     a JSON string: format, game, variant (every option), plies, winner (seat),
             entries, won (how many won positions; 0 or absent: none), positions walked,
             the proof's and the walk's nodes and seconds, and sha256, the checksum of
             keys, actions, won (if any) and the rest of meta (verified on load)
    and, as the zip archive's comment, "niwa-sha256:" and the sha256 of every byte of the
    file before it, so that no byte of the file (zip bookkeeping included) can change
    unnoticed. A niwa-book-1 file (no such comment) is refused with how to convert it:
    upgrade_book (`niwa book upgrade FILE`) re-verifies its checksum and rewrites it. An
    array not listed here (one a newer niwa may add) is refused by name, as from a newer
    niwa, before the checksum (which this niwa computes without it) could call it damaged.
Lookup is np.searchsorted on keys; the caller must check the move is legal (two positions
sharing all 64 bits would otherwise be confused) and that the variant matches.

Where books live: $NIWA_BOOKS if set, else ~/.cache/niwa/books/, then the books shipped
in the package (niwa/solver/books/). File name: GAME-<16 hex digits of the variant's
sha256>.npz (book_name).

>>> b = build_book("lotus", dict(towers=1, lane=1, shared=3, trampoline_at=3), plies=4,
...                tt_mb=8, progress=False)
>>> b.winner, b.entries > 0, b.plies
(1, True, 4)
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import struct
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from niwa.ext.errors import NiwaError, file_error_reason
from niwa.solver.certificate import PART_BASE
from niwa.solver.proof_moves import NoProvenMove, winning_move

FORMAT = "niwa-book-2"
OLD_FORMATS = ("niwa-book-1",)      # read only by upgrade_book
FILE_DIGEST = b"niwa-sha256:"       # the zip comment: this, then 64 hex digits
TRAILER = len(FILE_DIGEST) + 64
BOOK_ARRAYS = ("keys", "actions", "meta", "won")     # a book file's arrays, `won` optional
MAX_BOOK_BYTES = 1 << 30            # far above any book (the full-Lotus ones are ~50 kB)
PACKAGE_BOOKS = Path(__file__).resolve().parent / "books"


class BookError(NiwaError):
    """A book that cannot be built, found or trusted."""


def books_dir() -> Path:
    """Where books are written and looked up first: $NIWA_BOOKS, else ~/.cache/niwa/books."""
    env = os.environ.get("NIWA_BOOKS")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "niwa" / "books"


def canonical_variant(game: str, variant: dict | None) -> dict:
    """Every variant option of `game` (defaults filled in), as the game's own state reports
    them: two spellings of one variant give one book."""
    from niwa.ext.registry import get_game

    return dict(sorted(get_game(game).new(**(variant or {})).variant.items()))


def book_name(game: str, variant: dict) -> str:
    return _book_name(game, json.dumps(variant or {}, sort_keys=True))


@functools.lru_cache(maxsize=64)
def _book_name(game: str, given: str) -> str:
    """book_name of the variant given as JSON: a lookup asks it for every move of a
    position, and the canonical variant takes a new state to find."""
    text = json.dumps(canonical_variant(game, json.loads(given)), sort_keys=True)
    return f"{game}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.npz"


def find_book(game: str, variant: dict) -> Path | None:
    """The book file of this game and variant: in books_dir() first, then the package's.
    BookError if the one in books_dir() is a symbolic link: the folder holds its books
    (NIWA_BOOKS can name the folder where they are), not links to files elsewhere that can
    change or vanish; a book named by its own path may be a link."""
    name = book_name(game, variant)
    for folder in (books_dir(), PACKAGE_BOOKS):
        path = folder / name
        try:
            if folder != PACKAGE_BOOKS and path.is_symlink():
                raise BookError(f"{path} is a symbolic link to {os.readlink(path)}: a book in "
                                f"the books folder must be a regular file there; copy it "
                                f"there, or point NIWA_BOOKS at the folder that holds it")
            if path.is_file():
                return path
        except OSError:     # a $NIWA_BOOKS the file system cannot even look up
            continue
    return None


@dataclass
class Book:
    game: str
    variant: dict
    plies: int
    winner: int
    keys: np.ndarray            # uint64, sorted
    actions: np.ndarray         # int32
    info: dict = field(default_factory=dict)    # counts and costs of the build
    sha256: str | None = None   # the file's checksum, once saved or loaded
    won: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))  # sorted

    @property
    def entries(self) -> int:
        return len(self.keys)

    def is_won(self, state) -> bool:
        """Whether `state` (or its lane mirror) is among the positions the winner is known
        to win."""
        key = np.uint64(state.symmetric_hash())
        i = int(np.searchsorted(self.won, key))
        return i < len(self.won) and self.won[i] == key

    def lookup(self, state) -> int | None:
        """The book's action for `state` (its full hash), or None. Not checked for legality:
        the caller plays it only if it is legal."""
        key = np.uint64(state.hash())
        i = int(np.searchsorted(self.keys, key))
        if i < len(self.keys) and self.keys[i] == key:
            return int(self.actions[i])
        return None

    def matches(self, state) -> bool:
        """True when `state` is a position of this book's game and variant."""
        return state.game_name == self.game and \
            dict(sorted(state.variant.items())) == self.variant

    def meta(self) -> dict:
        won = {"won": len(self.won)} if len(self.won) else {}
        return {"format": FORMAT, "game": self.game, "variant": self.variant,
                "plies": self.plies, "winner": self.winner, "entries": self.entries,
                **won, **self.info}

    def save(self, path: Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = self.meta()
        meta["sha256"] = self.sha256 = _checksum(self.keys, self.actions, meta, self.won)
        won = {"won": self.won} if len(self.won) else {}
        data = sealed_archive(keys=self.keys, actions=self.actions, **won,
                              meta=np.array(json.dumps(meta, sort_keys=True)))
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
        return path


def sealed_archive(**arrays) -> bytes:
    """The .npz bytes of `arrays` with the file checksum as the zip comment."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    data = buffer.getvalue()
    # the archive ends with its 22-byte end record, whose last field is the comment's
    # length (0): give it the digest's length, then append the digest as the comment
    if data[-22:-18] != b"PK\x05\x06" or data[-2:] != b"\0\0":
        raise BookError("numpy wrote an archive without a plain end record")
    data = data[:-2] + struct.pack("<H", TRAILER)
    return data + FILE_DIGEST + hashlib.sha256(data).hexdigest().encode()


def _checksum(keys, actions, meta: dict, won=None) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(keys, dtype="<u8").tobytes())
    h.update(np.ascontiguousarray(actions, dtype="<i4").tobytes())
    if won is not None and len(won):      # (a book without won positions: as before them)
        h.update(np.ascontiguousarray(won, dtype="<u8").tobytes())
    h.update(json.dumps({k: v for k, v in meta.items() if k != "sha256"},
                        sort_keys=True).encode())
    return h.hexdigest()


def load_book(path, *, old_format: bool = False) -> Book:
    """Read and verify a book file; BookError (one line) if it is not a book or a checksum
    does not match. `old_format`: read a niwa-book-1 file (upgrade_book only)."""
    path = Path(path)
    rebuild = "delete it and build it again (niwa book build)"
    try:
        if path.stat().st_size > MAX_BOOK_BYTES:
            raise BookError(f"{path} is too large to be a book")
        data = path.read_bytes()
    except FileNotFoundError:
        raise BookError(f"no book at {path}") from None
    except OSError as e:
        raise BookError(f"cannot read {path}: {e.strerror or e}") from None
    if not old_format:
        tail = data[-TRAILER:]
        if len(data) < TRAILER or not tail.startswith(FILE_DIGEST):
            raise BookError(f"{path} has no file checksum: a {OLD_FORMATS[0]} book or not a "
                            f"book (convert an old one: niwa book upgrade {path}); {rebuild}")
        if hashlib.sha256(data[:-TRAILER]).hexdigest().encode() != tail[len(FILE_DIGEST):]:
            raise BookError(f"{path}: file checksum mismatch, the book is damaged or was "
                            f"edited; {rebuild}")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            unknown = sorted(set(z.files) - set(BOOK_ARRAYS))
            keys, actions, text = z["keys"], z["actions"], z["meta"]
            won = z["won"] if "won" in z.files else np.zeros(0, np.uint64)
            text = str(text) if text.dtype.kind == "U" and text.ndim == 0 else None
            meta = json.loads(text) if text is not None else None
    except (OSError, ValueError, KeyError, EOFError, TypeError, MemoryError,
            NotImplementedError, zipfile.BadZipFile, zlib.error) as e:
        # a damaged archive fails in zipfile, zlib or numpy's reader, each in its own way
        # (an unknown compression method, a bad CRC, a broken .npy header...)
        raise BookError(f"{path} is not a readable book ({file_error_reason(e)}); "
                        f"{rebuild}") from None
    if unknown:     # checked before the checksum, which this niwa computes without them
        raise BookError(f"{path} holds parts this niwa does not know ({', '.join(unknown)}): "
                        f"it was written by a newer niwa; upgrade niwa to read it")
    wanted = OLD_FORMATS if old_format else (FORMAT,)
    if not isinstance(meta, dict) or meta.get("format") not in wanted or \
            text != json.dumps(meta, sort_keys=True):
        raise BookError(f"{path}: not a {' or '.join(wanted)} file (or its header is damaged); "
                        f"{rebuild}")
    if keys.dtype != np.uint64 or actions.dtype != np.int32 or keys.ndim != 1 \
            or actions.ndim != 1 or won.dtype != np.uint64 or won.ndim != 1:
        raise BookError(f"{path}: malformed book arrays; {rebuild}")
    if meta.get("sha256") != _checksum(keys, actions, meta, won):
        raise BookError(f"{path}: checksum mismatch, the book is damaged or was edited; "
                        f"{rebuild}")
    if len(keys) != len(actions) or len(keys) != meta.get("entries") \
            or np.any(keys[1:] <= keys[:-1]) or len(won) != meta.get("won", 0) \
            or np.any(won[1:] <= won[:-1]):
        raise BookError(f"{path}: malformed book arrays")
    fields = {"game": str, "variant": dict, "plies": int, "winner": int}
    if any(not isinstance(meta.get(k), t) for k, t in fields.items()):
        raise BookError(f"{path}: malformed book header; {rebuild}")
    fixed = ("format", "game", "variant", "plies", "winner", "entries", "won", "sha256")
    return Book(game=meta["game"], variant=meta["variant"], plies=meta["plies"],
                winner=meta["winner"], keys=keys, actions=actions,
                info={k: v for k, v in meta.items() if k not in fixed}, sha256=meta["sha256"],
                won=won)


def upgrade_book(path, out=None) -> Path:
    """Rewrite a niwa-book-1 file as niwa-book-2 (to `out`, default in place), after
    verifying its checksum: the keys, moves and build figures are kept as they are."""
    book = load_book(path, old_format=True)
    return book.save(Path(out) if out is not None else Path(path))


def build_book(game: str, variant: dict | None = None, plies: int = 8, tt_mb: float = 4096,
               time_limit: float = 0.0, progress: bool = True, searcher=None,
               max_work: int | None = None, huge_pages: bool = False) -> Book:
    """Prove `game`'s start (variant) and read the winner's moves off the proof to depth
    `plies` (see the module notes). With `max_work`, a line goes on past `plies` while its
    position's proof took more than `max_work` expansions (what a live proof could not
    redo in time). `time_limit` bounds the root proof and each re-proof (0 = none).
    `searcher`: a ProofSearch to use (its table is kept), else a new one (`huge_pages`:
    its table on 2 MB pages)."""
    from tqdm import tqdm

    from niwa.ext.registry import get_game
    from niwa.solver.proof import ProofSearch

    if plies < 1:
        raise BookError("a book needs at least one ply")
    variant = canonical_variant(game, variant)
    start = get_game(game).new(**variant)
    search = searcher or ProofSearch(tt_mb=tt_mb, huge_pages=huge_pages)
    t0 = time.time()
    root = search.solve(start, time_limit=time_limit, root_values=False, pv=False)
    if not root.proven:
        raise BookError(f"the start was not proven ({root.summary()}); give more time or "
                        f"--tt-mb")
    if root.value not in (0.0, 1.0):
        raise BookError(f"the start is a draw ({root.summary()}): a book holds the moves of "
                        f"a proven winner")
    winner = root.player if root.value == 1.0 else 1 - root.player
    proof_s, proof_nodes = time.time() - t0, root.nodes
    nodes0 = search.nodes
    book: dict[int, int] = {}
    depth_done: dict[int, int] = {}     # position hash -> most plies still walked below it
    leaf_work: dict[int, int] = {}      # positions just past the book -> their proof's work
    counts = {"winner_positions": 0, "loser_positions": 0, "reproved": 0, "deepest": 0}
    bar = tqdm(desc=f"book {game} {plies} plies", unit=" pos", disable=not progress)
    stack = [(start, plies)]
    while stack:
        state, left = stack.pop()
        if state.is_terminal():
            continue
        key = state.hash()
        if left <= 0:
            work = search.subtree_work(state)       # 0: the table lost it
            if max_work is None or 0 < work <= max_work:
                leaf_work[key] = work   # what a live proof from here may cost
                continue
        if depth_done.get(key, -(1 << 30)) >= left:
            continue
        depth_done[key] = left
        counts["deepest"] = max(counts["deepest"], plies - left + 1)
        bar.update()
        legal = state.legal_actions()
        if state.current_player() == winner:
            counts["winner_positions"] += 1
            a = book.get(key)
            if a is None:
                used = search.nodes
                try:
                    a = winning_move(search, state, winner, time_limit)
                except NoProvenMove as e:
                    raise BookError(str(e)) from None
                counts["reproved"] += search.nodes > used
                if len(legal) > 1:
                    book[key] = a
            stack.append((state.child(a), left - 1))
        else:
            counts["loser_positions"] += 1
            stack.extend((state.child(a), left - 1) for a in legal)
    bar.close()
    keys = np.array(sorted(book), dtype=np.uint64)
    actions = np.array([book[int(k)] for k in keys], dtype=np.int32)
    work = np.array(sorted(leaf_work.values()), dtype=np.int64)
    counts["leaves"] = len(work)
    if len(work):
        counts["leaf_work"] = {f"p{q}": int(np.percentile(work, q)) for q in (50, 90, 99, 100)}
    info = {**counts, "proof_nodes": int(proof_nodes), "proof_s": round(proof_s, 1),
            "walk_nodes": int(search.nodes - nodes0),
            "walk_s": round(time.time() - t0 - proof_s, 1), "tt_mb": search.tt_mb,
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if max_work is not None:
        info["max_work"] = int(max_work)
    return Book(game=game, variant=variant, plies=plies, winner=winner, keys=keys,
                actions=actions, info=info)


def book_from_certificate(certificate, plies: int = 8, max_nodes: int | None = None,
                          parts=None, missing_parts: bool = False, any_root: bool = False,
                          mirror: bool = False) -> Book:
    """The book of a proof certificate (niwa.solver.certificate) whose root is its game's
    start: the winner's move at each of the winner's positions of its solution tree to
    depth `plies`, nothing proved again (a certificate of a proof too long for one table,
    such as a two-level proof, gives its book this way). With `max_nodes`, a line goes on
    past `plies` while the certificate's tree below the position (counted as a tree: a
    position reached twice counts twice) has more than `max_nodes` positions, the
    certificate's stand-in for build_book's max_work. A certificate in parts is followed
    into its parts (`parts`: sha256 -> Certificate, as certificate.certificate_folder
    gives). Every move is checked legal with the engine on the way. `missing_parts`: a
    part not given ends its lines there instead of refusing (a certification carried
    between machines by its check ledger keeps no part files; info["lines_cut"] counts
    them); sizes are then unknown, so not with `max_nodes`. `any_root`: the certificate
    may be of any position (a part), `plies` then counted from it: a piece of a book, for
    merge_books; `mirror`: of its root's lane mirror instead (the moves mapped)."""
    from niwa.ext.registry import get_game, parse_position

    if plies < 1:
        raise BookError("a book needs at least one ply")
    if missing_parts and max_nodes is not None:
        raise BookError("max_nodes needs every part: the tree's sizes are counted in them")
    game, winner = certificate.game, int(certificate.winner)
    variant = canonical_variant(game, certificate.variant)
    if any_root:
        root = certificate.root
        if mirror:
            from niwa.solver.certificate import parse_reference_position

            root = parse_reference_position(root).mirrored().to_notation()
        start = parse_position(root)
    else:
        start = get_game(game).new(**variant)
        if certificate.root != start.to_notation() or mirror:
            raise BookError(f"the certificate's root is not the start of {game} {variant}: "
                            f"a book begins at the start")
    trees = _CertificateTrees(certificate, parts, missing_parts, mirror,
                              sizes=max_nodes is not None)
    book: dict[int, int] = {}
    depth_done: dict[tuple, int] = {}
    counts = {"winner_positions": 0, "loser_positions": 0, "deepest": 0}
    cut: set[tuple] = set()
    stack = [(0, 0, start, plies)]
    while stack:
        t, i, state, left = stack.pop()
        offsets, actions, children, size = trees.arrays[t]
        if left <= 0 and (max_nodes is None or size[i] <= max_nodes):
            continue
        if depth_done.get((t, i), -(1 << 30)) >= left:
            continue
        depth_done[(t, i)] = left
        counts["deepest"] = max(counts["deepest"], plies - left + 1)
        legal = state.legal_actions()
        edges = range(offsets[i], offsets[i + 1])
        for e in edges:
            if int(actions[e]) not in legal:
                raise BookError(f"the certificate's move {int(actions[e])} is not legal at "
                                f"{state.to_notation()}: it does not fit this engine")
        if state.current_player() == winner:
            counts["winner_positions"] += 1
            if len(legal) > 1:
                book[state.hash()] = int(actions[offsets[i]])
        else:
            counts["loser_positions"] += 1
        for e in edges:
            c = int(children[e])
            if c >= 0:
                stack.append((t, c, state.child(int(actions[e])), left - 1))
            elif c <= PART_BASE:
                part = trees.part(t, PART_BASE - c)
                if part is None:
                    if left > 1:
                        cut.add((t, c))
                    continue
                stack.append((part, 0, state.child(int(actions[e])), left - 1))
    if missing_parts:
        counts["lines_cut"] = len(cut)
    keys = np.array(sorted(book), dtype=np.uint64)
    if any_root:
        counts.update(root=start.to_notation(), mirror=mirror)
    info = {**counts, "certificate_sha256": certificate.sha256,
            "certificate_nodes": certificate.nodes,
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if len(trees.arrays) > 1:       # (the parts the lines reached, or all with max_nodes)
        info["certificate_parts"] = len(trees.arrays) - 1
    if max_nodes is not None:
        info["max_nodes"] = int(max_nodes)
    return Book(game=game, variant=variant, plies=plies, winner=winner, keys=keys,
                actions=np.array([book[int(k)] for k in keys], dtype=np.int32), info=info)


class _CertificateTrees:
    """A certificate and the parts it stops at, each as (offsets, actions, children, size)
    with `size[i]` the tree below node i (a part's root counting its whole tree), or size
    None unless `sizes`; a part met as its lane mirror is a tree of its own, its moves
    mapped to their mirrors. A part is loaded when a line first reaches it, except that
    the sizes need every part at once: a book of a few plies of a part over 75M positions
    in 200 parts read them all, in a Python loop, and took a core for over ten minutes."""

    def __init__(self, certificate, parts, missing: bool = False, mirrored: bool = False,
                 sizes: bool = True):
        self.find, self.index, self.missing, self.sizes = parts, {}, missing, sizes
        self.certs, self.arrays = [], []
        self._add(certificate, mirrored)

    def part(self, t: int, k: int) -> int | None:
        """The tree number of part k of tree t (loaded, with its own parts, on first use);
        None for a part not given, if `missing` allows."""
        cert, mirrored = self.certs[t]
        ref = cert.parts[k]
        key = (ref["sha256"], bool(ref.get("mirror")) != mirrored)
        if key not in self.index:
            found = None if self.find is None else self.find(ref["sha256"])
            if found is None and self.missing:
                self.index[key] = None
            elif found is None or found.root != ref["root"] or found.winner != ref["winner"]:
                raise BookError(f"the certificate stops at a part (sha256 "
                                f"{ref['sha256'][:16]}...) that is not given: give the "
                                f"folder of its parts")
            else:
                self._add(found, key[1])
        return self.index[key]

    def _add(self, cert, mirrored: bool) -> None:
        t = len(self.certs)
        self.index[(cert.sha256, mirrored)] = t
        self.certs.append((cert, mirrored))
        self.arrays.append(None)
        offsets = cert.offsets.astype(np.int64)
        actions, children = cert.actions.astype(np.int64), cert.children
        if mirrored:
            from niwa.ext.reference.lotus import LotusOracle

            mirror = LotusOracle(**cert.variant).mirror_action
            moves, where = np.unique(actions, return_inverse=True)
            actions = np.array([mirror(int(a)) for a in moves], dtype=np.int64)[where]
        if not self.sizes:
            self.arrays[t] = (offsets, actions, children, None)
            return
        size = np.ones(cert.nodes, dtype=object)    # children come later in the order
        for i in range(cert.nodes - 1, -1, -1):
            for c in children[offsets[i]:offsets[i + 1]]:
                if c >= 0:
                    size[i] += size[c]
                elif c <= PART_BASE:
                    part = self.part(t, PART_BASE - int(c))
                    size[i] += 1 if part is None else self.arrays[part][3][0]
        self.arrays[t] = (offsets, actions, children, size)


def merge_books(books, plies: int | None = None) -> Book:
    """One book of the entries of `books` (of one game, variant and winner): a book read
    off a certificate whose parts' files are gone, with the pieces of book kept from those
    parts (book_from_certificate(any_root=True)). Where two give a position different
    moves (both proven winning), the first book's is kept. `plies`: the merged book's
    depth (default: the first's)."""
    books = list(books)
    if not books:
        raise BookError("no book to merge")
    first = books[0]
    merged: dict[int, int] = {}
    for b in books:
        if (b.game, b.variant, b.winner) != (first.game, first.variant, first.winner):
            raise BookError(f"a book of {b.game} {b.variant} (seat {b.winner} wins) cannot "
                            f"be merged with one of {first.game} {first.variant} (seat "
                            f"{first.winner})")
        for k, a in zip(b.keys.tolist(), b.actions.tolist(), strict=True):
            merged.setdefault(k, a)
    keys = np.array(sorted(merged), dtype=np.uint64)
    info = {"merged_books": len(books), "first_book_sha256": first.sha256,
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    return Book(game=first.game, variant=first.variant,
                plies=first.plies if plies is None else plies, winner=first.winner,
                keys=keys, actions=np.array([merged[int(k)] for k in keys], dtype=np.int32),
                info=info)


def add_won_positions(book: Book, ledger) -> Book:
    """`book` with the roots of every part its certification's check `ledger`
    (certificate.CheckLedger's file) holds checked for the book's winner, as its won
    positions (`Book.won`): the book of a certification whose parts' files are gone then
    still knows, below its own plies, the positions every line of the certificate passes
    through every few plies (a part is cut each `--split` plies down a line)."""
    from niwa.ext.registry import parse_position
    from niwa.solver.certificate import ledger_parts

    keys = set()
    for part in ledger_parts(ledger):
        if part.game != book.game or \
                canonical_variant(part.game, part.variant) != book.variant:
            raise BookError(f"the ledger's part {part.sha256[:16]}... is of {part.game} "
                            f"{part.variant}, not the book's {book.game} {book.variant}")
        if part.winner == book.winner:
            keys.add(parse_position(part.root).symmetric_hash())
    won = np.array(sorted(keys), dtype=np.uint64)
    return Book(game=book.game, variant=book.variant, plies=book.plies, winner=book.winner,
                keys=book.keys, actions=book.actions, won=won,
                info={**book.info, "won_from": Path(ledger).name})


WON_MOVE_PLIES = 3      # how far won_move looks: a part every 4 plies leaves 3 between
IN_BOOK = "its plies"   # move_from's word for a move of the book's own keys


def won_move(book: Book, state, plies: int = WON_MOVE_PLIES) -> int | None:
    """A move for the book's winner, to move in `state`, whose every line reaches a
    position of `book.won` or an end of the game the winner wins within `plies` plies (the
    nearest such, found by iterative deepening); None if there is none that near, or the
    book knows no won position. Each such move wins: every position it leads to is won.

    >>> from niwa.ext.lotus import LotusState
    >>> s = LotusState(towers=1, lane=1, shared=3, trampoline_at=3)
    >>> s.apply(s.legal_actions()[0])
    >>> b = Book("lotus", s.variant, 0, 1, np.zeros(0, np.uint64), np.zeros(0, np.int32))
    >>> won_move(b, s) is None                      # no won position known
    True
    """
    winner = book.winner
    if not len(book.won) or state.is_terminal() or state.current_player() != winner:
        return None

    def won_within(s, left: int) -> bool:
        if s.is_terminal():
            return s.returns()[winner] > 0.5
        if book.is_won(s):
            return True
        if left == 0:
            return False
        children = (s.child(a) for a in s.legal_actions())
        if s.current_player() == winner:
            return any(won_within(c, left - 1) for c in children)
        return all(won_within(c, left - 1) for c in children)

    legal = state.legal_actions()
    for left in range(plies):
        for a in legal:
            if won_within(state.child(a), left):
                return a
    return None


def move_from(book: Book, state, legal) -> tuple[int | None, str]:
    """The book's winner's move in `state` and where it comes from: the book's own move
    where the position is one of its keys and that move is in `legal` (IN_BOOK),
    else a won_move ("a won position within N plies"), else (None, "")."""
    move = book.lookup(state)
    if move is not None and move in legal:
        return move, IN_BOOK
    move = won_move(book, state)
    return (move, f"a won position within {WON_MOVE_PLIES} plies") if move is not None \
        else (None, "")


def book_leaves(book: Book) -> list:
    """The winner's positions just past the book (in its tree, without a book move), with
    their plies from the start: where `perfect` starts proving live."""
    from niwa.ext.registry import get_game

    out, seen = [], set()
    stack = [(get_game(book.game).new(**book.variant), book.plies)]
    while stack:
        state, left = stack.pop()
        if state.is_terminal() or state.hash() in seen:
            continue
        seen.add(state.hash())
        legal = state.legal_actions()
        if state.current_player() != book.winner:
            stack.extend((state.child(a), left - 1) for a in legal)
            continue
        a = book.lookup(state) if len(legal) > 1 else legal[0]
        if left <= 0 and (a is None or len(legal) == 1):
            out.append((state, book.plies - left))
        elif a in legal:
            stack.append((state.child(a), left - 1))
    return out


def verify_book(book: Book, tt_mb: float = 256, time_limit: float = 0.0,
                progress: bool = False) -> int:
    """Walk the book's tree again (the loser's every move, the book's move for the winner)
    and prove with a fresh proof search that every book move wins; the number of the
    winner's positions whose move was checked (each once), or BookError at the first move
    that is missing, illegal or not a win."""
    from tqdm import tqdm

    from niwa.ext.registry import get_game
    from niwa.solver.proof import ProofSearch

    search = ProofSearch(tt_mb=tt_mb)
    start = get_game(book.game).new(**book.variant)
    seen: dict[int, int] = {}
    proved: set[int] = set()
    stack = [(start, book.plies)]
    bar = tqdm(desc="verify book", unit=" pos", disable=not progress)
    while stack:
        state, left = stack.pop()
        if state.is_terminal() or seen.get(state.hash(), -(1 << 30)) >= left:
            continue
        seen[state.hash()] = left
        bar.update()
        legal = state.legal_actions()
        if state.current_player() != book.winner:
            stack.extend((state.child(a), left - 1) for a in legal)
            continue
        a = book.lookup(state) if len(legal) > 1 else legal[0]
        if left <= 0 and (a is None or len(legal) == 1):
            continue    # past the book's depth and not extended here: a leaf
        if a is None or a not in legal:
            raise BookError(f"book move {'missing' if a is None else 'illegal'} at "
                            f"{state.to_notation()}")
        child = state.child(a)
        if state.hash() not in proved:     # (met again with more plies left: walked on)
            if search.prove_value(child, book.winner, time_limit) != 1:
                raise BookError(f"book move {state.action_to_string(a)} does not win at "
                                f"{state.to_notation()}")
            proved.add(state.hash())
        stack.append((child, left - 1))
    bar.close()
    return len(proved)
