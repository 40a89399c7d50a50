# cython: language_level=3
"""Lotus endgame tables: a perfect hash of the positions with few stones left, and the
retrograde kernel that fills it (the file format and the build driver: solver/tables.py;
the whole story: docs/endgame-tables.md).

Domain. Two players, the pro opening over (opening = done), each player with 1..k stones
outside the goal (on the track or in their start towers). No move adds a stone outside
the goal, so every successor of a position in the domain is in it too, or the game is
over: the domain is closed and can be solved bottom-up without ever searching outside.
Its positions are those the rules allow (start towers hold their owner's stones and can
only have shrunk from 4, 3, 2, 1; stacks hold any colour order); not every one of them is
reachable from the initial position, which costs space but never a wrong value.

Index. A position falls into a *class* (nW, nB, sW, sB): each player's stones outside the
goal and its start configuration (a multiset of tower heights, numbered). Inside a class
the board holds m = bW + bB stones, bW = nW - (W's start stones), likewise bB. Listing the
board's stones space by space (engine order: a1..aL, b1..bL, then the shared spaces),
bottom to top, gives
  - the composition: the stack heights h_0..h_{N-1} (sum m) = the star positions
    c_i = i + space(i) among m + N - 1 slots, ranked by the combinatorial number system
    comp = sum_i C(c_i, i + 1) in [0, C(m + N - 1, m));
  - the colouring: which of the m stones are black, ranked the same way
    col = sum_j C(p_j, j + 1) in [0, C(m, bB)).
    index = offset[class] + (side * ncol + col) * ncomp + comp
so ranking costs one pass over the stacks and unranking a greedy walk down the binomials.
Every index is a position and every position of the domain has exactly one index.

Values. One byte per position: bit 7 set = the player to move wins; bits 0..6 = the
number of plies to the end with perfect play (the winner hurries, the loser holds out).
0 means "not computed" (every position in the domain has a move, so a real entry is never
0). The distance makes every move's value and a principal variation to the end a table
read away.

Build order. Classes form a DAG: a move either stays in its class (a track move: the sum
of the board stones' route positions, "progress", strictly grows; a pass: same board,
other player to move), or moves a start stone to the track (fewer start stones), or
takes a stone to the goal (fewer stones outside). So classes are solved by level
(nW + nB, start stones) upwards, classes of one level independently (the build's unit of
parallel work), and inside a class compositions by decreasing progress; of the two
players to move on one board, the one who is not blocked first (a blocked player's pass
leads to the same board with the other to move; two players cannot both be blocked).
"""
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

from niwa.ext.game cimport MAX_ACTIONS, State
from niwa.ext.lotus cimport LOTUS_MAX_SPACES, LotusData, LotusState

from niwa.ext.errors import NiwaError

VARIANT_KEYS = ("players", "rule", "trampoline", "lane", "shared", "trampoline_at", "towers")
MAX_POSITIONS = 1 << 36         # a table larger than this is refused (64 G positions)


class TableError(NiwaError):
    """An endgame table that cannot be built, found, loaded or asked as requested (the
    message says why; the command line prints it with exit status 2)."""


def same_variant(a, b):
    """Whether two Lotus variant dicts describe the same game (the keys tables depend on)."""
    return all(a[key] == b[key] for key in VARIANT_KEYS)


def start_configurations(int towers, int most):
    """Every start a player can have with at most `most` stones there: tower heights,
    tallest first, that can arise from towers `towers`..1 (they only shrink: the i-th
    tallest is at most towers - i). Ordered by stones, then heights."""
    out = []

    def grow(prefix, int limit, int left):
        out.append(tuple(prefix))
        i = len(prefix)
        for h in range(min(limit, towers - i, left), 0, -1):
            grow(prefix + [h], h, left - h)

    grow([], towers, most)
    out.sort(key=lambda hs: (sum(hs), [-h for h in hs]))
    return out


cdef class LotusTableIndex(ExactValues):
    """The index of the Lotus positions with at most `k` stones per player outside the
    goal, for one variant (2 players), with the values attached once built or loaded.

    >>> t = LotusTableIndex({"lane": 1, "shared": 3, "trampoline_at": 3, "towers": 2}, 1)
    >>> t.size, t.nclasses
    (82, 4)
    >>> s = t.unrank(17); t.index(s)
    17
    """

    def __cinit__(self):
        self.offset = NULL
        self.ncol = NULL
        self.ncomp = NULL
        self.ptr = NULL

    def __dealloc__(self):
        free(self.offset)
        free(self.ncol)
        free(self.ncomp)
        free(self.ptr)

    def __init__(self, variant, int k):
        cdef LotusState proto = LotusState(**{**dict(variant), "players": 2})
        v = proto.variant
        if v["players"] != 2:
            raise TableError("endgame tables are for 2 players")
        self.variant = {name: v[name] for name in VARIANT_KEYS}
        memcpy(&self.proto, &proto.d, sizeof(LotusData))
        cdef LotusData* d = &self.proto
        memset(d.height, 0, sizeof(d.height))
        memset(d.start, 0, sizeof(d.start))
        memset(d.tops, 0, sizeof(d.tops))
        memset(d.start_mask, 0, sizeof(d.start_mask))
        d.opening = 0
        d.winner = -1
        if not 1 <= k <= d.stones_each:
            raise TableError(f"stones per player outside the goal must be 1..{d.stones_each} "
                             f"for towers={d.max_tower}, got {k}")
        self.k = k
        self.nspaces = d.nspaces
        self.stones_each = d.stones_each
        self.towers = d.max_tower
        self.route = d.route
        cdef int n, r
        for n in range(LT_BINOM):
            for r in range(LT_BINOM):
                self.binom[n][r] = 0
            self.binom[n][0] = 1
            for r in range(1, n + 1):
                self.binom[n][r] = self.binom[n - 1][r - 1] + self.binom[n - 1][r]
        starts = start_configurations(self.towers, k)
        self._index_starts(starts)
        self.size = self._lay_out_classes()
        self.refs = {}
        self.attached = False
        self._starts = starts
        self._starts_cache = None

    def _index_starts(self, starts):
        """Number the start configurations (a player's towers still in the start, by
        height) and key each by its counts of towers per height."""
        cdef int i, h, key
        if len(starts) > LT_MAX_STARTS:
            raise TableError("too many start configurations")
        self.nstarts = len(starts)
        for key in range(LT_KEYS):
            self.start_of_key[key] = -1
        for i, hs in enumerate(starts):
            for h in range(5):
                self.start_count[i][h] = 0
            for h in hs:
                self.start_count[i][h] += 1
            self.start_total[i] = sum(hs)
            key = 0
            for h in range(self.towers, 0, -1):
                key = key * 5 + self.start_count[i][h]
            self.start_of_key[key] = i

    def _lay_out_classes(self):
        """Allocate the per-class arrays and place every class (stones outside the goal
        and start configuration of each player) in the table; returns the table's size."""
        cdef int k = self.k, nw, nb, sw, sb, c, bw, bb, m
        cdef int64_t total = 0
        self.nclasses = k * k * self.nstarts * self.nstarts
        self.offset = <int64_t*>malloc(self.nclasses * sizeof(int64_t))
        self.ncol = <int64_t*>malloc(self.nclasses * sizeof(int64_t))
        self.ncomp = <int64_t*>malloc(self.nclasses * sizeof(int64_t))
        self.ptr = <unsigned char**>calloc(self.nclasses, sizeof(unsigned char*))
        if self.offset == NULL or self.ncol == NULL or self.ncomp == NULL or self.ptr == NULL:
            raise MemoryError()
        for nw in range(1, k + 1):
            for nb in range(1, k + 1):
                for sw in range(self.nstarts):
                    for sb in range(self.nstarts):
                        c = self.c_class_id(nw, nb, sw, sb)
                        bw = nw - self.start_total[sw]
                        bb = nb - self.start_total[sb]
                        if bw < 0 or bb < 0:
                            self.offset[c] = -1
                            self.ncol[c] = self.ncomp[c] = 0
                            continue
                        m = bw + bb
                        if m + self.nspaces >= LT_BINOM:
                            raise TableError("board too large for the index")
                        self.offset[c] = total
                        self.ncol[c] = self.binom[m][bb]
                        self.ncomp[c] = self.binom[m + self.nspaces - 1][m]
                        total += 2 * self.ncol[c] * self.ncomp[c]
                        if total > MAX_POSITIONS:
                            raise TableError(f"a table with k={k} on this board would hold "
                                             f"more than {MAX_POSITIONS:,} positions")
        return total

    # ---- the index ----------------------------------------------------------------------
    cdef int c_class_id(self, int nw, int nb, int sw, int sb) noexcept nogil:
        return (((nw - 1) * self.k + (nb - 1)) * self.nstarts + sw) * self.nstarts + sb

    cdef int c_locate(self, const LotusData* d, int* cls, int64_t* local) noexcept nogil:
        """The class and the index inside it of position `d` (same variant): 0, or -1 when
        the position is outside the domain (game over, pro opening, too many stones)."""
        cdef int nw, nb, sw, sb, c, s, t, i = 0, j = 0, h, key
        cdef uint64_t comp = 0, col = 0
        if d.winner >= 0 or d.opening != 0:
            return -1
        nw = self.stones_each - d.goal[0]
        nb = self.stones_each - d.goal[1]
        if nw < 1 or nb < 1 or nw > self.k or nb > self.k:
            return -1
        key = 0
        for h in range(self.towers, 0, -1):
            key = key * 5 + d.start[0][h]
        sw = self.start_of_key[key] if key < LT_KEYS else -1
        key = 0
        for h in range(self.towers, 0, -1):
            key = key * 5 + d.start[1][h]
        sb = self.start_of_key[key] if key < LT_KEYS else -1
        if sw < 0 or sb < 0:
            return -1
        c = self.c_class_id(nw, nb, sw, sb)
        if self.offset[c] < 0:
            return -1
        for s in range(self.nspaces):
            for t in range(d.height[s]):
                comp += self.binom[i + s][i + 1]
                if d.stack[s][t] == 1:
                    j += 1
                    col += self.binom[i][j]
                i += 1
        cls[0] = c
        local[0] = (d.to_move * self.ncol[c] + <int64_t>col) * self.ncomp[c] + <int64_t>comp
        return 0

    cdef int c_probe(self, const LotusData* d) noexcept nogil:
        """The table's byte for position `d` (0 = not computed), or -1 when the position is
        of another variant, outside the domain, or its class is not loaded. No GIL needed."""
        cdef int c
        cdef int64_t local
        cdef const LotusData* g = &self.proto
        if d.nplayers != 2 or d.pro != g.pro or d.mandatory != g.mandatory or \
                d.lane != g.lane or d.shared != g.shared or d.tramp_pos != g.tramp_pos or \
                d.max_tower != g.max_tower:
            return -1
        if self.c_locate(d, &c, &local) < 0 or self.ptr[c] == NULL:
            return -1
        return self.ptr[c][local]

    def probe_many(self, states):
        """probe() of every LotusState in the list, as an int16 array (the C lookup in a
        loop: what a searcher pays per position, without Python in between)."""
        import numpy as np

        out = np.empty(len(states), dtype=np.int16)
        cdef short[::1] view = out
        cdef Py_ssize_t i
        cdef LotusState s
        for i in range(len(states)):
            s = states[i]
            view[i] = self.c_probe(&s.d)
        return out

    cdef int c_value(self, State s) noexcept:
        cdef int v = self.c_probe(&(<LotusState>s).d)
        if v <= 0:
            return -1
        return 1 if v & 128 else 0

    cpdef bint accepts(self, State s):
        return (self.attached and isinstance(s, LotusState) and s.num_players == 2
                and same_variant(s.variant, self.variant))

    cdef void c_unrank_into(self, LotusData* d, int cls, int64_t local) noexcept:
        """Write the position of index `local` in class `cls` into `d`."""
        cdef int sb = cls % self.nstarts, sw = (cls // self.nstarts) % self.nstarts
        cdef int nb = (cls // (self.nstarts * self.nstarts)) % self.k + 1
        cdef int nw = cls // (self.nstarts * self.nstarts * self.k) + 1
        cdef int bb = nb - self.start_total[sb]
        cdef int m = nw - self.start_total[sw] + bb
        cdef int64_t comp = local % self.ncomp[cls]
        cdef int64_t col = (local // self.ncomp[cls]) % self.ncol[cls]
        cdef int side = <int>(local // (self.ncomp[cls] * self.ncol[cls]))
        cdef int space[64]
        cdef unsigned char colour[64]
        self.unrank_comp(<uint64_t>comp, m, space)
        self.unrank_colour(<uint64_t>col, m, bb, colour)
        self.fill(d, nw, nb, sw, sb, m, space, colour, side)

    cdef void unrank_comp(self, uint64_t r, int m, int* space) noexcept:
        cdef int i, c = m + self.nspaces - 1
        for i in range(m - 1, -1, -1):
            c -= 1
            while self.binom[c][i + 1] > r:
                c -= 1
            r -= self.binom[c][i + 1]
            space[i] = c - i

    cdef void unrank_colour(self, uint64_t r, int m, int ones, unsigned char* colour) noexcept:
        cdef int j, p = m
        memset(colour, 0, m)
        for j in range(ones - 1, -1, -1):
            p -= 1
            while self.binom[p][j + 1] > r:
                p -= 1
            r -= self.binom[p][j + 1]
            colour[p] = 1

    cdef void fill(self, LotusData* d, int nw, int nb, int sw, int sb, int m,
                   const int* space, const unsigned char* colour, int side) noexcept:
        cdef int i, s, h
        memcpy(d, &self.proto, sizeof(LotusData))
        for i in range(m):
            s = space[i]
            d.stack[s][d.height[s]] = colour[i]
            d.height[s] += 1
        for s in range(self.nspaces):
            if d.height[s]:
                d.tops[d.stack[s][d.height[s] - 1]] |= (<uint64_t>1) << s
        for h in range(1, self.towers + 1):
            d.start[0][h] = self.start_count[sw][h]
            d.start[1][h] = self.start_count[sb][h]
            if d.start[0][h]:
                d.start_mask[0] |= 1u << h
            if d.start[1][h]:
                d.start_mask[1] |= 1u << h
        d.goal[0] = self.stones_each - nw
        d.goal[1] = self.stones_each - nb
        d.to_move = side

    # ---- Python view --------------------------------------------------------------------
    def index(self, LotusState state):
        """The position's index, or -1 when it is outside the domain (or another variant)."""
        cdef int c
        cdef int64_t local
        if not same_variant(state.variant, self.variant):
            return -1
        if self.c_locate(&state.d, &c, &local) < 0:
            return -1
        return self.offset[c] + local

    def unrank(self, int64_t index):
        """The position with this index (a new LotusState)."""
        import bisect

        if not 0 <= index < self.size:
            raise TableError(f"index {index} outside 0..{self.size - 1}")
        starts = self._class_starts()
        i = bisect.bisect_right(starts, index) - 1
        c = self._class_order[i]
        cdef LotusState s = LotusState(**self.variant)
        self.c_unrank_into(&s.d, c, index - self.offset[c])
        return s

    def _class_starts(self):
        if self._starts_cache is None:
            order = sorted((self.offset[c], c) for c in range(self.nclasses) if self.offset[c] >= 0
                           and self.ncol[c] * self.ncomp[c] > 0)
            self._class_order = [c for _, c in order]
            self._starts_cache = [o for o, _ in order]
        return self._starts_cache

    def probe(self, LotusState state):
        """The stored byte (bit 7: the mover wins; bits 0..6: plies to the end), 0 when not
        computed, -1 outside the domain."""
        if self.index(state) < 0:
            return -1
        return self.c_probe(&state.d)

    def successors(self, LotusState state):
        """Every legal action of `state` (inside the table) with what follows it: 257 the
        move wins at once, 256 it ends the game lost (a blocked player moving the
        opponent's last stone home), else the table's byte for the position after it."""
        cdef int acts[MAX_ACTIONS]
        cdef int n, i, v
        cdef LotusState child = state.c_clone()
        if self.index(state) < 0:
            raise TableError("the position is outside the table")
        n = state.c_legal_actions(acts)
        out = []
        for i in range(n):
            child.c_copy_from(state)
            child.c_apply(acts[i])
            if child.d.winner >= 0:
                v = 257 if child.d.winner == state.d.to_move else 256
            else:
                v = self.c_probe(&child.d)
                if v <= 0:
                    raise TableError(f"the table has no value after {state.action_to_string(acts[i])}")
            out.append((acts[i], v))
        return out

    def classes(self):
        """Every class: dicts with id, stones (nW, nB), starts (tower heights of W, B),
        offset, size and level (the build order: lower levels first)."""
        out = []
        cdef int c
        for c in range(self.nclasses):
            if self.offset[c] < 0:
                continue
            nw, nb, sw, sb = self._parts(c)
            out.append({"id": c, "stones": (nw, nb),
                        "starts": (self._starts[sw], self._starts[sb]),
                        "offset": self.offset[c], "size": 2 * self.ncol[c] * self.ncomp[c],
                        "level": (nw + nb, self.start_total[sw] + self.start_total[sb])})
        return out

    def _parts(self, int c):
        return (c // (self.nstarts * self.nstarts * self.k) + 1,
                (c // (self.nstarts * self.nstarts)) % self.k + 1,
                (c // self.nstarts) % self.nstarts, c % self.nstarts)

    def dependencies(self, int c):
        """The other classes a move from class `c` can lead into (without ending the game)."""
        nw, nb, sw, sb = self._parts(c)
        out = set()
        for p in range(2):
            n, s = (nw, sw) if p == 0 else (nb, sb)
            options = [(n - 1, s)]
            for h in range(1, self.towers + 1):
                if self.start_count[s][h]:
                    shrunk = self._shrink(s, h)
                    options += [(n, shrunk), (n - 1, shrunk)]
            for n2, s2 in options:
                if n2 < 1 or self.start_total[s2] > n2:
                    continue
                out.add(self.c_class_id(n2, nb, s2, sb) if p == 0 else
                        self.c_class_id(nw, n2, sw, s2))
        out.discard(c)
        return sorted(out)

    def _shrink(self, int s, int h):
        counts = [self.start_count[s][x] for x in range(5)]
        counts[h] -= 1
        if h > 1:
            counts[h - 1] += 1
        key = 0
        for x in range(self.towers, 0, -1):
            key = key * 5 + counts[x]
        return self.start_of_key[key]

    # ---- values -------------------------------------------------------------------------
    def set_class_values(self, int c, values):
        """Point class `c` at `values` (its bytes, a 1-D uint8 array; None detaches it)."""
        cdef const unsigned char[::1] view
        if values is None:
            self.ptr[c] = NULL
            self.refs.pop(c, None)
            self.attached = False
            return
        view = values
        if view.shape[0] != 2 * self.ncol[c] * self.ncomp[c]:
            raise TableError(f"class {c}: {view.shape[0]} values for "
                             f"{2 * self.ncol[c] * self.ncomp[c]} positions")
        self.ptr[c] = <unsigned char*>&view[0] if view.shape[0] else NULL
        self.refs[c] = values

    def attach(self, values):
        """Use `values` (a 1-D uint8 array of `size` bytes, e.g. a memory map) as the table."""
        cdef const unsigned char[::1] view = values
        cdef int c
        if view.shape[0] != self.size:
            raise TableError(f"the table holds {view.shape[0]:,} values; this index has "
                             f"{self.size:,} positions")
        for c in range(self.nclasses):
            if self.offset[c] >= 0 and self.ncol[c] * self.ncomp[c] > 0:
                self.ptr[c] = <unsigned char*>&view[self.offset[c]]
            else:
                self.ptr[c] = NULL
        self.refs = {"all": values}
        self.attached = True

    def composition_order(self, int c):
        """The compositions of class `c` in build order and the progress of each, in that
        order: (order, progress), int64 arrays. Progress (the sum of the board stones'
        route positions) strictly grows with every track move, so compositions are solved
        by decreasing progress, and a run of equal progress can be solved in any order, or
        in parts at once (solver/tables.py splits a large class so)."""
        import numpy as np

        nw, nb, sw, sb = self._parts(c)
        cdef int m = nw - self.start_total[sw] + nb - self.start_total[sb]
        cdef int64_t ncomp = self.ncomp[c], comp
        cdef int space[64]
        cdef int s
        cdef int64_t total
        prog_arr = np.empty(ncomp, dtype=np.int64)
        cdef int64_t[::1] prog = prog_arr
        for comp in range(ncomp):
            self.unrank_comp(<uint64_t>comp, m, space)
            total = 0
            for s in range(m):
                total += self.proto.pos[space[s]]
            prog[comp] = total
        order = np.argsort(-prog_arr, kind="stable").astype(np.int64)
        return order, prog_arr[order]

    def build_class(self, int c, deps, progress=None, out=None, order=None,
                    int64_t start=0, int64_t stop=-1):
        """Solve class `c` given its dependencies' values (`deps`: class id -> uint8 array,
        every class of dependencies(c)); returns its values (a new uint8 array, or `out`).
        `progress(n)` is called now and then with the positions done since the last call.
        Part of a class: only the compositions order[start:stop] of its build order
        (`order`: composition_order(c)[0], passed in to save its recomputation), written
        into `out` (the class's values, every composition of higher progress than the
        part's already solved there; stop -1: to the end)."""
        import numpy as np

        nw, nb, sw, sb = self._parts(c)
        for dep in self.dependencies(c):
            if dep not in deps:
                raise TableError(f"class {c} needs class {dep}, which was not given")
        cdef int64_t ncol = self.ncol[c], ncomp = self.ncomp[c]
        if out is None:
            out = np.zeros(2 * ncol * ncomp, dtype=np.uint8)
        elif len(out) != 2 * ncol * ncomp:
            raise TableError(f"class {c} has {2 * ncol * ncomp:,} positions, "
                             f"not {len(out):,}")
        if order is None:
            order = self.composition_order(c)[0]
        if stop < 0:
            stop = ncomp
        if len(order) != ncomp:
            raise TableError(f"a build order of {len(order):,} compositions for class {c}, "
                             f"which has {ncomp:,}")
        if not 0 <= start <= stop <= ncomp:
            raise TableError(f"compositions {start}:{stop} are not a part of class {c} "
                             f"({ncomp:,} compositions)")
        for dep in self.dependencies(c):
            self.set_class_values(dep, deps[dep])
        self.set_class_values(c, out)
        cdef unsigned char[::1] res = out
        cdef int bb = nb - self.start_total[sb]
        cdef int m = nw - self.start_total[sw] + bb
        cdef int space[64]
        cdef unsigned char colour[64]
        cdef const int64_t[::1] order_view = np.ascontiguousarray(order, dtype=np.int64)
        cdef int64_t comp, col, i, done = 0
        cdef LotusState parent = LotusState(**self.variant)
        cdef LotusState child = LotusState(**self.variant)
        cdef int side, first, err, t
        for i in range(start, stop):
            comp = order_view[i]
            self.unrank_comp(<uint64_t>comp, m, space)
            for col in range(ncol):
                self.unrank_colour(<uint64_t>col, m, bb, colour)
                self.fill(&parent.d, nw, nb, sw, sb, m, space, colour, 0)
                # the player who is not blocked first: a blocked player's pass leads to
                # this very board with the other to move
                first = 1 if (parent.d.tops[0] == 0 and parent.d.start_mask[0] == 0) else 0
                for t in range(2):
                    side = first if t == 0 else 1 - first
                    parent.d.to_move = side
                    err = self.solve_one(parent, child, res, (side * ncol + col) * ncomp + comp)
                    if err:
                        self.set_class_values(c, None)
                        raise TableError(self._kernel_error(err, parent))
            done += 2 * ncol
            if progress is not None and done >= 1 << 16:
                progress(done)
                done = 0
        if progress is not None and done:
            progress(done)
        self.set_class_values(c, None)
        for dep in deps:
            self.set_class_values(dep, None)
        return out

    def _kernel_error(self, int err, LotusState at):
        what = {1: "a successor's value is missing (build order or dependencies wrong)",
                3: "a position without legal actions",
                4: "a successor outside the table's domain"}[err]
        return f"table build failed at {at.to_notation()}: {what}"

    cdef int solve_one(self, LotusState parent, LotusState child, unsigned char[::1] res,
                       int64_t at) noexcept:
        """Value of `parent` (its mover) from its successors into res[at]; 0 or an error."""
        cdef int acts[MAX_ACTIONS]
        cdef int n = parent.c_legal_actions(acts)
        cdef int mover = parent.d.to_move, i, v, d, cls
        cdef int best_win = 1000, worst_loss = -1
        cdef int64_t local
        if n <= 0:
            return 3
        for i in range(n):
            child.c_copy_from(parent)
            child.c_apply(acts[i])
            if child.d.winner >= 0:
                if child.d.winner == mover:
                    best_win = 1
                    break
                if worst_loss < 1:
                    worst_loss = 1
                continue
            if self.c_locate(&child.d, &cls, &local) < 0:
                return 4
            if self.ptr[cls] == NULL:
                return 1
            v = self.ptr[cls][local]
            if v == 0:
                return 1
            d = (v & 127) + 1
            if v & 128:         # the opponent wins there
                if d > worst_loss:
                    worst_loss = d
            elif d < best_win:
                best_win = d
        # a distance past 127 plies (long pass sequences, from k = 5 on) is kept as 127,
        # "127 or more": the win/loss bit stays exact, only the distance saturates
        if best_win < 1000:
            res[at] = 128 | (best_win if best_win < 127 else 127)
        else:
            res[at] = worst_loss if worst_loss < 127 else 127
        return 0
