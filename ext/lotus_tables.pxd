# Lotus endgame tables: the index (a perfect hash of positions) and the build kernel.
from libc.stdint cimport int64_t, uint64_t
from niwa.ext.exact cimport ExactValues
from niwa.ext.lotus cimport LotusData, LotusState

cdef enum:
    LT_MAX_STARTS = 64          # start configurations of one player (towers <= 4: 14)
    LT_BINOM = 80               # binomials C(n, r) for n < 80 (m + spaces - 1 <= 67)
    LT_KEYS = 625               # start[1..4] counts (0..4 each) packed base 5

cdef class LotusTableIndex(ExactValues):
    cdef readonly int k, nspaces, stones_each, towers, route
    cdef readonly int nstarts, nclasses
    cdef readonly int64_t size
    cdef LotusData proto                    # the variant's geometry, no stones
    cdef short start_of_key[LT_KEYS]        # packed start counts -> configuration, -1 none
    cdef unsigned char start_count[LT_MAX_STARTS][5]    # towers of each height 1..4
    cdef int start_total[LT_MAX_STARTS]     # stones in the configuration
    cdef uint64_t binom[LT_BINOM][LT_BINOM]
    cdef int64_t* offset                    # per class: first index (-1: no such class)
    cdef int64_t* ncol                      # colourings of the board stones
    cdef int64_t* ncomp                     # stack-height vectors (compositions)
    cdef unsigned char** ptr                # per class: its values (NULL: not loaded)
    cdef object refs                        # the arrays ptr points into, kept alive
    cdef readonly object variant            # the Lotus variant (a dict)
    cdef readonly bint attached             # every class's values are in place
    cdef list _starts                       # start configurations (tower heights)
    cdef object _starts_cache, _class_order # unrank: first index of each class, in order

    cdef int c_locate(self, const LotusData* d, int* cls, int64_t* local) noexcept nogil
    cdef int c_probe(self, const LotusData* d) noexcept nogil
    cdef void c_unrank_into(self, LotusData* d, int cls, int64_t local) noexcept
    cdef int c_class_id(self, int nw, int nb, int sw, int sb) noexcept nogil
    cdef void unrank_comp(self, uint64_t r, int m, int* space) noexcept
    cdef void unrank_colour(self, uint64_t r, int m, int ones, unsigned char* colour) noexcept
    cdef void fill(self, LotusData* d, int nw, int nb, int sw, int sb, int m,
                   const int* space, const unsigned char* colour, int side) noexcept
    cdef int solve_one(self, LotusState parent, LotusState child, unsigned char[::1] res,
                       int64_t at) noexcept
