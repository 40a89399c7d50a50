"""Proof certificates: a proven Lotus result written as its solution tree, which anyone can
check with the plain-Python reference rules, without trusting the search that found it.

What a certificate claims. "From position ROOT, seat W wins against every defence." It
proves that with W's solution tree: at each of W's positions one winning move, at each of
the loser's positions every legal reply, and at the bottom only leaves: positions where the
game is over and W has won, or (optionally) positions inside an endgame table, which the
checker solves again itself. Lotus cannot cycle, and positions met along several lines are
written once (the tree is a DAG), so a certificate is finite and small next to the proof.

Extraction (extract_certificate). Walk from the root over the df-pn table of a finished
proof: at the winner's positions the move the table proves winning (of those, the one
whose proof was the smallest, as the opening book does: proof_moves.winning_move; a position
whose entry was overwritten is proved again with the same search), at the loser's
positions every legal move; transpositions are walked once (keyed by the engine's full
64-bit hash, not the symmetric key the search folds mirrors with, so the checker needs no
symmetry). The nodes are then numbered in topological order (parents before children).

Checking (check_certificate), with `niwa.ext.reference.lotus` only (not the Cython engine,
not the search). The root is rebuilt from the header's notation (its round trip and stone
counts checked). Nodes are visited in number order; each node's position comes from its
parent (an edge may only point to a higher number, so the graph has no cycle and every
parent is visited before its child), and every edge that reaches a node must reach the
same position. At the winner's nodes the one move must be legal; at the loser's nodes the
replies must be exactly the reference's legal moves; an edge marked "game over" must end
the game with W the winner; every node must be reached from the root. Table leaves are
solved again by plain exhaustive search with the reference rules (memoised minimax over
the leaf's subtree: endgame-table positions hold few stones, so their subtrees are small),
which is slower than trusting a table but needs no table and no trust in its build; a
budget (`leaf_budget` positions) refuses a certificate whose leaves are too big for that.
A table may still order the moves that search tries (`tables=`, _TableGuide): an order
only, never a value, so the verdict stays the reference rules' alone.

Parts. A proof too big for one file (or one session) is certified in parts: a certificate
may stop at the root of another certificate (a *part*) whose claim is the same winner, and
names it in its header by root and sha256. extract_certificate(parts=...) stops its walk
at those positions; check_certificate(parts=...) checks that each such edge reaches the
part's root position, and then checks every part the same way, one at a time (so memory
is that of the largest part, not of the whole proof), or several at once as jobs on an
executor (CheckPartJob: the parts of one depth below the root at a time). A part may also stand for its lane
mirror ("mirror": true in the header's entry): the move reaches the mirror of the part's
root (lanes a and b swapped), and the part is then checked in the mirror, every move
mapped to its mirror move (LotusOracle.mirror_action) and every position derived and
checked there by the reference rules, so a mirrored part trusts no symmetry argument.

The file (.npz, numpy, no pickle; arrays compressed with zlib):
    offsets   uint32, nodes + 1: node i's edges are edges offsets[i]..offsets[i+1]-1
    actions   uint8 (uint16 if an action id exceeds 255): the move of each edge
    children  int32: the node an edge leads to (> i), GAME_OVER (-1: the move ends the
              game), TABLE_LEAF (-2: the move reaches a position the checker solves) or
              PART_BASE - k (-3 - k: the move reaches the root of part k)
    meta      a JSON string: format, game, variant, root (notation), winner (seat), value
              (for the player to move at the root), counts, how it was made, the parts
              (root, winner, sha256 of each; only if there are any), and sha256, one
              digest over the three arrays and the rest of meta (verified on load)

>>> from niwa.ext.lotus import LotusState
>>> from niwa.solver.proof import ProofSearch
>>> search = ProofSearch(tt_mb=8)
>>> root = LotusState(towers=2, lane=1, shared=3, trampoline_at=3)
>>> cert = extract_certificate(search, root)
>>> cert.winner, cert.nodes > 0
(1, True)
>>> report = check_certificate(cert)
>>> report.nodes == cert.nodes, report.game_over_leaves > 0
(True, True)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import sys
import time
import zipfile
import zlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from niwa.ext.errors import NiwaError, file_error_reason
from niwa.solver.proof_tree import KEEP_MIN_WORK

FORMAT = "niwa-certificate-1"
GAME_OVER = -1      # the edge's move ends the game (the winner must have won)
TABLE_LEAF = -2     # the edge's move reaches a position the checker solves by itself
PART_BASE = -3      # PART_BASE - k: the edge's move reaches the root of part k
DEFAULT_LEAF_BUDGET = 2_000_000     # positions the checker may search below table leaves


class CertificateError(NiwaError):
    """A certificate that cannot be written, read or accepted (one line: what is wrong)."""


class LeavesTooBig(CertificateError):
    """Table leaves whose exhaustive solving again needs more positions than the check's
    `leaf_budget`: a limit of the check, not a fault of the certificate."""


class TreeTooBig(CertificateError):
    """A solution tree larger than extract_certificate was allowed to walk (its
    max_positions), or still being walked at its deadline. `loser_depths`: how many of the
    loser's positions the walk had met at each depth below its root (where to cut it)."""

    def __init__(self, message: str, loser_depths: dict | None = None):
        super().__init__(message)
        self.loser_depths = loser_depths or {}


def part_key(key: int) -> str:
    """How a position's symmetric hash is spelled where parts are named: part files, the
    cuts file and its plans (their moves and children). One spelling, 16 hex digits, so
    that a folder, the cuts and a plan always agree.

    >>> part_key(255)
    '00000000000000ff'
    """
    return f"{key:016x}"


PART_FILES = "part-*.npz"   # the glob pattern that finds every part in a folder


def part_file_name(key: int) -> str:
    """The file a part rooted at the position whose symmetric hash is `key` is saved in
    (found again by the glob PART_FILES).

    >>> part_file_name(255)
    'part-00000000000000ff.npz'
    """
    return f"part-{part_key(key)}.npz"


def cut_depth(loser_depths: dict, fan_out: int = 16) -> int:
    """Where to cut a solution tree found too big: the least depth at which the walk met
    at least `fan_out` of the loser's positions (so the tree is cut into that many parts
    or more), else the deepest it met. Cutting two plies down instead made a chain of
    cuts 22 deep on full pro/mandatory, where the loser's replies were few for many plies
    and each part two plies down was as big as its parent (each re-walked to the bound).

    >>> cut_depth({0: 1, 2: 3, 4: 20, 6: 300})
    4
    >>> cut_depth({0: 1, 2: 2, 4: 3})
    4
    """
    below = {d: n for d, n in loser_depths.items() if d >= 1}
    if not below:
        return 1
    return min((d for d, n in below.items() if n >= fan_out), default=max(below))


@dataclass(frozen=True)
class PartPlan:
    """The top of a part cut `depth` plies down (extract_certificate(plan=True)): its
    `positions` above the cut, the winner's move at each of the winner's positions there
    (engine hash -> action) and the symmetric keys of the parts below it, saved or to make,
    in the order the walk meets them. Walking the top again with these moves meets the
    same parts, whatever the df-pn table holds by then (a run again after a stop, or the
    table's entries overwritten while the parts below are made), so no saved part is
    orphaned; and a reader can count how much of a cut part is made (its parts saved)."""

    root: str
    depth: int
    positions: int
    moves: dict
    children: list
    planned: str = ""   # when (UTC, as a part's "made"): its parts made since are in order

    def to_json(self) -> dict:
        return {"depth": self.depth, "positions": self.positions,
                "moves": {part_key(h): a for h, a in self.moves.items()},
                "children": [part_key(k) for k in self.children],
                "planned": self.planned}

    @classmethod
    def from_json(cls, root: str, row: dict) -> PartPlan:
        return cls(root, int(row["depth"]), int(row["positions"]),
                   {int(h, 16): int(a) for h, a in row["moves"].items()},
                   [int(k, 16) for k in row["children"]], str(row.get("planned", "")))


@dataclass
class Certificate:
    """A solution tree: see the module notes for what the arrays mean."""

    game: str
    variant: dict
    root: str                   # the root position's notation
    winner: int                 # the seat that wins from the root
    value: float                # the root's value for the player to move (1 win, 0 loss)
    offsets: np.ndarray
    actions: np.ndarray
    children: np.ndarray
    info: dict = field(default_factory=dict)
    sha256: str | None = None
    # the certificates this one stops at: {"root": notation, "winner": seat, "sha256": ...}
    parts: list = field(default_factory=list)

    @property
    def nodes(self) -> int:
        return len(self.offsets) - 1

    @property
    def edges(self) -> int:
        return len(self.actions)

    def meta(self) -> dict:
        leaves = {"game_over_leaves": int(np.count_nonzero(self.children == GAME_OVER)),
                  "table_leaves": int(np.count_nonzero(self.children == TABLE_LEAF))}
        if self.parts:
            leaves["part_leaves"] = int(np.count_nonzero(self.children <= PART_BASE))
            leaves["parts"] = self.parts
        return {"format": FORMAT, "game": self.game, "variant": self.variant,
                "root": self.root, "winner": self.winner, "value": self.value,
                "nodes": self.nodes, "edges": self.edges, **leaves, **self.info}

    def seal(self) -> str:
        """Set `sha256` to the digest save() writes (the certificate as it is now)."""
        self.sha256 = _checksum(self.offsets, self.actions, self.children, self.meta())
        return self.sha256

    def save(self, path) -> Path:
        """Write the file (atomically: a temporary file renamed) and set `sha256`."""
        path = Path(path)
        meta = self.meta()
        meta["sha256"] = self.sha256 = _checksum(self.offsets, self.actions, self.children,
                                                 meta)
        tmp = path.with_name(path.name + ".tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as f:
                _write_npz(f, {"offsets": self.offsets, "actions": self.actions,
                               "children": self.children,
                               "meta": np.array(json.dumps(meta, sort_keys=True))})
            tmp.replace(path)
        except OSError as e:
            raise CertificateError(f"cannot write the certificate {path}: "
                                   f"{e.strerror or e}") from None
        return path


def _write_npz(f, arrays: dict) -> None:
    """np.savez_compressed's file (a zip of .npy files, read by np.load), deflated at level
    1: on full pro/mandatory's 3M-position parts, 6.5x faster than savez_compressed's
    default level and no larger (0.8 s against 5.2 s, both 12.8 MB); writing the parts was
    an eighth of an extraction's time."""
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1,
                         allowZip64=True) as zf:
        for name, value in arrays.items():
            with zf.open(name + ".npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, np.asanyarray(value), allow_pickle=False)


def _checksum(offsets, actions, children, meta: dict) -> str:
    """One sha256 over the arrays (fixed little-endian layouts) and the header."""
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(offsets, dtype="<u4").tobytes())
    h.update(np.ascontiguousarray(actions, dtype="<u2").tobytes())
    h.update(np.ascontiguousarray(children, dtype="<i4").tobytes())
    h.update(json.dumps({k: v for k, v in meta.items() if k != "sha256"},
                        sort_keys=True).encode())
    return h.hexdigest()


def load_certificate(path) -> Certificate:
    """Read a certificate and verify its checksum; CertificateError (one line) if it is
    missing, not a certificate, damaged or edited."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in ("offsets", "actions", "children")}
            meta = json.loads(str(z["meta"]))
    except FileNotFoundError:
        raise CertificateError(f"no certificate at {path}") from None
    except IsADirectoryError:
        raise CertificateError(f"{path} is a folder, not a certificate") from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise CertificateError(f"{path} is not a readable certificate "
                               f"({file_error_reason(e)})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CertificateError(f"{path}: not a {FORMAT} file")
    offsets, actions, children = arrays["offsets"], arrays["actions"], arrays["children"]
    if offsets.dtype != np.uint32 or actions.dtype not in (np.uint8, np.uint16) \
            or children.dtype != np.int32:
        raise CertificateError(f"{path}: malformed certificate arrays (types)")
    if meta.get("sha256") != _checksum(offsets, actions, children, meta):
        raise CertificateError(f"{path}: checksum mismatch, the certificate is damaged or "
                               f"was edited")
    if not _well_shaped(offsets, actions, children) or meta.get("nodes") != len(offsets) - 1:
        raise CertificateError(f"{path}: malformed certificate arrays (offsets)")
    try:
        parts = [{"root": str(p["root"]), "winner": int(p["winner"]),
                  "sha256": str(p["sha256"]), **({"mirror": True} if p.get("mirror") else {})}
                 for p in meta.get("parts", [])]
        return Certificate(game=str(meta["game"]), variant=dict(meta["variant"]),
                           root=str(meta["root"]), winner=int(meta["winner"]),
                           value=float(meta["value"]), offsets=offsets, actions=actions,
                           children=children, sha256=meta["sha256"], parts=parts,
                           info={k: v for k, v in meta.items() if k not in _FIXED})
    except (KeyError, TypeError, ValueError) as e:
        raise CertificateError(f"{path}: malformed certificate header ({e})") from None


def _well_shaped(offsets, actions, children) -> bool:
    """One edge list per node, in order, covering every edge exactly once."""
    return offsets.ndim == 1 and len(offsets) >= 2 and offsets[0] == 0 \
        and not np.any(offsets[1:] < offsets[:-1]) and int(offsets[-1]) == len(actions) \
        and len(actions) == len(children)


def positions_in(cert: Certificate):
    """(position, the winner's move there or None) for each position of the certificate's
    own tree: its nodes (the winner's move at each of the winner's, None at the loser's)
    and the roots of the parts it stops at (None: their moves are in the parts), each
    once, parents first; derived from the root's notation with the engine (the checker
    derives them with the reference rules: this is for looking a position up, not proof).

    >>> from niwa.ext.lotus import LotusState
    >>> from niwa.solver.proof import ProofSearch
    >>> root = LotusState(towers=2, lane=1, shared=3, trampoline_at=3)
    >>> cert = extract_certificate(ProofSearch(tt_mb=8), root)
    >>> [(p.to_notation() == root.to_notation(), m) for p, m in positions_in(cert)][0]
    (True, None)
    """
    from niwa.ext.registry import parse_position

    at, parts = {0: parse_position(cert.root)}, set()
    for node in range(cert.nodes):
        state = at.pop(node)
        lo, hi = int(cert.offsets[node]), int(cert.offsets[node + 1])
        winner = state.current_player() == cert.winner
        yield state, int(cert.actions[lo]) if winner else None
        for edge in range(lo, hi):
            child = int(cert.children[edge])
            if child >= 0 and child not in at:
                at[child] = state.child(int(cert.actions[edge]))
            elif child <= PART_BASE:    # (a part may be met by several edges)
                part_root = state.child(int(cert.actions[edge]))
                if (text := part_root.to_notation()) not in parts:
                    parts.add(text)
                    yield part_root, None


_FIXED = ("format", "game", "variant", "root", "winner", "value", "nodes", "edges",
          "game_over_leaves", "table_leaves", "part_leaves", "parts", "sha256")


def certificate_folder(folder):
    """The certificates in `folder` by sha256, as a function sha256 -> Certificate (None
    if none there has it): where check_certificate finds a certificate's parts. Only the
    headers are read until a part is asked for (then it is loaded and its checksum
    verified); a file that is not a certificate is passed over. Its `refresh()` indexes
    the files saved since; a sha256 not indexed yet makes it look again first."""
    looked = set()

    def refresh():
        """Index the files saved since the last look (a long-lived checker's folder,
        which the extraction fills as it checks: reading every header again for each part
        cost seconds a part with thousands of parts)."""
        with os.scandir(folder) as entries:     # names only: sorting 40,000 Paths each
            new = sorted(e.name for e in entries  # look took a third of a checker's time
                         if e.name.endswith(".npz") and e.name not in looked)
        for name in new:
            path = Path(folder) / name
            try:
                meta = _header_meta(path)
            except CertificateError:
                continue        # (being renamed into place, or not a certificate)
            looked.add(name)
            if isinstance(meta, dict) and meta.get("format") == FORMAT:
                find.paths.setdefault(str(meta.get("sha256")), str(path))
        return find

    def find(sha256: str):
        path = find.paths.get(sha256)
        if path is None:        # saved since the last look?
            path = refresh().paths.get(sha256)
        return None if path is None else load_certificate(path)

    find.folder = str(folder)
    find.paths = {}
    find.refresh = refresh
    return refresh()


# ---- extraction (from a finished proof; the engine and the search are used here) --------
def extract_certificate(search, state, tables=None, time_limit: float = 0.0,
                        progress: bool = False, jobs=None, parts=(), split: int = 0,
                        make_part=None, max_positions: int = 0,
                        part_index=None, deadline: float = 0.0, moves=None,
                        plan: bool = False, tick=None, part_ways=None) -> Certificate:
    """The solution tree of `state` read off `search` (a ProofSearch; the root is proved
    first if its table does not know it yet). `tables`: an endgame table whose positions
    become table leaves (the checker solves them itself). `time_limit` bounds the root's
    proof and each re-proof of a lost entry (0 = none). `jobs`: what a two-level proof's
    jobs proved, (proven, tree) as niwa.solver.proof_tree.proven_jobs gives them; the
    winner's moves near the root are then read off those proofs (see _JobProofs), and
    `search` re-proves only the jobs' positions the solution tree goes through. `parts`:
    certificates (of the same game and variant) whose roots the walk stops at when they
    claim the same winner; the certificate names those it reached in its header. `split`
    and `make_part`: on each line, the first position at least `split` plies down with the
    loser to move that no part covers yet is made a part by `make_part(position, plies)`
    (`plies` below the root on the line that met it first; it returns the part's
    certificate, saved), so the walk itself holds only the top plies. It may
    return None instead (another process is making that part): the walk goes on and, at its
    end, takes the parts it left from `make_part.wait(positions)`; `make_part.made`, the
    parts it made itself, becomes the header's info["parts_made"]. `max_positions`: refuse
    (TreeTooBig) a solution tree of more positions than that (0: no bound); `deadline`: so
    too a walk still going at that time.perf_counter() moment (0: none).
    `part_index`: more parts to stop at, already indexed: {winner: {engine hash of a root
    or of its mirror: (part, mirrored)}}, as _part_roots gives them (JobCertifier's, or a
    certification's over all its parts: indexing thousands of parts again for each walk
    took 1 s a part on full pro/mandatory, where most parts take a fraction of that); the
    parts `make_part` gives the walk are added to it, so the next walk stops at them too.
    `moves`: the winner's moves to play where they are legal, by the position's engine hash
    (a PartPlan's), before any the proofs would choose. `plan` (with `split`): make no part
    and build no certificate; return the PartPlan of the walk (its top positions, the
    winner's moves it chose, the parts it would stop at or make). `tick`: called every
    1,024 positions walked (a certification keeps its table's proofs from it).
    `part_ways`: the orientations known usable for each part (usable_ways), kept with
    `part_index` (a new record if None)."""
    from tqdm import tqdm

    from niwa.solver.proof_moves import NoProvenMove, winning_move

    if state.game_name != "lotus":
        raise CertificateError(f"certificates are checked with Lotus's reference rules; "
                               f"{state.game_name} has no checker")
    if state.is_terminal():
        raise CertificateError("the position is over: nothing to certify")
    t0 = time.perf_counter()
    nodes0 = search.nodes
    mover = state.current_player()
    by_jobs = None if jobs is None else _JobProofs(*jobs)
    value = None if by_jobs is None else by_jobs.value(state)
    if value is None:
        value = search.prove_value(state, mover, time_limit)
    if value is None:
        raise CertificateError("the root was not proven within the time limit: no "
                               "certificate (give more time or a larger table)")
    winner = mover if value == 1 else 1 - mover

    def leaf_in_table(s) -> bool:
        return tables is not None and tables.value(s) is not None

    # engine hash -> (part, mirrored): the index itself when no other part is given (a copy
    # of it for each walk grows with the parts: 2.7 ms at 100,000 roots)
    ways = PartWays() if part_ways is None else part_ways
    own = _part_roots(parts, state, winner, ways)
    shared = None if part_index is None else part_index.setdefault(winner, {})
    part_at = shared if shared is not None and not own else {**(shared or {}), **own}

    def take_part(part, position) -> None:
        _claims(part, winner, position)
        roots = _part_roots([part], state, winner, ways)
        part_at.update(roots)
        if shared is not None and shared is not part_at:
            shared.update(roots)

    used: dict[tuple, int] = {}                   # (sha256, mirrored) -> header index
    used_roots: dict[str, str] = {}               # sha256 -> root, of the parts used

    def use(part, mirrored) -> int:
        """The edge mark of a move reaching `part` (its root, or its mirror)."""
        used_roots[part.sha256] = part.root
        return PART_BASE - used.setdefault((part.sha256, mirrored), len(used))

    # walk: a position's temporary id is its place in `walked` (the order positions are
    # first met); its edges go into flat typed arrays, not Python tuples (a 16.7M-position
    # walk took 13.7 GB so): the move, the child's hash, and 0 or the leaf mark (a mark
    # below 0 stands instead of a child)
    seen: set[int] = set()
    loser_depths: dict[int, int] = {}   # the loser's positions met at each depth
    walked, edge_start = array("Q"), array("q")
    waiting: dict[int, object] = {}     # hash -> a position whose part another process makes
    pending = array("q")                # the edges into those positions (marks set last)
    edge_actions, edge_hashes, edge_marks = array("H"), array("Q"), array("i")
    given = moves or {}
    chosen: dict[int, int] = {}     # the winner's move at each of its positions walked
    stops: dict[int, object] = {}       # (plan) hash -> a position the walk stops at
    if plan and not split:
        raise CertificateError("a plan needs split: it lists the parts below the top")
    bar = tqdm(desc="certificate", unit=" pos", disable=not progress)
    stack = [(state, 0)]
    while stack:
        s, depth = stack.pop()
        key = s.hash()
        if key in seen:
            continue
        seen.add(key)
        walked.append(key)
        if max_positions and len(walked) > max_positions:
            raise TreeTooBig(f"the solution tree has more than {max_positions:,} positions",
                             loser_depths)
        if deadline and len(walked) & 1023 == 1 and time.perf_counter() > deadline:
            raise TreeTooBig(f"the solution tree was not walked in time ({len(walked):,} "
                             f"positions so far)", loser_depths)
        if tick is not None and len(walked) & 1023 == 1:
            tick()
        edge_start.append(len(edge_actions))
        bar.update()
        if s.current_player() != winner:
            loser_depths[depth] = loser_depths.get(depth, 0) + 1
        if s.current_player() == winner:
            move = given.get(key)
            if move is not None and move not in s.legal_actions():
                move = None
            if move is None and by_jobs is not None:
                move = by_jobs.winning_move(s, winner)
            try:
                replies = [move if move is not None else
                           winning_move(search, s, winner, time_limit)]
            except NoProvenMove as e:
                raise CertificateError(str(e)) from None
            if plan:
                chosen[key] = replies[0]
        else:
            replies = s.legal_actions()
        for a in replies:
            child = s.child(a)
            edge_actions.append(a)
            if child.is_terminal():
                if child.returns()[winner] != 1.0:
                    raise CertificateError(f"the move {s.action_to_string(a)} at "
                                           f"{s.to_notation()} ends the game lost for the "
                                           f"winner: the proof is wrong")
                edge_hashes.append(0)
                edge_marks.append(GAME_OVER)
                continue
            # a part's root is a position of the loser's to move: the winner's moves above it
            # are chosen once, here, so transposed lines meet in one part (parts rooted
            # where the winner moves each chose their own moves: towers 3 pro/mandatory
            # took 2.5x the positions of the whole certificate so, 1.2x this way)
            h, in_table = child.hash(), leaf_in_table(child)
            new_part = depth + 1 >= split and child.current_player() != winner and \
                not in_table and h not in part_at and h not in seen
            if plan and (new_part or h in part_at or h in stops):
                stops.setdefault(h, child)
                continue
            if new_part and make_part is not None and h not in waiting:
                part = make_part(child, depth + 1)
                if part is None:
                    waiting[h] = child
                else:
                    take_part(part, child)
            edge_hashes.append(h)
            if h in waiting:
                pending.append(len(edge_marks))
                edge_marks.append(0)
            elif h in part_at:
                part, mirrored = part_at[h]
                edge_marks.append(use(part, mirrored))
            elif in_table:
                if _table_value_for(tables, child, winner) != 1:
                    raise CertificateError(f"the endgame table says {child.to_notation()} "
                                           f"is lost for the winner: the proof is wrong")
                edge_marks.append(TABLE_LEAF)
            else:
                edge_marks.append(0)
                stack.append((child, depth + 1))
    bar.close()
    if plan:
        return PartPlan(state.to_notation(), split, len(walked), chosen,
                        list(dict.fromkeys(c.symmetric_hash() for c in stops.values())),
                        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    if waiting:
        for part in make_part.wait(list(waiting.values()), progress=progress):
            take_part(part, None)
        for e in pending:
            h = edge_hashes[e]
            if h not in part_at:
                raise CertificateError(f"no part was made for {waiting[h].to_notation()}")
            part, mirrored = part_at[h]
            edge_marks[e] = use(part, mirrored)
    edge_start.append(len(edge_actions))
    offsets_by_id = np.frombuffer(edge_start, dtype=np.int64)
    targets = np.frombuffer(edge_marks, dtype=np.int32).astype(np.int64)
    inner = targets == 0
    del seen
    targets[inner] = _ids_of(np.frombuffer(walked, dtype=np.uint64),
                             np.frombuffer(edge_hashes, dtype=np.uint64)[inner])
    del walked, edge_hashes
    order = _topological_order(offsets_by_id, targets)
    number = np.empty(len(order), dtype=np.int64)
    number[order] = np.arange(len(order))
    # the edges again, position by position in the new order
    counts = np.diff(offsets_by_id)[order]
    offsets = np.zeros(len(order) + 1, dtype=np.uint32)
    np.cumsum(counts, out=offsets[1:])
    take = np.repeat(offsets_by_id[:-1][order] - offsets[:-1].astype(np.int64), counts) \
        + np.arange(int(offsets[-1]), dtype=np.int64)
    flat_actions = np.frombuffer(edge_actions, dtype=np.uint16)[take]
    flat_children = targets[take]
    flat_children = np.where(flat_children >= 0, number[np.maximum(flat_children, 0)],
                             flat_children)
    wide = int(flat_actions.max(initial=0)) > 255
    # (of the parts used only: part_at holds every part known, 90,000 roots on full
    # pro/mandatory, a third of a small part's walk when gone through for each)
    header = [{"root": used_roots[sha], "winner": winner, "sha256": sha,
               **({"mirror": True} if mirrored else {})}
              for sha, mirrored in sorted(used, key=used.get)]
    info = {"extract_nodes": int(search.nodes - nodes0),
            "extract_s": round(time.perf_counter() - t0, 2),
            "made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if tables is not None:
        info["tables"] = {"k": int(getattr(tables, "k", 0))}
    made = getattr(make_part, "made", 0)     # (by this process: see PartsFolder)
    if made:
        info["parts_made"] = made
    return Certificate(game=state.game_name, variant=dict(sorted(state.variant.items())),
                       root=state.to_notation(), winner=winner, value=float(value),
                       offsets=offsets,
                       actions=flat_actions.astype(np.uint16 if wide else np.uint8),
                       children=flat_children.astype(np.int32), info=info,
                       parts=header)


def _claims(part, winner, position) -> None:
    """Refuse a part made for this walk that claims the other seat wins."""
    if part.winner != winner:
        where = part.root if position is None else position.to_notation()
        raise CertificateError(f"the part made for {where} claims seat {part.winner} wins: "
                               f"the proof is wrong")


def _refs(part) -> tuple:
    """(sha256, mirrored) of each part that `part` (a header or a certificate) stops at."""
    if isinstance(part, PartHeader):
        return tuple(part.refs)
    return tuple((str(p["sha256"]), bool(p.get("mirror", False))) for p in part.parts)


def _in_order(parts) -> list:
    """`parts`, each after the parts among them that it stops at (they form a DAG); the
    headers of one sha256 together, those from its ledger lines first."""
    by_sha: dict = {}
    for part in parts:
        by_sha.setdefault(part.sha256, []).append(part)
    for group in by_sha.values():
        group.sort(key=lambda p: not getattr(p, "from_ledger", False))
    out, placed = [], set()
    for part in parts:
        stack = [(part.sha256, False)]
        while stack:
            sha, expanded = stack.pop()
            if sha in placed:
                continue
            if expanded:
                placed.add(sha)
                out.extend(by_sha[sha])
                continue
            stack.append((sha, True))
            stack.extend((ref, False) for p in by_sha[sha] for ref, _ in _refs(p)
                         if ref in by_sha and ref not in placed)
    return out


BOTH_WAYS = frozenset((False, True))


@dataclass
class PartWays:
    """What a walk knows of the parts it may stop at: `usable`, sha256 -> the orientations
    a walk may stop at that part in (usable_ways); `checked`, sha256 -> {orientation: the
    (sha256, mirrored) parts that orientation's ledger line goes on to}. `strict`: a part
    not recorded is usable no way (a certification knows all its parts); else it is taken
    as a file, both ways (a walk given a part without the parts it stops at). `resolve`:
    called once when a part stops at parts not recorded, to record them (a certification's
    folder, which other processes fill too: a part one of them made may stop at parts this
    one has not met)."""

    strict: bool = False
    usable: dict = field(default_factory=dict)
    checked: dict = field(default_factory=dict)
    resolve: Callable | None = None

    def of(self, sha: str):
        """The orientations the part `sha` is usable in (as `strict` says if unknown)."""
        return self.usable.get(sha, () if self.strict else BOTH_WAYS)

    def learn(self, shas) -> None:
        """Let `resolve` record the parts `shas` if any is unknown (not from inside it)."""
        if self.strict and self.resolve is not None and \
                any(sha not in self.usable for sha in shas):
            resolve, self.resolve = self.resolve, None
            try:
                resolve()
            finally:
                self.resolve = resolve


def usable_ways(part, ways: PartWays) -> tuple:
    """The orientations a walk may stop at `part` in (False: at its root, True: at its
    root's lane mirror), recorded in `ways` (the parts it stops at must be there first).

    A check takes a part from the ledger when the ledger holds it checked that way, and
    then goes on to the parts that line names (a line is written as the part's own tree
    passes, before its parts are checked); else from its file, going down its parts turned
    the way it is (mirrored for its mirror). So an orientation is usable if the ledger holds
    it and every part its line names is usable as named, or, not in the ledger, if the part
    has a file (or is made here) and every part it stops at is usable turned the same way.
    A part known by one ledger line has no file to check the other way: on a new machine,
    the checks of 26,918 parts made in 18 minutes stopped at the first part above one met
    that other way."""
    checked = ways.checked.setdefault(part.sha256, {})
    checked.update({o: tuple(refs) for o, refs in getattr(part, "ledger_refs", ())})
    from_ledger = getattr(part, "from_ledger", False)
    ways.learn(itertools.chain((ref for refs in checked.values() for ref, _ in refs),
                               () if from_ledger else (ref for ref, _ in _refs(part))))

    def usable(refs) -> bool:
        return all(m in ways.of(ref) for ref, m in refs)

    got = set(ways.usable.get(part.sha256, ()))
    for o in (False, True):
        if o in checked:
            verdict = usable(checked[o])
        elif from_ledger:
            continue        # (no file here: what a file's header said, if any, stands)
        else:
            verdict = usable((ref, o != m) for ref, m in _refs(part))
        if verdict:
            got.add(o)
        else:
            got.discard(o)
    ways.usable[part.sha256] = got
    return tuple(sorted(got))


def _part_roots(parts, state, winner, ways: PartWays | None = None) -> dict:
    """{engine hash of a part's root: (the part, False), of its root's lane mirror: (the
    part, True)} for the `parts` that claim `winner` wins, of `state`'s game and variant
    (a part of anything else is refused: it cannot be meant), in the orientations
    usable_ways allows (`ways`: what is known of the parts they stop at; a new record if
    None)."""
    from niwa.ext.registry import parse_position

    ways = PartWays() if ways is None else ways
    out = {}
    for part in _in_order(parts):
        if part.sha256 is None:
            raise CertificateError("a part certificate must be saved (its sha256 names it)")
        if part.game != state.game_name or \
                dict(sorted(part.variant.items())) != dict(sorted(state.variant.items())):
            raise CertificateError(f"the part {part.sha256[:16]}... is of another game or "
                                   f"variant ({part.game} {part.variant})")
        ways_here = usable_ways(part, ways)
        if part.winner == winner:
            if True in ways_here:
                mirror = parse_reference_position(part.root).mirrored().to_notation()
                out.setdefault(parse_position(mirror).hash(), (part, True))
            if False in ways_here:
                out[parse_position(part.root).hash()] = (part, False)
    return out


@dataclass(frozen=True)
class JobCertifier:
    """Certify a two-level proof's job position in the worker, as soon as its job proves
    it (ProofTree's `certify`): the proof is then in the worker's table, so the solution
    tree is read off it with few or no re-proofs, where a certification after the proof
    proves every job position again (about half the proof's nodes). The tree saves the
    certificate in the checkpoint (DIR/parts/job-N.npz); certificate_from_checkpoint then
    stops at it. A new certificate stops at those made before: this process's, and those
    in `folder` (DIR/parts, when the worker sees it: the other workers', earlier
    sessions').

    A solution tree of more than `max_positions` positions is cut into parts (with
    `split`): the certificate stops at one part per position of the loser's to move below
    its root, each certified the same way (cut again if it is too big itself), so every
    certificate and part stays within the bound and a later tree through any of those
    positions stops there. A re-proof longer than `time_limit` seconds, or a certification
    still going after `time_budget` seconds, is given up: the job's position is proved
    again at the end, as without this, but the parts finished by then are kept.
    Called as certify(search, state, run, folder): returns (the certificate or None, the
    parts made for it, children before the certificates that stop at them, the figures for
    the job's row)."""

    # (given up instead of cut at 500,000, 41 of 117 proven jobs of the full pro game were
    # left uncertified, and every later tree through one of their positions was too big)
    max_positions: int = 2_000_000
    time_limit: float = 60.0
    # certifying now pays only while the proof is still in the worker's table; a tree that
    # needs long re-proofs costs as much now as at the end, where it may not be needed at
    # all. On the full pro/mandatory run 95% of the certifications that finished took under
    # 27 s (p90 20 s; 227 of them); with 120 s, 10 of 35 proven jobs on one line gave up
    # and took 56% of the CPU (1,207 of 2,149 s), re-proving their trees
    time_budget: float = 30.0
    split: bool = True

    def __call__(self, search, state, run: str = "", folder=None) -> tuple:
        t0, nodes0 = time.perf_counter(), search.nodes
        if run not in _MADE_HERE:
            _MADE_HERE.clear()
        known = _MADE_HERE.setdefault(run, _KnownParts())
        if folder is not None:
            known.take_in(folder, state)
        made: list = []
        try:
            cert = self._certify(search, state, known, made,
                                 t0 + self.time_budget if self.time_budget else 0.0)
            info = {"certified": cert.nodes}
        except CertificateError as e:
            cert, info = None, {"certify_skipped": str(e)[:200]}
        if made:
            info.update(certify_parts=len(made),
                        certify_part_positions=sum(part.nodes for part in made))
        info.update(certify_nodes=int(search.nodes - nodes0),
                    certify_s=round(time.perf_counter() - t0, 4))
        return cert, made, info

    def _certify(self, search, state, known, made: list, deadline: float,
                 whole: bool = True):
        """The certificate of `state`, cut into parts (appended to `made`) if too big
        (`whole` False: known to be, so cut at once)."""

        def extract(**cut):
            return extract_certificate(search, state, tables=search.exact,
                                       time_limit=self.time_limit,
                                       max_positions=self.max_positions,
                                       part_index=known.index, part_ways=known.ways,
                                       deadline=deadline, **cut)

        def make_part(position, plies=0):
            # a part whose mover is not the root's is the one position below the winner's
            # move(s) at the root: it holds all but a ply or two of a tree found too big
            part = self._certify(search, position, known, made, deadline,
                                 whole=position.current_player() == state.current_player())
            made.append(part)
            return part

        def may_split() -> bool:
            return self.split and not (deadline and time.perf_counter() > deadline)

        cert = None
        if whole:
            try:
                cert = extract()
            except TreeTooBig:
                if not may_split():
                    raise
        elif not may_split():
            raise TreeTooBig("known to be too big")
        if cert is None:
            cert = extract(split=1, make_part=make_part)
        known.add(PartHeader(cert.game, cert.variant, cert.root, cert.winner, cert.seal(),
                             "", refs=_refs(cert)), state)
        return cert


class _KnownParts:
    """The certificates a walk may stop at (a worker's job certificates, or all the parts
    of a certification): {winner: {engine hash of a root or its mirror: (header,
    mirrored)}} (extract_certificate's part_index), with what is in it."""

    def __init__(self):
        self.index: dict = {}
        self.shas: set = set()
        self.files: set = set()
        self.ways = PartWays(strict=True)   # the orientations usable (usable_ways)
        self.seen: set = set()      # (sha256, from its ledger lines) of the headers added

    def add(self, header, state) -> None:
        """Index `header` (the parts it stops at first); a part known both by its ledger
        lines and by its file is indexed for each (the ledger's first: _in_order)."""
        key = (header.sha256, getattr(header, "from_ledger", False))
        if key in self.seen:
            return
        self.seen.add(key)
        self.shas.add(header.sha256)
        self.index.setdefault(header.winner, {}).update(
            _part_roots([header], state, header.winner, self.ways))

    def take_in(self, folder, state) -> None:
        """Add the certificates saved in `folder` since the last look (one whose own parts
        are not known yet waits for the next look)."""
        try:
            names = {p.name for p in Path(folder).glob("*.npz")} - self.files
        except OSError:
            return
        waiting = []
        for name in sorted(names):
            try:
                waiting.append((name, _part_header(Path(folder) / name)))
            except CertificateError:
                self.files.add(name)            # not a certificate: never again
        while waiting:      # parts before the certificates that stop at them
            ready = [(n, h) for n, h in waiting if all(sha in self.shas for sha in h.parts)]
            for name, header in ready:
                self.add(header, state)
                self.files.add(name)
            if not ready:
                return
            waiting = [(n, h) for n, h in waiting if n not in self.files]


_MADE_HERE: dict = {}   # run -> _KnownParts of JobCertifier in this process


@dataclass(frozen=True)
class PartHeader:
    """A saved certificate's header only (what a walk needs to stop at it as a part)."""

    game: str
    variant: dict
    root: str
    winner: int
    sha256: str
    path: str
    refs: tuple = ()            # (sha256, mirrored) of the parts it stops at
    from_ledger: bool = False   # known by its ledger lines alone (its file gone)
    # ((orientation, ((sha256, mirrored), ...)), ...): the parts each of its ledger lines
    # names, as the check of that orientation met them
    ledger_refs: tuple = ()

    @property
    def parts(self) -> list:
        """The sha256 of the parts it stops at, each once."""
        return list(dict.fromkeys(sha for sha, _ in self.refs))

    @property
    def orientations(self) -> tuple:
        """The ways its own record lets a walk stop at it: at its root (False), at its
        root's lane mirror (True); one known by its ledger lines alone only in those
        checked, since no check can take it from a file any more (usable_ways then asks
        whether the parts below allow it)."""
        return tuple(o for o, _ in self.ledger_refs) if self.from_ledger else (False, True)


def part_headers(folder) -> list[PartHeader]:
    """The headers of the certificates in `folder` (none if it is missing), without their
    arrays: a checkpoint's job certificates may be thousands. One that stops at a part not
    in the folder (its maker's file never saved: a run killed meanwhile) is left out."""
    out = [_part_header(path) for path in sorted(Path(folder).glob("*.npz"))]
    while True:
        have = {h.sha256 for h in out}
        whole = [h for h in out if all(sha in have for sha in h.parts)]
        if len(whole) == len(out):
            return out
        out = whole


def _header_meta(path):
    """The header (meta) of the certificate file at `path`, without its arrays."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return json.loads(str(z["meta"]))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise CertificateError(f"{path} is not a readable certificate "
                               f"({file_error_reason(e)})") from None


def _part_header(path) -> PartHeader:
    meta = _header_meta(path)
    try:
        parts = meta.get("parts", [])
        return PartHeader(str(meta["game"]), dict(meta["variant"]), str(meta["root"]),
                          int(meta["winner"]), str(meta["sha256"]), str(path),
                          refs=tuple((str(p["sha256"]), bool(p.get("mirror", False)))
                                     for p in parts))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise CertificateError(f"{path} is not a readable certificate "
                               f"({file_error_reason(e)})") from None


class PartsFolder:
    """The parts of a split certification (extract_certificate's make_part), saved in one
    folder that several processes may fill at once, on one machine or several sharing the
    folder: a part is made by the process that creates its lock file first
    (part-<key>.lock, O_EXCL) and saved as part-<key>.npz, <key> the position's symmetric
    hash, so a position and its lane mirror are one part. A process that finds the lock
    taken leaves that part to its holder and goes on (make returns None); `wait` then
    takes it from the folder when it is saved, or makes it after all if the holder died
    or left no part. A holder touches its lock every BEAT_S seconds while it works; a lock
    is stale when its process is gone (this host) or it has not been touched for STALE_S
    seconds (any host: a machine that died; three hours). `extract(position, plies)` makes
    a part (`plies`: below the walk's root that met it, None when taken over in wait)."""

    POLL_S = 1.0
    BEAT_S = 60.0
    # generous: a re-proof inside a part holds the GIL (the beat waits) for many minutes;
    # a lock wrongly taken over costs a part made twice, never a wrong one
    STALE_S = 3 * 3600.0

    def __init__(self, folder, extract):
        self.folder, self.extract = Path(folder), extract
        self.made = 0       # parts this process extracted (not those it took from others)

    def _paths(self, position) -> tuple[Path, Path]:
        path = self.folder / part_file_name(position.symmetric_hash())
        return path, path.with_suffix(".lock")

    def __call__(self, position, plies=None):
        return self.make(position, plies)

    def make(self, position, plies=None):
        """The part of `position`, made and saved here, or the header of the one already in
        the folder (a walk needs no more to stop at it; a part's arrays can be 40 MB);
        None while another process holds its lock."""
        path, lock = self._paths(position)
        if path.exists():
            return _part_header(path)
        if not self._lock(lock):
            return None
        import threading

        done = threading.Event()

        def beat():
            while not done.wait(self.BEAT_S):
                try:
                    os.utime(lock)
                except OSError:
                    return

        beating = threading.Thread(target=beat, daemon=True)
        beating.start()
        try:
            if path.exists():           # saved between our look and our lock
                return _part_header(path)
            part = self.extract(position, plies)
            part.save(path)
            self.made += 1
            return part
        finally:
            done.set()
            beating.join()
            lock.unlink(missing_ok=True)

    def wait(self, positions, progress: bool = False) -> list:
        """The parts of `positions` that other processes were making, as each is saved."""
        out, left = [], list(positions)
        if progress:
            print(f"waiting for {len(left)} part(s) other processes are making in "
                  f"{self.folder}", file=sys.stderr, flush=True)
        while left:
            still = []
            for position in left:
                path, lock = self._paths(position)
                if path.exists():
                    out.append(_part_header(path))
                elif not lock.exists() or self._stale(lock):
                    part = self.make(position)
                    if part is None:
                        still.append(position)
                    else:
                        out.append(part)
                else:
                    still.append(position)
            left = still
            if left:
                time.sleep(self.POLL_S)
        return out

    def _lock(self, lock: Path) -> bool:
        import socket

        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if not self._stale(lock):
                    return False
                lock.unlink(missing_ok=True)
                continue
            with os.fdopen(fd, "w") as f:
                f.write(f"{socket.gethostname()} {os.getpid()}\n")
            return True
        return False

    def _stale(self, lock: Path) -> bool:
        """Whether a lock's holder is gone: not touched for STALE_S seconds, a process of
        this host that no longer runs, or a lock still empty a minute after it was made."""
        import socket

        try:
            age = time.time() - lock.stat().st_mtime
            text = lock.read_text()
        except OSError:
            return False
        if age > self.STALE_S:
            return True
        try:
            host, pid = text.split()
            pid = int(pid)
        except ValueError:
            # written in the microseconds after its creation, or never: its maker died
            return age > 60.0
        if host != socket.gethostname():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False


class PartCuts:
    """Where the parts found too big were cut, one JSON line each (the position's
    symmetric hash, its root, the bound its walk passed and the depth chosen), so that a
    certification run again (after a stop, or on a new machine) cuts such a part at once
    instead of walking it to the bound first: up to max_part_positions positions whose
    winner's moves are proved again, 20 minutes and more a part on full pro/mandatory,
    paid again at each level of a chain of cuts. It is only a choice of where to split: a
    line that no longer fits changes the parts' sizes, never what is certified. A line a
    kill cut short is ignored (that part is walked to the bound again).

    The same file keeps the plan of each cut part's top (PartPlan: the winner's moves
    above the cut and the parts below it), written before its parts are made: a run again
    walks the top with those moves, so it meets the parts already saved, not others its
    own table would choose; and the plans say how much of each cut part is made. A move
    read back is still only a claim: the walk below it and the checker hold it to the
    rules (a wrong one fails the extraction or the check, never passes)."""

    def __init__(self, path):
        self.path = Path(path)
        self._read = 0      # the bytes of the file already read into _by_key
        self._by_key: dict[str, list[dict]] = {}

    @staticmethod
    def _key(position) -> str:
        return part_key(position.symmetric_hash())

    def depth(self, position, bound: int) -> int | None:
        """The depth to cut `position`'s part at, if a walk of at least `bound` positions
        (so one that `bound` also stops) found it too big; else None."""
        found = None
        for row in self.rows(self._key(position)):
            try:
                if int(row["bound"]) >= bound >= 1:
                    found = int(row["depth"])
            except (ValueError, KeyError, TypeError):
                continue
        return found if found is not None and found >= 1 else None

    def plan(self, position, depth: int) -> PartPlan | None:
        """The first plan kept for `position`'s top cut `depth` plies down (the first, so
        that processes that planned it at once all walk the one whose parts are made)."""
        root = position.to_notation()
        for row in self.rows(self._key(position)):
            plan = self._plan_of(row)
            if plan is not None and plan.root == root and plan.depth == depth:
                return plan
        return None

    def plans(self) -> dict[int, PartPlan]:
        """The first plan kept for each top (symmetric key -> PartPlan)."""
        self.rows("")
        out = {}
        for key, rows in self._by_key.items():
            plan = next((p for p in map(self._plan_of, rows) if p is not None), None)
            if plan is not None:
                out[int(key, 16)] = plan
        return out

    @staticmethod
    def _plan_of(row: dict) -> PartPlan | None:
        try:
            return PartPlan.from_json(str(row["root"]), row["plan"])
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def add_plan(self, position, plan: PartPlan) -> None:
        self._append({"key": self._key(position), "root": plan.root,
                      "plan": plan.to_json()})

    def rows(self, key: str) -> list[dict]:
        """The lines kept for the part `key`, in the file's order. The file is read on from
        where the last look stopped (other processes append to it: appended_lines)."""
        lines, self._read, anew = appended_lines(self.path, self._read, "the part cuts")
        if anew:
            self._by_key = {}
        for line in lines:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("key"), str):
                self._by_key.setdefault(row["key"], []).append(row)
        return self._by_key.get(key, [])

    def add(self, position, bound: int, depth: int) -> None:
        self._append({"key": self._key(position), "root": position.to_notation(),
                      "bound": int(bound), "depth": int(depth)})

    def _append(self, row: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        append_json_line(self.path, row, "the part cuts")


def appended_lines(path: Path, read: int, what: str) -> tuple[list[str], int, bool]:
    """The whole lines of the append-only file `path` past its first `read` bytes (a last
    line not ended yet is left for the next look), the bytes read in all now, and whether
    the file was replaced (shorter than `read`: read from its start). A missing file has
    no lines. `what`: the file, as an error names it. (Read whole at each look, the 6.3 MB
    of cut plans cost 0.1 s a part made, and a 4.5 MB ledger 0.1 s a part checked.)"""
    try:
        anew = path.stat().st_size < read
        with open(path, "rb") as f:
            f.seek(0 if anew else read)
            new = f.read()
    except FileNotFoundError:
        return [], read, False
    except OSError as e:
        raise CertificateError(f"cannot read {what} {path}: {e.strerror}") from None
    end = new.rfind(b"\n") + 1
    return new[:end].decode(errors="replace").splitlines(), (0 if anew else read) + end, anew


def append_json_line(path: Path, row: dict, what: str) -> None:
    """Append `row` to the JSON-lines file `path` as one line, on disk when this returns,
    in one write in append mode (so lines of several processes do not mix), after a line
    break if the last line was cut short by a kill (that line is then skipped on reading,
    and this one is not lost with it). `what`: the file, as an error names it."""
    try:
        with open(path, "ab+") as f:
            end = f.seek(0, os.SEEK_END)
            torn = end > 0 and f.seek(end - 1) >= 0 and f.read(1) != b"\n"
            f.write((("\n" if torn else "") + json.dumps(row) + "\n").encode())
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise CertificateError(f"cannot write {what} {path}: {e.strerror}") from None


def certificate_from_checkpoint(directory, tt_mb: float = 1024, tables="checkpoint",
                                time_limit: float = 0.0, progress: bool = False,
                                move: str | None = None, parts=(), split: int = 0,
                                parts_dir=None, huge_pages: bool = False,
                                workers: int = 1, parts_out=None,
                                shared_table=None, ledger=None,
                                max_part_positions: int = 0, cuts=None,
                                keep_proofs=None, keep_every_s: float = 600.0,
                                keep_rows: int = 20_000_000) -> Certificate:
    """The certificate of a finished two-level proof (niwa.solver.proof_tree) kept in the
    checkpoint folder `directory`. The winner's moves in the top tree come from its jobs'
    proofs (proof_tree.proven_jobs); below them the jobs' positions the solution tree goes
    through are proved again by one df-pn search of `tt_mb` MB, its table first given the
    proofs the checkpoint kept (proven.npy). `tables`: an endgame table folder (or loaded
    table; "checkpoint": the one the proof used, None: none), as in extract_certificate.
    `move`: a first move, or a line of moves from the root ("W2-a2 W4-4"), whose position
    the proof has decided, though the root may still be open; the certificate is then of
    that position. `parts`: certificates to stop at (see extract_certificate). `split`:
    certify every position `split` plies down (or the first below it with the loser to
    move: see extract_certificate) as a part of its own, saved in `parts_dir`
    as it is made (part-<hash>.npz), and the top over them; the certificates already in
    `parts_dir` are used, not made again, so a certification that stops resumes there.
    The checkpoint is only read, so this works beside the run that writes it. `huge_pages`:
    the df-pn table on 2 MB pages (ProofSearch's). `workers` (with `split`): so many
    processes make the parts at once, sharing `parts_dir` (PartsFolder) and one df-pn
    table of `workers` x `tt_mb` (a SharedProofTable: what one proves again, the others
    find; a transposition between two parts is proved once); the helpers stop when this
    one has its certificate. `shared_table`: that table, in a helper. The
    certificates the proof's jobs wrote (DIR/parts, see JobCertifier) are parts to stop at
    as well; those the certificate (or its split parts) stops at are copied into
    `parts_out` (default: `parts_dir`), where the checker must find them with the rest.
    `ledger`: a check ledger whose passed certificates are parts to stop at too, their
    files gone or not (ledger_parts): a certification kept across machines by its ledger
    alone makes only what the ledger lacks. `max_part_positions` (with `split`): a part
    whose walk passes so many positions is cut instead, into parts at the depth cut_depth
    picks from that walk (saved as each is made, and cut again if need be), so that no
    part takes longer than a machine may live (0: no bound). `cuts`: the file where those
    cuts are kept (PartCuts; default `parts_dir`/cuts.jsonl), so that a run again cuts
    such a part at once instead of walking it to the bound first. `keep_proofs`: a folder
    where the costliest proofs of the df-pn table are kept (up to `keep_rows`, every
    `keep_every_s` seconds as parts are made) and from which they are loaded at the start
    (_KeptProofs): a certification stopped and run again re-proves little."""
    from niwa.solver.proof_tree import LineError, line_actions, look_at_checkpoint, proven_jobs

    if ledger is not None:
        parts = [*parts, *ledger_parts(ledger)]

    tree, result = look_at_checkpoint(directory)
    state = tree.root_state
    expected = result.value
    jobs = text = None
    if move is not None:
        try:
            line = line_actions(state, move)
        except LineError as e:
            raise CertificateError(f"{directory}: {e}") from None
        text = " ".join(move.replace(",", " ").split()) if isinstance(move, str) else \
            str(move)
        child = state.clone()
        for a in line:
            child.apply(a)
        if child.is_terminal():
            raise CertificateError(f"the game is over after {text}: nothing to certify")
        jobs = proven_jobs(directory, state)
        decided = _JobProofs(*jobs).value(child)
        if decided is None:
            node = tree.node_at(line)
            numbers = "" if node is None else f" (pn {node.pn}, dn {node.dn} for its mover)"
            raise CertificateError(f"the position after {text} is not decided yet in "
                                   f"{directory}{numbers}: no certificate")
        expected = float(decided)       # for the player to move there
        root, state = state, child
    elif not result.proven:
        raise CertificateError(f"the proof in {directory} is not finished (root pn "
                               f"{result.root_pn}, dn {result.root_dn}): no certificate")
    else:
        root = state
    if tables == "checkpoint":
        tables = tree.tables
    helpers = []
    if workers > 1:
        if not split:
            raise CertificateError("several workers need split: they share the parts")
        from niwa.solver.proof import SharedProofTable

        # mapped before the helpers fork, so that they all work in it
        shared_table = SharedProofTable(tt_mb * workers, huge_pages=huge_pages)
        helpers = _part_helpers(workers - 1, directory, dict(
            tt_mb=tt_mb, tables=tables, time_limit=time_limit, move=move, parts=parts,
            split=split, parts_dir=parts_dir, huge_pages=huge_pages, parts_out=parts_out,
            shared_table=shared_table, max_part_positions=max_part_positions, cuts=cuts))
    try:
        return _from_checkpoint(directory, result, root, state, expected, jobs, text, tt_mb,
                                tables, time_limit, progress, parts, split, parts_dir,
                                huge_pages, parts_out, shared_table, max_part_positions,
                                cuts, None if keep_proofs is None else
                                (keep_proofs, keep_every_s, keep_rows))
    finally:
        _stop(helpers)


def _part_helpers(count: int, directory, settings: dict) -> list:
    """`count` forked processes that run the same split certification (their parts go into
    the shared folder; their own tops are thrown away), each dying with this process. A
    helper's walk picks the winner's moves as this one's does where the top tree's jobs
    decide them; below, from its own table, so it may make a part this walk never needs."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    helpers = [ctx.Process(target=_part_helper, args=(os.getpid(), directory, settings),
                           daemon=True) for _ in range(count)]
    for h in helpers:
        h.start()
    return helpers


def _part_helper(parent: int, directory, settings: dict) -> None:
    import signal

    from niwa.solver.lifetime import die_with_parent, own_bar_lock

    own_bar_lock()      # (stopped by the parent, maybe mid-bar: see own_bar_lock)
    die_with_parent(parent)
    # stopped by the parent: let go of the lock of the part in hand (the finally clauses)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        certificate_from_checkpoint(directory, **settings)
    except Exception:
        pass        # whatever a helper could not make, the parent makes


def _stop(helpers) -> None:
    for h in helpers:
        if h.is_alive():
            h.terminate()
    for h in helpers:
        h.join(5)
        if h.is_alive():
            h.kill()
            h.join()


def _from_checkpoint(directory, result, root, state, expected, jobs, line, tt_mb, tables,
                     time_limit, progress, parts, split, parts_dir, huge_pages,
                     parts_out=None, shared_table=None,
                     max_part_positions: int = 0, cuts=None, keep=None) -> Certificate:
    """certificate_from_checkpoint's certification itself, in this process (`jobs`: the
    jobs' proofs if already read; `line`: the --move line's text, or None for the root;
    `keep`: (folder, seconds, rows) of _KeptProofs, or None: the helpers keep none, as
    they share this process's table)."""
    from niwa.solver.proof import ProofSearch
    from niwa.solver.proof_tree import JOB_PARTS, proven_jobs, read_proven
    from niwa.solver.tables import resolve_tables

    table = resolve_tables(state, tables)
    search = ProofSearch(tt_mb=tt_mb, tables=table, huge_pages=huge_pages) \
        if shared_table is None else ProofSearch(tables=table, shared=shared_table)
    kept = read_proven(directory, search, root)
    if kept is not None:
        search.load_proven(kept)
    keeper = None if keep is None else _KeptProofs(search, root, *keep)
    t0 = time.perf_counter()
    if jobs is None:
        jobs = proven_jobs(directory, root)
    job_parts = part_headers(Path(directory) / JOB_PARTS)
    bring = _JobPartsCopier(job_parts, parts_out or parts_dir)
    make_part = None
    if split:
        if parts_dir is None:
            raise CertificateError("split needs a folder for its parts")
        folder = Path(parts_dir)
        folder.mkdir(parents=True, exist_ok=True)
        # the parts an earlier certification left there: their headers are all the walk
        # needs to stop at them (loading each whole would hold all their arrays at once)
        # (first: a part whose file is here may be met either way, though its ledger
        # lines hold only the orientations checked so far)
        parts = [*part_headers(folder), *parts]
    # every part indexed once for all the walks (each walk adds those it is given)
    known = _KnownParts()
    for part in _in_order([*parts, *job_parts]):
        known.add(part, state)
    if split:
        # a part another process made may stop at parts this one has not met: read them
        # from the folder then (the files read above are not read again)
        known.files |= {Path(p.path).name for p in parts
                        if p.path and Path(p.path).parent == folder}
        known.ways.resolve = lambda: known.take_in(folder, state)
        known_cuts = PartCuts(folder / "cuts.jsonl" if cuts is None else cuts)
        # the plies from the top to the root of each walk in progress (they nest: a part
        # is made inside the walk that met it), None where not known
        walk_plies: list = [0]

        def plan_for(position, depth, walk) -> PartPlan:
            """The plan of `position`'s top cut `depth` down: the one kept, else made."""
            plan = known_cuts.plan(position, depth)
            if plan is None:
                known_cuts.add_plan(position, walk(split=depth, plan=True))
                plan = known_cuts.plan(position, depth)     # (the first kept, if two)
            return plan

        def extract_part(position, plies=None):
            below = walk_plies[-1]
            walk_plies.append(None if plies is None or below is None else below + plies)
            try:
                part = cut_or_whole(position)
            finally:
                at_plies = walk_plies.pop()
            if at_plies is not None:
                part.info["plies_from_top"] = at_plies
            part.info.update(proof="two-level", proof_root=root.to_notation())
            bring(part)
            if keeper is not None:
                keeper.tick()
            return part

        def cut_or_whole(position):
            def walk(**cut):
                # (the keeper ticks inside the walk too: the walk of one big part, made
                # whole or cut, ran 20 minutes and more between two parts' ends)
                return extract_certificate(search, position, tables=table,
                                           time_limit=time_limit, progress=progress,
                                           jobs=jobs, part_index=known.index,
                                           part_ways=known.ways,
                                           tick=None if keeper is None else keeper.tick,
                                           **cut)
            part = depths = None
            at = known_cuts.depth(position, max_part_positions) if max_part_positions \
                else None
            recalled = at is not None
            if not recalled:
                try:
                    part = walk(max_positions=max_part_positions)
                except TreeTooBig as e:
                    depths = e.loser_depths
            if part is None:
                # cut (outside the except clause: the exception's traceback would keep the
                # abandoned walk's memory alive through every part made below) where the
                # walk met enough of the loser's positions: its proofs stay in the table,
                # so the walk again is mostly lookups; the parts below are saved (and can
                # be checked) as each is made
                if not recalled:
                    at = cut_depth(depths)
                    known_cuts.add(position, max_part_positions, at)
                part = walk(split=at, make_part=make_part,
                            moves=plan_for(position, at, walk).moves)
                part.info.update(cut_at_positions=max_part_positions, cut_depth=at)
                if recalled:
                    part.info["cut_recalled"] = True
            return part

        make_part = PartsFolder(folder, extract_part)

    def walk_top(**how):
        return extract_certificate(search, state, tables=table, time_limit=time_limit,
                                   progress=progress, part_index=known.index, jobs=jobs,
                                   part_ways=known.ways, **how)

    # the top too is walked by its plan: where no job decides the winner's move, every
    # process (and every run again) then makes the same parts
    certificate = walk_top(split=split, make_part=make_part,
                           moves=plan_for(state, split, walk_top).moves if split else None)
    bring(certificate)
    if certificate.value != expected:
        raise CertificateError(f"the certificate's value {certificate.value} is not the "
                               f"proof's {expected}: the proof is wrong")
    if line is not None:
        certificate.info.update(line=line, proof_root=root.to_notation())
    certificate.info.update(proof="two-level", proof_jobs=result.jobs,
                            proof_nodes=int(result.nodes), proof_cpu_s=round(result.cpu_s, 1),
                            kept_proofs=0 if kept is None else len(kept), tt_mb=float(tt_mb),
                            extract_s=round(time.perf_counter() - t0, 2))
    if keeper is not None:
        certificate.info.update(kept_proofs_loaded=keeper.loaded, kept_proofs_saves=keeper.saves)
    return certificate


class _KeptProofs:
    """The costliest proofs of a certification's df-pn table, kept in a folder
    (proven.npy and proven.json, as a proof checkpoint keeps its own: write_proven) every
    `every_s` seconds as parts are made, and loaded into the table at the start. The table
    lives only as long as its process, and a certification stopped and run again (a
    restart, the next session on the same machine) proved again from an empty table the
    winner's moves of the parts it was making: many minutes a restart on full
    pro/mandatory. Kept while the helpers write the table: a slot caught mid-write reads
    back as a scrambled key, a wrong proof only by a 64-bit coincidence (the risk of every
    table key), and every certificate is checked by the reference rules anyway. Rows kept
    for another root are not loaded (read_proven)."""

    min_work = KEEP_MIN_WORK        # the expansions a proof kept cost at least

    def __init__(self, search, root, folder, every_s: float, rows: int):
        from niwa.solver.proof_tree import CheckpointError, read_proven

        self.search, self.root, self.folder = search, root, Path(folder)
        self.every_s, self.rows = float(every_s), int(rows)
        self.saves = self.loaded = 0
        try:
            found = read_proven(self.folder, search, root) if self.folder.is_dir() else None
            if found is not None:
                self.loaded = int(search.load_proven(found))
        except (CheckpointError, ValueError) as e:
            raise CertificateError(f"the kept proofs in {self.folder} do not read ({e})") \
                from None
        self.last = time.monotonic()

    def tick(self) -> None:
        """Keep the table's proofs if the last were kept `every_s` seconds ago or more."""
        if time.monotonic() - self.last >= self.every_s:
            self.save()

    def save(self) -> None:
        from niwa.solver.proof_tree import write_proven

        self.folder.mkdir(parents=True, exist_ok=True)
        rows = self.search.proven_entries(self.min_work, self.rows)
        write_proven(self.folder, rows, self.search.table_key(self.root),
                     self.root.to_notation(), self.min_work)
        self.saves += 1
        self.last = time.monotonic()


class _JobPartsCopier:
    """Copies the job certificates (PartHeader) a certificate stops at into `folder`."""

    def __init__(self, job_parts, folder):
        self.by_sha = {h.sha256: h for h in job_parts}
        self.folder = None if folder is None else Path(folder)

    def __call__(self, cert) -> None:
        """Copy the job certificates `cert` stops at, and those they stop at in turn."""
        import shutil

        todo = [ref["sha256"] for ref in cert.parts if ref["sha256"] in self.by_sha]
        if todo and self.folder is None:
            raise CertificateError("the certificate stops at job certificates: give a "
                                   "folder to copy them into (parts_out)")
        if todo:
            cert.info["job_parts"] = len(set(todo))
        done = set()
        while todo:
            sha = todo.pop()
            if sha in done:
                continue
            done.add(sha)
            h = self.by_sha[sha]
            dest = self.folder / Path(h.path).name
            if not dest.exists():
                self.folder.mkdir(parents=True, exist_ok=True)
                tmp = dest.with_name(dest.name + ".tmp")
                shutil.copyfile(h.path, tmp)
                tmp.replace(dest)
            todo.extend(x for x in h.parts if x in self.by_sha)


class _JobProofs:
    """The proofs of a two-level search's jobs (proof_tree.proven_jobs), and what follows
    from them in its top tree: a position is won for W if a job proved it, or, among the
    top tree's positions, if W moves and one move reaches a won position or the other
    player moves and every move does. Each is given the nodes its jobs took, so that the
    winner's move chosen is the one whose proof was the smallest (as proof_moves.winning_move
    does with the table)."""

    def __init__(self, proven: dict, tree: set):
        self.proven, self.tree = proven, tree
        self.memo: dict = {}

    def value(self, s):
        """1 / 0 for the player to move in `s` if the jobs prove it, else None."""
        if s.is_terminal():
            return None
        me = s.current_player()
        for pov, v in ((me, 1), (1 - me, 0)):
            if self.cost(s, pov) is not None:
                return v
        return None

    def winning_move(self, s, winner):
        """The winner's move at `s` whose proof by the jobs is the smallest, else None."""
        best = None
        for a in s.legal_actions():
            c = s.child(a)
            cost = self.cost(c, winner)
            if cost is not None and (best is None or cost < best[0]):
                best = (cost, a)
        return None if best is None else best[1]

    def cost(self, s, winner):
        """The nodes of the jobs that prove `s` won for `winner`, or None if they do not."""
        if s.is_terminal():
            return 0 if s.returns()[winner] == 1.0 else None
        key = (s.symmetric_hash(), s.current_player())
        found = self.proven.get(key)
        if found is not None:
            won = found[0] if s.current_player() == winner else 1 - found[0]
            return found[1] if won else None
        if key not in self.tree:
            return None
        # only the top tree's positions are remembered: the walk asks about every child of
        # every winner's position, and remembering those too held ~200 bytes for each of
        # hundreds of millions (a 24 GB process, killed, on full pro/mandatory)
        memo_key = key + (winner,)
        if memo_key in self.memo:
            return self.memo[memo_key]
        self.memo[memo_key] = None          # (Lotus cannot cycle; this only guards)
        if s.current_player() == winner:
            costs = [c for c in (self.cost(s.child(a), winner) for a in s.legal_actions())
                     if c is not None]
            cost = min(costs) if costs else None
        else:
            cost = 0
            for a in s.legal_actions():
                c = self.cost(s.child(a), winner)
                if c is None:
                    cost = None
                    break
                cost += c
        self.memo[memo_key] = cost
        return cost


def _table_value_for(tables, state, pov) -> int:
    v = tables.value(state)
    return int(v) if state.current_player() == pov else 1 - int(v)


def _ids_of(walked: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    """The temporary ids of `hashes`, every one in `walked` (the position hashes in id
    order), looked up by sorting. The hashes are looked up in sorted order: a binary search
    then starts where the last one ended, and the lookups of a 3M-position part took 2.5x
    less time than in edge order (cache misses), sort included."""
    by_key = np.argsort(walked)
    order = np.argsort(hashes)
    ids = np.empty(len(hashes), dtype=by_key.dtype)
    ids[order] = by_key[np.searchsorted(walked[by_key], hashes[order])]
    return ids


def _topological_order(offsets, targets) -> np.ndarray:
    """Temporary ids in an order where every parent comes before its children (reverse
    postorder of an iterative depth-first walk from the root, id 0). The edges of id t
    are targets[offsets[t]:offsets[t + 1]]: a child's id, or a leaf mark below 0."""
    offsets, targets = array("q", offsets.tobytes()), array("q", targets.tobytes())
    post, state = array("q"), bytearray(len(offsets) - 1)   # 0 new, 1 on the stack, 2 done
    stack = [(0, offsets[0])]
    state[0] = 1
    while stack:
        tid, i = stack.pop()
        end = offsets[tid + 1]
        while i < end and (targets[i] < 0 or state[targets[i]]):
            if targets[i] >= 0 and state[targets[i]] == 1:
                raise CertificateError("the solution graph has a cycle")
            i += 1
        if i < end:
            stack.append((tid, i + 1))
            child = targets[i]
            state[child] = 1
            stack.append((child, offsets[child]))
        else:
            state[tid] = 2
            post.append(tid)
    return np.frombuffer(post, dtype=np.int64)[::-1].copy()


# ---- checking (reference rules only) -----------------------------------------------------
@dataclass(frozen=True)
class CheckReport:
    """What check_certificate verified."""

    nodes: int                  # positions checked (each once)
    winner_nodes: int           # ... where the winner's one move was checked legal
    loser_nodes: int            # ... where every legal reply was checked present
    edges: int
    game_over_leaves: int       # moves checked to end the game won by the winner
    table_leaves: int           # leaf positions solved again by the reference rules
    leaf_positions: int         # positions that re-solving searched
    time_s: float
    part_leaves: int = 0        # moves checked to reach the root of a part
    parts: int = 0              # part certificates checked (theirs too), each once
    part_nodes: int = 0         # ... and their positions
    leaf_order: str = ""        # the table that ordered the leaves' search ("": none)
    parts_from_ledger: int = 0  # parts taken as checked from the ledger of an earlier run


    def summary(self) -> str:
        text = (f"{self.nodes:,} positions ({self.winner_nodes:,} winner moves checked "
                f"legal, {self.loser_nodes:,} positions with every reply present), "
                f"{self.edges:,} moves, {self.game_over_leaves:,} game-over leaves")
        if self.table_leaves:
            text += (f", {self.table_leaves:,} table leaves solved again "
                     f"({self.leaf_positions:,} positions searched"
                     f"{', moves ordered by ' + self.leaf_order if self.leaf_order else ''})")
        if self.part_leaves:
            text += (f", {self.part_leaves:,} moves into {self.parts:,} part certificates "
                     f"checked the same way ({self.part_nodes:,} positions")
            if self.parts_from_ledger:
                text += f"; {self.parts_from_ledger:,} of them checked by an earlier run"
            text += ")"
        return text + f" in {self.time_s:.2f} s"


def parse_reference_position(text: str):
    """A Lotus reference state (niwa.ext.reference.lotus) from its notation: the reference
    has no parser of its own, so this one fills its fields and then demands that the
    reference writes the same notation back and that every colour has all its stones.

    >>> s = parse_reference_position("lotus players=2 rule=pro trampoline=optional; "
    ...                              "track -; start WWWW WWW WW W BBBB BBB BB B; "
    ...                              "goal W:0 B:0; turn W opening=first")
    >>> len(s.legal_actions()), s.current_player()
    (7, 0)
    """
    from niwa.ext.reference.lotus import COLOURS, LotusOracle

    def bad(what):
        return CertificateError(f"root position: {what} in {text!r}")

    parts = [p.strip() for p in text.split(";")]
    if len(parts) != 5 or not parts[0].startswith("lotus") or not parts[1].startswith("track ") \
            or not parts[2].startswith("start ") or not parts[3].startswith("goal ") \
            or not parts[4].startswith("turn "):
        raise bad("expected 'lotus ...; track ...; start ...; goal ...; turn ...'")
    options = {}
    for word in parts[0].split()[1:]:
        key, sep, val = word.partition("=")
        if not sep:
            raise bad(f"option {word!r} is not KEY=VALUE")
        options[key] = val
    try:
        o = LotusOracle(**options)
    except (TypeError, ValueError) as e:
        raise bad(f"variant ({e})") from None
    colour = {c: i for i, c in enumerate(COLOURS[:o.players])}
    names = {(str(sp[1]) if sp[0] == "s" else f"{sp[0]}{sp[1]}"): sp for sp in o.spaces}
    o.stacks = {sp: [] for sp in o.spaces}
    track = parts[1][len("track "):].split()
    for item in ([] if track == ["-"] else track):
        name, _, stones = item.partition(":")
        if name not in names or not stones or any(c not in colour for c in stones):
            raise bad(f"track entry {item!r}")
        o.stacks[names[name]] = [colour[c] for c in stones]
    o.start = [[] for _ in range(o.players)]
    start = parts[2][len("start "):].split()
    for tower in ([] if start == ["-"] else start):
        if tower[0] not in colour or set(tower) != {tower[0]}:
            raise bad(f"start tower {tower!r}")
        o.start[colour[tower[0]]].append(len(tower))
    goal = parts[3][len("goal "):].split()
    if len(goal) != o.players:
        raise bad("goal counts")
    for p, item in enumerate(goal):
        m = re.fullmatch(r"([A-Z]):(\d+)", item)
        if not m or colour.get(m.group(1)) != p:
            raise bad(f"goal entry {item!r}")
        o.goal[p] = int(m.group(2))
    turn = parts[4].split()
    if len(turn) not in (2, 3) or turn[1] not in colour:
        raise bad("turn")
    o.to_move = colour[turn[1]]
    o.opening = "done"
    if len(turn) == 3:
        if turn[2] not in ("opening=first", "opening=second"):
            raise bad(f"turn option {turn[2]!r}")
        o.opening = turn[2].split("=")[1]
    if o.stone_counts() != [o.stones_each] * o.players:
        raise bad(f"stone counts {o.stone_counts()} (each colour has {o.stones_each})")
    if o.to_notation() != text:
        raise bad("the reference rules write it back differently "
                  f"({o.to_notation()!r}); certificates hold the canonical notation")
    return o


# The reference state's fields, and which of them apply() changes in place. Its own
# clone() is a deepcopy (~0.3 ms, most of a check's time); this copies just the mutable
# containers, and refuses to run if the reference gains a field it does not know about.
_ORACLE_FIELDS = {"players", "pro", "mandatory", "lane", "shared", "route", "tramp",
                  "variant", "stones_each", "spaces", "stacks", "start", "goal", "to_move",
                  "opening"}


def _clone(o):
    c = object.__new__(type(o))         # (copy.copy's generic protocol took 40% longer)
    c.__dict__.update(o.__dict__)
    stacks = o.stacks                   # (map and zip: 1.2x a dict comprehension)
    c.stacks = dict(zip(stacks, map(list.copy, stacks.values()), strict=True))
    c.start = list(map(list.copy, o.start))
    c.goal = o.goal[:]
    return c


_OPENINGS = {"first": 0, "second": 1, "done": 2}
_END = 255                  # closes each list in a key (its values are small counts)


def _position_key(o) -> bytes:
    """Everything that makes a reference position (what its notation shows), as bytes:
    each stack's stones, each player's start towers (sorted) and the goal counts, each list
    closed by _END, then the mover and the opening step. A tuple of tuples took about
    1.6 KB a position in the leaf solver's memo (a 30M-position part of full pro/mandatory
    needed over 12M of them); this takes about 70 bytes."""
    out = []
    for sp in o.spaces:
        out += o.stacks[sp]
        out.append(_END)
    for towers in o.start:
        out += sorted(towers)
        out.append(_END)
    out += o.goal
    out += (_END, o.to_move, _OPENINGS[o.opening])
    return bytes(out)     # (seats and counts, all far below _END)


class _LeafSolver:
    """Exact value of reference positions by plain memoised minimax (for table leaves).
    `guide` (a _TableGuide or None) only orders the moves tried at each position, or only
    at those of seat `favoured` if given: the seat the leaves are claimed won for, whose
    positions are where a good first move saves work (at the other seat's, every move is
    tried when the claim is right, in any order; ordering them was half of a check's time
    on full pro/mandatory)."""

    def __init__(self, budget: int, guide=None, favoured: int | None = None,
                 memo: dict[bytes, int] | None = None):
        # `memo`: the values solved before, by this process's searches of the same
        # variant (LeafMemo); `searched` counts the positions this solver added
        self.memo: dict[bytes, int] = {} if memo is None else memo
        self.searched = 0
        self.budget = budget
        self.guide = guide
        self.favoured = favoured

    def winner(self, o, engine=None) -> int:
        """The seat that wins `o` with perfect play (`o` is left as it is)."""
        return self.winner_consuming(_clone(o), engine)

    def winner_consuming(self, o, engine=None) -> int:
        """winner(), `o` left changed: the last move tried at each position is played on
        the position itself, no longer needed (a clone a move was a quarter of a check).
        `engine`: the engine's copy of `o`, carried down beside it for the guide (which
        reads the table with it), so that only a leaf's root goes through notation (a
        round trip per position was half of a check's time on full pro/mandatory)."""
        key = _position_key(o)
        w = self.memo.get(key)
        if w is not None:
            return w
        if o.is_terminal():
            return o.winner()
        if self.searched >= self.budget:
            raise LeavesTooBig(f"the table leaves need more than {self.budget:,} "
                               f"positions of exhaustive search to solve again")
        mover = o.current_player()
        w = 1 - mover
        moves = o.legal_actions()
        if self.guide is not None:
            if engine is None:
                engine = self.guide.engine_state(o)
            if self.favoured in (None, mover):
                moves = self.guide.order(o, moves, engine)
        last = len(moves) - 1
        for i, a in enumerate(moves):
            child = o if i == last else _clone(o)
            child.apply(a, check=False)
            if self.winner_consuming(child, None if engine is None else engine.child(a)) \
                    == mover:
                w = mover
                break
        self.memo[key] = w
        self.searched += 1
        return w


class LeafMemo:
    """The values of table-leaf positions solved again, kept across the certificates one
    process checks: sibling parts of a certification share much of their endgames (five
    sibling parts of full pro/mandatory searched 2.3x fewer leaf positions, in 1.65x less
    time, with one memo than each with its own). Every value in it was found by this
    process with the reference rules; one memo for each variant, since a position key
    does not name its variant. `max_entries`: a memo that has grown past it is emptied
    before the next certificate (about 140 bytes an entry: 138 measured for a million
    49-byte keys)."""

    def __init__(self, max_entries: int = 10_000_000):
        self.max_entries = max_entries
        self._memos: dict[tuple, dict[bytes, int]] = {}

    def for_variant(self, variant: dict) -> dict[bytes, int]:
        key = tuple(sorted(variant.items()))
        memo = self._memos.setdefault(key, {})
        if len(memo) > self.max_entries:
            memo.clear()
        return memo

    def __len__(self) -> int:
        return sum(len(m) for m in self._memos.values())


class _TableGuide:
    """Orders a position's moves by an endgame table: the moves it says win first, the
    quickest first. Only an order: the search that follows still finds every value with
    the reference rules, down to the ends of the game, so a wrong table costs time and
    never a wrong verdict. A right one makes the search the winner's solution tree (one
    move at each of its positions instead of every losing move tried before a winning
    one): 18.5x fewer positions on a job certificate of the pro/mandatory proof (1,592
    k = 4 leaves: 26,141 positions searched instead of 484,372, 4.2x less time)."""

    def __init__(self, table):
        self.table = table

    @staticmethod
    def engine_state(o):
        """The engine's copy of reference position `o` (through its notation)."""
        from niwa.ext.lotus import LotusState

        return LotusState.from_notation(o.to_notation())

    def order(self, o, moves: list, state=None) -> list:
        """`moves` of reference position `o` in the table's order; `state`: the engine's
        copy of `o` if the caller carries one (an order only: a wrong copy costs time)."""
        from niwa.solver.tables import TableError, _move_outcome

        # the engine's action ids are the reference's (ext/reference/lotus.py's docstring)
        if state is None:
            state = self.engine_state(o)
        try:
            outcome = {a: _move_outcome(code) for a, code in self.table.successors(state)}
        except TableError:          # outside the table, or a value missing: no order
            return moves
        if outcome.keys() != set(moves):
            return moves
        # (value for the mover, plies): wins first, the quickest first
        return sorted(moves, key=lambda a: (-outcome[a][0], outcome[a][1]))


# the guides a process has loaded, by (tables folder, variant): loading a table verifies
# its checksum, 7 s for the full game's k = 5, once a part without this
_GUIDES: dict[tuple, _TableGuide | None] = {}


def _leaf_guide(tables, root: str):
    """The _TableGuide of the tables folder `tables` for the certificate whose root is
    `root` (None: no folder, or no table of that variant in it)."""
    if tables is None:
        return None
    from niwa.ext.lotus import LotusState
    from niwa.solver.tables import find_table

    state = LotusState.from_notation(root)
    key = (str(tables), tuple(sorted(state.variant.items())))
    if key in _GUIDES:
        return _GUIDES[key]
    auto = str(tables) == "auto"
    # unverified: the guide only orders moves, so a damaged table costs time, never a
    # wrong verdict, and its checksum was 10 s of each part's check (a subprocess each)
    table = find_table(state, None if auto else tables, verify=False)
    if table is None and not auto:
        raise CertificateError(f"no endgame table of this certificate's variant in {tables} "
                               f"(to order the table leaves' search)")
    _GUIDES[key] = None if table is None else _TableGuide(table)
    return _GUIDES[key]


def check_certificate(cert: Certificate, leaf_budget: int = DEFAULT_LEAF_BUDGET,
                      progress: bool = False, parts=None, mirror: bool = False,
                      executor=None, tables=None, ledger=None,
                      leaf_memo: LeafMemo | None = None) -> CheckReport:
    """Verify `cert` with the reference rules (see the module notes); CheckReport, or
    CertificateError naming the first thing wrong. `parts`: where the certificates it
    stops at are found (a function sha256 -> Certificate or None, as certificate_folder
    gives); each is checked after `cert`, once (and once more for each other orientation
    it is met in), then the parts they stop at, and so on. `executor`: check the parts
    as jobs on it (an executor of the arena, as build_table takes: LocalExecutor(n),
    DaskExecutor(...), whose workers must see the same files), `parts` then a
    certificate_folder; None: one after the other in this process, each one's memory
    freed before the next. `mirror`: check the certificate's claim for the lane mirror of
    its root instead (every move mapped to its mirror move), as a mirrored part is
    checked. `tables`: an endgame tables folder ('auto': the default one) whose values
    order the moves tried when table leaves are solved again (_TableGuide: an order
    only, never a value). `ledger`: a CheckLedger (or its file's path) that records each
    part as it passes, and `cert` itself once all has, and takes the parts it already
    holds as checked, so that a long check that stops resumes. `leaf_memo`: a LeafMemo
    that keeps the table leaves' values from one certificate to the next (this one's
    parts included, when they are checked in this process)."""
    t0 = time.perf_counter()
    if ledger is not None and not isinstance(ledger, CheckLedger):
        ledger = CheckLedger(ledger)
    report, refs = _check_alone(cert, leaf_budget, progress, mirror, tables, leaf_memo)
    top_row = {"sha256": cert.sha256, "mirror": mirror, "nodes": report.nodes,
               "refs": list(refs), **_header_of(cert)}
    if refs and executor is not None and not hasattr(parts, "paths"):
        raise CertificateError("checking parts on workers needs them in a folder "
                               "(certificate_folder)")
    checked: set[tuple] = set()
    n_parts = part_nodes = from_ledger = 0
    while refs:                     # one round per depth of parts below `cert`
        todo = {}
        for ref, oriented in refs:
            if oriented not in checked and oriented not in todo:
                todo[oriented] = ref
        checked.update(todo)
        refs = []
        known = [ledger.rows[o] for o in todo if o in ledger.rows] if ledger else []
        for row in known:
            _ledger_row_claims(row, todo[(row["sha256"], row["mirror"])], cert)
            del todo[(row["sha256"], row["mirror"])]
        from_ledger += len(known)
        for row in itertools.chain(known, _check_parts(todo, leaf_budget, progress, parts,
                                                       executor, tables, leaf_memo)):
            if ledger is not None and (row["sha256"], row["mirror"]) not in ledger.rows:
                ledger.add(row)
            n_parts += 1
            part_nodes += row["nodes"]
            refs.extend(row["refs"])
    # the whole passed: recorded too, so that a part checked alone beforehand (or on
    # another machine, its ledger lines appended) is not checked again inside a larger one
    if ledger is not None and (cert.sha256, mirror) not in ledger.rows:
        ledger.add(top_row)
    return replace(report, parts=n_parts, part_nodes=part_nodes,
                   time_s=time.perf_counter() - t0, parts_from_ledger=from_ledger)


class CheckLedger:
    """The parts a check has verified, one JSON line each, appended and flushed as each
    passes: its sha256 and orientation, its positions, and the parts it stops at. A check
    given the same file later takes those parts as checked (they are found by content,
    so a part file changed since is checked again), which is how a check of many hours
    resumes after a stop. A line a kill cut short is ignored: that part is checked again.
    The ledger is the checker's own record, to be trusted as the run that wrote it was.

    A long certification rolls its ledger up now and then (roll()): the lines move into
    a numbered gzip archive beside it (PATH's stem.0001.jsonl.gz, ...), written once and
    never changed, and the file starts empty. The archives are read first, the file after:
    one ledger. (Full pro/mandatory's ledger grows 1.2 KB a part in tens of thousands of
    parts; compressed, a tenth of that, and no file grows past what a repository takes.)"""

    def __init__(self, path):
        self.path = Path(path)
        self.rows: dict[tuple, dict] = {}
        self._read = 0      # the bytes of the file already taken in
        self._take_archives()
        self.refresh()

    def archives(self) -> list[Path]:
        """The rolled-up parts of this ledger, oldest first."""
        return sorted(self.path.parent.glob(f"{self.path.stem}.[0-9][0-9][0-9][0-9].jsonl.gz"))

    def _take_archives(self) -> None:
        import gzip

        archives = self.archives()
        self._archived = len(archives)
        for archive in archives:
            try:
                with gzip.open(archive, "rt", errors="replace") as f:
                    text = f.read()
            except (OSError, EOFError, zlib.error) as e:
                raise CertificateError(f"the check ledger's archive {archive} cannot be "
                                       f"read ({file_error_reason(e)})") from None
            self._take(text.splitlines())

    def _take(self, lines) -> None:
        for line in lines:
            row = self._parse(line)
            if row is not None:
                self.rows[(row["sha256"], row["mirror"])] = row

    def roll(self) -> Path | None:
        """Move the file's lines into the next archive and empty the file (a line cut
        short is dropped: its part is checked again). Only while nothing writes to it.
        Returns the archive written, or None if the file held no line."""
        import gzip

        self.refresh()
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        end = data.rfind(b"\n") + 1
        if end == 0:
            return None
        archives = self.archives()
        number = 1 + (int(archives[-1].name.split(".")[-3]) if archives else 0)
        out = self.path.with_name(f"{self.path.stem}.{number:04d}.jsonl.gz")
        tmp = out.with_name(out.name + ".tmp")
        try:
            with open(tmp, "wb") as raw:
                # (mtime 0: the same lines make the same bytes)
                with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
                    f.write(data[:end])
                raw.flush()
                os.fsync(raw.fileno())
            tmp.replace(out)
            self.path.write_bytes(b"")
        except OSError as e:
            raise CertificateError(f"cannot roll the check ledger {self.path} up: "
                                   f"{e.strerror}") from None
        self._read, self._archived = 0, self._archived + 1
        return out

    def refresh(self) -> CheckLedger:
        """Take in the lines appended since the last look (by another checker: a
        long-lived one read the whole file before each part, as certify.py's did;
        appended_lines), all anew if the file was rolled up or replaced since."""
        rolled = len(self.archives()) != self._archived     # (rolled up elsewhere)
        lines, read, replaced = appended_lines(self.path, 0 if rolled else self._read,
                                               "the check ledger")
        if rolled or replaced:
            self.rows = {}
            self._take_archives()
        self._read = read
        self._take(lines)
        return self

    @staticmethod
    def _parse(line: str):
        try:
            raw = json.loads(line)
            row = {"sha256": str(raw["sha256"]), "mirror": bool(raw["mirror"]),
                   "nodes": int(raw["nodes"]),
                   "refs": [(dict(ref), (str(sha), bool(mirrored)))
                            for ref, (sha, mirrored) in raw["refs"]]}
            if "root" in raw:
                row.update(game=str(raw["game"]), variant=dict(raw["variant"]),
                           root=str(raw["root"]), winner=int(raw["winner"]))
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return row

    def add(self, row: dict) -> None:
        entry = {"sha256": row["sha256"], "mirror": row["mirror"], "nodes": row["nodes"],
                 "refs": [[ref, list(oriented)] for ref, oriented in row["refs"]],
                 **{k: row[k] for k in ("game", "variant", "root", "winner") if k in row}}
        append_json_line(self.path, entry, "the check ledger")
        self.rows[(row["sha256"], row["mirror"])] = row


def ledger_parts(path) -> list[PartHeader]:
    """The certificates a check ledger recorded as passed, as headers a walk can stop at
    (extract_certificate's `parts`) though their files are gone: a certification too long
    for one machine keeps only its ledger between sessions, and a part in it is not made
    again (its file's path is empty; a check then takes it from the ledger), in the
    orientations the ledger holds it checked in."""
    rows = CheckLedger(path).rows
    out: dict[str, PartHeader] = {}
    for row in rows.values():
        sha = row["sha256"]
        if "root" in row and sha not in out:
            ways = tuple(m for m in (False, True) if (sha, m) in rows)
            named = tuple((m, tuple((str(ref), bool(mirrored))
                                    for _, (ref, mirrored) in rows[(sha, m)]["refs"]))
                          for m in ways)
            out[sha] = PartHeader(
                row["game"], row["variant"], row["root"], row["winner"], sha, "",
                refs=tuple(sorted({r for _, refs in named for r in refs})),
                from_ledger=True, ledger_refs=named)
    return list(out.values())


def _check_parts(todo: dict, leaf_budget: int, progress: bool, parts, executor, tables,
                 leaf_memo=None):
    """Check the parts `todo` ((sha256, mirrored) -> the header entry that names them):
    their rows (nodes, and the parts they stop at) as each is checked."""
    if parts is None and todo:
        ref = next(iter(todo.values()))
        raise CertificateError(f"the certificate stops at {len(todo)} other certificates "
                               f"(part root {ref['root']}): give their folder")
    if executor is None:
        for oriented, ref in todo.items():
            yield _check_part(parts(oriented[0]), ref, oriented, leaf_budget, progress,
                              _not_found_where(parts), tables, leaf_memo)
        return
    from tqdm import tqdm

    if hasattr(parts, "refresh") and any(sha not in parts.paths for sha, _ in todo):
        parts.refresh()                             # (saved since the folder's last look)
    jobs = [CheckPartJob(parts.paths.get(sha), ref, (sha, mirrored), leaf_budget,
                         _not_found_where(parts), None if tables is None else str(tables))
            for (sha, mirrored), ref in todo.items()]
    bar = tqdm(total=len(jobs), desc="parts", unit=" part", disable=not progress,
               file=sys.stderr)
    stream = executor.run(jobs)
    try:
        for row in stream:
            if row.get("error"):
                raise CertificateError(row["error"])
            bar.update()
            yield row
    finally:
        stream.close()
        bar.close()


def _not_found_where(parts) -> str:
    folder = getattr(parts, "folder", None)
    return "" if parts is None else f" in {folder or 'the parts given'}"


def _check_part(part, ref: dict, oriented: tuple, leaf_budget: int, progress: bool,
                where: str, tables=None, leaf_memo=None) -> dict:
    """Check one part (None: it was not found) against the entry that names it."""
    sha, mirrored = oriented
    if part is None:
        raise CertificateError(f"part sha256 {sha[:16]}... (root {ref['root']}) is not "
                               f"found{where}: the certificate stops at certificates "
                               f"kept apart; give their folder")
    if part.sha256 != sha or part.root != ref["root"] or part.winner != ref["winner"]:
        raise CertificateError(f"part sha256 {sha[:16]}...: the certificate found under its "
                               f"sha256 has another root or winner")
    sub, refs = _check_alone(part, leaf_budget, progress, mirrored, tables, leaf_memo)
    return {"sha256": sha, "mirror": mirrored, "nodes": sub.nodes, "refs": refs,
            **_header_of(part)}


def _header_of(cert) -> dict:
    """What a ledger row keeps of a checked certificate's header, so that a walk can stop
    at it and a check can take it as checked once its file is gone (ledger_parts)."""
    return {"game": cert.game, "variant": dict(sorted(cert.variant.items())),
            "root": cert.root, "winner": int(cert.winner)}


def _ledger_row_claims(row: dict, ref: dict, cert) -> None:
    """Refuse to take a ledger row as the checked part a header entry names unless the
    row's certificate claims what the entry says (its root and winner) in `cert`'s game
    and variant (a row of an older ledger, without them, is trusted by sha256 alone)."""
    if "root" not in row:
        return
    claimed = {**_header_of(cert), "root": ref["root"], "winner": ref["winner"]}
    if any(row[k] != v for k, v in claimed.items()):
        raise CertificateError(f"part sha256 {row['sha256'][:16]}...: the check ledger "
                               f"recorded it with another root, winner or variant than "
                               f"the certificate's entry for it (root {ref['root']})")


@dataclass
class CheckPartJob:
    """One part checked in a worker (local pool or Dask): its file, the header entry that
    names it, its orientation. Its row holds the error's text instead of raising, so that
    a refusal is reported, not retried."""

    path: str | None
    ref: dict
    oriented: tuple
    leaf_budget: int
    where: str = ""
    tables: str | None = None       # the folder of the table that orders leaf searches

    def __repr__(self):
        return f"CheckPartJob({self.oriented[0][:16]}..., mirror={self.oriented[1]})"

    def __call__(self) -> dict:
        t0 = time.perf_counter()
        try:
            part = None if self.path is None else load_certificate(self.path)
            row = _check_part(part, self.ref, self.oriented, self.leaf_budget, False,
                              self.where, self.tables)
        except CertificateError as e:
            row = {"error": str(e)}
        row["duration_s"] = time.perf_counter() - t0
        return row


def _check_alone(cert: Certificate, leaf_budget: int, progress: bool,
                 mirror: bool, tables=None, leaf_memo=None) -> tuple[CheckReport, list]:
    """Check `cert` itself (not its parts): its report, and the parts it stops at as
    (header entry, (sha256, mirrored)) pairs, each orientation once."""
    from tqdm import tqdm

    t0 = time.perf_counter()
    if cert.game != "lotus":
        raise CertificateError(f"no reference checker for game {cert.game!r}")
    if not _well_shaped(cert.offsets, cert.actions, cert.children):
        raise CertificateError("malformed certificate arrays (offsets)")
    root = parse_reference_position(cert.root)
    if set(vars(root)) != _ORACLE_FIELDS:
        raise CertificateError("the reference rules' state has changed (fields "
                               f"{sorted(set(vars(root)) ^ _ORACLE_FIELDS)}): update the "
                               "checker's copy of it")
    if dict(sorted(root.variant.items())) != dict(sorted(cert.variant.items())):
        raise CertificateError("the header's variant is not the root position's")
    if cert.winner not in range(root.players) or root.is_terminal():
        raise CertificateError("the header's winner or root is impossible")
    mover = root.current_player()
    if cert.value != (1.0 if mover == cert.winner else 0.0):
        raise CertificateError(f"the header's value {cert.value:g} does not agree with "
                               f"its winner (seat {cert.winner})")
    # read in place (lists of Python ints took 2.5 GB on a 30M-position part)
    offsets = memoryview(np.ascontiguousarray(cert.offsets))
    actions = memoryview(np.ascontiguousarray(cert.actions))
    if mirror:
        root = root.mirrored()
        actions = [root.mirror_action(a) for a in actions]
    children = memoryview(np.ascontiguousarray(cert.children))
    n = cert.nodes
    pending = {0: root}         # node -> its position, set by the first edge reaching it
    # node -> its position's key, made only when a second edge reaches it (a key for every
    # child took a tenth of a check; most nodes have one parent)
    keys: dict[int, bytes] = {}
    solver = _LeafSolver(leaf_budget, _leaf_guide(tables, cert.root) if
                         (cert.children == TABLE_LEAF).any() else None, cert.winner,
                         None if leaf_memo is None else leaf_memo.for_variant(root.variant))
    wins = losses = over = table = into_parts = 0
    part_keys: dict[int, tuple] = {}    # part index -> its root's position key
    bar = tqdm(total=n, desc="check", unit=" pos", disable=not progress, file=sys.stderr)
    for i in range(n):
        o = pending.pop(i, None)
        if o is None:
            raise CertificateError(f"node {i} is not reached from the root")
        keys.pop(i, None)
        bar.update()

        def where(i=i, o=o) -> str:     # the position's notation, only for an error
            return f"node {i}{' (mirrored)' if mirror else ''} ({o.to_notation()})"

        if o.is_terminal():
            raise CertificateError(f"{where()}: the game is over there, yet it is a node")
        legal = o.legal_actions()
        moves = actions[offsets[i]:offsets[i + 1]]
        if o.current_player() == cert.winner:
            wins += 1
            if len(moves) != 1:
                raise CertificateError(f"{where()}: the winner's position must have exactly "
                                       f"one move, has {len(moves)}")
            if moves[0] not in legal:
                raise CertificateError(f"{where()}: the winner's move {moves[0]} is not legal "
                                       f"(legal: {legal})")
        else:
            losses += 1
            if not legal:   # the rules always leave a move (pass); a stalemate is no win
                raise CertificateError(f"{where()}: the loser has no move, yet the game "
                                       f"is not over")
            if sorted(moves) != legal:
                missing = sorted(set(legal) - set(moves))
                extra = sorted(set(moves) - set(legal))
                dup = len(moves) != len(set(moves))
                what = (f"the loser's replies {missing} are missing" if missing else
                        f"the moves {extra} are not legal" if extra else
                        "a reply is listed twice" if dup else "the replies differ")
                raise CertificateError(f"{where()}: {what}")
        last = offsets[i + 1] - 1
        for j in range(offsets[i], offsets[i + 1]):
            a, target = actions[j], children[j]
            if j == last and i < target < n and target not in pending:
                # the position's last move, to a node first reached here: the position
                # itself becomes the child, no error can follow (a clone a move was a
                # quarter of a check, and half the nodes are the winner's, with one move)
                o.apply(a, check=False)
                pending[target] = o
                continue
            child = _clone(o)
            child.apply(a, check=False)
            if target == GAME_OVER:
                if child.winner() != cert.winner:
                    state = "does not end the game" if not child.is_terminal() else \
                        f"ends the game won by seat {child.winner()}"
                    raise CertificateError(f"{where()}: move {a} {state}, but is marked as a "
                                           f"win of seat {cert.winner}")
                over += 1
            elif target == TABLE_LEAF:
                if child.is_terminal() or solver.winner_consuming(child) != cert.winner:
                    raise CertificateError(f"{where()}: the table leaf after move {a} is not "
                                           f"a win of seat {cert.winner}")
                table += 1
            elif target <= PART_BASE:
                k = PART_BASE - target
                if k not in part_keys:
                    part_keys[k] = _part_root_key(cert, k, mirror)
                if _position_key(child) != part_keys[k]:
                    raise CertificateError(f"{where()}: move {a} does not reach the root of "
                                           f"part {k} ({cert.parts[k]['root']})")
                into_parts += 1
            elif not i < target < n:
                raise CertificateError(f"{where()}: move {a} leads to node {target}, which is "
                                       f"not a later node (0..{n - 1})")
            elif target in pending:     # (reached before: by the same position?)
                if target not in keys:
                    keys[target] = _position_key(pending[target])
                if keys[target] != _position_key(child):
                    raise CertificateError(
                        f"{where()}: move {a} leads to node {target}, which another "
                        f"move reaches as a different position")
            else:
                pending[target] = child
    bar.close()
    # a part of a mirrored certificate is met mirrored too (and a mirrored part of it the
    # right way round)
    refs = [(cert.parts[k], (cert.parts[k]["sha256"], bool(cert.parts[k].get("mirror")) != mirror))
            for k in sorted(part_keys)]
    report = CheckReport(nodes=n, winner_nodes=wins, loser_nodes=losses, edges=len(actions),
                         game_over_leaves=over, table_leaves=table,
                         leaf_positions=solver.searched, time_s=time.perf_counter() - t0,
                         part_leaves=into_parts,
                         leaf_order="" if solver.guide is None else
                         f"the k={solver.guide.table.k} table")
    return report, list({oriented: (ref, oriented) for ref, oriented in refs}.values())


def _part_root_key(cert: Certificate, k: int, mirror: bool) -> bytes:
    """The reference position key of part k's root (or of its lane mirror, when the entry
    or the certificate being checked, but not both, is mirrored), after checking that the
    header names a part k claiming this certificate's winner."""
    if not 0 <= k < len(cert.parts):
        raise CertificateError(f"an edge leads to part {k}, which the header does not name "
                               f"({len(cert.parts)} parts)")
    ref = cert.parts[k]
    if ref["winner"] != cert.winner:
        raise CertificateError(f"part {k} claims seat {ref['winner']} wins; this certificate "
                               f"claims seat {cert.winner}")
    root = parse_reference_position(ref["root"])
    return _position_key(root.mirrored() if bool(ref.get("mirror")) != mirror else root)
