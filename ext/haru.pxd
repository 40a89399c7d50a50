from libc.stdint cimport uint16_t, uint32_t, uint64_t
from niwa.ext.game cimport State
from niwa.ext.rng cimport RngState

cdef enum:
    HARU_CELLS = 25
    HARU_ROUND_CAP = 50     # safety cap on rounds (rules: "e.g. 50")

# Steps of a round: whose decision (or which chance event) comes next.
cdef enum:
    ST_DRAW = 0         # chance: the next player short of 3 flowers draws one
    ST_CHOOSE = 1       # both pick a flower (SIMULTANEOUS, or seat 0 in the turn view)
    ST_CHOOSE2 = 2      # turn view only: seat 1 picks, seat 0's pick is pending (hidden)
    ST_CROAK = 3        # chance: who croaks first after a tie
    ST_BLOOM = 4        # Senior blooms a pad
    ST_BLOOM_FROG = 5   # Senior moves the frog off the pad just bloomed
    ST_WIND = 6         # Junior pushes a pad (and the pads in front of it)
    ST_DARK = 7         # Senior flips a pad to its dark side
    ST_DARK_FROG = 8    # Senior moves the frog off the new dark pad
    ST_TIE_FROG1 = 9    # first croaker moves their own frog
    ST_TIE_FROG2 = 10   # second croaker moves their own frog
    ST_OVER = 11

cdef struct HaruData:
    # variant (immutable after construction)
    int figures_sum, croak_mode, reset_layout, target, turn_view
    # the pond: bit (5*row + col) of each 25-bit board
    uint32_t pads, dark
    uint32_t flowers[2]
    unsigned char value[HARU_CELLS]      # value of the flower on a cell (0 = none)
    signed char frog[2]                  # cell of each frog, -1 = off the pond
    signed char double_dark              # cells of the special pads (they move with pushes)
    signed char egg[2]
    # flowers off the pond, as value bitmasks (bit v-1 for value v)
    uint16_t hand[2]
    uint16_t pile[2]
    int pick[2]                          # values chosen this turn (0 = not yet)
    int step, turn, round, first_croak, moving_frog
    int score[2]
    int winner                           # -1 running, 0/1 a seat, 2 a draw
    int capped
    int nhist
    unsigned char hist[HARU_ROUND_CAP][2]   # scores after each completed round

cdef class HaruState(State):
    cdef HaruData d
