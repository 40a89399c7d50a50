# Small test games with known values, implementing the game contract (see toys.pyx).
# They exist to test the searchers' chance, simultaneous and hidden-information paths;
# they are not in the public game registry.
from niwa.ext.game cimport State

cdef class ChanceNimState(State):
    cdef int pile, to_move, chance_pending, won_by, max_take
    cdef double extra_prob

cdef class MatrixGameState(State):
    cdef int rows, cols, stages, stage, done
    cdef double payoff[8][8]
    cdef double total

cdef class KuhnState(State):
    cdef int cards[2]
    cdef int dealt            # 0: deal pending (chance), 1: cards dealt
    cdef int history[3]       # 0 = check/fold, 1 = bet/call
    cdef int nhist
    cdef int _finished(self) noexcept
