# cython: language_level=3
"""Lotus lane symmetry for the proof search (a KeyHook, see proof.pxd).

Lanes a and b have the same length and merge into the same shared spaces, and the
trampoline is a shared space, so a position and its mirror (lane a's stacks swapped with
lane b's) have the same value. Keying both on min(hash, hash of the mirror) lets one proof
serve both: every opening move into a lane has a twin, so early in the game nearly every
position has a distinct mirror. The key is computed in one pass over the board with this
module's own Zobrist keys (the engine's are private to ext/lotus.pyx). Actions are not
mirrored: a proving move read from the table may be the twin's, so the PV verifies moves
(ProofSearch does).
"""
from libc.stdint cimport uint64_t

from niwa.ext.game cimport State
from niwa.ext.lotus cimport LOTUS_MAX_SPACES, LOTUS_MAX_STONES, LOTUS_MAX_TOWER, LotusData, LotusState
from niwa.ext.rng cimport splitmix64
from niwa.solver.proof cimport KeyHook

cdef uint64_t Z_STACK[LOTUS_MAX_SPACES][LOTUS_MAX_STONES][4]
cdef uint64_t Z_START[4][LOTUS_MAX_TOWER + 1][LOTUS_MAX_TOWER + 1]
cdef uint64_t Z_TOMOVE[4]
cdef uint64_t Z_OPENING[3]


cdef void _init_zobrist():
    cdef uint64_t x = 0x6D6972726F72    # "mirror"
    cdef int i, j, k
    for i in range(LOTUS_MAX_SPACES):
        for j in range(LOTUS_MAX_STONES):
            for k in range(4):
                Z_STACK[i][j][k] = splitmix64(&x)
    for i in range(4):
        for j in range(LOTUS_MAX_TOWER + 1):
            for k in range(LOTUS_MAX_TOWER + 1):
                Z_START[i][j][k] = splitmix64(&x)
        Z_TOMOVE[i] = splitmix64(&x)
    for i in range(3):
        Z_OPENING[i] = splitmix64(&x)


_init_zobrist()


cdef class LotusLaneSymmetry(KeyHook):
    """Key = min(Zobrist hash, Zobrist hash with lanes a and b swapped).

    >>> from niwa.ext.lotus import LotusState
    >>> from niwa.solver.proof import ProofSearch
    >>> ProofSearch(tt_mb=8, symmetry=LotusLaneSymmetry()).solve(LotusState(towers=2)).value
    0.0
    """

    cdef uint64_t key(self, State s) noexcept:
        cdef LotusData* d = &(<LotusState>s).d
        cdef uint64_t z = Z_TOMOVE[d.to_move] ^ Z_OPENING[d.opening], a = 0, b = 0, sh = 0
        cdef int sp, k, p, h, lane = d.lane
        # lane a is spaces 0..lane-1, lane b lane..2*lane-1; shared spaces are their own mirror
        for sp in range(lane):
            for k in range(d.height[sp]):
                a ^= Z_STACK[sp][k][d.stack[sp][k]]
                b ^= Z_STACK[sp + lane][k][d.stack[sp][k]]
        for sp in range(lane, 2 * lane):
            for k in range(d.height[sp]):
                a ^= Z_STACK[sp][k][d.stack[sp][k]]
                b ^= Z_STACK[sp - lane][k][d.stack[sp][k]]
        for sp in range(2 * lane, d.nspaces):
            for k in range(d.height[sp]):
                sh ^= Z_STACK[sp][k][d.stack[sp][k]]
        for p in range(d.nplayers):
            for h in range(1, d.max_tower + 1):
                z ^= Z_START[p][h][d.start[p][h]]
        z ^= sh
        return (z ^ a) if (z ^ a) < (z ^ b) else (z ^ b)

    cpdef bint accepts(self, State s):
        return isinstance(s, LotusState)
