# cython: language_level=3
"""Solo Bonsai with the deck order known: a deterministic one-player game, searched for the
best final score by depth-first branch and bound (solver/solo.py is the Python side).

The search works on the engine's own decisions (bonsai_gen / bonsai_apply from
ext/bonsai.pxd; a card reveal has one outcome once the order is known, so it is applied at
once). Every node gets an admissible upper bound on the best final score below it
(`static_bound`, below); children are searched best bound first and a child whose bound
cannot beat the incumbent is not searched. Each search returns an upper bound U on its
node's value: the best of its children's (searched: their U, unsearched: their bound). At
the root U is the proven upper bound; when the search completes, U equals the incumbent
(every pruned node had bound <= incumbent) and the answer is exact. A node or time limit
stops the search early: the unsearched children then enter U with their static bounds,
so U stays a valid bound ("the max over open nodes of their bounds").

The transposition table keys on a hash that ignores the order in which tiles were placed
and the turn counter (neither changes what can still happen), and stores U (always
valid, whatever the incumbent was when it was computed): a child's bound is the smaller
of its static bound and its stored U.

Two objectives (`mode`): 0, the final score; 1, the final score of lines that claim a goal
of every colour in play (others are worth NEG), searched with the incumbent at the level's
threshold - 1 so that only winning lines are looked for.

The upper bound (`static_bound`). Final score = current score + what later placements,
cards and goals add; placing a tile never lowers the score by more than it can add back
(it may only cover flower sides: counted as 0), so

    bound = score now + parchments not held but still obtainable, on the tiles and cards
            there now
          + max over m (the number of Meditate turns left) of
              [tiles placed, best types first] + [2 per Growth/Helper/Master card under a
              held-or-obtainable parchment] + [goals still open and reachable]
              + [4 per turn left if a removal can still happen]

- Nothing new comes without a Meditate: with m = 0 no card is taken (no new parchment,
  Growth, Helper or Master counts).
- Turns left: a Cultivate uses one deck card (the discarded slot 3), a Meditate two (the
  card taken and the one discarded); the game ends one turn after the deck is empty. With
  D cards left at the start of a turn and m Meditates, at most min(D+1, D+3-m) turns
  remain (this one included); once the deck is empty, exactly `final + 1`.
- Tiles: the supply, then per Meditate one wood-or-leaf and one flower-or-fruit (the slot
  tiles) and the tiles of the best m Masters still obtainable (a Master "any" counts as a
  tile of any type).
- Placements: per Cultivate 1 any + (1 + Growth) wood + (1 + Growth) leaf + Growth flower +
  Growth fruit (Growth held or obtainable), per Helper still obtainable 1 any + 1 of its
  type, plus what the current turn has left. Tiles go greedily to the best-paying type
  first: fruit 7, flower 5 (a flower touches a leaf, so at most 5 free sides), leaf 3,
  wood 0, each +1 or +2 under its parchment when held or obtainable.
- Goals: per colour not yet claimed, the best open tile whose count (wood, leaves, fruit,
  flowers) can still be reached: now on the tree + the most tiles of that type the tiles
  and placements above allow (blue: met, or one placement left).
- Removal (only at a turn start when no wood fits): removing a tile gains at most 4 (a
  flower with four flower neighbours); a removal needs every empty cell next to a wood
  filled first, so it is counted only when the placements left reach that number.
"""
from libc.stdint cimport int16_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

cimport niwa.ext.bonsai as B
from niwa.ext.bonsai cimport (BonsaiData, BonsaiState, Tree, bonsai_apply, bonsai_gen,
                              goal_met, heuristic_choice, score_parts)
from niwa.ext.game cimport MAX_ACTIONS, Rng
from niwa.ext.rng cimport RngState, rng_below

from niwa.ext.bonsai import CARDS, COLOURS, GOAL_NEED, GOAL_POINTS_PY

cdef enum:
    NEG = -10000
    MAX_PLY = 2048          # decisions in one line (a whole solo game has a few hundred)
    MAX_CHILD = 256         # children kept per ply (more never occur: checked)

cdef int DXT[2][6]
cdef int DYT[6]
cdef int NEED[5][3]
cdef int POINTS[5][3]
cdef int MGAIN[9][5]        # tiles of each Master by type, [4]: "any" tiles
cdef int GOAL_TYPE[4]       # the tile type each counting goal colour counts


def _init():
    cdef int k, i, j
    even = ((1, 1), (1, 0), (1, -1), (0, -1), (-1, 0), (0, 1))
    odd = ((0, 1), (1, 0), (0, -1), (-1, -1), (-1, 0), (-1, 1))
    for k in range(6):
        DXT[0][k] = even[k][0]
        DXT[1][k] = odd[k][0]
        DYT[k] = even[k][1]
    for i, colour in enumerate(COLOURS):
        for j in range(3):
            NEED[i][j] = GOAL_NEED.get(colour, (0, 0, 0))[j]
            POINTS[i][j] = GOAL_POINTS_PY[colour][j]
    for i, t in enumerate((B.WOOD, B.LEAF, B.FRUIT, B.FLOWER)):
        GOAL_TYPE[i] = t
    for i in range(9):
        name = CARDS[B.C_MASTER_ANY + i]
        for k in range(5):
            MGAIN[i][k] = 0
        for ch in name[1:]:
            MGAIN[i]["WLFRA".index(ch)] += 1


_init()


cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    z += 0x9E3779B97F4A7C15ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t mk(uint64_t tag, uint64_t a, uint64_t b) noexcept nogil:
    return mix64((tag << 56) ^ ((a & 0xFFFFFF) << 28) ^ (b & 0xFFFFFFF))


cdef uint64_t solo_hash(BonsaiData* d) noexcept nogil:
    """Everything the rest of a deck-known solo game depends on; not the placement order
    of the tiles, the turn counter or the discards (the deck order is the root's, so the
    cards left say where in it we are)."""
    cdef int ph = d.phase, i, c
    cdef bint placing = ph == B.PH_PLACE or ph == B.PH_CELL
    cdef Tree* T = &d.tree[0]
    cdef uint64_t z = mk(1, ph, (d.pending + 2 if ph == B.PH_SLOT else 0)
                         | ((d.ptype + 2 if ph == B.PH_CELL else 0) << 8)
                         | ((d.dmin if ph == B.PH_DISCARD else 0) << 12))
    if placing:
        z ^= mk(2, d.by | (d.any_left << 4), d.allow[0] | (d.allow[1] << 5) | (d.allow[2] << 10)
                | (d.allow[3] << 15))
    z ^= mk(3, d.burn | ((d.final + 2) << 2), d.deck_total)
    z ^= mk(4, (d.market[0] + 2) | ((d.market[1] + 2) << 6) | ((d.market[2] + 2) << 12)
            | ((d.market[3] + 2) << 18), 0)
    c = 0
    for i in range(B.BONSAI_NGOALS):
        if d.claimed_by[i] == 0:
            c |= 1 << i
    z ^= mk(5, c, d.renounced[0])
    z ^= mk(6, d.supply[0][0] | (d.supply[0][1] << 7) | (d.supply[0][2] << 14), d.supply[0][3])
    for c in range(B.BONSAI_NCARDS):
        if d.cards[0][c]:
            z ^= mk(7, c, d.cards[0][c])
    for i in range(1, T.n):
        z ^= mk(8, ((T.tx[i] + 128) << 8) | (T.ty[i] + 128), T.tt[i])
    return z


cdef inline bint is_chance(BonsaiData* d) noexcept nogil:
    return d.phase == B.PH_DEAL or d.phase == B.PH_REVEAL or d.phase == B.PH_GOALDRAW


cdef void resolve_chance(BonsaiData* d) noexcept nogil:
    """Apply the known reveals (one outcome each) until someone decides or the game ends."""
    cdef int buf[MAX_ACTIONS]
    while is_chance(d):
        bonsai_gen(d, buf)
        bonsai_apply(d, buf[0])


cdef int colours_claimed(BonsaiData* d) noexcept nogil:
    cdef int g, mask = 0
    for g in range(B.BONSAI_NGOALS):
        if d.claimed_by[g] == 0:
            mask |= 1 << (g // 3)
    return mask


cdef int colours_in_play(BonsaiData* d) noexcept nogil:
    cdef int g, mask = 0
    for g in range(B.BONSAI_NGOALS):
        if (d.goal_mask >> g) & 1:
            mask |= 1 << (g // 3)
    return mask


cdef inline int score_of(BonsaiData* d) noexcept nogil:
    cdef int parts[6]
    score_parts(d, 0, parts)
    return parts[5]


cdef inline int leaf_value(BonsaiData* d, int mode) noexcept nogil:
    if mode == 1 and colours_claimed(d) != colours_in_play(d):
        return NEG
    return score_of(d)


cdef inline int shaped_value(BonsaiData* d, int mode) noexcept nogil:
    """What playouts rank lines by: the score, + 200 per colour claimed in mode 1."""
    cdef int k = 0, mask
    if mode == 0:
        return score_of(d)
    mask = colours_claimed(d)
    while mask:
        k += mask & 1
        mask >>= 1
    return score_of(d) + 200 * k


cdef int wood_frontier(Tree* T) noexcept nogil:
    """Empty cells next to a wood (each counted once)."""
    cdef int cx[768]
    cdef int cy[768]
    cdef int n = 0, i, k, j, x, y, par
    cdef bint seen
    for i in range(T.n):
        if T.tt[i] != B.WOOD:
            continue
        par = T.ty[i] & 1
        for k in range(6):
            if T.nb[i][k] != -1:
                continue
            x = T.tx[i] + DXT[par][k]
            y = T.ty[i] + DYT[k]
            seen = False
            for j in range(n):
                if cx[j] == x and cy[j] == y:
                    seen = True
                    break
            if not seen:
                cx[n] = x
                cy[n] = y
                n += 1
    return n


cdef int parchment_extra(BonsaiData* d, int* avail) noexcept nogil:
    """What the tree and the cards already held give the parchments obtainable but not held."""
    cdef Tree* T = &d.tree[0]
    cdef int* held = d.cards[0]
    cdef int k, t, c, extra = 0
    for k in range(4):
        if held[B.C_PARCH + k] == 0 and avail[B.C_PARCH + k] > 0:
            extra += T.count[k] * (1 if k < 2 else 2)
    if held[B.C_PARCH + 4] == 0 and avail[B.C_PARCH + 4] > 0:
        for t in range(4):
            extra += 2 * held[B.C_GROWTH + t]
    if held[B.C_PARCH + 5] == 0 and avail[B.C_PARCH + 5] > 0:
        for t in range(4):
            extra += 2 * held[B.C_HELPER + t]
    if held[B.C_PARCH + 6] == 0 and avail[B.C_PARCH + 6] > 0:
        for c in range(B.C_MASTER_ANY, B.C_MASTER_LAST + 1):
            extra += 2 * held[c]
    return extra


cdef void turn_allowance(BonsaiData* d, int* tiles, int* lt_typed, int* lt_any,
                         int* l_flexlow, int* l_wild) noexcept nogil:
    """What the current turn still holds: tiles in supply (and a Master's), placements."""
    cdef int t, card
    for t in range(4):
        lt_typed[t] = 0
        tiles[t] = d.supply[0][t]
    if d.phase == B.PH_PLACE or d.phase == B.PH_CELL:
        lt_any[0] = d.any_left
        for t in range(4):
            lt_typed[t] = d.allow[t]
    elif d.phase == B.PH_SLOT:
        l_flexlow[0] = 1
        card = d.pending
        if B.C_MASTER_ANY <= card <= B.C_MASTER_LAST:
            for t in range(4):
                tiles[t] += MGAIN[card - B.C_MASTER_ANY][t]
            l_wild[0] += MGAIN[card - B.C_MASTER_ANY][4]
        elif B.C_HELPER <= card < B.C_HELPER + 4:
            lt_any[0] += 1
            lt_typed[card - B.C_HELPER] += 1
    elif d.phase == B.PH_MASTER:
        l_wild[0] = 1


cdef void turns_left(BonsaiData* d, bint start, int gaps, int* turns_fix,
                     int* dfut) noexcept nogil:
    """The turns left: fixed (turns_fix >= 0) or bounded by the future deck (dfut)."""
    cdef int pend
    if start:
        if d.final >= 0:
            turns_fix[0] = d.final + 1
        else:
            dfut[0] = d.deck_total
        return
    pend = gaps + d.burn
    if (d.phase == B.PH_PLACE or d.phase == B.PH_CELL) and d.by == B.BY_CULTIVATE \
            and d.market[3] >= 0:
        pend += 1
    if d.final >= 0:
        turns_fix[0] = d.final
    elif d.deck_total - pend <= 0:
        turns_fix[0] = 1
    else:
        dfut[0] = d.deck_total - pend


cdef int order_masters(int* avail, int* val, int* morder) noexcept nogil:
    """The Masters still obtainable, best first by what their tiles are worth (at most 9)."""
    cdef int c, i, j, tmp, nmast = 0
    for c in range(9):
        for i in range(avail[B.C_MASTER_ANY + c]):
            morder[nmast] = c
            nmast += 1
            if nmast == 9:
                break
        if nmast == 9:
            break
    for i in range(1, nmast):
        j = i
        while j > 0 and _mworth(morder[j], val) > _mworth(morder[j - 1], val):
            tmp = morder[j]
            morder[j] = morder[j - 1]
            morder[j - 1] = tmp
            j -= 1
    return nmast


cdef int open_goal_points(BonsaiData* d, int mine, int pmax, int* reach,
                          bint* all_colours) noexcept nogil:
    """The best points of every goal colour still open and reachable with pmax placements;
    all_colours: every colour in play not yet claimed has one."""
    cdef Tree* T = &d.tree[0]
    cdef int colour, s, g, pts, goals = 0
    all_colours[0] = True
    for colour in range(5):
        if not (colours_in_play(d) >> colour) & 1 or (mine >> colour) & 1:
            continue
        pts = -1
        for s in range(3):
            g = 3 * colour + s
            if not (d.goal_mask >> g) & 1 or d.claimed_by[g] >= 0 \
                    or (d.renounced[0] >> g) & 1:
                continue
            if colour == 4:
                if pmax == 0 and not goal_met(T, g):
                    continue
            else:
                if reach[GOAL_TYPE[colour]] < NEED[colour][s]:
                    continue
            if POINTS[colour][s] > pts:
                pts = POINTS[colour][s]
        if pts < 0:
            all_colours[0] = False
        else:
            goals += pts
    return goals


cdef void card_values(int* held, int* avail, int* pk, int* val, int* val0) noexcept nogil:
    """pk: each parchment held or obtainable; val/val0: the most a placed tile of each type
    can be worth with the parchments obtainable / held."""
    cdef int k
    for k in range(7):
        pk[k] = held[B.C_PARCH + k] > 0 or avail[B.C_PARCH + k] > 0
    val[B.WOOD] = pk[0]
    val[B.LEAF] = 3 + pk[1]
    val[B.FLOWER] = 5 + 2 * pk[2]
    val[B.FRUIT] = 7 + 2 * pk[3]
    val0[B.WOOD] = held[B.C_PARCH] > 0
    val0[B.LEAF] = 3 + (held[B.C_PARCH + 1] > 0)
    val0[B.FLOWER] = 5 + 2 * (held[B.C_PARCH + 2] > 0)
    val0[B.FRUIT] = 7 + 2 * (held[B.C_PARCH + 3] > 0)


cdef int greedy_value(int* tiles, int* morder, int masters, int fh, int fl, int wild,
                      int* slots, int sany, int* v) noexcept nogil:
    """The most the placements can be worth: fruit, flower, leaf, wood; own tiles (and the
    first `masters` Masters' tiles), then flexible, then wild; typed slots, then any."""
    cdef int t, i, own, flex, x, use, k, value = 0
    for t in range(3, -1, -1):
        own = tiles[t]
        for i in range(masters):
            own += MGAIN[morder[i]][t]
        flex = fh if t >= 2 else fl
        x = min(own + flex + wild, slots[t] + sany)
        value += x * v[t]
        use = x - min(x, own)
        if t >= 2:
            k = min(use, fh)
            fh -= k
        else:
            k = min(use, fl)
            fl -= k
        use -= k
        wild -= use
        sany -= x - min(x, slots[t])
    return value


cdef int removal_bonus(BonsaiData* d, int turns, bint start, int pmax,
                       int* frontier) noexcept nogil:
    """Removals: at most one at each turn start still to come (this one if removing), each
    worth at most 4 points back; `frontier` caches the tree's wood frontier (-1: unknown)."""
    if d.phase == B.PH_REMOVE:
        return 4 * turns
    if frontier[0] < 0:
        frontier[0] = wood_frontier(&d.tree[0])
    if pmax >= frontier[0]:
        return 4 * (turns - 1 if start else turns)
    return 0


cdef int placements_reach(Tree* T, int* tiles, int* morder, int masters, int fh, int fl,
                          int wild, int* slots, int sany, int* reach) noexcept nogil:
    """The most placements left (tiles obtainable vs slots), and in `reach` the most tiles
    of each type the tree can end with."""
    cdef int t, i, own, cnt_tiles = fh + fl + wild
    for t in range(4):
        cnt_tiles += tiles[t]
    for i in range(masters):
        cnt_tiles += MGAIN[morder[i]][0] + MGAIN[morder[i]][1] + MGAIN[morder[i]][2] \
            + MGAIN[morder[i]][3]
    for t in range(4):
        own = tiles[t]
        for i in range(masters):
            own += MGAIN[morder[i]][t]
        reach[t] = T.count[t] + min(own + (fh if t >= 2 else fl) + wild, slots[t] + sany)
    return min(cnt_tiles, sany + slots[0] + slots[1] + slots[2] + slots[3])


cdef int available_cards(BonsaiData* d, int* avail) noexcept nogil:
    """avail: every card still obtainable (deck and market); returns the market's gaps."""
    cdef int c, s, gaps = 0
    for c in range(B.BONSAI_NCARDS):
        avail[c] = d.deck[c]
    for s in range(4):
        if d.market[s] >= 0:
            avail[d.market[s]] += 1
        else:
            gaps += 1
    return gaps


cdef int static_bound(BonsaiData* d, int mode) noexcept nogil:
    """An upper bound on the best final score reachable from d (module docstring)."""
    cdef Tree* T = &d.tree[0]
    cdef int* held = d.cards[0]
    cdef int avail[B.BONSAI_NCARDS]
    cdef int pk[7]
    cdef int val[4]
    cdef int val0[4]
    cdef int* v
    cdef int lt_typed[4]
    cdef int tiles[4]
    cdef int slots[4]
    cdef int reach[4]
    cdef int morder[9]
    cdef int c, t, s, m, i, score, extra, best = NEG, total
    cdef int lt_any = 0, l_flexlow = 0, l_wild = 0, gaps, turns_fix = -1
    cdef int dfut = 0, turns, cult, growth[4], helpers_av = 0, masters_av = 0, growth_av = 0
    cdef int nmast = 0, fh, fl, wild, sany, value
    cdef int pmax, goals, mine, frontier = -1
    cdef bint start = d.phase == B.PH_ACTION or d.phase == B.PH_REMOVE, ok
    if d.phase == B.PH_OVER:
        return leaf_value(d, mode)
    score = score_of(d)
    gaps = available_cards(d, avail)
    card_values(held, avail, pk, val, val0)
    for t in range(4):
        growth[t] = held[B.C_GROWTH + t]
        growth_av += avail[B.C_GROWTH + t]
        helpers_av += avail[B.C_HELPER + t]
    for c in range(B.C_MASTER_ANY, B.C_MASTER_LAST + 1):
        masters_av += avail[c]
    extra = parchment_extra(d, avail)
    turn_allowance(d, tiles, lt_typed, &lt_any, &l_flexlow, &l_wild)
    turns_left(d, start, gaps, &turns_fix, &dfut)
    nmast = order_masters(avail, val, morder)
    mine = colours_claimed(d)
    m = 0
    while True:
        turns = turns_fix if turns_fix >= 0 else min(dfut + 1, dfut + 3 - m)
        if m > turns:
            break
        cult = turns - m
        # placements (no new card without a Meditate)
        v = &val[0] if m > 0 else &val0[0]
        for t in range(4):
            slots[t] = lt_typed[t] + cult * (growth[t] + min(m, avail[B.C_GROWTH + t])
                                             + (1 if t < 2 else 0)) \
                + min(m, avail[B.C_HELPER + t])
        sany = lt_any + cult + min(m, helpers_av)
        # tiles
        fh = m
        fl = m + l_flexlow
        wild = l_wild
        for i in range(min(m, nmast)):
            wild += MGAIN[morder[i]][4]
        pmax = placements_reach(T, tiles, morder, min(m, nmast), fh, fl, wild, slots, sany,
                                reach)
        value = greedy_value(tiles, morder, min(m, nmast), fh, fl, wild, slots, sany, v)
        goals = open_goal_points(d, mine, pmax, reach, &ok)
        if mode == 1 and not ok:
            m += 1
            continue
        # cards under parchments
        total = score + (extra if m > 0 else 0) + value + goals
        if pk[4]:
            total += 2 * min(m, growth_av)
        if pk[5]:
            total += 2 * min(m, helpers_av)
        if pk[6]:
            total += 2 * min(m, masters_av)
        total += removal_bonus(d, turns, start, pmax, &frontier)
        if total > best:
            best = total
        m += 1
    return best


cdef inline int _mworth(int master, int* val) noexcept nogil:
    return MGAIN[master][0] * val[0] + MGAIN[master][1] * val[1] + MGAIN[master][2] * val[2] \
        + MGAIN[master][3] * val[3] + MGAIN[master][4] * val[3]


cdef double now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


def bound_of(BonsaiState state, int mode=0):
    """The static upper bound of a solo position (its reveals applied first when the deck
    order is known); the tests check it against exact values."""
    cdef BonsaiData d
    memcpy(&d, &state.d, sizeof(BonsaiData))
    if d.known:
        resolve_chance(&d)
    return static_bound(&d, mode)


def canonical_hash(BonsaiState state):
    return solo_hash(&state.d)


cdef class SoloSearch:
    """Branch and bound over one deck-known solo position. `run` may be called with
    mode 0 (score) and then mode 1 (winning lines); each run starts a fresh table."""

    cdef BonsaiData* stack
    cdef int* kids
    cdef int* kbound
    cdef int* path
    cdef int* line
    cdef int line_len
    cdef uint64_t* tt_key
    cdef int16_t* tt_val
    cdef uint64_t tt_mask
    cdef int mode, best, table_mode
    cdef long long nodes, node_limit, tt_used
    cdef double deadline
    cdef bint aborted

    def __cinit__(self, int tt_bits=20):
        self.stack = <BonsaiData*>malloc(sizeof(BonsaiData) * (MAX_PLY + 1))
        self.kids = <int*>malloc(sizeof(int) * MAX_PLY * MAX_CHILD)
        self.kbound = <int*>malloc(sizeof(int) * MAX_PLY * MAX_CHILD)
        self.path = <int*>malloc(sizeof(int) * MAX_PLY)
        self.line = <int*>malloc(sizeof(int) * MAX_PLY)
        self.tt_key = <uint64_t*>calloc(1 << tt_bits, sizeof(uint64_t))
        self.tt_val = <int16_t*>calloc(1 << tt_bits, sizeof(int16_t))
        self.tt_mask = (1 << tt_bits) - 1
        self.table_mode = -1
        if not (self.stack and self.kids and self.kbound and self.path and self.line
                and self.tt_key and self.tt_val):
            raise MemoryError("solo search tables")

    def __dealloc__(self):
        free(self.stack)
        free(self.kids)
        free(self.kbound)
        free(self.path)
        free(self.line)
        free(self.tt_key)
        free(self.tt_val)

    cdef int child_bound(self, BonsaiData* c) noexcept nogil:
        cdef int b
        cdef uint64_t h
        if c.phase == B.PH_OVER:
            return leaf_value(c, self.mode)
        b = static_bound(c, self.mode)
        h = solo_hash(c)
        if self.tt_key[h & self.tt_mask] == h and self.tt_val[h & self.tt_mask] < b:
            b = self.tt_val[h & self.tt_mask]
        return b

    cdef int dfs(self, int ply) noexcept nogil:
        cdef BonsaiData* d = &self.stack[ply]
        cdef BonsaiData* c = &self.stack[ply + 1]
        cdef int* kids = &self.kids[ply * MAX_CHILD]
        cdef int* kb = &self.kbound[ply * MAX_CHILD]
        cdef int n, i, j, v, b, a, u = NEG
        cdef uint64_t h, slot
        if d.phase == B.PH_OVER:
            v = leaf_value(d, self.mode)
            if v > self.best:
                self.best = v
                memcpy(self.line, self.path, sizeof(int) * ply)
                self.line_len = ply
            return v
        self.nodes += 1
        if (self.nodes & 255) == 0 and (self.nodes >= self.node_limit or now() > self.deadline):
            self.aborted = True
        if ply >= MAX_PLY - 1:
            self.aborted = True
            return static_bound(d, self.mode)
        n = bonsai_gen(d, kids)
        if n > MAX_CHILD:
            n = MAX_CHILD       # never happens (a Bonsai node has well under 256 actions)
        for i in range(n):
            memcpy(c, d, sizeof(BonsaiData))
            bonsai_apply(c, kids[i])
            resolve_chance(c)
            kb[i] = self.child_bound(c)
        for i in range(1, n):           # best bound first (insertion sort, stable)
            j = i
            while j > 0 and kb[j] > kb[j - 1]:
                a = kids[j]
                kids[j] = kids[j - 1]
                kids[j - 1] = a
                b = kb[j]
                kb[j] = kb[j - 1]
                kb[j - 1] = b
                j -= 1
        for i in range(n):
            b = kb[i]
            if self.aborted or b <= self.best:
                if b > u:
                    u = b
                if not self.aborted:
                    break               # sorted: the rest cannot beat the incumbent either
                continue
            memcpy(c, d, sizeof(BonsaiData))
            bonsai_apply(c, kids[i])
            resolve_chance(c)
            self.path[ply] = kids[i]
            v = self.dfs(ply + 1)
            if v > b:
                v = b
            if v > u:
                u = v
        h = solo_hash(d)
        slot = h & self.tt_mask
        if self.tt_key[slot] == h:
            if u < self.tt_val[slot]:
                self.tt_val[slot] = u
        else:
            if self.tt_key[slot] == 0:
                self.tt_used += 1
            self.tt_key[slot] = h
            self.tt_val[slot] = u
        return u

    def rollouts(self, BonsaiState root, int mode, int count, seed=0):
        """`count` playouts of the engine's heuristic policy from root (reveals in the known
        order): (best value, its decisions)."""
        cdef Rng rng = seed if isinstance(seed, Rng) else Rng(seed)
        cdef BonsaiData d
        cdef int buf[MAX_ACTIONS]
        cdef int n, a, r, v, k, best = NEG - 1
        best_line = []
        for r in range(count):
            memcpy(&d, &root.d, sizeof(BonsaiData))
            resolve_chance(&d)
            line = []
            while d.phase != B.PH_OVER:
                n = bonsai_gen(&d, buf)
                # mostly the engine's heuristic, sometimes a uniform choice (diversity)
                if rng_below(&rng.s, 4) == 0:
                    a = buf[rng_below(&rng.s, n)]
                else:
                    a = heuristic_choice(&d, buf, n, &rng.s)
                line.append(a)
                bonsai_apply(&d, a)
                resolve_chance(&d)
            v = leaf_value(&d, mode)
            if v > best:
                best = v
                best_line = line
        return best, best_line

    cdef int rollout(self, BonsaiData* d, RngState* rng, int* out, int cap,
                     int* n_out) noexcept nogil:
        """Play d to the end with the engine's heuristic policy (a uniform choice one time
        in four); the actions (at most cap) go to out. Returns the shaped value (see
        `nested`)."""
        cdef int buf[MAX_ACTIONS]
        cdef int n, a, k = 0
        while d.phase != B.PH_OVER and k < cap:
            n = bonsai_gen(d, buf)
            if rng_below(rng, 4) == 0:
                a = buf[rng_below(rng, n)]
            else:
                a = heuristic_choice(d, buf, n, rng)
            out[k] = a
            k += 1
            bonsai_apply(d, a)
            resolve_chance(d)
        n_out[0] = k
        return shaped_value(d, self.mode)

    def nested(self, BonsaiState root, int mode, int per_child, double time_limit, seed=0):
        """A first incumbent by nested Monte Carlo search (level 1): at every decision of
        the line, `per_child` heuristic playouts after each action, then the action that
        starts the best line seen so far. Returns (best value, its decisions); the value is
        the mode's (mode 1: NEG unless every colour is claimed), the playouts rank lines
        by score + 200 per colour claimed in mode 1."""
        cdef Rng rng = seed if isinstance(seed, Rng) else Rng(seed)
        cdef BonsaiData* d = &self.stack[0]
        cdef BonsaiData* c = &self.stack[1]
        cdef int* kids = self.kids
        cdef int* seq = self.path
        cdef int* best_seq = self.line
        cdef int best_len = 0, best_val = NEG * 100, ply = 0, n, i, k, v, tail
        cdef double deadline = now() + time_limit
        self.mode = mode
        memcpy(d, &root.d, sizeof(BonsaiData))
        resolve_chance(d)
        with nogil:
            while d.phase != B.PH_OVER and ply < MAX_PLY - 1:
                if now() < deadline or best_len <= ply:
                    n = bonsai_gen(d, kids)
                    for i in range(n):
                        for k in range(per_child if n > 1 else 1):
                            memcpy(c, d, sizeof(BonsaiData))
                            bonsai_apply(c, kids[i])
                            resolve_chance(c)
                            v = self.rollout(c, &rng.s, &seq[ply + 1], MAX_PLY - 2 - ply, &tail)
                            if v > best_val:
                                best_val = v
                                seq[ply] = kids[i]
                                memcpy(&best_seq[ply], &seq[ply], sizeof(int) * (tail + 1))
                                best_len = ply + 1 + tail
                bonsai_apply(d, best_seq[ply])
                resolve_chance(d)
                ply += 1
            v = leaf_value(d, mode)
        return v, [best_seq[i] for i in range(ply)]

    def run(self, BonsaiState root, int mode, int incumbent, list incumbent_line,
            long long node_limit, double time_limit, bint fresh=True):
        """Branch and bound from root: {best, line, upper, complete, nodes, tt_fill}. `best`
        starts at `incumbent` (its line `incumbent_line`, [] if none). `fresh=False` keeps
        the table of an earlier run from the same root."""
        cdef int u, i
        if not root.d.known:
            raise ValueError("the deck order is not known")
        # The table holds upper bounds, whatever the incumbent was: they stay valid for
        # later runs from the same root in the same mode, and a score bound also bounds a
        # winning line's score (mode 0 -> 1); only 1 -> 0 (or a new root) needs a clean one.
        if fresh or self.table_mode == 1 and mode == 0:
            memset(self.tt_key, 0, sizeof(uint64_t) * (self.tt_mask + 1))
            self.tt_used = 0
        self.table_mode = mode
        self.mode = mode
        self.best = incumbent
        self.line_len = len(incumbent_line)
        for i, a in enumerate(incumbent_line[:MAX_PLY]):
            self.line[i] = a
        self.nodes = 0
        self.node_limit = node_limit
        self.deadline = now() + time_limit
        self.aborted = False
        memcpy(&self.stack[0], &root.d, sizeof(BonsaiData))
        resolve_chance(&self.stack[0])
        with nogil:
            u = self.dfs(0)
        if not self.aborted and u > self.best:
            u = self.best       # cannot happen: a completed search finds what its bound says
        return {"best": self.best, "line": [self.line[i] for i in range(self.line_len)],
                "upper": max(u, self.best), "complete": not self.aborted,
                "nodes": self.nodes, "tt_fill": self.tt_used / (self.tt_mask + 1.0)}
