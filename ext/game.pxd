# The game contract shared by every niwa game (OpenSpiel vocabulary).
#
# Searchers written in Cython call the `c_*` methods through the vtable (no Python per
# node); the Python-level methods in game.pyx wrap them for everyone else. A game is one
# subclass of State that overrides the `c_*` methods and the string/notation methods.
from libc.stdint cimport uint64_t
from niwa.ext.rng cimport RngState

cdef enum:
    MAX_ACTIONS = 1024      # bound on the legal actions of any state of any game
    MAX_PLAYERS = 4

# Special values of current_player(), as in OpenSpiel.
cdef enum:
    CHANCE = -1
    SIMULTANEOUS = -2
    TERMINAL = -4

cdef class Rng:
    cdef RngState s
    cdef readonly object seed

cdef class State:
    cdef readonly int num_players
    # The game's evaluation weights (GameSpec.eval_weights order) this state evaluates
    # with; NULL: the game's defaults. Points into _weights (kept alive by this state and
    # every clone: c_clone passes both on through share_weights; c_copy_from leaves them).
    cdef double* c_weights
    cdef object _weights

    cdef int c_current_player(self) noexcept
    cdef int c_legal_actions(self, int* out) noexcept
    # Legal actions of one player at a SIMULTANEOUS node (or the mover's otherwise).
    cdef int c_player_actions(self, int player, int* out) noexcept
    cdef void c_apply(self, int action) noexcept
    # Joint transition at a SIMULTANEOUS node: actions[p] for each player p.
    cdef void c_apply_joint(self, int* actions) noexcept
    cdef bint c_is_terminal(self) noexcept
    cdef void c_returns(self, double* out) noexcept
    cdef int c_chance_outcomes(self, int* actions, double* probs) noexcept
    cdef int c_sample_chance(self, RngState* rng) noexcept
    cdef uint64_t c_hash(self) noexcept
    # Equal for positions a symmetry of the rules makes equal in value (Lotus: lanes a and b
    # swapped); exact searchers may key their tables on it. Default: c_hash().
    cdef uint64_t c_symmetric_hash(self) noexcept
    cdef State c_clone(self)
    # Overwrite self with other's contents (same game and variant); no allocation.
    cdef void c_copy_from(self, State other) noexcept
    # Play uniformly random actions (chance by its distribution) to the end; return plies.
    cdef int c_random_playout(self, RngState* rng) noexcept
    # Heuristic playout policy (defaults to random); games may override.
    cdef int c_heuristic_playout(self, RngState* rng) noexcept
    # Heuristic estimate of player's expected return, in [0, 1] (documented per game).
    cdef double c_evaluate(self, int player) noexcept
    # Replace what `player` cannot see by a uniform sample consistent with what they saw.
    cdef void c_resample_hidden(self, int player, RngState* rng) noexcept
    # An episode counter a game may expose (Haru: the round number); searchers may treat
    # its change as a leaf. Default 0: the whole game is one episode.
    cdef int c_episode(self) noexcept


cdef inline void share_weights(State dst, State src) noexcept:
    """dst evaluates with src's weights (every game's c_clone calls this)."""
    dst.c_weights = src.c_weights
    dst._weights = src._weights


cdef inline void fill_default_weights(double* dst, Py_ssize_t n, spec) except *:
    """dst[0:n] = the defaults of `spec`'s eval_weights (a game's DEFAULT_W, filled once
    at import from its SPEC, which must declare exactly n weights)."""
    assert len(spec.eval_weights) == n
    for i, w in enumerate(spec.eval_weights):
        dst[i] = w.default
