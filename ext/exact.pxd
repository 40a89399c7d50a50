# Positions whose exact value is known without search (endgame tables); see exact.pyx.
from niwa.ext.game cimport State

cdef class ExactValues:
    # 1: the player to move wins, 0: it loses, -1: not known here. Only called on positions
    # of the game and variant `accepts` said yes to.
    cdef int c_value(self, State s) noexcept
    cpdef bint accepts(self, State s)
