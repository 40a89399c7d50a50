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

cdef class BonsaiState(State):
    cdef BonsaiData d
