# Alpha-beta family over the game contract (see alphabeta.pyx).
from cpython.ref cimport PyObject
from libc.stdint cimport uint64_t
from niwa.ext.game cimport State

cdef enum:
    AB_MAX_PLY = 512
    AB_HISTORY = 4096       # history table slots (actions hashed into it)

cdef struct TTEntry:
    uint64_t key
    float value
    signed char depth       # remaining depth searched; 127 = exact (no horizon below)
    unsigned char flag      # 0 empty, 1 exact, 2 lower bound, 3 upper bound
    int best

cdef class AlphaBeta:
    cdef TTEntry* tt
    cdef uint64_t tt_mask
    cdef readonly long long tt_size, tt_used
    cdef readonly int num_players
    cdef int root_player
    cdef uint64_t salt
    cdef readonly long long nodes, horizon
    cdef bint stop, root_all
    cdef bint episode_mode   # search(episode=True): a change of c_episode() is an exact leaf
    cdef int root_episode
    cdef double deadline
    cdef PyObject* states[AB_MAX_PLY]
    cdef list state_refs
    cdef int* moves          # AB_MAX_PLY x MAX_ACTIONS
    cdef float* scores       # AB_MAX_PLY x MAX_ACTIONS
    cdef double* probs       # AB_MAX_PLY x MAX_ACTIONS (chance nodes)
    cdef int killers[AB_MAX_PLY][2]
    cdef double history[AB_HISTORY]
    cdef int pv[AB_MAX_PLY][AB_MAX_PLY]
    cdef int pv_len[AB_MAX_PLY]
    cdef readonly bint star2
    cdef list root_values
    cdef object root_strategy

    cdef inline int persp(self, int kind) noexcept
    cdef double ab(self, int ply, int depth, double alpha, double beta)
    cdef inline double leaf_value(self, State s, int ply, int depth, int kind) noexcept
    cdef inline double tt_cutoff(self, TTEntry* e, double alpha, double beta) noexcept
    cdef inline void tt_store(self, TTEntry* e, uint64_t key, double best, int best_move,
                              int depth, bint exact, double alpha, double beta) noexcept
    cdef inline int order_moves(self, State s, int ply, int tt_move) noexcept
    cdef inline int next_move(self, int ply, int i, int n) noexcept
    cdef inline double child_leaf_value(self, State child, int ply, int depth, int side) noexcept
    cdef double player_node(self, int ply, int depth, int kind, double alpha, double beta,
                            int tt_move, int* best_move)
    cdef inline void update_pv(self, int ply, int a) noexcept
    cdef inline void record_cutoff(self, int ply, int depth, int a) noexcept
    cdef double child_value(self, int ply, int depth, int kind, double alpha, double beta)
    cdef double chance_node(self, int ply, int depth, double alpha, double beta)
    cdef double simultaneous_node(self, int ply, int depth)
    cdef int tt_best(self, State s)
    cdef double probe(self, int ply, int depth, double alpha, double beta)
