# cython: language_level=3
"""Depth-first proof-number search (df-pn) for two-player win/draw/loss games, in Cython.

What it decides. Whether the player to move wins (value 1), draws (0.5) or loses (0) with
perfect play, for any game behind the contract (ext/game.pxd) with two players, no chance,
no simultaneous moves, nothing hidden, returns 1/0, 0/1 or 0.5/0.5, and an acyclic game
graph (Lotus: stones only move forward, and two passes in a row cannot happen). It reads
the game only through the `c_*` methods: legal actions, apply, copy, hash, terminal test,
returns, mover, and the evaluation (for move ordering only).

Draws. Proof numbers decide yes/no questions, so a draw is decided in two passes, as the
checkers proof did: in pass w a drawn end counts as a win for seat w. Pass 1 always runs;
pass 0 runs only once a draw has been met (a game without draws never pays for it). For
the mover m, the pass that counts draws for m answers "m gets at least a draw" and the
other "m wins outright"; the two answers give 1, 0.5 or 0. Both passes share the table
(pass 0's keys are salted). On Lotus (no draws) nothing changes: towers 3..1 basic takes
the same 1,061,650 expansions, at 699K nodes/s before and 717K after (CPU time, medians
of 4 alternating runs each on a loaded 2-core machine: the same within its noise).

Proof numbers (Allis). For a position n with the mover to play, pn(n) is the least number of
leaves that must still be shown won to prove "the mover wins", dn(n) the least to prove "the
mover loses". A won position has (pn, dn) = (0, inf), a lost one (inf, 0), an unexplored one
(1, 1). We keep both numbers in the mover's perspective (negamax form), so with c the child
after a move and the other player to move there (its numbers seen from our side swapped):
    pn(n) = min over c of dn(c)        (one winning move suffices)
    dn(n) = sum over c of pn(c)        (every move must lose)
A child with the *same* mover (Lotus pro opening: seat 0 moves twice) is taken unswapped.
The most-proving child is the one with the smallest dn(c): expanding it moves pn(n) most.

df-pn (Nagai 2002). Best-first proof-number search needs the whole tree in memory; df-pn
gets the same expansion order depth-first: MID(n, thpn, thdn) keeps working below n only
while pn(n) < thpn and dn(n) < thdn, i.e. while n stays on the most-proving path; the child
c1 gets the thresholds that keep it most-proving (the second-best child's value, and our dn
threshold minus what its siblings already contribute). Children are not kept: their numbers
live in a transposition table and each MID call regenerates the moves (a "node" below is
one such expansion).

The 1+epsilon trick (Pawlewicz & Lew 2007). With the plain threshold (second best + 1) the
search "seesaws" between two children of nearly equal value, re-expanding each subtree
many times. We let c1 run until its value exceeds the second best by a factor 1+eps
(eps = 1/4 by default), which cuts re-expansions sharply at a tiny cost in best-first
accuracy.

Move ordering. Expanding n first looks at every move: a move that ends the game in our
favour proves n at once (the rest are not looked at), and a child already proven a win for
us in the table does the same (an enhanced transposition cutoff, free since we probe every
child anyway). The others are sorted by the game's evaluation of the child, best first,
which only matters for ties of proof numbers (e.g. the (1, 1) of unexplored children).

Transposition table. Buckets of PN_BUCKET entries (key, pn, dn, work, proving move); a
position's bucket is chosen by the high bits of its 64-bit key, the full key is compared.
`work` is the number of expansions spent below the position; when a bucket is full the
entry with the least work is replaced (small-tree replacement: big subtrees are the
expensive ones to redo). Replaced entries that held unfinished work are counted, and large
ones (work >= big_work) are reported: that is the sign of a table too small for the
problem, which df-pn otherwise suffers silently as re-search.

Shared tables (SharedProofTable). Processes forked after the table is mapped can all
search in it at once, without locks (the parallel workers of niwa.solver.proof_tree). An
entry is three 64-bit words, each read and written whole; the first is a check word, the
key xor the second xor the third times an odd constant, and a write goes check = 0, data,
check while a read takes the data, then the check. A slot that two writes left mixed, or
that is read while it is written, fails the check and is a miss; so every entry a search
reads is one some search stored for that key, and every proof in it is sound. On one
process the layout costs nothing measurable (towers 3..1 pro/mandatory, plain df-pn:
0.757M against 0.733M nodes per CPU second before, alternating runs, same node count).

Initial numbers (init="mobility"). An unexplored child gets pn 1 (one good move could
prove it) and dn = its number of legal moves (every one must be refuted), instead of (1, 1):
the search then prefers moves that leave the opponent few replies.

Symmetry (symmetry="auto"). A KeyHook may map symmetric positions to one key; for Lotus,
State.c_symmetric_hash folds the mirror image (lanes a and b swapped) onto one entry.

Endgame tables (tables=). An ExactValues object (niwa.ext.exact; a Lotus endgame table,
docs/endgame-tables.md) is asked about every child as it is generated and about the root:
where it answers, the position is a proven leaf (a win for us proves the parent at once,
like a winning move), so the search never expands below the tables' frontier.

Each step, measured in expansions on the standard board (towers 3..1, basic rule,
trampoline optional / mandatory; reference C solver: 1.11M / 0.33M):
    plain df-pn, (1, 1) initial numbers      27.96M / 12.89M
    + 1+eps trick (eps = 1/4)                  3.26M /  1.22M
    + mobility initial numbers                 1.67M /  0.77M
    + lane symmetry                            1.06M /  0.31M
(Ordering ties by the evaluation, weak proof numbers and evaluation-based initial numbers
were tried and did not help: options order="evaluation", weak=True, init="evaluation".)

Node rate, each step measured as a ratio of nodes per CPU second against the step before,
alternating runs in one go (towers 3..1 pro/mandatory, 16.7M nodes, 512 MB table, same
node counts; bench/perfect-play/pn-speed):
    the children's buckets prefetched back to back before they are probed, not one per
      child between move generations (a prefetch waits for its page walk)       1.23x
    Lotus keeps its hash and its mirror's in c_apply (was 15% of the time)     1.28x
    both cache lines of a bucket prefetched, siblings' too before re-reading
      them, hot methods noexcept                                                1.04x
    Lotus's c_copy_from stops after the board's last space (half the struct)   1.09x
From ~0.95M to ~1.6M nodes per CPU second on a loaded machine, and 1.3x the plain-C
reference's node rate (bench/perfect-play/pn-speed/README.md). Huge pages (huge_pages=True)
give another ~1.3x on long searches but cost a first touch of each 2 MB page (measured:
10 s of system time for a 1 s search in a 4 GB table), so they stay opt-in.
Node counts, tried and not kept (results/nodes.csv there). Keeping one child per key
(twins=True: two moves to one position, or to mirror images) counts such a subtree once in
the dn sum: 10% fewer nodes on towers 3..1 basic, 18% on the full basic/mandatory game, 2%
on towers 3..1 pro/optional, but 6-17% more on towers 3..1 pro/mandatory and 21% more on
the full basic/optional game (4 GB table); off by default. eps = 1/2: 14-20% fewer on towers
3..1 basic, 24% more on the full basic/mandatory game. Buckets of 8 entries instead of 4:
28% fewer nodes on towers 3..1 pro/optional in a 2 GB table (240M -> 172M, as many as a
4 GB table needs), but 29% more on the full basic/optional game in a 4 GB table (234M ->
301M); not kept. Under table pressure the node counts move by tens of percent with the
table's size and layout (towers 3..1 pro/mandatory: 14.4M to 16.7M between 512 MB and
4 GB), so a change is judged on several cases and sizes.

Values are exact (no heuristic enters a proof); only hash collisions of two positions on
all 64 bits could mislead it.
"""
from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset
from posix.mman cimport (MADV_DONTNEED, MADV_HUGEPAGE, MAP_ANONYMOUS, MAP_FAILED, MAP_PRIVATE, MAP_SHARED,
                         PROT_READ, PROT_WRITE, madvise, mmap, munmap)
from posix.time cimport CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, clock_gettime, timespec

from niwa.ext.exact cimport ExactValues
from niwa.ext.game cimport CHANCE, MAX_ACTIONS, MAX_PLAYERS, SIMULTANEOUS, TERMINAL, State

from niwa.ext.errors import NiwaError
from niwa.solver.proof_result import MoveValue, ProofResult

cdef enum:
    KIND_FLIP = 0   # the other player moves in the child: its (pn, dn) swap in our view
    KIND_SAME = 1   # the same player moves again (a two-action turn)
    KIND_WIN = 2    # the move ends the game, won by the mover
    KIND_LOSS = 3   # the move ends the game, lost by the mover

cdef uint32_t INF = 0xFFFFFFFF      # an infinite proof/disproof number
cdef uint32_t PN_MAX = 0xFFFFFFFE   # finite numbers saturate here (sums of disproof numbers)
cdef uint32_t WORK_MAX = 0xFFFFFFFF
cdef double EVAL_INIT_SCALE = 4.0   # init="evaluation": numbers 1..5 from the evaluation
cdef uint64_t DRAW_PASS_SALT = 0xD1B54A32D192ED03ULL    # table keys of pass 0 (draws win for seat 0)

MAX_TT_MB = (1 << 32) * PN_BUCKET * sizeof(PNSlot) // 1048576
SHARED_MAGIC = 0x6E6977612D747431       # "niwa-tt1": a SharedProofTable's header
cdef size_t SHARED_HEADER_BYTES = 4096


cdef extern from *:
    """
    #include <stdint.h>
    /* Table words are read and written whole (relaxed atomics: plain moves on x86-64 and
       ARM64), so the key check compares exactly the values that are then used. */
    static inline uint64_t niwa_load64(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline void niwa_store64(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    /* The check word: the key xor a hash of the two data words (the first word xor the
       second times an odd constant, times another, high half folded down; each step a
       bijection). Words of two entries then combine to a valid check only by a 64-bit
       coincidence. A check linear in the words (key ^ nums ^ extra * c) could be matched
       on purpose: a key equal to extra * c made a slot mixed from two writes read as an
       entry. (SplitMix64's full finaliser cost 2% of the node rate; this one multiply less.) */
    static inline uint64_t niwa_check_hash(uint64_t nums, uint64_t extra) {
        uint64_t x = (nums ^ (extra * 0x9E3779B97F4A7C15ULL)) * 0xBF58476D1CE4E5B9ULL;
        return x ^ (x >> 32); }
    static inline uint64_t niwa_check(uint64_t key, uint64_t nums, uint64_t extra) {
        return key ^ niwa_check_hash(nums, extra); }
    /* Slot writes: check = 0 first, the data, the check last; reads take the data first and
       the check last (a seqlock's order), so a read during a write sees check 0 or the new
       check, never the old check with new data. Fences: compiler barriers on x86-64. */
    static inline void niwa_fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
    static inline void niwa_fence_acquire(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
    static inline uint32_t niwa_load32_acquire(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void niwa_store32_release(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    """
    uint64_t niwa_load64(const uint64_t* p) noexcept nogil
    void niwa_store64(uint64_t* p, uint64_t v) noexcept nogil
    uint64_t niwa_check(uint64_t key, uint64_t nums, uint64_t extra) noexcept nogil
    uint64_t niwa_check_hash(uint64_t nums, uint64_t extra) noexcept nogil
    void niwa_fence_release() noexcept nogil
    void niwa_fence_acquire() noexcept nogil
    uint32_t niwa_load32_acquire(const uint32_t* p) noexcept nogil
    void niwa_store32_release(uint32_t* p, uint32_t v) noexcept nogil


class ProofTableError(NiwaError, MemoryError):
    """The proof table cannot be had at the size asked (a one-line message)."""


cdef enum:
    INIT_UNIFORM = 0
    INIT_MOBILITY = 1
    INIT_EVALUATION = 2

INIT_MODES = {"uniform": INIT_UNIFORM, "mobility": INIT_MOBILITY, "evaluation": INIT_EVALUATION}


cdef extern from *:
    void __builtin_prefetch(const void* addr) nogil


cdef inline double now(bint cpu=False) noexcept nogil:
    """Wall-clock seconds, or with `cpu` the CPU seconds this thread has used."""
    cdef timespec ts
    clock_gettime(CLOCK_THREAD_CPUTIME_ID if cpu else CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef enum:
    CHILD_OPEN = 0      # init_child: the child is in the lists
    CHILD_WINS = 1      # the move ends the game, won by the mover: the position is proven
    CHILD_FAILS = 2     # the game is not one proof search handles (self.error is set)


cdef inline uint32_t select_best(const uint32_t* cp, const uint32_t* cd, int n, bint weak,
                                 int* c1_out, uint64_t* p2_out, uint32_t* dn_out) noexcept nogil:
    """The numbers of a position from its children's (cp, cd), in our perspective: returns
    pn (the least cp), sets dn (the sum, or weak: max + open - 1, of cd), the most-proving
    child c1 (the first with the least cp) and p2 (the second least cp)."""
    cdef uint32_t pn = INF
    cdef uint64_t p2 = INF, sum_d = 0, max_d = 0
    cdef int c1 = 0, live = 0, i
    for i in range(n):
        if cp[i] < pn:
            p2 = pn
            pn = cp[i]
            c1 = i
        elif cp[i] < p2:
            p2 = cp[i]
        sum_d += cd[i]
        if cd[i] > max_d:
            max_d = cd[i]
        if cd[i] != 0:
            live += 1
    if weak and live > 0:
        # weak proof numbers (Ueda et al. 2008): max + (open children - 1) instead
        # of the sum, which double-counts transposed subtrees in a DAG
        sum_d = max_d + live - 1
    if pn == 0:
        dn_out[0] = INF
    else:
        dn_out[0] = <uint32_t>(sum_d if sum_d < PN_MAX else PN_MAX)
    c1_out[0] = c1
    p2_out[0] = p2
    return pn


cdef inline void child_thresholds(uint64_t p2, uint32_t dn, uint32_t cd1, uint32_t thpn,
                                  uint32_t thdn, double eps, uint64_t* tp_out,
                                  uint64_t* td_out) noexcept nogil:
    """Thresholds (our perspective) for the most-proving child, whose cd is cd1: stay below
    the second best child p2 (times 1+eps), and below our dn threshold minus the siblings'
    share of dn."""
    cdef uint64_t tp, td
    if p2 >= INF:
        tp = thpn
    else:
        tp = p2 + <uint64_t>(p2 * eps)
        if tp <= p2:
            tp = p2 + 1
        if tp > thpn:
            tp = thpn
    if thdn >= INF:
        td = INF
    else:
        td = <uint64_t>thdn - dn + cd1
        if td >= INF:
            td = PN_MAX
    tp_out[0] = tp
    td_out[0] = td


cdef class KeyHook:
    """The identity hook: a position's key is the game's own hash. Subclass it to fold
    symmetric positions together (override `key` and `accepts`)."""

    cdef uint64_t key(self, State s) noexcept:
        return s.c_hash()

    cpdef bint accepts(self, State s):
        return True


def _available_bytes():
    """MemAvailable from /proc/meminfo (Linux), or None where that is not known."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


cdef uint64_t _buckets(double tt_mb) except 0:
    """The number of buckets of a table of `tt_mb` megabytes (at least one)."""
    cdef uint64_t n = <uint64_t>(tt_mb * 1048576.0 / (PN_BUCKET * sizeof(PNSlot)))
    if n < 1:
        n = 1
    if n >= (<uint64_t>1) << 32:
        raise ProofTableError(f"a {tt_mb:g} MB proof table is above the largest one "
                              f"({MAX_TT_MB:,} MB: 2^32 buckets)")
    return n


cdef void* _map(size_t nbytes, double tt_mb, bint huge_pages, bint shared) except NULL:
    """Map `nbytes` of zeroed memory for a table (committed only when touched); `shared`:
    visible to the processes this one forks."""
    avail = _available_bytes()
    if avail is not None and nbytes > avail:
        # the mapping itself would succeed (pages are committed lazily) and the process
        # would be killed only once the table fills: refuse now instead
        raise ProofTableError(f"a {tt_mb:g} MB proof table does not fit in the "
                              f"{avail / 1048576:.0f} MB of memory available")
    cdef void* mem = mmap(NULL, nbytes, PROT_READ | PROT_WRITE,
                          (MAP_SHARED if shared else MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0)
    if mem == MAP_FAILED:
        raise ProofTableError(f"cannot map a {tt_mb:g} MB proof table (not enough "
                              f"memory, or a limit such as ulimit -v)")
    if huge_pages:
        madvise(mem, nbytes, MADV_HUGEPAGE)
    return mem


def _check_word(uint64_t key, uint64_t nums, uint64_t extra):
    """The check word a slot holding (key, nums, extra) carries (tests)."""
    return niwa_check(key, nums, extra)


cdef class SharedProofTable:
    """A df-pn table of `tt_mb` megabytes that the processes this one forks afterwards
    share: each makes `ProofSearch(shared=table)` and all of them read and write the same
    entries, without locks. Sound with concurrent writers: an entry is three 64-bit words,
    written whole, the first of them the key xor the other two, so a slot that two writes
    left mixed fails its key check and reads as a miss (a lost entry, searched again),
    never as a wrong proof; a proven entry read back is always one some search stored.
    Only processes forked after it is made see it (the mapping is inherited, not named):
    nothing is left behind when they all end, even by SIGKILL.

    >>> t = SharedProofTable(1)
    >>> t.tt_mb, t.nbuckets > 0
    (1.0, True)
    """

    def __cinit__(self):
        self.mem = NULL

    def __init__(self, double tt_mb, bint huge_pages=False):
        if not tt_mb > 0:
            raise ValueError("tt_mb must be positive")
        self.nbuckets = _buckets(tt_mb)
        self.tt_mb = tt_mb
        self.mem_bytes = SHARED_HEADER_BYTES + self.nbuckets * PN_BUCKET * sizeof(PNSlot)
        self.mem = _map(self.mem_bytes, tt_mb, huge_pages, True)
        self.header = <SharedHeader*>self.mem
        self.header.magic = SHARED_MAGIC
        self.header.nbuckets = self.nbuckets
        self.slots = <PNSlot*>(<char*>self.mem + SHARED_HEADER_BYTES)

    def __dealloc__(self):
        if self.mem != NULL:
            munmap(self.mem, self.mem_bytes)

    def clear(self):
        """Empty the table for every process that maps it (pages stay committed: a shared
        mapping cannot hand them back with MADV_DONTNEED)."""
        memset(self.slots, 0, self.mem_bytes - SHARED_HEADER_BYTES)
        niwa_store32_release(&self.header.draws_seen, 0)

    def _write_raw(self, uint64_t slot, uint64_t check, uint64_t nums, uint64_t extra):
        """Write one slot's three words as given (tests: simulate torn or foreign writes)."""
        if slot >= self.nbuckets * PN_BUCKET:
            raise IndexError("slot out of range")
        niwa_store64(&self.slots[slot].check, check)
        niwa_store64(&self.slots[slot].nums, nums)
        niwa_store64(&self.slots[slot].extra, extra)

    def _read_raw(self, uint64_t slot):
        if slot >= self.nbuckets * PN_BUCKET:
            raise IndexError("slot out of range")
        return (niwa_load64(&self.slots[slot].check), niwa_load64(&self.slots[slot].nums),
                niwa_load64(&self.slots[slot].extra))

    def bucket_of(self, uint64_t key):
        """The first slot of the bucket a key lives in."""
        return (((key >> 32) * self.nbuckets) >> 32) * PN_BUCKET


def _other_game(State held, State state):
    """True when the table's positions (`held`) belong to another game or variant than
    `state`: every plain-Python game is a PythonGameState, so the name is compared too."""
    return held.game_name != state.game_name or _variant(held) != _variant(state)


def _variant(state):
    try:
        return state.variant
    except NotImplementedError:
        return None


cdef class SymmetricKeys(KeyHook):
    """Keys from the game's own symmetry (State.c_symmetric_hash: Lotus folds a position
    and its lane mirror together; games without a symmetry give their plain hash).

    >>> from niwa.ext.lotus import LotusState
    >>> ProofSearch(tt_mb=8, symmetry=SymmetricKeys()).solve(LotusState(towers=2)).value
    0.0
    """

    cdef uint64_t key(self, State s) noexcept:
        return s.c_symmetric_hash()


cdef class SpreadKeys(KeyHook):
    """The game's symmetric hash, spread over all 64 bits (a bijection: no new collisions).
    The table's bucket comes from a key's high bits, so a game whose hash is a small
    number (a plain-Python plugin's board code, e.g. tic-tac-toe's base-3 cells) would
    put every position into a handful of buckets; Zobrist keys need no spreading."""

    cdef uint64_t key(self, State s) noexcept:
        cdef uint64_t h = s.c_symmetric_hash()
        h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ULL
        return h ^ (h >> 29)


def _known_symmetry(state):
    """The hook of symmetry="auto": the game's own symmetric hash (spread for plain-Python
    games, whose hash() may be any small number)."""
    from niwa.ext.python_state import PythonGameState

    return SpreadKeys() if isinstance(state, PythonGameState) else SymmetricKeys()


cdef inline bint _is_kept(uint64_t check, uint64_t nums, uint64_t extra,
                          long long min_work) noexcept:
    """Whether one read of a slot's three words is a row proven_entries keeps: a proof (as
    load_proven takes it) of at least `min_work` expansions, under a key that is not 0."""
    cdef uint32_t pn = <uint32_t>nums, dn = <uint32_t>(nums >> 32)
    if check == 0 or <long long>(<uint32_t>extra) < min_work:
        return False        # an empty slot, one being written, or a cheap proof
    if not ((pn == 0 and dn == INF) or (pn == INF and dn == 0)):
        return False
    return (check ^ niwa_check_hash(nums, extra)) != 0


cdef class ProofSearch:
    """df-pn with the 1+eps trick over a transposition table of `tt_mb` megabytes.

    >>> from niwa.ext.lotus import LotusState
    >>> r = ProofSearch(tt_mb=16).solve(LotusState(towers=1, lane=1, shared=2, trampoline_at=3))
    >>> r.proven, r.value, len(r.pv) > 0
    (True, 0.0, True)
    """

    def __cinit__(self):
        self.tt = NULL
        self.states = NULL
        self.c_move = NULL
        self.c_key = NULL
        self.c_kind = NULL
        self.c_p = NULL
        self.c_d = NULL
        self.c_score = NULL
        self.scratch = NULL

    def __init__(self, double tt_mb=256, double eps=0.25, str init="mobility", str order="none",
                 symmetry="auto", bint weak=False, int max_ply=1024, long long big_work=10000,
                 bint reprobe=True, bint huge_pages=False, ExactValues tables=None,
                 SharedProofTable shared=None, bint twins=False):
        """`tt_mb`: table size in MB (24 bytes an entry). `eps`: the 1+eps trick (0 = plain
        df-pn). `init`: numbers of unexplored children: "mobility" (pn 1, dn = their number
        of moves; on Lotus towers 3..1 it halves the nodes), "uniform" (1, 1) or
        "evaluation" (from c_evaluate). `order`: tie-break among equal proof numbers,
        "none" (move generation order) or "evaluation". `symmetry`: a KeyHook, None, or
        "auto" (the game's own symmetry: State.c_symmetric_hash). `weak`: weak
        proof numbers (max + open children - 1 instead of the sum). `big_work`: the
        expansions above which an overwritten unfinished entry counts as a sign of a table
        too small. `reprobe`: re-read siblings from the table after each descent. `huge_pages`:
        ask the kernel for 2 MB pages for the table. `tables`: exact values
        (niwa.ext.exact.ExactValues, e.g. a Lotus endgame table) taken as proven leaves
        wherever they answer (used only for positions of the game and variant it accepts).
        `shared`: work in this SharedProofTable (mapped by several processes) instead of a
        table of its own; tt_mb and huge_pages are then the shared table's."""
        if init not in INIT_MODES:
            raise ValueError(f"init must be one of {', '.join(INIT_MODES)}, got {init!r}")
        if order not in ("none", "evaluation"):
            raise ValueError(f"order must be 'none' or 'evaluation', got {order!r}")
        if not (symmetry is None or symmetry == "auto" or isinstance(symmetry, KeyHook)):
            raise ValueError("symmetry must be None, 'auto' or a KeyHook")
        self.init_mode = INIT_MODES[init]
        self.order = order == "evaluation"
        self.auto_symmetry = symmetry == "auto"
        self.hook = symmetry if isinstance(symmetry, KeyHook) else None
        self.weak = weak
        self.scratch = <int*>malloc(MAX_ACTIONS * sizeof(int))
        if not tt_mb > 0:
            raise ValueError("tt_mb must be positive")
        if not 0 <= eps <= 4:
            raise ValueError("eps must be in 0..4 (0 = plain df-pn thresholds)")
        if not 16 <= max_ply <= 100000:
            raise ValueError("max_ply must be in 16..100000")
        self.tt_mb = tt_mb
        self.eps = eps
        self.max_ply = max_ply
        self.big_work = big_work
        self.reprobe = reprobe
        self.twins = twins
        if shared is not None:
            self.shared = shared
            self.tt = shared.slots
            self.nbuckets = shared.nbuckets
            self.capacity = self.nbuckets * PN_BUCKET
            self.tt_bytes = self.capacity * sizeof(PNSlot)
            self.tt_mb = shared.tt_mb
        else:
            self._map_table(tt_mb, huge_pages)
        self.states = <PyObject**>calloc(max_ply + 1, sizeof(PyObject*))
        cdef size_t slots = <size_t>max_ply * MAX_ACTIONS
        self.c_move = <int*>malloc(slots * sizeof(int))
        self.c_key = <uint64_t*>malloc(slots * sizeof(uint64_t))
        self.c_kind = <unsigned char*>malloc(slots * sizeof(unsigned char))
        self.c_p = <uint32_t*>malloc(slots * sizeof(uint32_t))
        self.c_d = <uint32_t*>malloc(slots * sizeof(uint32_t))
        self.c_score = <float*>malloc(slots * sizeof(float))
        if self.states == NULL or self.c_move == NULL or self.c_key == NULL \
                or self.c_kind == NULL or self.c_p == NULL or self.c_d == NULL or self.c_score == NULL \
                or self.scratch == NULL:
            raise ProofTableError(f"cannot allocate a {tt_mb:g} MB proof table and {max_ply} "
                                  f"plies")
        self.state_refs = None
        self.used = 0
        self.draws_seen = False
        self.set_pass(1)
        self.exact = tables
        self.exact_on = False
        self.table_hits = 0

    def _map_table(self, double tt_mb, bint huge_pages):
        """Size the table (buckets of PN_BUCKET entries) and map it."""
        self.nbuckets = _buckets(tt_mb)
        self.capacity = self.nbuckets * PN_BUCKET
        # The table is mapped (zero pages, committed only when touched). With huge_pages it
        # is also asked for 2 MB pages: with 4 kB pages nearly every probe of a multi-GB
        # table misses the TLB too. Measured on a busy 2-core machine: ~25% faster on a
        # long run (towers 3..1 pro/mandatory), but the first touch of each 2 MB page may
        # stall on memory compaction (a 1 s proof took 14 s), so it is off by default.
        self.tt_bytes = self.capacity * sizeof(PNSlot)
        self.tt = <PNSlot*>_map(self.tt_bytes, tt_mb, huge_pages, False)

    def __dealloc__(self):
        if self.tt != NULL and self.shared is None:
            munmap(self.tt, self.tt_bytes)
        free(self.states)
        free(self.c_move)
        free(self.c_key)
        free(self.c_kind)
        free(self.c_p)
        free(self.c_d)
        free(self.c_score)
        free(self.scratch)

    def clear(self):
        """Forget every table entry (a new game or variant). The pages are handed back to
        the kernel, which maps them as zero pages again when touched. A shared table is
        wiped for every process that maps it."""
        if self.shared is not None:
            self.shared.clear()
        elif madvise(self.tt, self.tt_bytes, MADV_DONTNEED) != 0:
            memset(self.tt, 0, self.tt_bytes)
        self.used = 0
        self.draws_seen = False

    cdef inline bint draws_anywhere(self) noexcept:
        """A draw was met by this search or, in a shared table, by any process using it:
        then the pass-1 entries answer only "at least a draw" for seat 1."""
        if self.draws_seen:
            return True
        return self.shared is not None and niwa_load32_acquire(&self.shared.header.draws_seen) != 0

    cdef inline void note_draw(self) noexcept:
        self.draws_seen = True
        if self.shared is not None:
            # published before any entry that depends on the draw is stored
            niwa_store32_release(&self.shared.header.draws_seen, 1)

    cdef inline void set_pass(self, int draw_winner) noexcept:
        """Search in the pass where a drawn end counts as a win for seat `draw_winner` (and
        a loss for the other); pass 1 is the default, and the only one a game without
        draws ever needs."""
        self.draw_winner = draw_winner
        self.pass_salt = 0 if draw_winner == 1 else DRAW_PASS_SALT

    # ---- transposition table ------------------------------------------------------------
    cdef inline uint64_t key_of(self, State s, int mover) noexcept:
        # the mover is mixed in (pn/dn are in its perspective) even if the game's hash has it
        # and the pass (how a draw counts) salts it, so both passes share one table
        cdef uint64_t k = (self.hook.key(s) if self.hook is not None else s.c_hash()) ^ ((<uint64_t>(mover + 1)) * 0x9E3779B97F4A7C15ULL) ^ self.pass_salt
        return k if k != 0 else 1

    cdef inline void prefetch(self, uint64_t key) noexcept:
        """Start fetching the bucket of `key`: every cache line of it (4 slots of 24 bytes
        always straddle a 64-byte line boundary)."""
        cdef char* b = <char*>(self.tt + (((key >> 32) * self.nbuckets) >> 32) * PN_BUCKET)
        cdef size_t off
        for off in range(0, PN_BUCKET * sizeof(PNSlot), 64):
            __builtin_prefetch(b + off)
        __builtin_prefetch(b + PN_BUCKET * sizeof(PNSlot) - 1)

    cdef inline bint probe(self, uint64_t key, PNEntry* out) noexcept:
        """Copy the entry of `key` into `out`; False if the table has none. Each slot's
        words are read once and checked against the key, so a slot another process is
        writing at the same moment reads as a miss, never as a mix of two entries."""
        cdef PNSlot* b = self.tt + (((key >> 32) * self.nbuckets) >> 32) * PN_BUCKET
        cdef uint64_t nums, extra, check
        cdef int i
        for i in range(PN_BUCKET):
            nums = niwa_load64(&b[i].nums)
            extra = niwa_load64(&b[i].extra)
            niwa_fence_acquire()
            check = niwa_load64(&b[i].check)
            # a check word of 0 is a slot being written (or empty): a miss, even for the
            # key whose check of these words would come out 0
            if check != 0 and check == niwa_check(key, nums, extra):
                out.key = key
                out.pn = <uint32_t>nums
                out.dn = <uint32_t>(nums >> 32)
                out.work = <uint32_t>extra
                out.best = <int32_t><uint32_t>(extra >> 32)
                return True
        return False

    cdef void store(self, uint64_t key, uint32_t pn, uint32_t dn, long long work, int best) noexcept:
        cdef PNSlot* b = self.tt + (((key >> 32) * self.nbuckets) >> 32) * PN_BUCKET
        cdef PNSlot* e = NULL
        cdef PNSlot* empty = NULL
        cdef PNSlot* victim = b
        cdef uint64_t nums, extra, check, victim_nums = 0
        cdef uint32_t w, victim_work = 0xFFFFFFFF
        cdef int i
        for i in range(PN_BUCKET):
            nums = niwa_load64(&b[i].nums)
            extra = niwa_load64(&b[i].extra)
            niwa_fence_acquire()
            check = niwa_load64(&b[i].check)    # read once: the words it is checked against
            w = <uint32_t>extra
            if check != 0 and check == niwa_check(key, nums, extra):
                e = &b[i]
                work += w
                break
            if check == 0 and nums == 0 and extra == 0:
                if empty == NULL:
                    empty = &b[i]
            elif w < victim_work or i == 0:
                # small-tree replacement: the entry that cost the least to compute (the
                # first of equals; a slot being written by another process decodes to
                # garbage and may go too, which only costs a re-search)
                victim, victim_work, victim_nums = &b[i], w, nums
        if e == NULL:
            if empty != NULL:
                e = empty
                self.used += 1
            else:
                e = victim
                self.overwrites += 1
                if <uint32_t>victim_nums != 0 and <uint32_t>(victim_nums >> 32) != 0:
                    self.overwritten_unproven += 1
                    if victim_work >= self.big_work:
                        self.overwritten_big += 1
                    if victim_work > self.max_overwritten_work:
                        self.max_overwritten_work = victim_work
        nums = <uint64_t>pn | (<uint64_t>dn << 32)
        extra = <uint64_t>(<uint32_t>(work if work < WORK_MAX else WORK_MAX)) | \
            (<uint64_t>(<uint32_t>best) << 32)
        niwa_store64(&e.check, 0)       # a reader in between sees a miss, not the old entry
        niwa_fence_release()
        niwa_store64(&e.nums, nums)
        niwa_store64(&e.extra, extra)
        niwa_fence_release()
        niwa_store64(&e.check, niwa_check(key, nums, extra))

    # ---- the search ---------------------------------------------------------------------
    cdef void mid(self, int ply, uint64_t key, uint32_t thpn, uint32_t thdn,
                  uint32_t* out_pn, uint32_t* out_dn) noexcept:
        """Work below the position at `ply` (key `key`) until its pn reaches thpn or its dn
        reaches thdn (mover's perspective); store and return its numbers."""
        cdef State s = <State>self.states[ply]
        cdef State child = <State>self.states[ply + 1]
        cdef size_t base = <size_t>ply * MAX_ACTIONS
        cdef uint32_t* cp = self.c_p + base     # children's numbers in OUR perspective:
        cdef uint32_t* cd = self.c_d + base     # cp = cost to prove we win through it
        cdef long long nodes0 = self.nodes
        cdef uint64_t p2, tp, td
        cdef uint32_t pn, dn, a_pn, a_dn
        cdef int n, c1
        if not self.enter_node(ply, key, out_pn, out_dn):
            return
        n = self.expand_children(ply, key, nodes0, out_pn, out_dn)
        if n == 0:
            return
        # -- the MID loop: descend into the most-proving child c1 while n stays below its
        # thresholds
        while True:
            pn = select_best(cp, cd, n, self.weak, &c1, &p2, &dn)
            if pn == 0 or dn == 0 or pn >= thpn or dn >= thdn or self.stop:
                break
            child_thresholds(p2, dn, cd[c1], thpn, thdn, self.eps, &tp, &td)
            child.c_copy_from(s)
            child.c_apply(self.c_move[base + c1])
            if self.c_kind[base + c1] == KIND_FLIP:
                self.mid(ply + 1, self.c_key[base + c1], <uint32_t>td, <uint32_t>tp, &a_pn, &a_dn)
                cp[c1] = a_dn
                cd[c1] = a_pn
            else:
                self.mid(ply + 1, self.c_key[base + c1], <uint32_t>tp, <uint32_t>td, &a_pn, &a_dn)
                cp[c1] = a_pn
                cd[c1] = a_dn
            if self.reprobe and cp[c1] != 0:
                # siblings may have changed meanwhile (transpositions inside c1's subtree)
                self.reprobe_siblings(base, n, c1)
        self.store(key, pn, dn, self.nodes - nodes0, self.c_move[base + c1] if pn == 0 else -1)
        out_pn[0] = pn
        out_dn[0] = dn

    cdef inline bint enter_node(self, int ply, uint64_t key, uint32_t* out_pn, uint32_t* out_dn) noexcept:
        """Count the node and check the budgets and the depth limit. False if the search
        stops here; the position's numbers (the table's, else (1, 1)) are then returned."""
        cdef PNEntry e
        self.nodes += 1
        if ply > self.deepest:
            self.deepest = ply
        if (self.nodes & 1023) == 0 and self.deadline > 0 and now(self.cpu_clock) >= self.deadline:
            self.stop = True
            self.stop_reason = "time limit"
        if self.max_nodes > 0 and self.nodes >= self.max_nodes and not self.stop:
            self.stop = True
            self.stop_reason = "node limit"
        if ply + 1 >= self.max_ply and not self.stop:
            self.stop = True
            self.error = (f"the game went deeper than {self.max_ply} plies: proof search needs "
                          f"an acyclic game (raise max_ply if the game is just long)")
        if self.stop:
            if self.probe(key, &e):
                out_pn[0] = e.pn
                out_dn[0] = e.dn
            else:
                out_pn[0] = out_dn[0] = 1
            return False
        return True

    cdef inline int expand_children(self, int ply, uint64_t key, long long nodes0,
                                    uint32_t* out_pn, uint32_t* out_dn) noexcept:
        """Generate and initialise the children of the position at `ply` in the per-ply
        lists; their number, or 0 if the position is settled here (an immediate win, a child
        the table proves good for us: stored) or the search fails (self.error), its numbers
        then in out_pn/out_dn."""
        cdef State s = <State>self.states[ply]
        cdef State child = <State>self.states[ply + 1]
        cdef int mover = s.c_current_player(), n, i, how
        cdef size_t base = <size_t>ply * MAX_ACTIONS
        cdef int* mv = self.c_move + base
        n = s.c_legal_actions(mv)
        if n <= 0:
            self.stop = True
            self.error = "a position that is not over has no legal action"
            out_pn[0] = out_dn[0] = 1
            return 0
        # pass 1: play every move; an immediate win ends it here. Other children get their
        # key and initial numbers.
        for i in range(n):
            child.c_copy_from(s)
            child.c_apply(mv[i])
            how = self.init_child(child, mover, base + i)
            if how == CHILD_WINS:
                # an immediate win proves n without looking at the other moves
                self.store(key, 0, INF, self.nodes - nodes0, mv[i])
                out_pn[0] = 0
                out_dn[0] = INF
                return 0
            if how == CHILD_FAILS:
                out_pn[0] = out_dn[0] = 1
                return 0
        if self.twins:
            n = self.merge_twins(base, n)
        # pass 2: what the table knows overrides the initial numbers; a child already
        # proven good for us proves n at once (an enhanced transposition cutoff). The
        # buckets are all prefetched first, back to back, so that their cache and TLB misses
        # overlap (a prefetch waits for its page walk: issued one per child between the
        # children's move generation, they took half the search's time one after another)
        for i in range(n):
            if self.c_kind[base + i] <= KIND_SAME:
                self.prefetch(self.c_key[base + i])
        i = self.probe_children(base, n)
        if i >= 0:
            self.store(key, 0, INF, self.nodes - nodes0, mv[i])
            out_pn[0] = 0
            out_dn[0] = INF
            return 0
        if self.order:
            self.sort_children(base, n)
        return n

    cdef inline int init_child(self, State child, int mover, size_t k) noexcept:
        """Fill slot `k` of the child lists for `child` (the move already played):
        CHILD_OPEN, or CHILD_WINS (the game ended in the mover's favour) or CHILD_FAILS (a
        game the search cannot handle: self.error)."""
        cdef int cm = child.c_current_player(), v
        cdef double r[MAX_PLAYERS]
        cdef double ev
        cdef uint32_t a_pn, a_dn
        if cm == TERMINAL:
            child.c_returns(r)
            if r[mover] == 1.0 and r[1 - mover] == 0.0:
                return CHILD_WINS
            if r[mover] != 0.0 or r[1 - mover] != 1.0:
                if r[0] != 0.5 or r[1] != 0.5:
                    self.stop = True
                    self.error = (f"a game ended with returns ({r[0]:g}, {r[1]:g}): proof "
                                  f"search needs a win/draw/loss game (returns 1/0, 0/1 or "
                                  f"0.5/0.5)")
                    return CHILD_FAILS
                # a draw: this pass counts it as a win for draw_winner
                self.note_draw()
                if mover == self.draw_winner:
                    return CHILD_WINS
            self.c_kind[k] = KIND_LOSS
            self.c_p[k] = INF
            self.c_d[k] = 0
            self.c_score[k] = -1.0
            return CHILD_OPEN
        if cm < 0:
            self.stop = True
            self.error = ("proof search met a chance node" if cm == CHANCE else
                          "proof search met a simultaneous-move node" if cm == SIMULTANEOUS
                          else f"proof search met an unknown node kind {cm}")
            return CHILD_FAILS
        if self.exact_on:
            # an endgame table answers: the child is a proven leaf (v is its mover's value)
            v = self.exact.c_value(child)
            if v >= 0:
                self.table_hits += 1
                if (v == 1) == (cm == mover):
                    return CHILD_WINS
                self.c_kind[k] = KIND_LOSS
                self.c_p[k] = INF
                self.c_d[k] = 0
                self.c_score[k] = -1.0
                return CHILD_OPEN
        self.c_key[k] = self.key_of(child, cm)
        self.c_score[k] = <float>child.c_evaluate(mover) if self.order else 0.0
        if self.init_mode == INIT_MOBILITY:
            # mobility initialisation (child's view): one winning move proves it, but
            # to disprove it every move there must be refuted
            a_pn = 1
            a_dn = child.c_legal_actions(self.scratch)
        elif self.init_mode == INIT_EVALUATION:
            # evaluation initialisation: the better the child looks for its mover,
            # the cheaper it seems to prove
            ev = child.c_evaluate(cm)
            a_pn = 1 + <uint32_t>(EVAL_INIT_SCALE * (1.0 - ev))
            a_dn = 1 + <uint32_t>(EVAL_INIT_SCALE * ev)
        else:
            a_pn = a_dn = 1
        self.c_kind[k] = KIND_FLIP if cm != mover else KIND_SAME
        self.c_p[k] = a_dn if cm != mover else a_pn      # children's numbers in OUR view
        self.c_d[k] = a_pn if cm != mover else a_dn
        return CHILD_OPEN

    cdef inline int merge_twins(self, size_t base, int n) noexcept:
        """Keep one child of each key (two moves to one position, or, under a symmetry
        hook, to a position and its mirror image): a subtree counted twice in the sum of
        disproof numbers overstates what it costs to refute the position. The number of
        children left."""
        cdef uint64_t* ck = self.c_key + base
        cdef unsigned char* kind = self.c_kind + base
        cdef int i, j, m = 0
        for i in range(n):
            if kind[i] <= KIND_SAME:
                j = 0
                while j < m and not (kind[j] <= KIND_SAME and ck[j] == ck[i]):
                    j += 1
                if j < m:
                    continue
            if m != i:
                self.c_move[base + m] = self.c_move[base + i]
                ck[m] = ck[i]
                kind[m] = kind[i]
                self.c_p[base + m] = self.c_p[base + i]
                self.c_d[base + m] = self.c_d[base + i]
                self.c_score[base + m] = self.c_score[base + i]
            m += 1
        return m

    cdef inline void read_child(self, size_t j) noexcept:
        """Child slot j's numbers from the table (in our view), if the table has them."""
        cdef PNEntry e
        if self.probe(self.c_key[j], &e):
            self.c_p[j] = e.dn if self.c_kind[j] == KIND_FLIP else e.pn
            self.c_d[j] = e.pn if self.c_kind[j] == KIND_FLIP else e.dn

    cdef inline int probe_children(self, size_t base, int n) noexcept:
        """Read the children's numbers from the table where it has them; the index of the
        first child proven good for us, else -1."""
        cdef int i
        for i in range(n):
            if self.c_kind[base + i] <= KIND_SAME:
                self.read_child(base + i)
                if self.c_p[base + i] == 0:
                    return i
        return -1

    cdef inline void sort_children(self, size_t base, int n) noexcept:
        """Insertion sort of the child lists by evaluation, best first (ties of proof
        numbers go to the first)."""
        cdef int* mv = self.c_move + base
        cdef uint64_t* ck = self.c_key + base
        cdef unsigned char* kind = self.c_kind + base
        cdef uint32_t* cp = self.c_p + base
        cdef uint32_t* cd = self.c_d + base
        cdef float* sc = self.c_score + base
        cdef int i, j, ti
        cdef uint64_t tk
        cdef unsigned char tc
        cdef uint32_t tu
        cdef float tf
        for i in range(1, n):
            j = i
            while j > 0 and sc[j] > sc[j - 1]:
                ti = mv[j]; mv[j] = mv[j - 1]; mv[j - 1] = ti
                tk = ck[j]; ck[j] = ck[j - 1]; ck[j - 1] = tk
                tc = kind[j]; kind[j] = kind[j - 1]; kind[j - 1] = tc
                tu = cp[j]; cp[j] = cp[j - 1]; cp[j - 1] = tu
                tu = cd[j]; cd[j] = cd[j - 1]; cd[j - 1] = tu
                tf = sc[j]; sc[j] = sc[j - 1]; sc[j - 1] = tf
                j -= 1

    cdef inline void reprobe_siblings(self, size_t base, int n, int c1) noexcept:
        """Re-read the open siblings of child c1 from the table (their buckets fetched
        together first, so the misses overlap)."""
        cdef int i
        for i in range(n):
            if i != c1 and self.c_kind[base + i] <= KIND_SAME and self.c_p[base + i] != 0 \
                    and self.c_d[base + i] != 0:
                self.prefetch(self.c_key[base + i])
        for i in range(n):
            if i != c1 and self.c_kind[base + i] <= KIND_SAME and self.c_p[base + i] != 0 \
                    and self.c_d[base + i] != 0:
                self.read_child(base + i)

    cdef int prove_at_root(self, State s):
        """Prove or disprove `s` (non-terminal) with infinite thresholds; 1 the mover
        wins, 0 it loses, -1 stopped (budget) or failed (self.error)."""
        cdef uint32_t pn, dn
        cdef int mover = s.c_current_player(), v
        cdef uint64_t key = self.key_of(s, mover)
        cdef PNEntry e
        if self.probe(key, &e) and (e.pn == 0 or e.dn == 0):
            return 1 if e.pn == 0 else 0
        if self.exact_on:
            v = self.exact.c_value(s)
            if v >= 0:
                self.table_hits += 1
                return v
        (<State>self.states[0]).c_copy_from(s)
        self.mid(0, key, INF, INF, &pn, &dn)
        if pn == 0:
            return 1
        if dn == 0:
            return 0
        return -1

    # ---- driver -------------------------------------------------------------------------
    def _prepare(self, State state):
        if state.num_players != 2:
            raise NiwaError(f"proof search solves two-player games; this position has "
                            f"{state.num_players} players")
        kind = state.c_current_player()
        if kind == TERMINAL:
            raise NiwaError("the position is already over: nothing to prove")
        if kind == CHANCE:
            raise NiwaError("proof search needs a deterministic game; this position is a chance node")
        if kind == SIMULTANEOUS:
            raise NiwaError("proof search needs alternating moves; this position is a "
                            "simultaneous-move node")
        if kind < 0:
            raise NiwaError(f"unknown node kind {kind}")
        if self.auto_symmetry:
            self.hook = _known_symmetry(state)
        if self.hook is not None and not self.hook.accepts(state):
            raise NiwaError(f"the symmetry {type(self.hook).__name__} does not apply to this "
                            f"{state.game_name} position")
        if any(state.hides_from(p) for p in range(state.num_players)):
            raise NiwaError("proof search needs perfect information; this position hides "
                            "something from a player")
        self.exact_on = self.exact is not None and self.exact.accepts(state)
        if not self.state_refs or type(self.state_refs[0]) is not type(state) or \
                _other_game(self.state_refs[0], state):
            if self.state_refs:
                self.clear()        # another game or variant: its entries mean nothing here
            self.state_refs = [state.c_clone() for _ in range(self.max_ply + 1)]
            for i in range(self.max_ply + 1):
                self.states[i] = <PyObject*>self.state_refs[i]

    def _budget(self, double time_limit, long long max_nodes):
        self.stop = False
        self.error = None
        self.stop_reason = None
        self.deadline = now(self.cpu_clock) + time_limit if time_limit > 0 else 0.0
        self.max_nodes = self.nodes + max_nodes if max_nodes > 0 else 0

    def _raise_error(self):
        if self.error is not None:
            msg = self.error
            self.error = None
            raise NiwaError(msg)

    cdef int _terminal_halves(self, State s, int pov):
        """A finished game's value for `pov` in halves (2 won, 1 drawn, 0 lost)."""
        cdef double r[MAX_PLAYERS]
        s.c_returns(r)
        return 2 if r[pov] == 1.0 else (1 if r[pov] == 0.5 else 0)

    cdef int _combine(self, State s, int pov, bint search):
        """The value of non-terminal `s` for `pov` in halves (2 win, 1 draw, 0 loss, -1
        unknown), from the two passes: pass 1 (a draw counts as a win for seat 1) and, only
        once a draw has been met, pass 0. For the mover m, the pass where draws count for m
        answers "m gets at least a draw", the other "m wins". `search`: prove what the table
        does not know (within the budget), else read the table only. Leaves pass 1 on."""
        cdef int mover = s.c_current_player(), first, second, h
        first = self._pass_value(s, mover, 1, search)
        if first < 0:
            return -1
        if not self.draws_anywhere():
            h = 2 * first       # no draw anywhere in what the table holds: win/loss only
        elif (first == 0) == (mover == 1):
            # seat 1 failed even counting draws as wins: a loss; seat 0 won outright: a win
            h = 2 * first
        else:
            second = self._pass_value(s, mover, 0, search)
            if second < 0:
                return -1
            h = (2 if second == 1 else 1) if mover == 1 else (1 if second == 1 else 0)
        return h if mover == pov else 2 - h

    cdef int _pass_value(self, State s, int mover, int draw_winner, bint search):
        """1 / 0 / -1: whether the mover of `s` wins in pass `draw_winner`."""
        cdef PNEntry e
        cdef int v
        self.set_pass(draw_winner)
        if search:
            v = self.prove_at_root(s)
        else:
            if self.probe(self.key_of(s, mover), &e) and (e.pn == 0 or e.dn == 0):
                v = 1 if e.pn == 0 else 0
            else:
                v = self.exact.c_value(s) if self.exact_on else -1
        if v >= 0 or self.error is not None:
            self.set_pass(1)    # an unproven root keeps its pass on for its numbers
        return v

    cdef int _resolve(self, State s, int pov):
        """Value of position `s` for player `pov` in halves (2 win, 1 draw, 0 loss, -1
        unknown), searching it if the table does not know it (within the current budget)."""
        if s.c_is_terminal():
            return self._terminal_halves(s, pov)
        return self._combine(s, pov, True)

    cdef int _known(self, State s, int pov):
        """Value of `s` for `pov` in halves from the rules or the table only (-1 unknown)."""
        if s.c_is_terminal():
            return self._terminal_halves(s, pov)
        return self._combine(s, pov, False)

    cdef long long _work(self, State s):
        if s.c_is_terminal():
            return 0
        cdef PNEntry e
        return e.work if self.probe(self.key_of(s, s.c_current_player()), &e) else 0

    def solve(self, State state, double time_limit=0.0, long long max_nodes=0,
              bint root_values=True, bint pv=True, followup_time_limit=None,
              bint cpu_time=False):
        """Prove the value of `state` for the player to move.

        `time_limit` (seconds) and `max_nodes` (expansions) bound the proof (0 = none); the
        follow-up that values every root move and plays out the principal variation gets
        the same budget again (or `followup_time_limit` seconds). Calling solve again on
        the same position continues from what the table holds. With `cpu_time` the time
        limits (and the times reported) count this thread's CPU seconds, not wall-clock
        seconds. Returns a ProofResult (niwa.solver.proof_result).
        """
        self._prepare(state)
        self.cpu_clock = cpu_time
        cdef int mover = state.c_current_player()
        cdef long long nodes0
        cdef double t0 = now(cpu_time), t1
        cdef int v
        cdef PNEntry e
        self.nodes = 0
        self.table_hits = 0
        self.deepest = 0
        self.overwrites = self.overwritten_unproven = self.overwritten_big = 0
        self.max_overwritten_work = 0
        self._budget(time_limit, max_nodes)
        v = self._resolve(state, mover)
        self._raise_error()
        t1 = now(cpu_time)
        proof_nodes = self.nodes
        found = self.probe(self.key_of(state, mover), &e)  # in the pass that stopped, if unproven
        self.set_pass(1)
        root_pn = e.pn if found else 1
        root_dn = e.dn if found else 1
        status = "proven" if v >= 0 else (self.stop_reason or "stopped")
        result = ProofResult(
            value=None if v < 0 else v / 2.0, proven=v >= 0, player=mover, status=status,
            nodes=proof_nodes, time_s=t1 - t0, tt_entries=self.used, tt_capacity=self.capacity,
            tt_mb=self.tt_mb, root_pn=root_pn, root_dn=root_dn, deepest=self.deepest)
        if v >= 0 and (root_values or pv):
            self._budget(time_limit if followup_time_limit is None else followup_time_limit,
                         max_nodes)
            if root_values:
                result.moves = self._root_values(state)
            if pv:
                result.pv_actions, result.pv = self._principal_variation(state)
            self._raise_error()
            result.followup_nodes = self.nodes - proof_nodes
            result.followup_time_s = now(cpu_time) - t1
        result.tt_entries = self.used
        result.table_hits = self.table_hits
        result.overwrites = self.overwrites
        result.overwritten_unproven = self.overwritten_unproven
        result.overwritten_big = self.overwritten_big
        if self.overwritten_big:
            result.table_warning = (
                f"table too small: {self.overwritten_big:,} unproven entries with >= "
                f"{self.big_work:,} expansions of work were overwritten (largest "
                f"{self.max_overwritten_work:,}); give it more tt_mb")
        elif self.used > 0.9 * self.capacity:
            result.table_warning = f"table {100.0 * self.used / self.capacity:.0f}% full"
        return result

    # ---- what the table says about one position (the opening book walks the proof) ------
    def known_value(self, State state, int pov):
        """The value of `state` for player `pov` from the rules or the table only: 1 (pov
        wins), 0.5 (a draw), 0 (pov loses) or None (the table does not have it proven).
        Nothing is searched."""
        self._prepare_keys(state)
        return _from_halves(self._known(state, pov))

    def prove_value(self, State state, int pov, double time_limit=0.0, long long max_nodes=0):
        """The value of `state` for player `pov` (1 / 0.5 / 0), proving it within the budget
        if the table does not know it (the table carries over); None if the budget ran out."""
        if state.c_is_terminal():
            return _from_halves(self._resolve(state, pov))
        self._prepare(state)
        self.cpu_clock = False
        self._budget(time_limit, max_nodes)
        cdef int v = self._resolve(state, pov)
        self.set_pass(1)
        self._raise_error()
        return _from_halves(v)

    # ---- proofs kept between sessions (a checkpoint's proven.npy) ------------------------
    def proven_entries(self, long long min_work=0, long long max_entries=0):
        """The table's proven entries whose subtree cost at least `min_work` expansions, as
        an (n, 3) uint64 array of (key, numbers, extra) rows, the largest work first (at
        most `max_entries` of them; 0: all). Safe on a table other processes still write (a
        certification's shared table, kept as it runs): each slot's three words are read
        once and tested as read, and the rows stop at the room counted first. A slot two
        processes wrote at once still gives no wrong proof: its key, recovered from the
        check word, is then a scramble of two entries' words, which names a real position
        only by a 64-bit coincidence (the risk every table key already carries)."""
        import numpy as np

        cdef size_t i, room, n = 0, total = self.capacity
        cdef uint64_t check, nums, extra
        cdef uint64_t[:, ::1] out
        for i in range(total):
            if _is_kept(niwa_load64(&self.tt[i].check), niwa_load64(&self.tt[i].nums),
                        niwa_load64(&self.tt[i].extra), min_work):
                n += 1
        rows = np.zeros((n, 3), dtype=np.uint64)
        out = rows
        room, n = n, 0
        for i in range(total):
            if n >= room:
                break           # (proved since the count, by a process still writing)
            check = niwa_load64(&self.tt[i].check)
            nums = niwa_load64(&self.tt[i].nums)
            extra = niwa_load64(&self.tt[i].extra)
            if not _is_kept(check, nums, extra, min_work):
                continue        # (an entry changed since the count)
            out[n, 0] = check ^ niwa_check_hash(nums, extra)
            out[n, 1] = nums
            out[n, 2] = extra
            n += 1
        rows = rows[:n]
        order = np.argsort(-(rows[:, 2] & np.uint64(0xFFFFFFFF)).astype(np.int64), kind="stable")
        rows = rows[order]
        if max_entries > 0:
            rows = rows[:max_entries]
        return rows

    def load_proven(self, rows):
        """Store proven (key, numbers, extra) rows (from proven_entries) in the table; the
        number stored. Rows that are not proofs are refused (ValueError)."""
        import numpy as np

        cdef uint64_t[:, ::1] r = np.ascontiguousarray(rows, dtype=np.uint64).reshape(-1, 3)
        cdef size_t i
        cdef uint64_t nums, extra
        cdef uint32_t pn, dn
        for i in range(r.shape[0]):
            nums = r[i, 1]
            pn = <uint32_t>nums
            dn = <uint32_t>(nums >> 32)
            if not ((pn == 0 and dn == INF) or (pn == INF and dn == 0)) or r[i, 0] == 0:
                raise ValueError(f"row {i} is not a proven entry")
            extra = r[i, 2]
            self.store(r[i, 0], pn, dn, <uint32_t>extra, <int32_t><uint32_t>(extra >> 32))
        return r.shape[0]

    def table_key(self, State state):
        """The table key of `state` (its mover's entry): what proven rows are filed under, so
        rows saved by one build can be checked against another's keys."""
        self._prepare_keys(state)
        return self.key_of(state, state.c_current_player())

    def _probe_key(self, uint64_t key):
        """The table's entry of a raw key as (pn, dn, work, best), or None (tests)."""
        cdef PNEntry e
        if not self.probe(key, &e):
            return None
        return (e.pn, e.dn, e.work, e.best)

    def _store_key(self, uint64_t key, uint32_t pn, uint32_t dn, long long work, int best):
        """Store an entry under a raw key (tests)."""
        self.store(key, pn, dn, work, best)

    def cheapest_known_win(self, State state, int winner):
        """The move of `winner` (to move in `state`) to a child the rules or the table
        know to be won for it, the one with the smallest recorded proof (the first of
        equals); -1 if no child is known to win. What winning_move tries first, in one call
        instead of three Python calls a move (a certificate's walk spent most of its time
        there)."""
        self._prepare_keys(state)
        return self._cheapest_win(state, winner, False)

    def prove_below(self, State state, int winner, double time_limit=0.0,
                    long long max_nodes=0):
        """Prove `state` (non-terminal, `winner` to move, a win for it) again from its
        children, its own table entry not consulted, and return a move of `winner` that the
        search then shows to win; -1 if the budget ran out first.

        What winning_move does when the table has the position proven but none of its
        children: an entry loaded without its subtree (kept proofs) or left after its
        children's were overwritten. Trying each move in turn with budgets growing 4x a
        round costs up to the number of moves times the winning proof, and a losing move's
        disproof can be far dearer than the win; a df-pn from the position spends its
        effort where the proof numbers say, as the first proof did. Of the moves the table
        then shows to win, the one with the smallest recorded proof."""
        self._prepare(state)
        if state.c_current_player() != winner:
            raise NiwaError(f"prove_below: seat {winner} is not to move")
        self.cpu_clock = False
        self._budget(time_limit, max_nodes)
        cdef uint32_t pn, dn
        # the pass where a drawn end is a loss for the winner (pass 1 unless seat 1 wins
        # in a table that has met draws: pass 1 there answers "at least a draw" for it)
        cdef int draw_pass = 0 if (winner == 1 and self.draws_anywhere()) else 1
        self.set_pass(draw_pass)
        (<State>self.states[0]).c_copy_from(state)
        self.mid(0, self.key_of(state, winner), INF, INF, &pn, &dn)
        if pn == 0 and draw_pass == 1 and winner == 1 and self.draws_anywhere():
            # draws met on the way: pass 1 showed only "at least a draw" for seat 1
            draw_pass = 0
            self.set_pass(0)
            (<State>self.states[0]).c_copy_from(state)
            self.mid(0, self.key_of(state, winner), INF, INF, &pn, &dn)
        # the winning child, read in the pass just searched (cheapest_known_win reads pass
        # 1 first, which a search in pass 0 need not have filled)
        cdef int best = self._cheapest_win(state, winner, True) if pn == 0 else -1
        self.set_pass(1)
        self._raise_error()
        return best

    cdef int _cheapest_win(self, State state, int winner, bint current_pass):
        """The move of `winner` (to move in `state`) to a child known won for it with the
        smallest recorded proof, the first of equals; -1 if none. `current_pass` reads the
        table in the pass set now (after a search in it), else as `_known` does."""
        cdef int acts[MAX_ACTIONS]
        cdef int n = state.c_legal_actions(acts), i, best = -1
        cdef long long work = 0, best_work = 0
        cdef bint won
        cdef State child = state.c_clone()
        for i in range(n):
            child.c_copy_from(state)
            child.c_apply(acts[i])
            if current_pass:
                won = self._won_in_pass(child, winner, &work)
            else:
                won = self._known(child, winner) == 2
                if won:
                    work = self._work(child)
            if won and (best < 0 or work < best_work):
                best, best_work = acts[i], work
        return best

    cdef bint _won_in_pass(self, State s, int winner, long long* work):
        """Whether `s` is won for `winner` by the rules, the table (in the current pass;
        its recorded work in `work`) or the endgame tables."""
        cdef PNEntry e
        cdef int m, v
        work[0] = 0
        if s.c_is_terminal():
            return self._terminal_halves(s, winner) == 2
        m = s.c_current_player()
        if self.probe(self.key_of(s, m), &e) and (e.pn == 0 or e.dn == 0):
            work[0] = e.work
            return (e.pn == 0) == (m == winner)
        if self.exact_on:
            v = self.exact.c_value(s)
            if v >= 0:
                return (v == 1) == (m == winner)
        return False

    def subtree_work(self, State state):
        """Expansions the table records below `state` (0 if it has no entry): how much it
        costs to prove again once the entry is lost."""
        self._prepare_keys(state)
        return self._work(state)

    def child_numbers(self, State state):
        """For each legal move of the player to move in `state` (non-terminal): (move, pn,
        dn), the cost to prove and to disprove that the mover wins through it, as the rules,
        the table or the endgame tables know it now (nothing is searched). A child the
        table lacks gets the initial numbers the search would give it (mobility: one good
        reply proves, every reply must be refuted). What the most-proving move of an
        unfinished proof is read from (proof_moves.most_proving_move)."""
        self._prepare_keys(state)
        cdef int acts[MAX_ACTIONS]
        cdef int mover = state.c_current_player()
        cdef int n = state.c_legal_actions(acts), i, cm, v
        cdef uint32_t pn, dn
        cdef PNEntry e
        cdef State child = state.c_clone()
        out = []
        for i in range(n):
            child.c_copy_from(state)
            child.c_apply(acts[i])
            if child.c_is_terminal():
                v = self._terminal_halves(child, mover)
                pn = 0 if v == 2 else INF
                dn = INF if v == 2 else 0
                out.append((acts[i], pn, dn))
                continue
            cm = child.c_current_player()
            v = self.exact.c_value(child) if self.exact_on else -1
            if v >= 0:
                pn = 0 if v == 1 else INF       # for the child's mover
                dn = INF if v == 1 else 0
            elif self.probe(self.key_of(child, cm), &e):
                pn, dn = e.pn, e.dn
            else:
                pn, dn = 1, len(child.legal_actions())
            out.append((acts[i], pn, dn) if cm == mover else (acts[i], dn, pn))
        return out

    def _prepare_keys(self, State state):
        if state.c_is_terminal():
            return
        if not self.state_refs or type(self.state_refs[0]) is not type(state) or \
                _other_game(self.state_refs[0], state):
            self._prepare(state)

    def _root_values(self, State state):
        cdef int mover = state.c_current_player(), v
        cdef State child
        out = []
        for a in state.legal_actions():
            child = state.c_clone()
            child.c_apply(a)
            v = self._resolve(child, mover)
            if self.error is not None:
                break
            out.append(MoveValue(a, state.action_to_string(a), None if v < 0 else v / 2.0))
        self.set_pass(1)
        return out

    def _principal_variation(self, State state):
        """Winner (or drawer): a move keeping the value (the table's proving move first,
        else the first such move found); loser: the move whose proof cost the most work.
        Children the table lost are searched again."""
        cdef State cur = state.c_clone(), child
        cdef int mover, v, cv
        cdef PNEntry e
        actions, names = [], []
        while not cur.c_is_terminal() and len(actions) < self.max_ply:
            mover = cur.c_current_player()
            v = self._resolve(cur, mover)
            self.set_pass(1)
            if v < 0:
                break
            legal = cur.legal_actions()
            choice = None
            if v > 0:
                order = legal
                if self.probe(self.key_of(cur, mover), &e) and e.best in legal:
                    order = [e.best] + [a for a in legal if a != e.best]
                # a move the table already knows to keep the value (the stored one may
                # belong to the mirror image of this position under a symmetry hook, or to
                # the other pass: verify it)
                for a in order:
                    child = cur.c_clone()
                    child.c_apply(a)
                    if self._known(child, mover) == v:
                        choice = a
                        break
                if choice is None:      # the table lost them: search the moves again
                    for a in order:
                        child = cur.c_clone()
                        child.c_apply(a)
                        cv = self._resolve(child, mover)
                        if cv == v:
                            choice = a
                            break
                        if cv < 0:
                            break
            else:
                most = -1
                for a in legal:
                    child = cur.c_clone()
                    child.c_apply(a)
                    cv = self._resolve(child, mover)
                    self.set_pass(1)
                    if cv < 0:
                        most = -1
                        break
                    if self._work(child) > most:
                        most = self._work(child)
                        choice = a
                if most < 0:
                    choice = None
            self.set_pass(1)
            if choice is None:
                break
            names.append(cur.action_to_string(choice))
            actions.append(choice)
            cur.c_apply(choice)
        return actions, names


def _from_halves(int v):
    """A value in halves (2 / 1 / 0, -1 unknown) as the API gives it: 1, 0.5, 0 or None."""
    return None if v < 0 else (0.5 if v == 1 else v // 2)
