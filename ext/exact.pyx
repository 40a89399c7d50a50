# cython: language_level=3
"""The searchers' view of exact knowledge: a position's value without search.

`ExactValues` is what the df-pn proof search and MCTS consult at every node they create
(an endgame table, niwa.ext.lotus_tables, is one). It lives here, below the searchers, so a
game's tables need not know any searcher and the searchers need not know any game:
`accepts(state)` is asked once per search (the game and variant match), then `c_value`
per node through the vtable.

>>> from niwa.ext.lotus import LotusState
>>> ExactValues().accepts(LotusState()), ExactValues().value(LotusState())
(False, None)
"""
from niwa.ext.game cimport State


cdef class ExactValues:
    """Knows nothing: the base of every table (subclasses override both methods)."""

    cdef int c_value(self, State s) noexcept:
        return -1

    cpdef bint accepts(self, State s):
        """Whether this object can answer for positions of `s`'s game and variant."""
        return False

    def value(self, State s):
        """1.0 / 0.0 (the player to move wins / loses) or None when not known."""
        if not self.accepts(s):
            return None
        cdef int v = self.c_value(s)
        return None if v < 0 else float(v)
