# cython: language_level=3
"""Lotus (Dominique Tellier, 1998) engine: docs/rules/lotus.md, exactly.

Representation. The track is a flat array of spaces: lane a (a1..aL), lane b (b1..bL),
then the shared spaces L+1..R (route positions). Each space holds a stack of colour bytes,
bottom to top, and its height; the top byte says who may move it. Start towers only ever
hold their owner's stones, so a player's start is just a count of towers per height.
Clone is one memcpy of a ~1.4 kB struct; c_copy_from (the searchers' reuse of a state) stops after
the board's last space, half of that on the standard board.

Action model (fixes perft counts). source = 4*seat + (h-1) for a start tower of height h
of that seat (0..15), or 16 + space index for a track space; lane = 1 only for a start
stone sent into lane b; bounce = 1 when the move ends on the trampoline and bounces
(under `trampoline=mandatory` every landing there bounces and has bounce = 1).
    action = 4*source + 2*lane + bounce,      PASS = 4*(16 + number of spaces)

Speed. A board geometry's moves are precomputed once (LotusMoves, shared by its states):
the action(s) of a top stone for each space and stack height, of a start for each set of
tower heights, and each move's destination, so generating is copying table entries and a
move does no route arithmetic. Random playouts skip the incremental hash (c_hash computes
it again afterwards). Measured one change at a time against a tight plain-C playout
(bench/speed/reference-c, the same games from the same seed): 0.55 of its rate before,
0.70 with the tables, 0.74 without the playout's hashing, 0.80 when a landing clears
the covered space's bit in every seat's mask instead of loading the covered stone.
"""
from libc.stdint cimport uint64_t
from libc.math cimport exp
from libc.string cimport memcpy, memset


cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil
    int __builtin_ctz(unsigned int) nogil

from niwa.ext.game cimport (State, Rng, MAX_ACTIONS, TERMINAL, share_weights,
                           fill_default_weights)
from niwa.ext.rng cimport RngState, rng_below, splitmix64

from niwa.ext.errors import NotationError, VariantError, IllegalActionError
from niwa.ext.notation import integer, read_header, section, split_parts
from niwa.ext.spec import EvalWeight, GameSpec, StatField, Traits, VariantOption

COLOURS = "WBRU"
COLOUR_NAMES = ("White", "Black", "Red", "Blue")
OPTIONS = (
    VariantOption("players", (2, 3, 4), 2, "number of players"),
    VariantOption("rule", ("basic", "pro"), "basic",
                  "pro: a blocked player must pass; 2p opening brings two stones"),
    VariantOption("trampoline", ("optional", "mandatory"), "optional",
                  "whether landing on the trampoline must bounce"),
    VariantOption("lane", range(1, 9), 3, "spaces in each entrance lane before the merge"),
    VariantOption("shared", range(1, 33), 11, "shared spaces after the merge"),
    VariantOption("trampoline_at", range(2, 41), 8,
                  "route position (1-based) of the trampoline; must be shared"),
    VariantOption("towers", ("auto", 1, 2, 3, 4), "auto",
                  "tallest start tower (towers t..1 each); auto = 4 for 2 players, else 3"),
)
DEFAULTS = {o.key: o.default for o in OPTIONS}

# ---- Zobrist keys (fixed seed: hashes are stable across runs and machines) -----------
cdef uint64_t Z_STACK[LOTUS_MAX_SPACES][LOTUS_MAX_STONES][4]
cdef uint64_t Z_START[4][LOTUS_MAX_TOWER + 1][LOTUS_MAX_TOWER + 1]
cdef uint64_t Z_TOMOVE[4]
cdef uint64_t Z_OPENING[3]

cdef void _init_zobrist():
    cdef uint64_t x = 0x6C6F747573  # "lotus"
    cdef int i, j, k
    for i in range(LOTUS_MAX_SPACES):
        for j in range(LOTUS_MAX_STONES):
            for k in range(4):
                Z_STACK[i][j][k] = splitmix64(&x)
    for i in range(4):
        for j in range(LOTUS_MAX_TOWER + 1):
            for k in range(LOTUS_MAX_TOWER + 1):
                Z_START[i][j][k] = splitmix64(&x)
        Z_TOMOVE[i] = splitmix64(&x)
    for i in range(3):
        Z_OPENING[i] = splitmix64(&x)

_init_zobrist()


# ---- core rules on the struct (no Python) -------------------------------------------
cdef inline int space_at(LotusData* d, int lane, int p) noexcept nogil:
    """Space index of route position p (1-based, <= route) in lane 0/1 (ignored if shared)."""
    if p <= d.lane:
        return lane * d.lane + p - 1
    return 2 * d.lane + p - d.lane - 1

cdef inline int pass_action(LotusData* d) noexcept nogil:
    return 4 * (LOTUS_START_SOURCES + d.nspaces)

cdef inline int add_dest(LotusData* d, int* out, int n, int base, int dest) noexcept nogil:
    if dest == d.tramp_space:
        if d.mandatory:
            out[n] = base | 1
            return n + 1
        out[n] = base
        out[n + 1] = base | 1
        return n + 2
    out[n] = base
    return n + 1

cdef inline int gen_start(LotusData* d, int* out, int n, int q, int h) noexcept nogil:
    cdef int base = 4 * (4 * q + h - 1)
    if h > d.route:
        out[n] = base
        return n + 1
    if h <= d.lane:
        n = add_dest(d, out, n, base, space_at(d, 0, h))
        return add_dest(d, out, n, base | 2, space_at(d, 1, h))
    return add_dest(d, out, n, base, space_at(d, 0, h))

cdef inline int gen_track(LotusData* d, int* out, int n, int s) noexcept nogil:
    cdef int base = 4 * (LOTUS_START_SOURCES + s)
    cdef int np = d.pos[s] + d.height[s]
    if np > d.route:
        out[n] = base
        return n + 1
    return add_dest(d, out, n, base, space_at(d, d.lane_of[s] & 1, np))

cdef inline int put_track(const LotusMoves* mv, int* out, int n, int s, int h) noexcept nogil:
    # both slots always written, the second counted only for a move that may bounce
    out[n] = mv.track[s][h][0]
    out[n + 1] = mv.track[s][h][1]
    return n + mv.track_n[s][h]

cdef inline int put_start(const LotusMoves* mv, int* out, int n, int q, unsigned int hs) noexcept nogil:
    hs = (hs >> 1) & 15
    memcpy(out + n, &mv.start[q][hs][0], sizeof(mv.start[q][hs]))
    return n + mv.start_n[q][hs]

cdef inline int lotus_gen(LotusData* d, int* out) noexcept nogil:
    """The legal actions into `out` (which may be written up to 8 entries past them: the
    callers' buffers hold MAX_ACTIONS), in the order fixed by the action model: start
    towers by height, lane a before b; then spaces by index; landing before bouncing."""
    cdef int m = d.to_move, n = 0, h, s, q
    cdef const LotusMoves* mv = d.moves
    if d.winner >= 0:
        return 0
    if d.opening == 2:
        for h in range(1, d.max_tower + 1):
            if d.start[0][h]:
                n = gen_start(d, out, n, 0, h)
        out[n] = pass_action(d)
        return n + 1
    cdef uint64_t bits
    n = put_start(mv, out, 0, m, d.start_mask[m])
    bits = d.tops[m]
    while bits:
        s = __builtin_ctzll(bits)
        n = put_track(mv, out, n, s, d.height[s])
        bits &= bits - 1
    if n > 0:
        return n
    if not d.pro:
        # Blocked under the basic rule: any free stone of any other player, or pass.
        for q in range(d.nplayers):
            if q != m:
                n = put_start(mv, out, n, q, d.start_mask[q])
        for s in range(d.nspaces):
            if d.height[s]:
                n = put_track(mv, out, n, s, d.height[s])
    out[n] = pass_action(d)
    return n + 1

cdef inline void hash_stone(LotusData* d, int s, int k, int colour) noexcept nogil:
    """Toggle stone `colour` at level k of space s in the kept hash."""
    if s < 2 * d.lane:
        d.hla ^= Z_STACK[s][k][colour]
        d.hlb ^= Z_STACK[s + d.lane if s < d.lane else s - d.lane][k][colour]
    else:
        d.hz ^= Z_STACK[s][k][colour]

cdef void rehash(LotusData* d) noexcept nogil:
    """The kept hash (hz, hla, hlb) from the position itself."""
    cdef int s, k, p, h
    d.hz = Z_TOMOVE[d.to_move] ^ Z_OPENING[d.opening]
    d.hla = d.hlb = 0
    for s in range(d.nspaces):
        for k in range(d.height[s]):
            hash_stone(d, s, k, d.stack[s][k])
    for p in range(d.nplayers):
        for h in range(1, d.max_tower + 1):
            d.hz ^= Z_START[p][h][d.start[p][h]]
    d.hash_ok = 1

cdef inline int route_dest(LotusData* d, int lane, int p) noexcept nogil:
    """The space at route position p in `lane`, or the goal past the route's end."""
    return LOTUS_GOAL_DEST if p > d.route else space_at(d, lane, p)

cdef inline bint land(LotusData* d, int colour, int s, bint hashing) noexcept nogil:
    """Put a stone of `colour` on space s or in the goal; True if that was its last."""
    cdef uint64_t bit
    if s == LOTUS_GOAL_DEST:
        d.goal[colour] += 1
        return d.goal[colour] == d.stones_each
    if hashing:
        hash_stone(d, s, d.height[s], colour)
    # the covered stone's owner loses the top: clearing the bit in every seat's mask
    # costs less than loading that stone's colour (and an empty space has none)
    bit = 1ULL << s
    d.tops[0] &= ~bit
    d.tops[1] &= ~bit
    d.tops[2] &= ~bit
    d.tops[3] &= ~bit
    d.tops[colour] |= bit
    d.stack[s][d.height[s]] = colour
    d.height[s] += 1
    return False

cdef inline void lotus_step(LotusData* d, int a, bint hashing) noexcept nogil:
    """Play action `a`. With `hashing` (a constant where this is inlined, so the compiler
    drops the other branch) the kept hash follows; without, the caller marks it stale."""
    cdef int src, colour, dist, s, q, h, dest
    if a != pass_action(d):
        src = a >> 2
        if src < LOTUS_START_SOURCES:
            q = src >> 2
            h = (src & 3) + 1
            if hashing:
                d.hz ^= Z_START[q][h][d.start[q][h]] ^ Z_START[q][h][d.start[q][h] - 1]
            d.start[q][h] -= 1
            if d.start[q][h] == 0:
                d.start_mask[q] &= ~(1u << h)
            if h > 1:
                if hashing:
                    d.hz ^= Z_START[q][h - 1][d.start[q][h - 1]] ^ \
                        Z_START[q][h - 1][d.start[q][h - 1] + 1]
                d.start[q][h - 1] += 1
                d.start_mask[q] |= 1u << (h - 1)
            colour = q
            dest = d.moves.start_to[h][(a >> 1) & 1][a & 1]
        else:
            s = src - LOTUS_START_SOURCES
            dist = d.height[s]
            colour = d.stack[s][dist - 1]
            if hashing:
                hash_stone(d, s, dist - 1, colour)
            d.height[s] = dist - 1
            d.tops[colour] &= ~(1ULL << s)
            if dist > 1:
                d.tops[d.stack[s][dist - 2]] |= 1ULL << s
            dest = d.moves.track_to[s][dist][a & 1]
        if land(d, colour, dest, hashing):
            d.winner = colour
            return
    if d.opening == 1:
        d.opening = 2
        if hashing:
            d.hz ^= Z_OPENING[1] ^ Z_OPENING[2]
        return
    if hashing:
        d.hz ^= Z_OPENING[d.opening] ^ Z_OPENING[0] ^ Z_TOMOVE[d.to_move]
    d.opening = 0
    d.to_move += 1
    if d.to_move == d.nplayers:
        d.to_move = 0
    if hashing:
        d.hz ^= Z_TOMOVE[d.to_move]

cdef inline void lotus_apply(LotusData* d, int a) noexcept nogil:
    lotus_step(d, a, 1)

cdef inline int lotus_playout(LotusData* d, RngState* rng) noexcept nogil:
    cdef int buf[256]
    cdef int n, plies = 0
    d.hash_ok = 0       # a playout does not keep the hash (c_hash computes it again)
    while d.winner < 0:
        n = lotus_gen(d, buf)
        lotus_step(d, buf[rng_below(rng, n)], 0)
        plies += 1
    return plies

cdef int remaining(LotusData* d, int p) noexcept nogil:
    """Total distance `p`'s stones still have to cover (goal = route + 1)."""
    cdef int total = 0, s, k, h
    for h in range(1, d.max_tower + 1):
        total += d.start[p][h] * h * (d.route + 1)
    for s in range(d.nspaces):
        for k in range(d.height[s]):
            if d.stack[s][k] == p:
                total += d.route + 1 - d.pos[s]
    return total


# The evaluation's weights, in SPEC.eval_weights order (State.c_weights; NULL: DEFAULT_W,
# filled from the spec at import). The defaults are the published evaluation's constants.
cdef enum:
    W_DISTANCE, W_FREE, W_HEIGHT, W_COVERED, W_SCALE, N_WEIGHTS
cdef double DEFAULT_W[N_WEIGHTS]


cdef void position_scores(LotusData* d, double* score, const double* w) noexcept nogil:
    """Every player's position score in one pass over the board (see c_evaluate)."""
    cdef int s, k, h, p
    cdef int goal_pos = d.route + 1
    for p in range(d.nplayers):
        score[p] = 0.0
        for h in range(1, d.max_tower + 1):
            score[p] -= w[W_DISTANCE] * (d.start[p][h] * h * goal_pos)
    for s in range(d.nspaces):
        h = d.height[s]
        for k in range(h):
            p = d.stack[s][k]
            score[p] -= w[W_DISTANCE] * (goal_pos - d.pos[s])
            if k == h - 1:
                score[p] += w[W_FREE] + w[W_HEIGHT] * h
            else:
                score[p] -= w[W_COVERED]


cdef class _Moves:
    """One board geometry's LotusMoves, kept alive by _MOVES for the states that point at it."""
    cdef LotusMoves m


_MOVES = {}     # (players, mandatory, lane, shared, trampoline_at, towers) -> _Moves


cdef void build_moves(LotusMoves* mv, LotusData* d) noexcept:
    """Fill `mv` for the geometry of `d` with the generators the tables replace, so both
    give the same moves in the same order."""
    cdef LotusData t = d[0]
    cdef int out[16]
    cdef int s, h, n, q, hs, lane, bounce
    memset(mv, 0, sizeof(LotusMoves))
    for s in range(d.nspaces):
        for h in range(1, LOTUS_MAX_STONES + 1):
            t.height[s] = h
            n = gen_track(&t, out, 0, s)
            mv.track_n[s][h] = n
            mv.track[s][h][0] = out[0]
            mv.track[s][h][1] = out[1] if n > 1 else 0
            for bounce in range(2):     # a bounce lands, then goes the same distance again
                mv.track_to[s][h][bounce] = route_dest(
                    d, d.lane_of[s] & 1, d.pos[s] + h * (1 + bounce))
    for q in range(4):
        for hs in range(16):
            n = 0
            for h in range(1, LOTUS_MAX_TOWER + 1):
                if hs >> (h - 1) & 1:
                    n = gen_start(&t, out, n, q, h)
            mv.start_n[q][hs] = n
            memcpy(&mv.start[q][hs][0], out, n * sizeof(int))
    for h in range(1, LOTUS_MAX_TOWER + 1):
        for lane in range(2):
            for bounce in range(2):
                mv.start_to[h][lane][bounce] = route_dest(d, lane, h * (1 + bounce))


cdef const LotusMoves* moves_for(LotusData* d):
    key = (d.nplayers, d.mandatory, d.lane, d.shared, d.tramp_pos, d.max_tower)
    holder = _MOVES.get(key)
    if holder is None:
        holder = _MOVES[key] = _Moves()
        build_moves(&(<_Moves>holder).m, d)
    return &(<_Moves>holder).m


def _check_variant(dict v):
    """The one cross-key rule: the trampoline sits on a shared space."""
    if not (v["lane"] < v["trampoline_at"] <= v["lane"] + v["shared"]):
        raise VariantError(
            f"lotus trampoline_at={v['trampoline_at']} must be a shared space: "
            f"{v['lane'] + 1}..{v['lane'] + v['shared']}")


cdef class LotusState(State):
    """A Lotus position. `LotusState(players=2, rule="basic", ...)` is the initial position.

    >>> s = LotusState()
    >>> [s.action_to_string(a) for a in s.legal_actions()]
    ['W1-a1', 'W1-b1', 'W2-a2', 'W2-b2', 'W3-a3', 'W3-b3', 'W4-4']
    """

    def __init__(self, **variant):
        v = SPEC.parse_variant(variant)
        cdef LotusData* d = &self.d
        memset(d, 0, sizeof(LotusData))
        d.nplayers = v["players"]
        self.num_players = d.nplayers
        d.pro = v["rule"] == "pro"
        d.mandatory = v["trampoline"] == "mandatory"
        d.lane = v["lane"]
        d.shared = v["shared"]
        d.route = d.lane + d.shared
        d.tramp_pos = v["trampoline_at"]
        d.nspaces = 2 * d.lane + d.shared
        d.tramp_space = space_at(d, 0, d.tramp_pos)
        d.max_tower = (4 if d.nplayers == 2 else 3) if v["towers"] == "auto" else v["towers"]
        d.stones_each = d.max_tower * (d.max_tower + 1) // 2
        cdef int s, p, h
        for s in range(d.nspaces):
            if s < 2 * d.lane:
                d.pos[s] = s % d.lane + 1
                d.lane_of[s] = s // d.lane
            else:
                d.pos[s] = s - 2 * d.lane + d.lane + 1
                d.lane_of[s] = 2
        for p in range(d.nplayers):
            for h in range(1, d.max_tower + 1):
                d.start[p][h] = 1
                d.start_mask[p] |= 1u << h
        d.winner = -1
        d.opening = 1 if (d.pro and d.nplayers == 2) else 0
        d.moves = moves_for(d)

    # ---- C contract ---------------------------------------------------------------
    cdef int c_current_player(self) noexcept:
        return TERMINAL if self.d.winner >= 0 else self.d.to_move

    cdef int gen_actions(self, int* out) noexcept:
        return lotus_gen(&self.d, out)

    cdef int c_legal_actions(self, int* out) noexcept:
        return lotus_gen(&self.d, out)

    cdef void c_apply(self, int action) noexcept:
        lotus_apply(&self.d, action)

    cdef bint c_is_terminal(self) noexcept:
        return self.d.winner >= 0

    cdef void c_returns(self, double* out) noexcept:
        cdef int p
        for p in range(self.d.nplayers):
            out[p] = 1.0 if p == self.d.winner else 0.0

    cdef uint64_t c_hash(self) noexcept:
        """The xor of the Zobrist keys of every stone (by space and level), start tower count,
        the turn and the opening; kept up to date by c_apply (d.hash_ok), else computed."""
        cdef LotusData* d = &self.d
        if not d.hash_ok:
            rehash(d)
        return d.hz ^ d.hla

    cdef uint64_t c_symmetric_hash(self) noexcept:
        """min(hash, hash of the mirror image). Lanes a and b have the same length and merge
        into the same shared spaces, and the trampoline is shared, so a position and its
        mirror (lane a's stacks swapped with lane b's) have the same value; early in the
        game nearly every position has a distinct mirror, so an exact search keyed on this
        proves about a third fewer positions (towers 3..1: 1.67M -> 1.06M df-pn nodes).
        Both hashes are kept up to date by c_apply: df-pn asks for one per child, and
        computing it from the stacks took 15% of a proof's time."""
        cdef LotusData* d = &self.d
        if not d.hash_ok:
            rehash(d)
        return (d.hz ^ d.hla) if (d.hz ^ d.hla) < (d.hz ^ d.hlb) else (d.hz ^ d.hlb)

    def _hash_from_scratch(self):
        """(hash, symmetric hash) computed from the stacks, not kept (tests)."""
        cdef LotusData d
        memcpy(&d, &self.d, sizeof(LotusData))
        rehash(&d)
        return d.hz ^ d.hla, min(d.hz ^ d.hla, d.hz ^ d.hlb)

    cdef State c_clone(self):
        cdef LotusState s = LotusState.__new__(LotusState)
        s.num_players = self.num_players
        memcpy(&s.d, &self.d, sizeof(LotusData))
        share_weights(s, self)
        return s

    cdef void c_copy_from(self, State other) noexcept:
        # the stacks of spaces the board does not have are never read: the copy stops at
        # the last one (a standard board's state is half the struct; proof search copies a
        # state for every child it generates)
        cdef LotusData* src = &(<LotusState>other).d
        memcpy(&self.d, src, <size_t>(<char*>&src.stack[src.nspaces][0] - <char*>src))

    cdef int c_random_playout(self, RngState* rng) noexcept:
        return lotus_playout(&self.d, rng)

    cdef double c_evaluate(self, int player) noexcept:
        """Logistic of the player's position score minus the opponents' average.

        score = -(distance still to cover) + 5 * (free stones on the track)
                - 5 * (covered stones) + (sum of the heights under free stones),
        logistic scale 15; with State.c_weights: distance x w_distance, 5 -> w_free,
        heights x w_height, 5 -> w_covered, 15 -> w_scale (SPEC.eval_weights).
        Being on top is what matters in Lotus: a free stone on a tall stack is a long move
        in hand and covers whoever sits below. One-ply greedy play with this score beat
        random play 98.5% of 200 games (pure race distance alone: 57%).
        """
        cdef LotusData* d = &self.d
        if d.winner >= 0:
            return 1.0 if d.winner == player else 0.0
        cdef double score[4]
        cdef const double* w = self.c_weights if self.c_weights != NULL else DEFAULT_W
        position_scores(d, score, w)
        cdef double others = 0.0
        cdef int p
        for p in range(d.nplayers):
            if p != player:
                others += score[p]
        others /= d.nplayers - 1
        return 1.0 / (1.0 + exp(-(score[player] - others) / w[W_SCALE]))

    # ---- Python API ---------------------------------------------------------------
    @property
    def spec(self):
        return SPEC

    def hides_from(self, int player):
        """Always False: every tile and tower is in plain view."""
        return False

    @property
    def game_name(self):
        return "lotus"

    @property
    def variant(self):
        d = &self.d
        return {"players": d.nplayers, "rule": "pro" if d.pro else "basic",
                "trampoline": "mandatory" if d.mandatory else "optional",
                "lane": d.lane, "shared": d.shared, "trampoline_at": d.tramp_pos,
                "towers": d.max_tower}

    @property
    def pass_action(self):
        return pass_action(&self.d)

    @property
    def num_distinct_actions(self):
        return pass_action(&self.d) + 1

    def winner(self):
        """The winning seat, or None while the game runs."""
        return self.d.winner if self.d.winner >= 0 else None

    @property
    def opening(self):
        return ("done", "first", "second")[self.d.opening]

    def space_name(self, int s):
        d = &self.d
        if d.lane_of[s] == 2:
            return str(d.pos[s])
        return "ab"[d.lane_of[s]] + str(d.pos[s])

    def stack(self, int s):
        """Colours on space s, bottom to top, as a string of W/B/R/U."""
        return "".join(COLOURS[self.d.stack[s][k]] for k in range(self.d.height[s]))

    def start_towers(self, int p):
        """Heights of player p's start towers, tallest first."""
        return [h for h in range(self.d.max_tower, 0, -1) for _ in range(self.d.start[p][h])]

    def goal_count(self, int p):
        return self.d.goal[p]

    def remaining_distance(self, int p):
        return remaining(&self.d, p)

    def stats(self):
        """Secondary statistics per player: stones in goal and distance still to cover."""
        return {"goal": [self.d.goal[p] for p in range(self.d.nplayers)],
                "remaining": [remaining(&self.d, p) for p in range(self.d.nplayers)]}

    def num_spaces(self):
        return self.d.nspaces

    def _dest_name(self, int p, int lane):
        if p > self.d.route:
            return "goal"
        return self.space_name(space_at(&self.d, lane, p))

    def action_to_string(self, int action, player=None):
        """`W3-a3` (start tower of height 3 to a3), `5-8*11` (land on the trampoline at 8 and
        bounce to 11), `12-goal`, `pass`."""
        d = &self.d
        if action == pass_action(d):
            return "pass"
        if action < 0 or action > pass_action(d):
            return f"?{action}"
        src = action >> 2
        lane = (action >> 1) & 1
        if src < LOTUS_START_SOURCES:
            q, h = src >> 2, (src & 3) + 1
            name, dist, p = f"{COLOURS[q]}{h}", h, 0
        else:
            s = src - LOTUS_START_SOURCES
            if s >= d.nspaces:
                return f"?{action}"
            name, dist, p = self.space_name(s), d.height[s], d.pos[s]
            lane = d.lane_of[s] & 1
        text = f"{name}-{self._dest_name(p + dist, lane)}"
        if action & 1:
            text += "*" + self._dest_name(p + 2 * dist, lane)
        return text

    # ---- notation -----------------------------------------------------------------
    def to_notation(self):
        """One line: header; track; start; goal; turn. Example (initial 2p basic):
        `lotus players=2 rule=basic trampoline=optional; track -; start WWWW WWW WW W
        BBBB BBB BB B; goal W:0 B:0; turn W`."""
        d = &self.d
        v = self.variant
        head = ["lotus"] + [f"{k}={v[k]}" for k in ("players", "rule", "trampoline")]
        head += [f"{k}={v[k]}" for k in ("lane", "shared", "trampoline_at") if v[k] != DEFAULTS[k]]
        if d.max_tower != (4 if d.nplayers == 2 else 3):
            head.append(f"towers={d.max_tower}")
        track = [f"{self.space_name(s)}:{self.stack(s)}" for s in range(d.nspaces) if d.height[s]]
        start = [COLOURS[p] * h for p in range(d.nplayers) for h in self.start_towers(p)]
        goal = [f"{COLOURS[p]}:{d.goal[p]}" for p in range(d.nplayers)]
        turn = f"turn {COLOURS[d.to_move]}"
        if d.opening:
            turn += f" opening={self.opening}"
        return "; ".join([" ".join(head), "track " + (" ".join(track) or "-"),
                          "start " + (" ".join(start) or "-"), "goal " + " ".join(goal), turn])

    @classmethod
    def from_notation(cls, str text):
        return _from_notation(text)

    def render(self):
        """The track as columns (stacks drawn bottom to top, the top stone highest), then
        start towers, goal and whose turn it is."""
        d = &self.d
        names = [self.space_name(s) + ("*" if s == d.tramp_space else "") for s in range(d.nspaces)]
        width = max(len(n) for n in names) + 1
        tallest = max([d.height[s] for s in range(d.nspaces)] + [1])
        lines = []
        v = self.variant
        lines.append(f"Lotus, {v['players']} players, {v['rule']} rule, {v['trampoline']} "
                     f"trampoline (* = trampoline at {d.tramp_pos}); lanes a, b merge after {d.lane}")
        for level in range(tallest - 1, -1, -1):
            row = "".join((COLOURS[d.stack[s][level]] if d.height[s] > level else " ").rjust(width)
                          for s in range(d.nspaces))
            lines.append(row.rstrip())
        lines.append("".join(n.rjust(width) for n in names))
        for p in range(d.nplayers):
            towers = " ".join(COLOURS[p] * h for h in self.start_towers(p)) or "-"
            lines.append(f"{COLOUR_NAMES[p]:>6} ({COLOURS[p]}): start {towers:<16} "
                         f"goal {d.goal[p]}/{d.stones_each}")
        if d.winner >= 0:
            lines.append(f"Game over: {COLOUR_NAMES[d.winner]} wins.")
        else:
            extra = {1: " (pro opening: may bring two stones)", 2: " (pro opening: second stone or pass)"}
            lines.append(f"{COLOUR_NAMES[d.to_move]} to move{extra.get(d.opening, '')}.")
        return "\n".join(lines)

    def to_json(self):
        d = &self.d
        return {
            "game": "lotus", "notation": self.to_notation(), "variant": self.variant,
            "track": {self.space_name(s): self.stack(s) for s in range(d.nspaces) if d.height[s]},
            "trampoline": self.space_name(d.tramp_space),
            "start": {COLOURS[p]: self.start_towers(p) for p in range(d.nplayers)},
            "goal": {COLOURS[p]: d.goal[p] for p in range(d.nplayers)},
            "to_move": COLOURS[d.to_move], "opening": self.opening,
            "terminal": d.winner >= 0, "winner": COLOURS[d.winner] if d.winner >= 0 else None,
            "legal": [self.action_to_string(a) for a in self.legal_actions()],
        }


def _from_notation(str text):
    """Parse a Lotus position; NotationError names the offending part."""
    parts = split_parts(text, "lotus", 5, "header; track; start; goal; turn")
    cdef LotusState s = LotusState(**read_header(parts[0], SPEC))
    _read_track(s, section(parts, 1, "track"))
    _read_start(s, section(parts, 2, "start"))
    _read_goal(s, section(parts, 3, "goal"))
    _check_stones(s)
    _derive_masks_and_winner(s)
    _read_turn(s, section(parts, 4, "turn"))
    s.d.hash_ok = 0     # the position was written field by field
    return s


def _colour(str letter, int players, str where):
    """The seat of a colour letter (W, B, R, U) among `players`."""
    letters = COLOURS[:players]
    if len(letter) != 1 or letter not in letters:
        raise NotationError(f"{where}: unknown colour {letter!r}; with {players} players "
                            f"colours are {', '.join(letters)}")
    return letters.index(letter)


def _items(str text):
    """The words of a part; '-' alone means none."""
    words = text.split()
    return [] if words == ["-"] else words


def _read_track(LotusState s, str text):
    """'a2:WB 5:R': stacks bottom to top on named spaces."""
    d = &s.d
    names = {s.space_name(i): i for i in range(d.nspaces)}
    seen = set()
    for tok in _items(text):
        if ":" not in tok:
            raise NotationError(f"track item {tok!r} should be SPACE:STACK, e.g. a2:WB")
        name, stack = tok.split(":", 1)
        if name not in names:
            raise NotationError(
                f"track space {name!r} does not exist: lanes are a1-a{d.lane}, b1-b{d.lane}, "
                f"shared spaces {d.lane + 1}-{d.route}")
        if name in seen:
            raise NotationError(f"track space {name!r} is listed twice")
        seen.add(name)
        if not stack:
            raise NotationError(f"track space {name!r} has an empty stack; omit it instead")
        if len(stack) > LOTUS_MAX_STONES:
            raise NotationError(f"stack on {name} is taller than all stones together")
        i = names[name]
        for ch in stack:
            d.stack[i][d.height[i]] = _colour(ch, d.nplayers, f"track {name}")
            d.height[i] += 1


def _read_start(LotusState s, str text):
    """'WWWW WWW BB': start towers, each of one colour; they can only have shrunk."""
    d = &s.d
    memset(d.start, 0, sizeof(d.start))
    for tok in _items(text):
        c = _colour(tok[0], d.nplayers, f"start tower {tok!r}")
        if tok != tok[0] * len(tok):
            raise NotationError(f"start tower {tok!r} holds two colours; start towers hold "
                                f"only their owner's stones")
        if len(tok) > d.max_tower:
            raise NotationError(f"start tower {tok!r} is taller than {d.max_tower}")
        if sum(d.start[c][h] for h in range(1, d.max_tower + 1)) >= d.max_tower:
            raise NotationError(f"start of {COLOURS[c]}: more than {d.max_tower} towers; "
                                f"a player starts with {d.max_tower}")
        d.start[c][len(tok)] += 1
    for p in range(d.nplayers):
        heights = s.start_towers(p)
        for i, h in enumerate(heights):
            if h > d.max_tower - i:
                raise NotationError(
                    f"start towers of {COLOURS[p]} ({heights}) cannot arise from the initial "
                    f"towers {list(range(d.max_tower, 0, -1))}: towers only shrink")


def _read_goal(LotusState s, str text):
    """'W:2 B:0': stones in each player's goal, one count per colour."""
    d = &s.d
    letters = COLOURS[:d.nplayers]
    goals = {}
    for tok in text.split():
        if ":" not in tok:
            raise NotationError(f"goal item {tok!r} should be COLOUR:COUNT, e.g. W:2")
        letter, count = tok.split(":", 1)
        c = _colour(letter, d.nplayers, "goal")
        if c in goals:
            raise NotationError(f"goal: {letter} is given twice")
        goals[c] = integer(count, f"goal of {letter}", 0, d.stones_each)
    if sorted(goals) != list(range(d.nplayers)):
        raise NotationError(f"goal must give a count for each of {', '.join(letters)}")
    for p in range(d.nplayers):
        d.goal[p] = goals[p]


def _check_stones(LotusState s):
    """Every player's stones are all somewhere: track, start or goal."""
    d = &s.d
    for p in range(d.nplayers):
        on_track = sum(s.stack(i).count(COLOURS[p]) for i in range(d.nspaces))
        total = on_track + sum(s.start_towers(p)) + d.goal[p]
        if total != d.stones_each:
            raise NotationError(
                f"{COLOUR_NAMES[p]} has {total} stones (track {on_track}, start "
                f"{sum(s.start_towers(p))}, goal {d.goal[p]}); expected {d.stones_each}")


def _derive_masks_and_winner(LotusState s):
    """The move generator's masks (tops of stacks, start heights) and the winner."""
    d = &s.d
    for i in range(d.nspaces):
        if d.height[i]:
            d.tops[d.stack[i][d.height[i] - 1]] |= 1ULL << i
    for p in range(d.nplayers):
        d.start_mask[p] = 0
        for h in range(1, d.max_tower + 1):
            if d.start[p][h]:
                d.start_mask[p] |= 1u << h
    winners = [p for p in range(d.nplayers) if d.goal[p] == d.stones_each]
    if len(winners) > 1:
        raise NotationError("more than one player has every stone in the goal")
    d.winner = winners[0] if winners else -1


def _read_turn(LotusState s, str text):
    """'W' or 'W opening=first|second' (the 2-player pro opening)."""
    d = &s.d
    words = text.split()
    if not words:
        raise NotationError(f"fifth part must be 'turn COLOUR', got {text[:20]!r}")
    d.to_move = _colour(words[0], d.nplayers, "turn")
    d.opening = 0
    for tok in words[1:]:
        if tok not in ("opening=first", "opening=second") or d.opening:
            raise NotationError(f"unknown turn item {tok!r}; expected one opening=first|second")
        if not (d.pro and d.nplayers == 2):
            raise NotationError("an opening state exists only with rule=pro and 2 players")
        if d.to_move != 0:
            raise NotationError("the pro opening belongs to W (seat 0)")
        d.opening = 1 if tok == "opening=first" else 2
    if d.opening:
        _check_opening(s)


def _check_opening(LotusState s):
    """The pro opening happens before anything else: at opening=first every stone is still
    at the start, at opening=second exactly one of W's has left it."""
    d = &s.d
    moved = [d.stones_each - sum(s.start_towers(p)) for p in range(d.nplayers)]
    if d.opening == 1 and moved[0]:
        raise NotationError("opening=first needs every stone at the start (it is seat 0's "
                            "first action)")
    if d.opening == 2 and moved[0] != 1:
        raise NotationError(f"opening=second comes after W's first stone, but {moved[0]} of "
                            f"W's stones have left the start")
    if moved[1]:
        raise NotationError("the pro opening comes before B's first move, but B's stones "
                            "have left the start")


def from_notation(text):
    return _from_notation(text)


def new_initial(seed=None, **variant):
    """The initial position (Lotus deals nothing: `seed` is accepted and ignored)."""
    return LotusState(**variant)


def _tallest_tower(dict v):
    return (4 if v["players"] == 2 else 3) if v["towers"] == "auto" else v["towers"]


def max_game_length(dict v):
    """Every non-pass move takes one stone at least one route position forward (start = 0,
    goal = route + 1), and at most n - 1 passes follow each other; + 1 for the pro
    opening's optional second stone."""
    t = _tallest_tower(v)
    stones = v["players"] * t * (t + 1) // 2
    return stones * (v["lane"] + v["shared"] + 1) * v["players"] + 1


def num_distinct_actions(dict v):
    """PASS + 1: PASS = 4 * (16 + number of spaces) (see the action model above)."""
    return 4 * (16 + 2 * v["lane"] + v["shared"]) + 1


def playouts(LotusState start, long long games, seed=0):
    """Run `games` random playouts from `start` entirely in C; returns (games, actions, wins)."""
    cdef Rng rng = seed if isinstance(seed, Rng) else Rng(seed)
    cdef LotusData d
    cdef long long g, actions = 0
    cdef long long wins[4]
    wins[0] = wins[1] = wins[2] = wins[3] = 0
    for g in range(games):
        memcpy(&d, &start.d, sizeof(LotusData))
        actions += lotus_playout(&d, &rng.s)
        wins[d.winner] += 1
    return games, actions, [wins[p] for p in range(start.d.nplayers)]


def placement(LotusState state):
    """Finishing order below the winner: stones in goal, plus the share of the route
    distance covered as a fraction below 1 (it only breaks ties in stones)."""
    start = LotusState(**state.variant)
    out = []
    for p in range(state.d.nplayers):
        total = start.remaining_distance(p)
        out.append(state.goal_count(p) + (total - state.remaining_distance(p)) / (total + 1))
    return out


SPEC = GameSpec(
    name="lotus",
    reference="niwa.ext.reference.lotus",
    title="Lotus",
    options=OPTIONS,
    traits=Traits(min_players=2, max_players=4, chance=False, simultaneous=False,
                  hidden_information=False, deals=False),
    create=lambda variant, seed: LotusState(**variant),
    parse_notation=from_notation,
    max_game_length=max_game_length,
    num_distinct_actions=num_distinct_actions,
    batch_playouts=playouts,
    # Playouts cut after 10 random plies and scored by c_evaluate (65% of 60 games against
    # playout=heuristic at 10 ms of CPU a move, level at 50 ms), plus exact moves in
    # two-player games (3-4 players ignore them): the opening book for the proven winner
    # (seat 1; shipped for the basic rule), the endgame tables where built, and a df-pn
    # attempt with 30% of each move's time (97.5% of 40 games at 50 ms on the basic
    # rule); every experiment is in bench/best-agents/results/lotus-experiments.csv.
    best_agent="mcts:cutoff=10,book=auto,tables=true,proof=0.3",
    stats=(StatField("goal", "int", True, "stones in the player's goal"),
           StatField("remaining", "int", True, "route positions the player's stones still have to cover")),
    check_variant=_check_variant,
    placement=placement,
    eval_weights=(
        EvalWeight("distance", 1.0, 0.0, 4.0, "per route step a stone still has to cover"),
        EvalWeight("free", 5.0, 0.0, 20.0, "bonus for each stone on top of its stack"),
        EvalWeight("height", 1.0, 0.0, 5.0, "per stone in the stack a free stone tops"),
        EvalWeight("covered", 5.0, 0.0, 20.0, "penalty for each covered stone"),
        EvalWeight("scale", 15.0, 2.0, 60.0, "score lead giving ~73% (logistic scale)"),
    ),
)
fill_default_weights(DEFAULT_W, N_WEIGHTS, SPEC)
