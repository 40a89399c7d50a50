from libc.stdint cimport uint64_t
from niwa.ext.game cimport State
from niwa.ext.rng cimport RngState

cdef enum:
    # Tiles one tree can ever hold, bud included (proof in bonsai.pyx: 125 with 4 players).
    BONSAI_MAX_TILES = 128
    BONSAI_HASH = 256           # open-addressing cell -> tile table, load <= 1/2
    BONSAI_NCARDS = 25          # distinct Zen card types
    BONSAI_MAX_DECK = 47
    BONSAI_NGOALS = 15          # 5 colours x 3 sizes

cdef struct Tree:
    int n                                   # tiles, bud (index 0) included
    short tx[BONSAI_MAX_TILES]
    short ty[BONSAI_MAX_TILES]
    signed char tt[BONSAI_MAX_TILES]        # 0 wood, 1 leaf, 2 flower, 3 fruit
    signed char nb[BONSAI_MAX_TILES][6]     # neighbour tile index, -1 empty cell, -2 pot
    unsigned short hkey[BONSAI_HASH]        # packed cell, 0 = free slot
    unsigned char hval[BONSAI_HASH]         # tile index
    int count[4]

cdef struct BonsaiData:
    # variant
    int nplayers, goals_on, tokonoma, solo_level, dbr
    # position
    Tree tree[4]
    int supply[4][4]
    int cards[4][BONSAI_NCARDS]
    int market[4]                           # card type or -1, slot 0 next to the deck
    int deck[BONSAI_NCARDS]                 # unseen cards by type
    int deck_total
    int known                               # 1: the deck order below is known
    int order[BONSAI_MAX_DECK]
    int order_head
    int top                                 # tokonoma: cards left in the top part
    int gone[BONSAI_NCARDS]                 # solo discards
    int goals_drawn
    int goal_mask                           # goal tiles in play (bit 3*colour+size)
    int claimed_by[BONSAI_NGOALS]           # -1 open
    int renounced[4]                        # per player, mask of goal tiles
    # turn
    int phase, to_move, pending, by, any_left, ptype, dmin, burn, final, turns
    int allow[4]

# tiles, cards, action ranges, phases (the action model is in bonsai.pyx's docstring)
cdef enum:
    WOOD = 0
    LEAF = 1
    FLOWER = 2
    FRUIT = 3
    EMPTY = -1
    POTCELL = -2
    # card types
    C_TOOL = 0
    C_GROWTH = 1            # 1..4 by tile type
    C_MASTER_ANY = 5
    C_MASTER_LAST = 13
    C_HELPER = 14           # 14..17 by tile type
    C_PARCH = 18            # 18..24: W L F R Growth Helper Master
    # action ranges
    A_REMOVE = 768
    A_KEEP = 896
    A_MEDITATE = 900
    A_CULTIVATE = 904
    A_TAKE = 908
    A_PLACE = 912
    A_STOP = 916
    A_CLAIM = 920
    A_RENOUNCE = 936
    A_DISCARD = 952
    A_REVEAL = 960
    A_GOALS = 992
    # phases
    PH_GOALDRAW = 0
    PH_DEAL = 1
    PH_REMOVE = 2
    PH_ACTION = 3
    PH_SLOT = 4
    PH_MASTER = 5
    PH_PLACE = 6
    PH_CELL = 7
    PH_REVEAL = 8
    PH_GOALS = 9
    PH_DISCARD = 10
    PH_OVER = 11
    # post-action stages
    ST_REVEAL = 0
    ST_GOALS = 1
    ST_DISCARD = 2
    ST_END = 3
    BY_NONE = 0
    BY_CULTIVATE = 1
    BY_HELPER = 2

# the rules, shared with the deck-known solo search (solver/solo_search.pyx)
cdef int bonsai_gen(BonsaiData* d, int* out) noexcept nogil
cdef void bonsai_apply(BonsaiData* d, int a) noexcept nogil
cdef void score_parts(BonsaiData* d, int p, int* out) noexcept nogil
cdef bint goal_met(Tree* T, int g) noexcept nogil
cdef int heuristic_choice(BonsaiData* d, int* buf, int n, RngState* rng) noexcept nogil


cdef class BonsaiState(State):
    cdef BonsaiData d
