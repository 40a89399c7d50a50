# Monte Carlo tree search over the game contract (see mcts.pyx).
from libc.stdint cimport int64_t, uint64_t
from niwa.ext.exact cimport ExactValues
from niwa.ext.game cimport State, MAX_PLAYERS
from niwa.ext.rng cimport RngState

cdef enum:
    MCTS_MAX_DEPTH = 2048       # longest tree path followed; deeper, the playout takes over

cdef struct Node:
    int parent
    int first_child
    int next_sibling
    int kind            # current_player() of this node's state: seat, CHANCE, SIMULTANEOUS, TERMINAL
    int expanded        # player node: children created; chance node: number of outcomes
    int arms            # simultaneous node: head of its arm list (-1 if none)
    int avail           # ISMCTS: how often this child was legal when its parent was visited
    int stamp           # ISMCTS: last iteration in which this child was legal
    int64_t action      # action into this node (joint key at simultaneous nodes, -1 pass-through)
    double prob         # chance child: probability of its outcome
    double visits
    double value[MAX_PLAYERS]   # sum of the reward vectors backed up through this node
    float exact[MAX_PLAYERS]    # proven value vector (MCTS-Solver), valid when proven
    float heur[MAX_PLAYERS]     # implicit minimax: the evaluation backed up by max^n
    signed char proven

# One player's option at a simultaneous node (decoupled statistics).
cdef struct Arm:
    int next
    int player
    int action
    int stamp
    double visits
    double reward       # sum of the player's rewards after choosing this arm
    double regret       # regret matching: cumulative regret; Exp3: cumulative reward estimate
    double strategy     # cumulative mixed-strategy weight (average strategy)
    double sigma        # probability used at the last selection

cdef class MCTS:
    cdef Node* nodes
    cdef int num_nodes, cap_nodes, max_nodes
    cdef Arm* arms
    cdef int num_arms, cap_arms
    cdef int root
    cdef State root_state       # the state the tree's root stands for (None before a search)
    cdef State scratch
    cdef RngState rng
    cdef readonly int num_players
    cdef readonly double c
    cdef readonly int playout, cutoff, solver, ismcts, sim_policy
    cdef readonly double gamma
    cdef readonly double minimax, bias, eps
    cdef bint use_heur
    cdef State trial
    cdef readonly bint reuse
    cdef int iteration, observer
    cdef int path[MCTS_MAX_DEPTH]
    cdef int path_arms[MCTS_MAX_DEPTH][MAX_PLAYERS]
    cdef int acts[1024]
    cdef double probs[1024]
    cdef long long total_iterations
    cdef readonly ExactValues exact     # endgame tables: exact values at new leaves
    cdef bint exact_on                  # ... in use for the current root
    cdef readonly long long table_hits

    cdef int new_node(self, int parent, int64_t action, int kind) except -2
    cdef int new_arm(self, int node, int player, int action) except -1
    cdef int iterate(self) except -1
    cdef int select_player(self, int node, State s) except -2
    cdef int select_chance(self, int node, State s) except -2
    cdef int select_simultaneous(self, int node, int depth, State s) except -2
    cdef int stamp_arms(self, int node, int p, int n) except -1
    cdef int ucb_arm(self, int node, int p, double logn) noexcept
    cdef int sampled_arm(self, int node, int p) noexcept
    cdef void leaf_rewards(self, State s, double* r) noexcept
    cdef void backup(self, int depth, double* r) noexcept
    cdef void backup_heur(self, int depth) noexcept
    cdef double child_score(self, int child, int mover) noexcept
    cdef void greedy_step(self, State s, int p) noexcept
    cdef bint try_prove(self, int node) noexcept
    cdef bint exact_leaf(self, State s, int mover, double* r) noexcept
    cdef double child_mean(self, int child, int player) noexcept
    cdef State _child_state(self, State parent, int child)
