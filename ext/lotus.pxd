from libc.stdint cimport uint64_t
from niwa.ext.game cimport State
from niwa.ext.rng cimport RngState

cdef enum:
    LOTUS_MAX_SPACES = 48       # 2 * lane (<= 8) + shared (<= 32)
    LOTUS_MAX_STONES = 24       # 4 players x 6 stones; 2 players have 20
    LOTUS_MAX_TOWER = 4
    LOTUS_START_SOURCES = 16    # 4 players x tower heights 1..4

cdef enum:
    LOTUS_GOAL_DEST = 255       # a move's destination when it reaches the goal

cdef struct LotusMoves:
    # A variant's moves, precomputed (one per board geometry, shared by all its states):
    # generation copies table entries and a move looks its destination up, so the hot
    # loops do no route arithmetic. Entries for impossible heights are never read.
    int track[LOTUS_MAX_SPACES][LOTUS_MAX_STONES + 1][2]     # top stone of s, stack height h
    unsigned char track_n[LOTUS_MAX_SPACES][LOTUS_MAX_STONES + 1]   # 1 or 2 (land, bounce)
    unsigned char track_to[LOTUS_MAX_SPACES][LOTUS_MAX_STONES + 1][2]  # [bounce]: space/goal
    int start[4][16][8]         # seat q's start moves when bit h-1 says a tower of height h
    unsigned char start_n[4][16]
    unsigned char start_to[LOTUS_MAX_TOWER + 1][2][2]          # [height][lane][bounce]

cdef struct LotusData:
    # variant and geometry (immutable after construction)
    const LotusMoves* moves
    int nplayers, pro, mandatory
    int lane, shared, route, tramp_pos, tramp_space, nspaces, stones_each, max_tower
    # position
    unsigned char height[LOTUS_MAX_SPACES]
    unsigned char start[4][LOTUS_MAX_TOWER + 1]              # start[p][h]: towers of height h
    unsigned char goal[4]
    uint64_t tops[4]      # tops[p]: bitmask of spaces whose top stone is p's (move generation)
    unsigned int start_mask[4]   # bit h set when player p has a start tower of height h
    int to_move
    int opening     # 2-player pro opening: 1 before seat 0's first action, 2 before its second
    int winner      # -1 while the game runs
    # precomputed per space: route position (1-based) and lane (0 = a, 1 = b, 2 = shared)
    unsigned char pos[LOTUS_MAX_SPACES]
    unsigned char lane_of[LOTUS_MAX_SPACES]
    # Zobrist hash kept up to date by lotus_apply (c_hash = hz ^ hla; the lane mirror's
    # is hz ^ hlb): hz has the turn, the opening, the shared spaces and the start towers,
    # hla the lanes' stacks, hlb the lanes' stacks on the mirror spaces. Meaningful only
    # while hash_ok: 0 after anything else writes the position (a fresh state, notation,
    # the endgame tables' unranking, which copies a state that never had it set); the
    # first c_hash/c_symmetric_hash then computes them from the stacks.
    uint64_t hz, hla, hlb
    int hash_ok
    # last, so that a copy can stop after the spaces the board has (c_copy_from)
    unsigned char stack[LOTUS_MAX_SPACES][LOTUS_MAX_STONES]   # colours, bottom to top

cdef class LotusState(State):
    cdef LotusData d
    cdef int gen_actions(self, int* out) noexcept
