# cython: language_level=3
"""Bonsai (Battiato, Borzi, Chiacchiera; dV Giochi 2023) engine: docs/rules/bonsai.md, exactly.

The tree. The board is an unbounded hex grid (offset rows, y up; neighbour directions
0..5 = up-right, right, down-right, down-left, left, up-left, as listed on the rules page).
A tree is a flat array of its tiles in placement order (the bud is tile 0 at (0, 0)), an
open-addressing hash table cell -> tile index, and a neighbour table nb[tile][direction]
(a tile index, EMPTY = -1 or POT = -2) kept up to date on every placement; the direction
offsets are a precomputed table per row parity. Nothing depends on a window of the grid.

Bound on the tiles of one tree (why BONSAI_MAX_TILES = 128 is enough). Tiles enter a
supply only from the starting tiles (at most 4, seat 3), from a market slot (at most 2
per card taken) and from a Master card (its printed tiles); the removal rule only takes
tiles away. So one tree holds at most 1 (bud) + 4 + 2 * (cards in the deck) + (tiles on
all Masters): 1 + 2 + 2*32 + 12 = 79 with 1-2 players, 1 + 3 + 2*43 + 23 = 113 with 3 and
1 + 4 + 2*47 + 26 = 125 with 4 (MAX_TREE_TILES below; tests recompute it from the deck).
Every tile is joined to the bud through tiles, so no tile is more than 124 steps away
and packed cells (x + 128, y + 128) fit 16 bits.

Action model (all ids < 1024; one range per decision kind; perft counts chance outcomes
as one action each). A turn is a sequence of small decisions:
    0..767      place the chosen tile type at a cell: 6 * i + k, where the cell is the
                neighbour in direction k of tile i, i the lowest tile index next to it
    768 + i     remove tile i (with the flowers/fruits it alone supports), at the start
                of a turn when no wood fits: only the cheapest such removals are offered
    896         keep (decline the removal)
    900 + s     Meditate: take the card of market slot s (0 = next to the deck)
    904         Cultivate
    908 + t     gain a tile of type t (slot 1: wood or leaf; Master "any": any type)
    912 + t     next tile to place is of type t (Cultivate or Helper); 916 stop placing
    920 + g     claim goal tile g = 3 * colour + size; 936 + g renounce it
    952 + t     discard one tile of type t (types in non-decreasing order, so each set of
                discards is one sequence; only offered while above capacity)
    960 + c     chance: card type c is revealed from the deck
    992 + j     chance: goal colours drawn (j-th 3-subset of the 5 colours, in
                lexicographic order)
Tile types t: 0 wood, 1 leaf, 2 flower, 3 fruit. A placement uses the allowance of its
own type first and "any" only when that is used up, which allows exactly the same sets
of placements as free assignment. A decision with nothing to decide is not a node: the
placing step ends by itself once nothing more can be placed, goal, removal and discard
nodes exist only when something is met, blocked or over capacity.

Turn order: [removal] -> Meditate (slot-1 choice, Master "any" choice, Helper
placements) or Cultivate (placements) -> market slide and refill (chance reveals) ->
goals -> discard; with discard_before_reveal the reveals come after the discard. The
deck is an unseen multiset: each reveal is a chance node weighted by the counts (under
tokonoma, parchments are known to lie in the top part). With two gaps the first card
revealed goes to the higher slot. A position may also carry a known deck order (from
its notation or from resample_hidden, which determinises the unseen deck); its reveals
are chance nodes with one outcome.

Choices the rules page leaves open, made here:
- Meditate is one decision "take slot s" (choosing the action and the card at once).
- Removal: the cheapest removals are one tile next to a wood plus the flowers and fruits
  that lose their support with it; "fewest tiles" counts those too. Wood never goes.
- Discarding is only offered above capacity (holding a tile never hurts: supply tiles
  score nothing and every placement is optional).
- Tokonoma: the 7 parchments are shuffled with the top floor(others / 2) other cards; the
  market is dealt from that top part. Solo always uses goals (goals=off is refused).
"""
from libc.math cimport exp
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memset

from niwa.ext.game cimport (CHANCE, MAX_ACTIONS, TERMINAL, Rng, State, share_weights,
                           fill_default_weights)
from niwa.ext.rng cimport RngState, rng_below, rng_uniform

from niwa.ext.spec import EvalWeight, GameSpec, StatField, Traits, VariantOption
from niwa.ext.errors import NotationError, VariantError
from niwa.ext.notation import (format_multiset, integer, key_values, parse_multiset, read_header,
                               section, split_parts)

# ---- constants ------------------------------------------------------------------------
TILES = "WLFR"
TILE_NAMES = ("wood", "leaf", "flower", "fruit")
CARDS = ("T", "GW", "GL", "GF", "GR", "MA", "MWW", "MWL", "MWLF", "MWLR", "MLL", "MLF",
         "MLFF", "MLR", "HW", "HL", "HF", "HR", "PW", "PL", "PF", "PR", "PG", "PH", "PM")
# What each card code means (the render's legend, docs/rules/bonsai.md's table)
CARD_HELP = {
    "T": "Tool: +2 supply capacity",
    "GW": "Growth: +1 wood placement when you cultivate",
    "GL": "Growth: +1 leaf placement when you cultivate",
    "GF": "Growth: +1 flower placement when you cultivate",
    "GR": "Growth: +1 fruit placement when you cultivate",
    "MA": "Master: take 1 tile of your choice",
    "MWW": "Master: take wood + wood", "MWL": "Master: take wood + leaf",
    "MWLF": "Master: take wood + leaf + flower", "MWLR": "Master: take wood + leaf + fruit",
    "MLL": "Master: take leaf + leaf", "MLF": "Master: take leaf + flower",
    "MLFF": "Master: take leaf + flower + flower", "MLR": "Master: take leaf + fruit",
    "HW": "Helper: place 1 tile of any type + 1 wood now",
    "HL": "Helper: place 1 tile of any type + 1 leaf now",
    "HF": "Helper: place 1 tile of any type + 1 flower now",
    "HR": "Helper: place 1 tile of any type + 1 fruit now",
    "PW": "Parchment: 1 point per wood tile at the end",
    "PL": "Parchment: 1 point per leaf tile at the end",
    "PF": "Parchment: 2 points per flower tile at the end",
    "PR": "Parchment: 2 points per fruit tile at the end",
    "PG": "Parchment: 2 points per Growth card at the end",
    "PH": "Parchment: 2 points per Helper card at the end",
    "PM": "Parchment: 2 points per Master card at the end"}
# The key `niwa play` prints under the first board and on 'help' (every code of CARDS is in
# it: tests/test_boards.py)
LEGEND = """Card codes (market, cards, deck):
  T       Tool: +2 supply capacity
  G?      Growth: +1 placement of ? when you cultivate (GW wood, GL leaf, GF flower, GR fruit)
  MA      Master: take 1 tile of your choice
  M??[?]  Master: take the tiles named: MWW, MWL, MWLF, MWLR, MLL, MLF, MLFF, MLR
          (W wood, L leaf, F flower, R fruit; MLFF = leaf + flower + flower)
  H?      Helper: place 1 tile of any type + 1 of ? now (HW, HL, HF, HR)
  P?      Parchment, points at the end: PW 1 per wood, PL 1 per leaf, PF 2 per flower,
          PR 2 per fruit, PG 2 per Growth card, PH 2 per Helper card, PM 2 per Master card
  X*3     three copies of card X; - none
Tiles: W wood, L leaf, F flower, R fruit, = pot. Goals: colour.size=points (s small,
m medium, l large; (pN): claimed by player N)."""
COLOURS = ("brown", "green", "orange", "pink", "blue")
SIZES = "sml"
GOAL_NEED = {"brown": (8, 10, 12), "green": (5, 7, 9), "orange": (3, 4, 5), "pink": (3, 4, 5)}
GOAL_POINTS_PY = {"brown": (5, 10, 15), "green": (6, 9, 12), "orange": (9, 11, 13),
                  "pink": (8, 12, 16), "blue": (7, 10, 14)}
SOLO_THRESHOLDS = {1: 80, 2: 100, 3: 120, 4: 140}
#                 T GW GL GF GR MA WW WL WLF WLR LL LF LFF LR HW HL HF HR  7 parchments
DECK_COUNTS = {2: (3, 2, 2, 2, 2, 2, 1, 1, 0, 0, 1, 1, 0, 1, 3, 2, 1, 1) + (1,) * 7,
               3: (5, 3, 4, 3, 2, 3, 1, 3, 1, 1, 1, 1, 0, 1, 3, 2, 1, 1) + (1,) * 7,
               4: (6, 4, 4, 3, 3, 3, 1, 3, 1, 1, 1, 1, 1, 1, 3, 2, 1, 1) + (1,) * 7}
MAX_TREE_TILES = {1: 79, 2: 79, 3: 113, 4: 125}
PHASES = ("goaldraw", "deal", "remove", "action", "slot", "master", "place", "cell",
          "reveal", "goals", "discard", "over")
BY_NAMES = ("-", "cultivate", "helper")

OPTIONS = (
    VariantOption("players", (1, 2, 3, 4), 2, "number of players (1 = solo)"),
    VariantOption("goals", ("on", "off"), "on", "goal tiles in play (solo always uses them)"),
    VariantOption("tokonoma", ("off", "on"), "off",
                  "parchments shuffled into the top half of the deck"),
    VariantOption("solo_level", (1, 2, 3, 4), 1, "solo win threshold 80/100/120/140 points"),
    VariantOption("discard_before_reveal", ("off", "on"), "off",
                  "discard to capacity before the new market card is revealed"),
)
DEFAULTS = {o.key: o.default for o in OPTIONS}
# Bonsai playouts end in close results, so the generic exploration constant (1.4) keeps the
# search near-uniform and extra iterations buy little. Measured in seat-swapped matches: with c=0.5
# mcts:iters=10000 scored 68.3% of 60 games against mcts:iters=1000 (56.0% of 150 with 1.4)
# and mcts:iters=2000 82% of 100 against 200 iterations (75% with 1.4), while 1000
# iterations with c=0.5 scored 46.7% of 60 against 1000 with 1.4 (no loss at equal budget).
BONSAI_MCTS_DEFAULTS = {"c": 0.5}

# the tile, card, action and phase constants are in bonsai.pxd (the solo search uses them)

# ---- precomputed tables -----------------------------------------------------------------
cdef int DXT[2][6]          # x offset by row parity (0 even, 1 odd) and direction
cdef int DYT[6]
cdef int MASTER_GAIN[9][4]  # tiles on each Master (index card - C_MASTER_ANY)
cdef int GOAL_THRESHOLD[5][3]
cdef int GOAL_POINTS[5][3]
cdef int DRAWS[10][3]
cdef int ORDER_DEFAULT[4]
cdef int ORDER_DBR[4]
cdef int FULL_DECK[5][BONSAI_NCARDS]


def _init_tables():
    cdef int k, i, j
    even = ((1, 1), (1, 0), (1, -1), (0, -1), (-1, 0), (0, 1))
    odd = ((0, 1), (1, 0), (0, -1), (-1, -1), (-1, 0), (-1, 1))
    for k in range(6):
        DXT[0][k] = even[k][0]
        DXT[1][k] = odd[k][0]
        DYT[k] = even[k][1]
    gains = ((0, 0, 0, 0), (2, 0, 0, 0), (1, 1, 0, 0), (1, 1, 1, 0), (1, 1, 0, 1),
             (0, 2, 0, 0), (0, 1, 1, 0), (0, 1, 2, 0), (0, 1, 0, 1))
    for i in range(9):
        for k in range(4):
            MASTER_GAIN[i][k] = gains[i][k]
    for i, colour in enumerate(COLOURS):
        for j in range(3):
            GOAL_THRESHOLD[i][j] = GOAL_NEED[colour][j] if colour in GOAL_NEED else 0
            GOAL_POINTS[i][j] = GOAL_POINTS_PY[colour][j]
    import itertools
    for i, combo in enumerate(itertools.combinations(range(5), 3)):
        for j in range(3):
            DRAWS[i][j] = combo[j]
    for i, st in enumerate((ST_REVEAL, ST_GOALS, ST_DISCARD, ST_END)):
        ORDER_DEFAULT[i] = st
    for i, st in enumerate((ST_GOALS, ST_DISCARD, ST_REVEAL, ST_END)):
        ORDER_DBR[i] = st
    for n in range(1, 5):
        for k in range(BONSAI_NCARDS):
            FULL_DECK[n][k] = DECK_COUNTS[max(2, n)][k]


_init_tables()


# ---- the tree -----------------------------------------------------------------------------
cdef inline bint is_pot(int x, int y) noexcept nogil:
    if y == 0:
        return -2 <= x <= 3 and x != 0
    if y == -1:
        return -1 <= x <= 3
    if y == -2:
        return -1 <= x <= 2
    return False

cdef inline bint right_of_pot(int x, int y) noexcept nogil:
    return x > 3 if (y & 1) else x >= 3

cdef inline bint left_of_pot(int x, int y) noexcept nogil:
    return x < -1 if (y & 1) else x <= -2

cdef inline unsigned int slot_of(unsigned short key) noexcept nogil:
    return ((<unsigned int>key * 2654435761u) >> 24) & (BONSAI_HASH - 1)

cdef inline unsigned short cell_key(int x, int y) noexcept nogil:
    return <unsigned short>(((y + 128) << 8) | (x + 128))

cdef inline int tree_find(Tree* T, int x, int y) noexcept nogil:
    """Index of the tile at (x, y), or -1."""
    cdef unsigned short key = cell_key(x, y)
    cdef unsigned int h = slot_of(key)
    while T.hkey[h]:
        if T.hkey[h] == key:
            return T.hval[h]
        h = (h + 1) & (BONSAI_HASH - 1)
    return -1

cdef inline void tree_add(Tree* T, int x, int y, int t) noexcept nogil:
    cdef int i = T.n, k, j, nx, ny, par = y & 1
    cdef unsigned short key = cell_key(x, y)
    cdef unsigned int h = slot_of(key)
    while T.hkey[h]:
        h = (h + 1) & (BONSAI_HASH - 1)
    T.hkey[h] = key
    T.hval[h] = i
    T.tx[i] = x
    T.ty[i] = y
    T.tt[i] = t
    for k in range(6):
        nx = x + DXT[par][k]
        ny = y + DYT[k]
        j = tree_find(T, nx, ny)
        if j >= 0:
            T.nb[i][k] = j
            T.nb[j][(k + 3) % 6] = i
        elif is_pot(nx, ny):
            T.nb[i][k] = POTCELL
        else:
            T.nb[i][k] = EMPTY
    T.n += 1
    T.count[t] += 1

cdef inline void tree_reset(Tree* T) noexcept nogil:
    memset(T.hkey, 0, sizeof(T.hkey))
    T.n = 0
    T.count[0] = T.count[1] = T.count[2] = T.count[3] = 0
    tree_add(T, 0, 0, WOOD)

cdef inline int cell_mask(Tree* T, int cx, int cy, int* lowest) noexcept nogil:
    """Which tile types may go on the empty non-pot cell (cx, cy) (bit t), and the lowest
    index of a tile next to it (the anchor of its action id)."""
    cdef int k, j, par = cy & 1, low = 1 << 20
    cdef int around[6]
    cdef int has_w = 0, has_l = 0, has_r = 0, pair = 0, mask = 0
    for k in range(6):
        j = tree_find(T, cx + DXT[par][k], cy + DYT[k])
        if j >= 0:
            if j < low:
                low = j
            around[k] = T.tt[j]
        else:
            around[k] = EMPTY
    for k in range(6):
        if around[k] == WOOD:
            has_w = 1
        elif around[k] == LEAF:
            has_l = 1
            if around[(k + 1) % 6] == LEAF:
                pair = 1
        elif around[k] == FRUIT:
            has_r = 1
    if has_w:
        mask |= 3
    if has_l:
        mask |= 4
    if pair and not has_r:
        mask |= 8
    lowest[0] = low
    return mask

cdef inline int gen_cells(Tree* T, int t, int* out, int n) noexcept nogil:
    cdef int i, k, par, low, mask
    for i in range(T.n):
        par = T.ty[i] & 1
        for k in range(6):
            if T.nb[i][k] != EMPTY:
                continue
            mask = cell_mask(T, T.tx[i] + DXT[par][k], T.ty[i] + DYT[k], &low)
            if low == i and (mask >> t) & 1:
                out[n] = 6 * i + k
                n += 1
    return n

cdef inline int type_mask(Tree* T, int want) noexcept nogil:
    """The types among `want` that have at least one legal cell."""
    cdef int i, k, par, low, mask = 0
    if want == 0:
        return 0
    for i in range(T.n):
        par = T.ty[i] & 1
        for k in range(6):
            if T.nb[i][k] != EMPTY:
                continue
            mask |= cell_mask(T, T.tx[i] + DXT[par][k], T.ty[i] + DYT[k], &low) & want
            if mask == want:
                return mask
    return mask

cdef inline bint wood_blocked(Tree* T) noexcept nogil:
    cdef int i, k
    for i in range(T.n):
        if T.tt[i] == WOOD:
            for k in range(6):
                if T.nb[i][k] == EMPTY:
                    return False
    return True

cdef inline bint supported_without(Tree* T, int j, int gone) noexcept nogil:
    """Is flower/fruit j still supported once tile `gone` is removed?"""
    cdef int k, a, b
    if T.tt[j] == FLOWER:
        for k in range(6):
            a = T.nb[j][k]
            if a >= 0 and a != gone and T.tt[a] == LEAF:
                return True
        return False
    for k in range(6):
        a = T.nb[j][k]
        b = T.nb[j][(k + 1) % 6]
        if a >= 0 and b >= 0 and a != gone and b != gone and T.tt[a] == LEAF and T.tt[b] == LEAF:
            return True
    return False

cdef inline int removal_cost(Tree* T, int i) noexcept nogil:
    """Tiles lost by removing tile i (0 if i is not a removal candidate)."""
    cdef int k, j, cost = 1, next_to_wood = 0
    if T.tt[i] == WOOD:
        return 0
    for k in range(6):
        j = T.nb[i][k]
        if j >= 0:
            if T.tt[j] == WOOD:
                next_to_wood = 1
            elif T.tt[j] >= FLOWER and T.tt[i] == LEAF and not supported_without(T, j, i):
                cost += 1
    return cost if next_to_wood else 0

cdef inline int gen_removals(Tree* T, int* out, int n) noexcept nogil:
    cdef int i, c, best = 1 << 20
    for i in range(1, T.n):
        c = removal_cost(T, i)
        if c and c < best:
            best = c
    for i in range(1, T.n):
        if removal_cost(T, i) == best:
            out[n] = A_REMOVE + i
            n += 1
    return n

cdef void tree_remove(Tree* T, int i) noexcept nogil:
    """Remove tile i and the flowers/fruits it alone supports; keep the others' order."""
    cdef unsigned char dead[BONSAI_MAX_TILES]
    cdef short xs[BONSAI_MAX_TILES]
    cdef short ys[BONSAI_MAX_TILES]
    cdef signed char ts[BONSAI_MAX_TILES]
    cdef int k, j, m = 0, n = T.n
    memset(dead, 0, sizeof(dead))
    dead[i] = 1
    if T.tt[i] == LEAF:
        for k in range(6):
            j = T.nb[i][k]
            if j >= 0 and T.tt[j] >= FLOWER and not supported_without(T, j, i):
                dead[j] = 1
    for j in range(1, n):
        if not dead[j]:
            xs[m] = T.tx[j]
            ys[m] = T.ty[j]
            ts[m] = T.tt[j]
            m += 1
    tree_reset(T)
    for j in range(m):
        tree_add(T, xs[j], ys[j], ts[j])

cdef int largest_leaf_group(Tree* T) noexcept nogil:
    cdef unsigned char seen[BONSAI_MAX_TILES]
    cdef int todo[BONSAI_MAX_TILES]
    cdef int i, k, j, top, size, best = 0
    memset(seen, 0, sizeof(seen))
    for i in range(T.n):
        if T.tt[i] != LEAF or seen[i]:
            continue
        seen[i] = 1
        todo[0] = i
        top = 1
        size = 0
        while top:
            top -= 1
            j = todo[top]
            size += 1
            for k in range(6):
                if T.nb[j][k] >= 0 and T.tt[T.nb[j][k]] == LEAF and not seen[T.nb[j][k]]:
                    seen[T.nb[j][k]] = 1
                    todo[top] = T.nb[j][k]
                    top += 1
        if size > best:
            best = size
    return best

cdef inline int flower_points(Tree* T) noexcept nogil:
    """1 per flower side not touching a tile (pot cells are not tiles)."""
    cdef int i, k, pts = 0
    for i in range(T.n):
        if T.tt[i] == FLOWER:
            for k in range(6):
                if T.nb[i][k] < 0:
                    pts += 1
    return pts

cdef bint goal_met(Tree* T, int g) noexcept nogil:
    cdef int colour = g // 3, size = g % 3, i, right = 0, left = 0
    cdef int below_right = 0, below_left = 0, x, y
    if colour == 0:
        return T.count[WOOD] >= GOAL_THRESHOLD[0][size]
    if colour == 1:
        return largest_leaf_group(T) >= GOAL_THRESHOLD[1][size]
    if colour == 2:
        return T.count[FRUIT] >= GOAL_THRESHOLD[2][size]
    for i in range(T.n):
        if colour == 3 and T.tt[i] != FLOWER:
            continue
        x = T.tx[i]
        y = T.ty[i]
        if right_of_pot(x, y):
            right += 1
            if y <= -2:
                below_right = 1
        elif left_of_pot(x, y):
            left += 1
            if y <= -2:
                below_left = 1
    if colour == 3:
        return right >= GOAL_THRESHOLD[3][size] or left >= GOAL_THRESHOLD[3][size]
    if size == 0:
        return right > 0
    if size == 1:
        return right > 0 and left > 0
    return (right > 0 and below_left) or (left > 0 and below_right)


# ---- game rules on the struct ----------------------------------------------------------
cdef inline int capacity(BonsaiData* d, int p) noexcept nogil:
    return 5 + 2 * d.cards[p][C_TOOL]

cdef inline int supply_total(BonsaiData* d, int p) noexcept nogil:
    return d.supply[p][0] + d.supply[p][1] + d.supply[p][2] + d.supply[p][3]

cdef inline bint is_chance(BonsaiData* d) noexcept nogil:
    return d.phase == PH_GOALDRAW or d.phase == PH_DEAL or d.phase == PH_REVEAL

cdef inline int placeable_mask(BonsaiData* d) noexcept nogil:
    cdef int p = d.to_move, t, want = 0
    for t in range(4):
        if d.supply[p][t] > 0 and (d.allow[t] > 0 or d.any_left > 0):
            want |= 1 << t
    return type_mask(&d.tree[p], want)

cdef int pending_goal(BonsaiData* d) noexcept nogil:
    cdef int p = d.to_move, g, mine = 0
    for g in range(BONSAI_NGOALS):
        if d.claimed_by[g] == p:
            mine |= 1 << (g // 3)
    for g in range(BONSAI_NGOALS):
        if not (d.goal_mask >> g) & 1 or d.claimed_by[g] >= 0 or (d.renounced[p] >> g) & 1 \
                or (mine >> (g // 3)) & 1:
            continue
        if goal_met(&d.tree[p], g):
            return g
    return -1

cdef inline bint market_gap(BonsaiData* d) noexcept nogil:
    return d.market[0] < 0 or d.market[1] < 0 or d.market[2] < 0 or d.market[3] < 0

cdef inline bint reveal_needed(BonsaiData* d) noexcept nogil:
    return d.deck_total > 0 and (d.burn or market_gap(d))

cdef inline void slide(BonsaiData* d) noexcept nogil:
    """Cards move away from the deck to close gaps (empty slots end up next to the deck)."""
    cdef int s, w = 3
    for s in range(3, -1, -1):
        if d.market[s] >= 0:
            d.market[w] = d.market[s]
            w -= 1
    while w >= 0:
        d.market[w] = -1
        w -= 1

cdef inline int unseen_parchments(BonsaiData* d) noexcept nogil:
    cdef int c, k = 0
    for c in range(C_PARCH, BONSAI_NCARDS):
        k += d.deck[c]
    return k

cdef int chance_outcomes(BonsaiData* d, int* acts, double* probs) noexcept nogil:
    cdef int c, n = 0, up, others
    if d.phase == PH_GOALDRAW:
        for c in range(10):
            acts[c] = A_GOALS + c
            probs[c] = 0.1
        return 10
    if d.known:
        acts[0] = A_REVEAL + d.order[d.order_head]
        probs[0] = 1.0
        return 1
    if d.top > 0:
        up = unseen_parchments(d)
        others = d.deck_total - up
        for c in range(BONSAI_NCARDS):
            if d.deck[c] == 0:
                continue
            if c >= C_PARCH:
                acts[n] = A_REVEAL + c
                probs[n] = 1.0 / d.top
                n += 1
            elif d.top > up:
                acts[n] = A_REVEAL + c
                probs[n] = (<double>(d.top - up)) / d.top * d.deck[c] / others
                n += 1
        return n
    for c in range(BONSAI_NCARDS):
        if d.deck[c]:
            acts[n] = A_REVEAL + c
            probs[n] = (<double>d.deck[c]) / d.deck_total
            n += 1
    return n

cdef inline int pick_card(BonsaiData* d, int lo, int hi, int r) noexcept nogil:
    """The r-th unseen card (0-based) among types lo..hi-1."""
    cdef int c
    for c in range(lo, hi):
        if r < d.deck[c]:
            return c
        r -= d.deck[c]
    return hi - 1

cdef int sample_chance(BonsaiData* d, RngState* rng) noexcept nogil:
    cdef int up
    if d.phase == PH_GOALDRAW:
        return A_GOALS + <int>rng_below(rng, 10)
    if d.known:
        return A_REVEAL + d.order[d.order_head]
    if d.top > 0:
        up = unseen_parchments(d)
        if <int>rng_below(rng, d.top) < up:
            return A_REVEAL + pick_card(d, C_PARCH, BONSAI_NCARDS, rng_below(rng, up))
        return A_REVEAL + pick_card(d, 0, C_PARCH, rng_below(rng, d.deck_total - up))
    return A_REVEAL + pick_card(d, 0, BONSAI_NCARDS, rng_below(rng, d.deck_total))

cdef inline void start_turn(BonsaiData* d) noexcept nogil:
    d.phase = PH_REMOVE if wood_blocked(&d.tree[d.to_move]) else PH_ACTION

cdef void end_turn(BonsaiData* d) noexcept nogil:
    d.turns += 1
    d.dmin = 0
    if d.final >= 0:
        if d.final == 0:
            d.phase = PH_OVER
            return
        d.final -= 1
    d.to_move = (d.to_move + 1) % d.nplayers
    start_turn(d)

cdef void advance(BonsaiData* d, int done) noexcept nogil:
    """Go to the first post-action stage after `done` (-1: all) that needs a node."""
    cdef int* order = &ORDER_DBR[0] if d.dbr else &ORDER_DEFAULT[0]
    cdef int i, start = 0, p = d.to_move
    if done >= 0:
        for i in range(4):
            if order[i] == done:
                start = i + 1
    for i in range(start, 4):
        if order[i] == ST_REVEAL and reveal_needed(d):
            d.phase = PH_REVEAL
            return
        if order[i] == ST_GOALS and pending_goal(d) >= 0:
            d.phase = PH_GOALS
            return
        if order[i] == ST_DISCARD and supply_total(d, p) > capacity(d, p):
            d.phase = PH_DISCARD
            d.dmin = 0
            return
        if order[i] == ST_END:
            end_turn(d)
            return

cdef void end_place(BonsaiData* d) noexcept nogil:
    if d.by == BY_CULTIVATE and d.nplayers == 1 and d.market[3] >= 0:
        d.gone[d.market[3]] += 1      # solo: Cultivate discards the slot-3 card
        d.market[3] = -1
        slide(d)
    d.by = BY_NONE
    d.any_left = 0
    d.allow[0] = d.allow[1] = d.allow[2] = d.allow[3] = 0
    advance(d, -1)

cdef inline void enter_place(BonsaiData* d) noexcept nogil:
    if placeable_mask(d):
        d.phase = PH_PLACE
    else:
        end_place(d)

cdef void resolve_card(BonsaiData* d, int card) noexcept nogil:
    cdef int p = d.to_move, t
    if C_MASTER_ANY <= card <= C_MASTER_LAST:
        for t in range(4):
            d.supply[p][t] += MASTER_GAIN[card - C_MASTER_ANY][t]
        if card == C_MASTER_ANY:
            d.phase = PH_MASTER
            return
    elif C_HELPER <= card < C_HELPER + 4:
        d.by = BY_HELPER
        d.any_left = 1
        d.allow[0] = d.allow[1] = d.allow[2] = d.allow[3] = 0
        d.allow[card - C_HELPER] = 1
        enter_place(d)
        return
    advance(d, -1)

cdef void meditate(BonsaiData* d, int s) noexcept nogil:
    cdef int p = d.to_move, card = d.market[s]
    d.market[s] = -1
    d.cards[p][card] += 1
    if d.nplayers == 1:       # solo: the card nearer the deck goes too (or the next one)
        if s > 0:
            if d.market[s - 1] >= 0:
                d.gone[d.market[s - 1]] += 1
                d.market[s - 1] = -1
        else:
            d.burn = 1
    slide(d)
    if s == 2:
        d.supply[p][WOOD] += 1
        d.supply[p][FLOWER] += 1
    elif s == 3:
        d.supply[p][LEAF] += 1
        d.supply[p][FRUIT] += 1
    elif s == 1:
        d.phase = PH_SLOT
        d.pending = card
        return
    resolve_card(d, card)

cdef void reveal(BonsaiData* d, int card) noexcept nogil:
    cdef int s
    d.deck[card] -= 1
    d.deck_total -= 1
    if d.known:
        d.order_head += 1
    if d.top > 0:
        d.top -= 1
    if d.burn:
        d.gone[card] += 1
        d.burn = 0
    else:
        for s in range(3, -1, -1):
            if d.market[s] < 0:
                d.market[s] = card
                break
    if d.deck_total == 0 and d.final < 0:
        d.final = d.nplayers      # everyone, the revealer included, plays one more turn
    if reveal_needed(d):
        return
    if d.phase == PH_DEAL:
        start_turn(d)
    else:
        advance(d, ST_REVEAL)

cdef int bonsai_gen(BonsaiData* d, int* out) noexcept nogil:
    cdef int n = 0, s, t, p = d.to_move, mask, g, excess, rest
    cdef double probs[64]
    if d.phase == PH_OVER:
        return 0
    if is_chance(d):
        return chance_outcomes(d, out, probs)
    if d.phase == PH_REMOVE:
        n = gen_removals(&d.tree[p], out, 0)
        out[n] = A_KEEP
        return n + 1
    if d.phase == PH_ACTION:
        for s in range(4):
            if d.market[s] >= 0:
                out[n] = A_MEDITATE + s
                n += 1
        out[n] = A_CULTIVATE
        return n + 1
    if d.phase == PH_SLOT:
        out[0] = A_TAKE + WOOD
        out[1] = A_TAKE + LEAF
        return 2
    if d.phase == PH_MASTER:
        for t in range(4):
            out[t] = A_TAKE + t
        return 4
    if d.phase == PH_PLACE:
        mask = placeable_mask(d)
        for t in range(4):
            if (mask >> t) & 1:
                out[n] = A_PLACE + t
                n += 1
        out[n] = A_STOP
        return n + 1
    if d.phase == PH_CELL:
        return gen_cells(&d.tree[p], d.ptype, out, 0)
    if d.phase == PH_GOALS:
        g = pending_goal(d)
        out[0] = A_CLAIM + g
        out[1] = A_RENOUNCE + g
        return 2
    if d.phase == PH_DISCARD:
        excess = supply_total(d, p) - capacity(d, p)
        for t in range(d.dmin, 4):
            rest = 0
            for s in range(t, 4):
                rest += d.supply[p][s]
            if d.supply[p][t] > 0 and rest >= excess:
                out[n] = A_DISCARD + t
                n += 1
        return n
    return 0

cdef void bonsai_apply(BonsaiData* d, int a) noexcept nogil:
    cdef int p = d.to_move, t, i, k, card, par
    cdef Tree* T = &d.tree[p]
    if d.phase == PH_GOALDRAW:
        a -= A_GOALS
        for i in range(3):
            d.goal_mask |= 1 << (3 * DRAWS[a][i])
            d.goal_mask |= 1 << (3 * DRAWS[a][i] + 2)
            if d.nplayers > 2:
                d.goal_mask |= 1 << (3 * DRAWS[a][i] + 1)
        d.goals_drawn = 1
        d.phase = PH_DEAL
    elif d.phase == PH_DEAL or d.phase == PH_REVEAL:
        reveal(d, a - A_REVEAL)
    elif d.phase == PH_REMOVE:
        if a != A_KEEP:
            tree_remove(T, a - A_REMOVE)
        d.phase = PH_ACTION
    elif d.phase == PH_ACTION:
        if a == A_CULTIVATE:
            d.by = BY_CULTIVATE
            d.any_left = 1
            d.allow[WOOD] = 1 + d.cards[p][C_GROWTH + WOOD]
            d.allow[LEAF] = 1 + d.cards[p][C_GROWTH + LEAF]
            d.allow[FLOWER] = d.cards[p][C_GROWTH + FLOWER]
            d.allow[FRUIT] = d.cards[p][C_GROWTH + FRUIT]
            enter_place(d)
        else:
            meditate(d, a - A_MEDITATE)
    elif d.phase == PH_SLOT:
        d.supply[p][a - A_TAKE] += 1
        card = d.pending
        d.pending = -1
        resolve_card(d, card)
    elif d.phase == PH_MASTER:
        d.supply[p][a - A_TAKE] += 1
        advance(d, -1)
    elif d.phase == PH_PLACE:
        if a == A_STOP:
            end_place(d)
        else:
            d.ptype = a - A_PLACE
            d.phase = PH_CELL
    elif d.phase == PH_CELL:
        t = d.ptype
        i = a // 6
        k = a % 6
        par = T.ty[i] & 1
        tree_add(T, T.tx[i] + DXT[par][k], T.ty[i] + DYT[k], t)
        d.supply[p][t] -= 1
        if d.allow[t] > 0:
            d.allow[t] -= 1
        else:
            d.any_left -= 1
        d.ptype = -1
        enter_place(d)
    elif d.phase == PH_GOALS:
        if a < A_RENOUNCE:
            d.claimed_by[a - A_CLAIM] = p
        else:
            d.renounced[p] |= 1 << (a - A_RENOUNCE)
        if pending_goal(d) < 0:
            advance(d, ST_GOALS)
    elif d.phase == PH_DISCARD:
        d.supply[p][a - A_DISCARD] -= 1
        d.dmin = a - A_DISCARD
        if supply_total(d, p) <= capacity(d, p):
            advance(d, ST_DISCARD)


# ---- scoring --------------------------------------------------------------------------------
cdef void score_parts(BonsaiData* d, int p, int* out) noexcept nogil:
    """out = leaves, flowers, fruits, parchments, goals, total."""
    cdef Tree* T = &d.tree[p]
    cdef int* cards = d.cards[p]
    cdef int c, g, growth = 0, helpers = 0, masters = 0, parch = 0, goals = 0
    for c in range(4):
        growth += cards[C_GROWTH + c]
        helpers += cards[C_HELPER + c]
    for c in range(C_MASTER_ANY, C_MASTER_LAST + 1):
        masters += cards[c]
    if cards[C_PARCH + 0]:
        parch += T.count[WOOD]
    if cards[C_PARCH + 1]:
        parch += T.count[LEAF]
    if cards[C_PARCH + 2]:
        parch += 2 * T.count[FLOWER]
    if cards[C_PARCH + 3]:
        parch += 2 * T.count[FRUIT]
    if cards[C_PARCH + 4]:
        parch += 2 * growth
    if cards[C_PARCH + 5]:
        parch += 2 * helpers
    if cards[C_PARCH + 6]:
        parch += 2 * masters
    for g in range(BONSAI_NGOALS):
        if d.claimed_by[g] == p:
            goals += GOAL_POINTS[g // 3][g % 3]
    out[0] = 3 * T.count[LEAF]
    out[1] = flower_points(T)
    out[2] = 7 * T.count[FRUIT]
    out[3] = parch
    out[4] = goals
    out[5] = out[0] + out[1] + out[2] + out[3] + out[4]

cdef inline int total_score(BonsaiData* d, int p) noexcept nogil:
    cdef int parts[6]
    score_parts(d, p, parts)
    return parts[5]

cdef inline bint solo_won(BonsaiData* d) noexcept nogil:
    cdef int g, colours = 0, k = 0
    for g in range(BONSAI_NGOALS):
        if d.claimed_by[g] == 0:
            colours |= 1 << (g // 3)
    while colours:
        k += colours & 1
        colours >>= 1
    return k == 3 and total_score(d, 0) >= 60 + 20 * d.solo_level

cdef int winner(BonsaiData* d) noexcept nogil:
    """Seat with the best score, the latest seat among tied ones; solo: 0 or -1."""
    cdef int p, s, best = -1, who = -1
    if d.nplayers == 1:
        return 0 if solo_won(d) else -1
    for p in range(d.nplayers):
        s = total_score(d, p)
        if s >= best:
            best = s
            who = p
    return who

# The policy's two probabilities and the evaluation's logistic scale are weights
# (SPEC.eval_weights order; State.c_weights, NULL = DEFAULT_W filled from the spec). A
# probability q is drawn as rng_uniform >= 1 - q: for q = 3/4 and 1/2 exactly the decisions
# (and the generator steps) of the former rng_below(4) != 0 and rng_below(2).
cdef enum:
    W_CULTIVATE, W_TOP_SLOT, W_SCALE, N_WEIGHTS
cdef double DEFAULT_W[N_WEIGHTS]

cdef int heuristic_choice(BonsaiData* d, int* buf, int n, RngState* rng) noexcept nogil:
    """heuristic_choice_w with the default weights."""
    return heuristic_choice_w(d, buf, n, rng, DEFAULT_W)

cdef int heuristic_choice_w(BonsaiData* d, int* buf, int n, RngState* rng,
                            const double* w) noexcept nogil:
    """A cheap policy: cultivate (with probability w_cultivate) when two or more tiles can
    go on the tree, take the highest occupied slot (probability w_top_slot) else any slot,
    place fruit > leaf > flower > wood and never stop early, claim every goal, keep leaves
    and fruit, otherwise uniform."""
    cdef int p = d.to_move, i, best, want = 0, t
    if d.phase == PH_ACTION:
        for t in range(4):
            if d.supply[p][t] > 0:
                want |= 1 << t
        if supply_total(d, p) >= 2 and type_mask(&d.tree[p], want) \
                and rng_uniform(rng) >= 1.0 - w[W_CULTIVATE]:
            return A_CULTIVATE
        if n > 1 and rng_uniform(rng) >= 1.0 - w[W_TOP_SLOT]:
            return buf[n - 2]           # the highest occupied slot
        return buf[rng_below(rng, n)]
    if d.phase == PH_PLACE:
        best = buf[n - 1]
        for i in range(n - 1):
            t = buf[i] - A_PLACE
            if best == A_STOP or t == FRUIT or (t == LEAF and best != A_PLACE + FRUIT) \
                    or (t == FLOWER and best == A_PLACE + WOOD):
                best = buf[i]
        return best
    if d.phase == PH_GOALS or d.phase == PH_REMOVE or d.phase == PH_DISCARD:
        return buf[0]
    if d.phase == PH_SLOT or d.phase == PH_MASTER:
        return A_TAKE + LEAF
    return buf[rng_below(rng, n)]

cdef int bonsai_playout(BonsaiData* d, RngState* rng, bint heuristic,
                        const double* w) noexcept nogil:
    """Play to the end with uniform choices, or with heuristic_choice; the plies played."""
    cdef int buf[MAX_ACTIONS]
    cdef int n, a, plies = 0
    while d.phase != PH_OVER:
        if is_chance(d):
            a = sample_chance(d, rng)
        else:
            n = bonsai_gen(d, buf)
            a = heuristic_choice_w(d, buf, n, rng, w) if heuristic else buf[rng_below(rng, n)]
        bonsai_apply(d, a)
        plies += 1
    return plies

cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    z += 0x9E3779B97F4A7C15ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)

cdef inline uint64_t key(int tag, int a, int b, int c) noexcept nogil:
    return mix64((<uint64_t>tag << 48) ^ (<uint64_t>(a & 0xFFFF) << 32)
                 ^ (<uint64_t>(b & 0xFFFF) << 16) ^ <uint64_t>(c & 0xFFFF))


# ---- variant ---------------------------------------------------------------------------------
def _check_variant(dict v):
    if v["players"] == 1 and v["goals"] == "off":
        raise VariantError("bonsai solo (players=1) always uses goals; goals=off needs 2-4 players")


cdef void init_data(BonsaiData* d, dict v) except *:
    cdef int p, t, c
    memset(d, 0, sizeof(BonsaiData))
    d.nplayers = v["players"]
    d.goals_on = v["goals"] == "on"
    d.tokonoma = v["tokonoma"] == "on"
    d.solo_level = v["solo_level"]
    d.dbr = v["discard_before_reveal"] == "on"
    for p in range(4):
        tree_reset(&d.tree[p])
        d.renounced[p] = 0
    starts = ((WOOD,), (WOOD, LEAF), (WOOD, LEAF, FLOWER), (WOOD, LEAF, FLOWER, FRUIT))
    for p in range(d.nplayers):
        for t in ((WOOD, LEAF) if d.nplayers == 1 else starts[p]):
            d.supply[p][t] += 1
    for c in range(BONSAI_NCARDS):
        d.deck[c] = FULL_DECK[d.nplayers][c]
        d.deck_total += d.deck[c]
    d.top = 7 + (d.deck_total - 7) // 2 if d.tokonoma else 0
    for c in range(4):
        d.market[c] = -1
    for c in range(BONSAI_NGOALS):
        d.claimed_by[c] = -1
    d.phase = PH_GOALDRAW if d.goals_on else PH_DEAL
    d.goals_drawn = 0 if d.goals_on else 1
    d.pending = -1
    d.ptype = -1
    d.final = -1


cdef class BonsaiState(State):
    """A Bonsai position. `BonsaiState(players=2, ...)` is the position before the goal draw
    and the deal (chance nodes); `new_initial(seed=1)` resolves them.

    >>> s = new_initial(seed=1)
    >>> s.current_player()
    0
    """

    def __init__(self, **variant):
        v = SPEC.parse_variant(variant)
        init_data(&self.d, v)
        self.num_players = self.d.nplayers

    # ---- C contract ---------------------------------------------------------------------
    cdef int c_current_player(self) noexcept:
        if self.d.phase == PH_OVER:
            return TERMINAL
        if is_chance(&self.d):
            return CHANCE
        return self.d.to_move

    cdef int c_legal_actions(self, int* out) noexcept:
        return bonsai_gen(&self.d, out)

    cdef void c_apply(self, int action) noexcept:
        bonsai_apply(&self.d, action)

    cdef bint c_is_terminal(self) noexcept:
        return self.d.phase == PH_OVER

    cdef void c_returns(self, double* out) noexcept:
        cdef int p, w
        for p in range(self.d.nplayers):
            out[p] = 0.0
        if self.d.phase == PH_OVER:
            w = winner(&self.d)
            if w >= 0:
                out[w] = 1.0

    cdef int c_chance_outcomes(self, int* actions, double* probs) noexcept:
        if not is_chance(&self.d):
            return 0
        return chance_outcomes(&self.d, actions, probs)

    cdef int c_sample_chance(self, RngState* rng) noexcept:
        return sample_chance(&self.d, rng)

    cdef uint64_t c_hash(self) noexcept:
        cdef BonsaiData* d = &self.d
        # phase fields count only where the notation shows them (stale values elsewhere)
        cdef int ph = d.phase
        cdef uint64_t z = key(1, ph, d.to_move, d.pending + 2 if ph == PH_SLOT else 0)
        cdef int p, i, c
        cdef bint placing = ph == PH_PLACE or ph == PH_CELL
        z ^= key(2, d.by if placing else 0, d.any_left if placing else 0,
                 d.ptype + 2 if ph == PH_CELL else 0)
        z ^= key(3, d.dmin if ph == PH_DISCARD else 0, d.burn, d.final + 2)
        z ^= key(4, d.turns, d.top, d.goal_mask) ^ key(5, d.known, d.goals_drawn, 0)
        for i in range(4):
            z ^= key(6, i, d.allow[i] if placing else 0, d.market[i] + 2)
        for c in range(BONSAI_NCARDS):
            if d.deck[c]:
                z ^= key(7, c, d.deck[c], 0)
            if d.gone[c]:
                z ^= key(8, c, d.gone[c], 0)
        if d.known:
            for i in range(d.order_head, d.order_head + d.deck_total):
                z ^= key(9, i - d.order_head, d.order[i], 0)
        for i in range(BONSAI_NGOALS):
            z ^= key(10, i, d.claimed_by[i] + 2, 0)
        for p in range(d.nplayers):
            z ^= key(11, p, d.renounced[p], 0)
            for i in range(4):
                z ^= key(12, p, i, d.supply[p][i])
            for c in range(BONSAI_NCARDS):
                if d.cards[p][c]:
                    z ^= key(13, p, c, d.cards[p][c])
            for i in range(d.tree[p].n):
                z ^= key(14 + p, i, (d.tree[p].tx[i] + 128) << 8 | (d.tree[p].ty[i] + 128),
                         d.tree[p].tt[i])
        return z

    cdef State c_clone(self):
        cdef BonsaiState s = BonsaiState.__new__(BonsaiState)
        s.num_players = self.num_players
        memcpy(&s.d, &self.d, sizeof(BonsaiData))
        share_weights(s, self)
        return s

    cdef void c_copy_from(self, State other) noexcept:
        memcpy(&self.d, &(<BonsaiState>other).d, sizeof(BonsaiData))

    cdef int c_random_playout(self, RngState* rng) noexcept:
        return bonsai_playout(&self.d, rng, False, DEFAULT_W)

    cdef int c_heuristic_playout(self, RngState* rng) noexcept:
        return bonsai_playout(&self.d, rng, True,
                              self.c_weights if self.c_weights != NULL else DEFAULT_W)

    cdef double c_evaluate(self, int player) noexcept:
        """Terminal: the return. Otherwise, with several players, a logistic of the
        player's score so far minus the best other score (15 points ~ 73%; 15 is the
        weight scale, SPEC.eval_weights); solo, the
        fraction of the level's threshold reached times (1 + colours claimed) / 4."""
        cdef BonsaiData* d = &self.d
        cdef double r[4]
        cdef int p, best = -1000, s, g, colours = 0, k = 0
        if d.phase == PH_OVER:
            self.c_returns(r)
            return r[player]
        if d.nplayers == 1:
            for g in range(BONSAI_NGOALS):
                if d.claimed_by[g] == 0:
                    colours |= 1 << (g // 3)
            while colours:
                k += colours & 1
                colours >>= 1
            s = total_score(d, 0)
            return min(1.0, s / (60.0 + 20 * d.solo_level)) * (1 + k) / 4.0
        for p in range(d.nplayers):
            if p != player:
                s = total_score(d, p)
                if s > best:
                    best = s
        return 1.0 / (1.0 + exp(-(total_score(d, player) - best)
                                / (self.c_weights[W_SCALE] if self.c_weights != NULL
                                   else DEFAULT_W[W_SCALE])))

    cdef void c_resample_hidden(self, int player, RngState* rng) noexcept:
        """Determinise: put the unseen deck in a uniformly random order (under tokonoma the
        top part holds every unseen parchment). Everything else is public."""
        cdef BonsaiData* d = &self.d
        cdef int pool[BONSAI_MAX_DECK]
        cdef int n = 0, c, i, j, tmp, up = unseen_parchments(d), lo
        cdef int last = C_PARCH if d.top > 0 else BONSAI_NCARDS
        for c in range(last):
            for i in range(d.deck[c]):
                pool[n] = c
                n += 1
        for i in range(n - 1, 0, -1):           # shuffle the other cards
            j = rng_below(rng, i + 1)
            tmp = pool[i]
            pool[i] = pool[j]
            pool[j] = tmp
        # the first (top - up) shuffled cards join the parchments in the top part
        lo = d.top - up if d.top > 0 else 0
        d.order_head = 0
        j = 0
        for i in range(lo):
            d.order[j] = pool[i]
            j += 1
        for c in range(last, BONSAI_NCARDS):
            if d.deck[c]:
                d.order[j] = c
                j += 1
        for i in range(j - 1, 0, -1):           # shuffle the top part
            c = rng_below(rng, i + 1)
            tmp = d.order[i]
            d.order[i] = d.order[c]
            d.order[c] = tmp
        for i in range(lo, n):
            d.order[j] = pool[i]
            j += 1
        d.known = 1

    # ---- Python API -----------------------------------------------------------------------
    @property
    def spec(self):
        return SPEC

    @property
    def game_name(self):
        return "bonsai"

    @property
    def variant(self):
        d = &self.d
        return {"players": d.nplayers, "goals": "on" if d.goals_on else "off",
                "tokonoma": "on" if d.tokonoma else "off", "solo_level": d.solo_level,
                "discard_before_reveal": "on" if d.dbr else "off"}

    @property
    def phase(self):
        return PHASES[self.d.phase]

    @property
    def turn(self):
        """The turn being played, from 1 (a turn is one player's action and all it brings:
        slot, tiles, goals, discards)."""
        return self.d.turns + 1

    def tiles(self, int p):
        """Player p's tree as [(x, y, 'W'|'L'|'F'|'R')] in placement order, bud first."""
        T = &self.d.tree[p]
        return [(T.tx[i], T.ty[i], TILES[T.tt[i]]) for i in range(T.n)]

    def supply(self, int p):
        return {TILES[t]: self.d.supply[p][t] for t in range(4)}

    def cards(self, int p):
        return {CARDS[c]: self.d.cards[p][c] for c in range(BONSAI_NCARDS) if self.d.cards[p][c]}

    @property
    def num_distinct_actions(self):
        """Every action and chance outcome id is below this (the last is a goal draw)."""
        return A_GOALS + 10

    def market(self):
        return [CARDS[c] if c >= 0 else None for c in self.d.market]

    def goals_in_play(self):
        return [goal_name(g) for g in range(BONSAI_NGOALS) if (self.d.goal_mask >> g) & 1]

    def goals_claimed(self, int p):
        return [goal_name(g) for g in range(BONSAI_NGOALS) if self.d.claimed_by[g] == p]

    def goal_met(self, int p, str name):
        """Does player p's tree meet goal tile `name` (e.g. 'pink.l') now?"""
        return bool(goal_met(&self.d.tree[p], parse_goal(name)))

    def largest_leaf_group(self, int p):
        return largest_leaf_group(&self.d.tree[p])

    def wood_blocked(self, int p):
        return bool(wood_blocked(&self.d.tree[p]))

    def capacity(self, int p):
        return capacity(&self.d, p)

    def score_breakdown(self):
        """[{leaves, flowers, fruits, parchments, goals, total}] per player (scores so far)."""
        cdef int parts[6]
        out = []
        for p in range(self.d.nplayers):
            score_parts(&self.d, p, parts)
            out.append(dict(zip(("leaves", "flowers", "fruits", "parchments", "goals", "total"),
                                [parts[i] for i in range(6)])))
        return out

    def scores(self):
        return [b["total"] for b in self.score_breakdown()]

    def winner(self):
        """Winning seat once the game is over (None: not over, or a lost solo game)."""
        if self.d.phase != PH_OVER:
            return None
        w = winner(&self.d)
        return w if w >= 0 else None

    def stats(self):
        d = &self.d
        return {"scores": self.scores(), "breakdown": self.score_breakdown(),
                "goals_claimed": [self.goals_claimed(p) for p in range(d.nplayers)],
                "goals_in_play": self.goals_in_play(),
                "turns": d.turns,
                "tiles": [[d.tree[p].count[t] for t in range(4)] for p in range(d.nplayers)],
                "winner": self.winner()}

    def cell_of_action(self, int action):
        """The cell (x, y) a placement action 0..767 names for the player to move."""
        T = &self.d.tree[self.d.to_move]
        i, k = divmod(action, 6)
        if not 0 <= action < A_REMOVE or i >= T.n:
            raise ValueError(f"{action} is not a placement action here")
        return (T.tx[i] + DXT[T.ty[i] & 1][k], T.ty[i] + DYT[k])

    def action_to_string(self, int action, player=None):
        """`W@1,2` (place a wood at (1, 2)), `remove F@2,1`, `keep`, `meditate 2:HW`,
        `cultivate`, `gain L`, `place R`, `stop`, `claim pink.s`, `renounce blue.l`,
        `discard W`, `reveal GL`, `goals brown+green+blue`."""
        d = &self.d
        p = d.to_move
        T = &d.tree[p]
        if 0 <= action < A_REMOVE:
            i = action // 6
            if i >= T.n:
                return f"?{action}"
            x, y = self.cell_of_action(action)
            return f"{TILES[d.ptype] if d.ptype >= 0 else '?'}@{x},{y}"
        if A_REMOVE <= action < A_KEEP:
            i = action - A_REMOVE
            if i >= T.n:
                return f"?{action}"
            return f"remove {TILES[T.tt[i]]}@{T.tx[i]},{T.ty[i]}"
        if action == A_KEEP:
            return "keep"
        if A_MEDITATE <= action < A_MEDITATE + 4:
            s = action - A_MEDITATE
            return f"meditate {s}:{CARDS[d.market[s]] if d.market[s] >= 0 else '-'}"
        if action == A_CULTIVATE:
            return "cultivate"
        if A_TAKE <= action < A_TAKE + 4:
            return f"gain {TILES[action - A_TAKE]}"
        if A_PLACE <= action < A_PLACE + 4:
            return f"place {TILES[action - A_PLACE]}"
        if action == A_STOP:
            return "stop"
        if A_CLAIM <= action < A_CLAIM + BONSAI_NGOALS:
            return f"claim {goal_name(action - A_CLAIM)}"
        if A_RENOUNCE <= action < A_RENOUNCE + BONSAI_NGOALS:
            return f"renounce {goal_name(action - A_RENOUNCE)}"
        if A_DISCARD <= action < A_DISCARD + 4:
            return f"discard {TILES[action - A_DISCARD]}"
        if A_REVEAL <= action < A_REVEAL + BONSAI_NCARDS:
            return f"reveal {CARDS[action - A_REVEAL]}"
        if A_GOALS <= action < A_GOALS + 10:
            return "goals " + "+".join(COLOURS[DRAWS[action - A_GOALS][i]] for i in range(3))
        return f"?{action}"

    # ---- notation -------------------------------------------------------------------------
    def to_notation(self):
        """One line, ';'-separated: header; goals; market (slot 0 first); deck; gone (solo
        discards); one part per player (tree tiles in placement order without the bud,
        supply, cards held); turn. Example (2 players, before the goal draw):
        `bonsai players=2 goals=on tokonoma=off solo_level=1 discard_before_reveal=off;
        goals ?; market - - - -; deck set T*3 GW*2 ...; gone -; p0 tree - supply W1 L0 F0
        R0 cards -; p1 tree - supply W1 L1 F0 R0 cards -; turn p0 phase=goaldraw final=-
        turns=0`."""
        d = &self.d
        v = self.variant
        parts = ["bonsai " + " ".join(f"{k}={v[k]}" for k in DEFAULTS)]
        if not d.goals_drawn:
            parts.append("goals ?")
        elif not d.goals_on:
            parts.append("goals off")
        else:
            toks = []
            for g in range(BONSAI_NGOALS):
                if not (d.goal_mask >> g) & 1:
                    continue
                status = f"c{d.claimed_by[g]}" if d.claimed_by[g] >= 0 else ""
                who = "".join(str(p) for p in range(d.nplayers) if (d.renounced[p] >> g) & 1)
                if who:
                    status += "x" + who
                toks.append(f"{goal_name(g)}:{status or '-'}")
            parts.append("goals " + " ".join(toks))
        parts.append("market " + " ".join(CARDS[c] if c >= 0 else "-" for c in d.market))
        if d.known:
            deck = "deck order " + (" ".join(CARDS[d.order[i]] for i in
                                             range(d.order_head, d.order_head + d.deck_total))
                                    or "-")
        else:
            deck = "deck set " + _multiset([d.deck[c] for c in range(BONSAI_NCARDS)])
        if d.tokonoma:
            deck += f" top={d.top}"
        parts.append(deck)
        parts.append("gone " + _multiset([d.gone[c] for c in range(BONSAI_NCARDS)]))
        for p in range(d.nplayers):
            tiles = [f"{t}{x},{y}" for x, y, t in self.tiles(p)[1:]]
            sup = " ".join(f"{TILES[t]}{d.supply[p][t]}" for t in range(4))
            parts.append(f"p{p} tree {' '.join(tiles) or '-'} supply {sup} cards "
                         + _multiset([d.cards[p][c] for c in range(BONSAI_NCARDS)]))
        turn = f"turn p{d.to_move} phase={PHASES[d.phase]}"
        if d.phase == PH_SLOT:
            turn += f" card={CARDS[d.pending]}"
        if d.phase == PH_PLACE or d.phase == PH_CELL:
            turn += f" by={BY_NAMES[d.by]} any={d.any_left} allow=" + ",".join(
                f"{TILES[t]}{d.allow[t]}" for t in range(4))
        if d.phase == PH_CELL:
            turn += f" type={TILES[d.ptype]}"
        if d.phase == PH_DISCARD:
            turn += f" min={TILES[d.dmin]}"
        if d.burn:
            turn += " burn=1"
        turn += f" final={'-' if d.final < 0 else d.final} turns={d.turns}"
        parts.append(turn)
        return "; ".join(parts)

    def information_state(self, int player):
        """What `player` knows: everything but the deck order (the notation with the deck as
        an unordered set). Face-down cards count as public (rules page, Information)."""
        d = &self.d
        parts = self.to_notation().split("; ")
        if d.known:
            parts[3] = "deck set " + _multiset([d.deck[c] for c in range(BONSAI_NCARDS)]) \
                + (f" top={d.top}" if d.tokonoma else "")
        return "; ".join(parts)

    @classmethod
    def from_notation(cls, str text):
        return _from_notation(text)

    def render(self):
        """Each player's bonsai as a hex picture (pot cells '=', tiles by letter, the bud
        'W' at (0, 0)), then market, goals, supplies, cards and scores so far."""
        d = &self.d
        v = self.variant
        lines = [f"Bonsai, {d.nplayers} player{'s' if d.nplayers > 1 else ''}"
                 + (f" (solo level {d.solo_level})" if d.nplayers == 1 else "")
                 + f", goals {v['goals']}, tokonoma {v['tokonoma']}, discard before reveal "
                 f"{v['discard_before_reveal']}"]
        names = {c: CARDS[c] for c in range(BONSAI_NCARDS)}
        lines.append("Market (slot 0 next to the deck; slot tiles 0: -, 1: W or L, 2: W+F, "
                     "3: L+R): " + "  ".join(f"{s}:{names[d.market[s]] if d.market[s] >= 0 else '-'}"
                                            for s in range(4)))
        lines.append(f"Deck: {d.deck_total} card(s) left"
                     + (" (order known)" if d.known else "")
                     + (f", {d.top} in the top part" if d.tokonoma else ""))
        if d.goals_on:
            if not d.goals_drawn:
                lines.append("Goals: not drawn yet")
            else:
                toks = []
                for g in range(BONSAI_NGOALS):
                    if (d.goal_mask >> g) & 1:
                        who = f" (p{d.claimed_by[g]})" if d.claimed_by[g] >= 0 else ""
                        toks.append(f"{goal_name(g)}={GOAL_POINTS[g // 3][g % 3]}{who}")
                lines.append("Goals: " + "  ".join(toks))
        lines.append("Trees: W wood (the bud at 0,0 is the W in the pot row), L leaf, F flower, "
                     "R fruit, = pot;")
        lines.append("  x labels under the even rows' cells, an odd row's cell sits half a cell "
                     "left of its x")
        lines.append("Card codes: 'help' in niwa play prints their key; the Bonsai rules page "
                     "has the table")
        breakdown = self.score_breakdown()
        for p in range(d.nplayers):
            lines.append("")
            b = breakdown[p]
            lines.append(f"Player {p}{' (to move)' if p == d.to_move and d.phase != PH_OVER else ''}"
                         f": score {b['total']} = leaves {b['leaves']} + flowers {b['flowers']}"
                         f" + fruits {b['fruits']} + parchments {b['parchments']}"
                         f" + goals {b['goals']}")
            lines.extend(self._picture(p))
            sup = " ".join(f"{TILES[t]}{d.supply[p][t]}" for t in range(4))
            lines.append(f"  supply {sup} (capacity {capacity(&d[0], p)}); cards "
                         + _multiset([d.cards[p][c] for c in range(BONSAI_NCARDS)]))
            claimed = self.goals_claimed(p)
            if claimed:
                lines.append("  goals claimed: " + ", ".join(claimed))
        lines.append("")
        if d.phase == PH_OVER:
            w = self.winner()
            lines.append("Game over: " + (f"player {w} wins." if w is not None else
                                          "the solo game is lost."))
        else:
            lines.append(f"Turn {d.turns + 1}, player {d.to_move}, phase {PHASES[d.phase]}"
                         + (f", final turns left after this one: {d.final}" if d.final >= 0 else ""))
        return "\n".join(lines)

    def _picture(self, int p):
        """The tree on a grid of 4 characters per x (so an odd row can sit half a cell,
        2 characters, to the left), y labels on the left and x labels underneath."""
        T = &self.d.tree[p]
        cells = {(T.tx[i], T.ty[i]): TILES[T.tt[i]] for i in range(T.n)}
        for y, xs in ((0, list(range(-2, 4))), (-1, list(range(-1, 4))), (-2, list(range(-1, 3)))):
            for x in xs:
                if (x, y) != (0, 0):
                    cells[(x, y)] = "="
        ys = [y for _, y in cells]
        xs = [x for x, _ in cells]
        cols = {c: 4 * c[0] - 2 * (c[1] & 1) for c in cells}
        lo = min(cols.values()) - 2        # room for the leftmost x label ("-3")
        width = max(cols.values()) - lo + 1
        out = [f"  {'y':>4} |"]
        for y in range(max(ys), min(ys) - 1, -1):
            row = [" "] * width
            for c, ch in cells.items():
                if c[1] == y:
                    row[cols[c] - lo] = ch
            out.append(f"  {y:>4} |" + "".join(row).rstrip())
        axis = [" "] * (width + 3)
        for x in range(min(xs), max(xs) + 1):
            label = str(x)
            end = 4 * x - lo + 1           # labels end under their (even-row) cell
            for k, ch in enumerate(label):
                if 0 <= end - len(label) + k < len(axis):
                    axis[end - len(label) + k] = ch
        out.append("       +" + "-" * width)
        out.append(f"  {'x':>4}  " + "".join(axis).rstrip())
        return out

    def to_json(self):
        d = &self.d
        return {
            "game": "bonsai", "notation": self.to_notation(), "variant": self.variant,
            "phase": PHASES[d.phase], "to_move": d.to_move,
            "market": self.market(), "deck_left": d.deck_total,
            "goals": {goal_name(g): d.claimed_by[g] for g in range(BONSAI_NGOALS)
                      if (d.goal_mask >> g) & 1},
            "players": [{"tree": [list(t) for t in self.tiles(p)], "supply": self.supply(p),
                         "cards": self.cards(p), "goals_claimed": self.goals_claimed(p)}
                        for p in range(d.nplayers)],
            "scores": self.score_breakdown(), "final": d.final if d.final >= 0 else None,
            "turns": d.turns, "terminal": d.phase == PH_OVER, "winner": self.winner(),
            "legal": [self.action_to_string(a) for a in self.legal_actions()],
        }


def goal_name(int g):
    return f"{COLOURS[g // 3]}.{SIZES[g % 3]}"


def parse_goal(str name):
    colour, _, size = name.partition(".")
    if colour not in COLOURS or len(size) != 1 or size not in SIZES:
        raise NotationError(f"unknown goal tile {name!r}; expected COLOUR.SIZE with colour in "
                            f"{', '.join(COLOURS)} and size s, m or l")
    return 3 * COLOURS.index(colour) + SIZES.index(size)


def _multiset(counts):
    return format_multiset(counts, CARDS)


def _tile_type(ch, where):
    if len(ch) != 1 or ch not in TILES:
        raise NotationError(f"{where}: unknown tile type {ch!r}; expected one of W L F R")
    return TILES.index(ch)


def _from_notation(str text):
    """Parse a Bonsai position; NotationError names the offending part."""
    parts = split_parts(text, "bonsai", None, "")
    cdef BonsaiState s = BonsaiState(**read_header(parts[0], SPEC))
    cdef BonsaiData* d = &s.d
    cdef int n = d.nplayers, p
    if len(parts) != 6 + n:
        raise NotationError(
            f"bonsai notation with {n} player(s) needs {6 + n} ';'-separated parts (header; "
            f"goals; market; deck; gone; one per player; turn), got {len(parts)}")
    _read_goals(s, section(parts, 1, "goals").split())
    _read_market(s, section(parts, 2, "market").split())
    top = _read_deck(s, section(parts, 3, "deck").split())
    _read_gone(s, section(parts, 4, "gone").split())
    for p in range(n):
        _read_player(s, p, section(parts, 5 + p, f"p{p}").split())
    _check_cards(s)
    _check_deck_top(s, top)
    _read_turn(s, section(parts, 5 + n, "turn").split())
    return s


def _read_goals(BonsaiState s, list tokens):
    """'?' (not drawn yet), 'off', or every goal tile in play with its status."""
    cdef BonsaiData* d = &s.d
    if tokens == ["?"]:
        if not d.goals_on:
            raise NotationError("goals: '?' (not drawn yet) needs goals=on")
        d.goals_drawn = 0
        return
    if tokens == ["off"]:
        if d.goals_on:
            raise NotationError("goals: 'off' contradicts the header's goals=on")
        d.goals_drawn = 1
        return
    if not d.goals_on:
        raise NotationError("goals: with goals=off this part must be 'goals off'")
    d.goals_drawn = 1
    for tok in tokens:
        name, _, status = tok.partition(":")
        g = parse_goal(name)
        if (d.goal_mask >> g) & 1:
            raise NotationError(f"goals: {name} is listed twice")
        d.goal_mask |= 1 << g
        if not status:
            raise NotationError(f"goals: {tok!r} should be GOAL:STATUS (-, cP, xPQ or cPxQ)")
        if status != "-":
            _read_goal_status(s, g, name, status)
    _check_goal_set(s)


def _read_goal_status(BonsaiState s, int g, str name, str status):
    """'cP' (claimed by seat P), 'xPQ' (renounced by P and Q) or both: 'cPxQ'."""
    cdef BonsaiData* d = &s.d
    n = d.nplayers
    claim, _, renounce = status.partition("x")
    if claim:
        if claim[0] != "c":
            raise NotationError(f"goals: bad status {status!r} of {name}; expected "
                                "-, cP (claimed by seat P), xPQ (renounced by P, Q)")
        d.claimed_by[g] = integer(claim[1:], f"goals {name} claimer", 0, n - 1)
    if "x" in status:
        if not renounce:
            raise NotationError(f"goals: {name} has 'x' without seats")
        for ch in renounce:
            q = integer(ch, f"goals {name} renouncer", 0, n - 1)
            if q == d.claimed_by[g]:
                raise NotationError(f"goals: seat {q} cannot both claim and renounce {name}")
            d.renounced[q] |= 1 << g


def _check_goal_set(BonsaiState s):
    """The tiles of exactly 3 colours in the sizes of this player count; one tile of a
    colour per player at most."""
    cdef BonsaiData* d = &s.d
    n = d.nplayers
    colours = sorted({g // 3 for g in range(BONSAI_NGOALS) if (d.goal_mask >> g) & 1})
    sizes = [0, 2] if n <= 2 else [0, 1, 2]
    want = 0
    for c in colours:
        for t in sizes:
            want |= 1 << (3 * c + t)
    if len(colours) != 3 or want != d.goal_mask:
        raise NotationError(
            "goals: expected the tiles of exactly 3 colours, sizes "
            + ("s and l" if n <= 2 else "s, m and l") + f" with {n} player(s)")
    for p in range(n):
        for c in range(5):
            k = sum(1 for g in range(3 * c, 3 * c + 3) if d.claimed_by[g] == p)
            if k > 1:
                raise NotationError(f"goals: seat {p} claimed two {COLOURS[c]} tiles")


def _read_market(BonsaiState s, list tokens):
    """Four slots, slot 0 next to the deck: a card or '-'."""
    cdef BonsaiData* d = &s.d
    if len(tokens) != 4:
        raise NotationError(f"market: expected 4 slots (card or -), got {len(tokens)}")
    for i, tok in enumerate(tokens):
        if tok == "-":
            d.market[i] = -1
        elif tok in CARDS:
            d.market[i] = CARDS.index(tok)
        else:
            raise NotationError(f"market: unknown card {tok!r}; cards are {' '.join(CARDS)}")
    for i in range(3):
        if d.market[i] >= 0 and d.market[i + 1] < 0:
            raise NotationError("market: empty slots must be next to the deck (cards slide away "
                                "from it)")


def _read_deck(BonsaiState s, list tokens):
    """'set CARD*N ...' (unseen, unordered) or 'order CARD ...' (known), then 'top=N'
    under tokonoma; returns that top (None without tokonoma)."""
    cdef BonsaiData* d = &s.d
    top = None
    if tokens and tokens[len(tokens) - 1].startswith("top="):
        top = integer(tokens[len(tokens) - 1][4:], "deck top", 0, BONSAI_MAX_DECK)
        tokens = tokens[:len(tokens) - 1]
    if (top is not None) != bool(d.tokonoma):
        raise NotationError("deck: 'top=N' (cards left in the top part) goes with tokonoma=on "
                            "and only then")
    if not tokens or tokens[0] not in ("set", "order"):
        raise NotationError("deck: expected 'deck set CARD*N ...' or 'deck order CARD CARD ...'")
    if tokens[0] == "set":
        deck = parse_multiset(tokens[1:], CARDS, "deck", BONSAI_MAX_DECK)
        d.known = 0
    else:
        order = [] if tokens[1:] == ["-"] else tokens[1:]
        for tok in order:
            if tok not in CARDS:
                raise NotationError(f"deck: unknown card {tok!r}; cards are {' '.join(CARDS)}")
        if len(order) > BONSAI_MAX_DECK:
            raise NotationError(f"deck: {len(order)} cards is more than the whole deck")
        deck = [0] * BONSAI_NCARDS
        for i, tok in enumerate(order):
            d.order[i] = CARDS.index(tok)
            deck[d.order[i]] += 1
        d.known = 1
        d.order_head = 0
    d.deck_total = sum(deck)
    for c in range(BONSAI_NCARDS):
        d.deck[c] = deck[c]
    return top


def _read_gone(BonsaiState s, list tokens):
    """The solo game's discards (other games discard nothing)."""
    cdef BonsaiData* d = &s.d
    gone = parse_multiset(tokens, CARDS, "gone", BONSAI_MAX_DECK)
    if d.nplayers > 1 and any(gone):
        raise NotationError("gone: only the solo game discards cards; expected 'gone -'")
    for c in range(BONSAI_NCARDS):
        d.gone[c] = gone[c]


def _read_player(BonsaiState s, int p, list tokens):
    """'tree TILES supply W. L. F. R. cards CARDS' of seat p."""
    cdef BonsaiData* d = &s.d
    n = d.nplayers
    if "supply" not in tokens or "cards" not in tokens or tokens[0] != "tree":
        raise NotationError(f"p{p}: expected 'p{p} tree TILES supply W. L. F. R. cards CARDS'")
    a, b = tokens.index("supply"), tokens.index("cards")
    if not 0 < a < b:
        raise NotationError(f"p{p}: expected 'p{p} tree TILES supply W. L. F. R. cards CARDS'")
    tiles, sup, cards = tokens[1:a], tokens[a + 1:b], tokens[b + 1:]
    _parse_tree(&d.tree[p], [] if tiles == ["-"] else tiles, f"p{p} tree", MAX_TREE_TILES[n])
    if len(sup) != 4 or [x[:1] for x in sup] != list(TILES):
        raise NotationError(f"p{p} supply: expected 'W<n> L<n> F<n> R<n>', got {' '.join(sup)!r}")
    for t in range(4):
        d.supply[p][t] = integer(sup[t][1:], f"p{p} supply {TILES[t]}", 0, 200)
    if d.tree[p].n + supply_total(d, p) > MAX_TREE_TILES[n]:
        raise NotationError(
            f"p{p}: {d.tree[p].n} tiles in the tree (bud included) and "
            f"{supply_total(d, p)} in the supply; a legal game gives one player at most "
            f"{MAX_TREE_TILES[n]} with this many players")
    held = parse_multiset(cards, CARDS, f"p{p} cards", BONSAI_MAX_DECK)
    for c in range(BONSAI_NCARDS):
        d.cards[p][c] = held[c]


def _check_cards(BonsaiState s):
    """Every card of the deck for this player count is somewhere: deck, market, gone, hands."""
    cdef BonsaiData* d = &s.d
    n = d.nplayers
    for c in range(BONSAI_NCARDS):
        total = d.deck[c] + d.gone[c] + sum(d.cards[p][c] for p in range(n)) \
            + sum(1 for slot in range(4) if d.market[slot] == c)
        if total != FULL_DECK[n][c]:
            word = "above" if total > FULL_DECK[n][c] else "below"
            raise NotationError(
                f"card {CARDS[c]}: {total} in deck, market, gone and hands is {word} the "
                f"{FULL_DECK[n][c]} of the {max(2, n)}-player deck")


def _check_deck_top(BonsaiState s, top):
    """Tokonoma: the top part holds every unseen parchment and fits in the deck."""
    cdef BonsaiData* d = &s.d
    if not d.tokonoma:
        return
    up = sum(d.deck[c] for c in range(C_PARCH, BONSAI_NCARDS))
    if not (up <= top <= d.deck_total) or (top == 0 and up):
        raise NotationError(f"deck top={top}: the top part must hold every unseen parchment "
                            f"({up}) and fit in the deck ({d.deck_total})")
    d.top = top
    if d.known:
        for i in range(d.top, d.deck_total):
            if d.order[i] >= C_PARCH:
                raise NotationError("deck: under tokonoma every parchment lies in the top part")


def _read_turn(BonsaiState s, list tokens):
    """'pN phase=... [phase fields] final=... turns=...'."""
    cdef BonsaiData* d = &s.d
    n = d.nplayers
    if not tokens or not tokens[0].startswith("p"):
        raise NotationError("turn: expected 'turn pN phase=... final=... turns=...'")
    d.to_move = integer(tokens[0][1:], "turn seat", 0, n - 1)
    kv = key_values(tokens[1:], "turn")
    for k in kv:
        if k not in ("phase", "card", "by", "any", "allow", "type", "min", "burn", "final",
                     "turns"):
            raise NotationError(f"turn: unknown item {k!r}")
    if kv.get("phase") not in PHASES:
        raise NotationError(f"turn: phase must be one of {', '.join(PHASES)}")
    d.phase = PHASES.index(kv["phase"])
    d.turns = integer(kv.get("turns", "x"), "turn turns", 0, 10 ** 6)
    fin = kv.get("final", "x")
    d.final = -1 if fin == "-" else integer(fin, "turn final", 0, n)
    d.burn = integer(kv.get("burn", "0"), "turn burn", 0, 1)
    if d.burn and n != 1:
        raise NotationError("turn: burn=1 (reveal and discard the next card) is solo only")
    _read_phase_fields(s, kv)
    _check_turn(s)


cdef void _parse_tree(Tree* T, list tokens, str where, int bound) except *:
    """Fill a tree from tokens like 'W0,1'; check every tile against the placement rules."""
    if len(tokens) + 1 > bound:
        raise NotationError(f"{where}: {len(tokens) + 1} tiles with the bud; a legal game "
                            f"places at most {bound} in one tree with this many players")
    seen = {(0, 0)}
    tiles = []
    for tok in tokens:
        t = _tile_type(tok[:1], where)
        x, y = _tile_cell(tok, where, bound)
        if (x, y) in seen:
            raise NotationError(f"{where}: cell {x},{y} holds two tiles (or the bud)")
        if is_pot(x, y):
            raise NotationError(f"{where}: cell {x},{y} is part of the pot")
        seen.add((x, y))
        tiles.append((x, y, t))
    tree_reset(T)
    for x, y, t in tiles:
        tree_add(T, x, y, t)
    _check_tree_supports(T, where)


def _tile_cell(str tok, str where, int bound):
    """The x, y of a tile token like 'W0,1', each within `bound` of the bud."""
    coords = tok[1:].split(",")
    if len(coords) != 2:
        raise NotationError(f"{where}: tile {tok!r} should be TYPE x,y, e.g. W0,1")
    try:
        return [integer(c, f"{where} tile {tok!r}", -bound, bound) for c in coords]
    except NotationError:
        raise NotationError(f"{where}: tile {tok!r} should be TYPE x,y with x and y in "
                            f"{-bound}..{bound} (no further from the bud than {bound} tiles)"
                            ) from None


cdef void _check_tree_supports(Tree* T, str where) except *:
    """Wood joined to the bud through wood; leaf next to wood; flower next to leaf; fruit
    next to two adjacent leaves and no fruit."""
    cdef int i, j, k
    reached = {0}
    todo = [0]
    while todo:
        i = todo.pop()
        for k in range(6):
            j = T.nb[i][k]
            if j >= 0 and T.tt[j] == WOOD and j not in reached:
                reached.add(j)
                todo.append(j)
    for i in range(1, T.n):
        around = [T.tt[T.nb[i][k]] if T.nb[i][k] >= 0 else EMPTY for k in range(6)]
        name = f"{TILES[T.tt[i]]}{T.tx[i]},{T.ty[i]}"
        if T.tt[i] == WOOD and i not in reached:
            raise NotationError(f"{where}: wood {name} is not joined to the bud through wood")
        if T.tt[i] == LEAF and WOOD not in around:
            raise NotationError(f"{where}: leaf {name} is not next to a wood")
        if T.tt[i] == FLOWER and LEAF not in around:
            raise NotationError(f"{where}: flower {name} is not next to a leaf")
        if T.tt[i] == FRUIT and (FRUIT in around or not any(
                around[k] == LEAF and around[(k + 1) % 6] == LEAF for k in range(6))):
            raise NotationError(f"{where}: fruit {name} needs two adjacent leaves beside it and "
                                "no fruit next to it")


cdef void _read_phase_fields(BonsaiState s, dict kv) except *:
    """The fields only some phases have (card, by/any/allow, type, min); no others."""
    cdef BonsaiData* d = &s.d
    cdef int p = d.to_move, t
    ph = d.phase
    allowed = {"phase", "final", "turns", "burn"}
    if ph == PH_SLOT:
        allowed.add("card")
        name = kv.get("card")
        if name not in CARDS or d.cards[p][CARDS.index(name)] == 0:
            raise NotationError("turn: phase=slot needs card=CARD, a card the mover holds")
        d.pending = CARDS.index(name)
    if ph in (PH_PLACE, PH_CELL):
        allowed |= {"by", "any", "allow"}
        if kv.get("by") not in ("cultivate", "helper"):
            raise NotationError("turn: phase=place/cell needs by=cultivate|helper")
        d.by = BY_NAMES.index(kv["by"])
        d.any_left = integer(kv.get("any", "x"), "turn any", 0, 1)
        al = kv.get("allow", "").split(",")
        if len(al) != 4 or [a[:1] for a in al] != list(TILES):
            raise NotationError("turn: allow must be W<n>,L<n>,F<n>,R<n>")
        for t in range(4):
            d.allow[t] = integer(al[t][1:], f"turn allow {TILES[t]}", 0, 20)
        if d.by == BY_HELPER and sum(d.allow[t] for t in range(4)) > 1:
            raise NotationError("turn: a Helper allows one tile of its type and one of any")
    if ph == PH_CELL:
        allowed.add("type")
        d.ptype = _tile_type(kv.get("type", "?"), "turn type")
        if not (d.allow[d.ptype] or d.any_left) or not d.supply[p][d.ptype]:
            raise NotationError("turn: phase=cell with a type the mover cannot place")
        if not s.legal_actions():
            raise NotationError("turn: phase=cell with no legal cell for that type")
    if ph == PH_DISCARD:
        allowed.add("min")
        d.dmin = _tile_type(kv.get("min", "?"), "turn min")
        if supply_total(d, p) <= capacity(d, p) or not s.legal_actions():
            raise NotationError("turn: phase=discard needs a supply above capacity that can "
                                "still be discarded from type min upwards")
    for k in kv:
        if k not in allowed:
            raise NotationError(f"turn: {k}= does not belong to phase={PHASES[ph]}")


cdef void _check_turn(BonsaiState s) except *:
    """The consistency of the phase with the rest: something to place, a goal met, a
    blocked wood, the deal before the first turn, market gaps, the final countdown."""
    cdef BonsaiData* d = &s.d
    cdef int p = d.to_move, gaps = 0, i
    ph = d.phase
    if ph == PH_PLACE and not placeable_mask(d):
        raise NotationError("turn: phase=place but nothing can be placed")
    if ph == PH_GOALS and pending_goal(d) < 0:
        raise NotationError("turn: phase=goals but the mover meets no open goal")
    if ph == PH_REMOVE and not wood_blocked(&d.tree[p]):
        raise NotationError("turn: phase=remove but a wood can still be placed")
    if (ph == PH_GOALDRAW) != (d.goals_on and not d.goals_drawn):
        raise NotationError("turn: phase=goaldraw goes with 'goals ?' and only with it")
    for i in range(4):
        gaps += d.market[i] < 0
    if ph in (PH_GOALDRAW, PH_DEAL):
        if d.turns or d.to_move or any(d.cards[q][c] for q in range(d.nplayers)
                                       for c in range(BONSAI_NCARDS)):
            raise NotationError("turn: the goal draw and the deal come before the first turn")
        if ph == PH_GOALDRAW and gaps != 4:
            raise NotationError("turn: the market is dealt after the goal draw")
        if ph == PH_DEAL and not gaps:
            raise NotationError("turn: phase=deal with a full market")
    elif d.deck_total and gaps:
        pending_reveal = ph in (PH_REVEAL, PH_SLOT, PH_MASTER) or \
            (ph in (PH_PLACE, PH_CELL) and d.by == BY_HELPER) or \
            (ph in (PH_GOALS, PH_DISCARD) and d.dbr)
        if not pending_reveal or gaps > (2 if d.nplayers == 1 else 1):
            raise NotationError("market: a slot is empty while the deck still has cards")
    if ph == PH_REVEAL and not reveal_needed(d):
        raise NotationError("turn: phase=reveal with nothing to reveal")
    if (d.final >= 0) != (d.deck_total == 0):
        raise NotationError("turn: final=N (turns left after this one) is set exactly when the "
                            "deck is empty")


def from_notation(text):
    return _from_notation(text)


def new_initial(seed=None, **variant):
    """The initial position; with a seed, the goal draw and the deal are resolved by Rng(seed)
    up to seat 0's first decision."""
    cdef BonsaiState s = BonsaiState(**variant)
    cdef Rng rng
    if seed is not None:
        rng = seed if isinstance(seed, Rng) else Rng(seed)
        while is_chance(&s.d):
            bonsai_apply(&s.d, sample_chance(&s.d, &rng.s))
    return s


def playouts(BonsaiState start, long long games, seed=0, heuristic=False):
    """Run `games` random (or heuristic) playouts from `start` entirely in C; returns
    (games, actions, wins per seat) — a solo game counts as a win for seat 0 when won."""
    cdef Rng rng = seed if isinstance(seed, Rng) else Rng(seed)
    cdef BonsaiData d
    cdef long long g, actions = 0
    cdef long long wins[4]
    cdef int w, heur = bool(heuristic)
    wins[0] = wins[1] = wins[2] = wins[3] = 0
    for g in range(games):
        memcpy(&d, &start.d, sizeof(BonsaiData))
        actions += bonsai_playout(&d, &rng.s, heur, DEFAULT_W)
        w = winner(&d)
        if w >= 0:
            wins[w] += 1
    return games, actions, [wins[p] for p in range(start.d.nplayers)]



SPEC = GameSpec(
    name="bonsai",
    reference="niwa.ext.reference.bonsai",
    title="Bonsai",
    options=OPTIONS,
    # the deck order is unknown to everyone (reveals are chance events); face-down cards
    # were public when taken, so the rules page treats them as public
    traits=Traits(min_players=1, max_players=4, chance=True, simultaneous=False,
                  hidden_information=False, deals=True),
    create=lambda variant, seed: new_initial(seed, **variant),
    parse_notation=from_notation,
    # No rule bounds a game in which every player cultivates forever (random playouts end;
    # tournaments cap with --max-plies): a generous bound for adapters that need one.
    max_game_length=lambda v: 100_000,
    num_distinct_actions=lambda v: A_GOALS + 10,
    batch_playouts=playouts,
    mcts_defaults=BONSAI_MCTS_DEFAULTS,
    best_agent="mcts:playout=heuristic",   # 71.5% of 400 games vs mcts at 50 ms (README)
    legend=LEGEND,
    turn=lambda state: state.turn,
    stats=(StatField("scores", "int", True, "final points"),
           StatField("breakdown", "json", True, "points by source (see score_parts)"),
           StatField("goals_claimed", "json", True, "names of the goals the player claimed"),
           StatField("goals_in_play", "json", False, "names of the goals dealt"),
           StatField("turns", "int", False, "turns played"),
           StatField("tiles", "json", True, "tiles in the tree: wood, leaf, flower, fruit"),
           StatField("winner", "seat", False, "winning seat (None: a lost solo game)")),
    score_parts=("leaves", "flowers", "fruits", "parchments", "goals", "total"),
    solo_thresholds=SOLO_THRESHOLDS,
    check_variant=_check_variant,
    placement=lambda state: [float(x) for x in state.scores()],   # final points
    eval_weights=(
        EvalWeight("cultivate", 0.75, 0.0, 1.0, "playout policy: chance to cultivate when "
                                                "two or more tiles fit the tree"),
        EvalWeight("top_slot", 0.5, 0.0, 1.0, "playout policy: chance to take the highest "
                                              "occupied slot (else a uniform one)"),
        EvalWeight("scale", 15.0, 2.0, 60.0, "evaluation: point lead giving ~73% "
                                             "(logistic scale)"),
    ),
)
fill_default_weights(DEFAULT_W, N_WEIGHTS, SPEC)
