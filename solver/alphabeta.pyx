# cython: language_level=3
"""Alpha-beta search for any game behind the contract (ext/game.pxd), in Cython.

Values. Everything is the root player's expected return, in [0, 1] (the games' returns:
1 win, 0 loss, 0.5 a shared/drawn result). Each node is searched negamax-style from the
perspective of its "side": the root player's side (side 0) or the other side (side 1, the
opponent in a 2-player game, the coalition of all opponents with 3-4 players: *paranoid*
search). A value v for one side is 1 - v for the other. One-player games only have side 0
(plain max search). With 2 players and returns summing to 1 this is exactly negamax.

Node kinds:
- player node: principal-variation search (the first move with the full window, the others
  with a null window and a re-search on fail-high), move ordering TT move > killer moves >
  history heuristic;
- chance node: expectimax with Star1 pruning (Ballard 1983): the window of each outcome is
  narrowed by what the outcomes already searched and the value bounds [0, 1] allow, and the
  node is cut as soon as the weighted sum must fall outside the window; with `star2=True`
  a cheap probing pass (only the first move of each successor) first tries to cut it with
  lower bounds (Star2). Chance nodes do not use up depth.
- simultaneous node: every joint action is searched with the full window and the node's
  value is the value of the zero-sum matrix game (root player against the rest), solved
  exactly by the simplex method below (this is the "open-hands" exact treatment).
- the horizon: the game's `c_evaluate(root player)` (each game documents its evaluation
  next to its c_evaluate).
- episode leaves (`search(..., episode=True)`): a node whose `c_episode()` differs from the
  root's (Haru: the round is over) is a leaf valued by `c_evaluate(root player)` and counted
  as EXACT: the search then answers "the value of the rest of this episode" (each game
  documents what its c_evaluate means there; Haru: the round's outcome, see haru.pyx).

Exactness. A counter is bumped whenever a heuristic value enters the search (an
evaluation at the horizon, or a transposition-table entry that was itself inexact). A
subtree whose search did not move the counter has an exact value: it is stored with depth
127 and reused at any depth. When an iteration of iterative deepening finishes exact, the
root value is proven (a forced win/loss, or the exact expected return) and the search stops.

Transposition table: Zobrist keys from `c_hash()` salted with the root player, one entry
per slot (always replace, except that an exact entry is kept against an inexact one).
"""
from cpython.ref cimport PyObject
from libc.math cimport fabs
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from niwa.ext.game cimport (CHANCE, MAX_ACTIONS, MAX_PLAYERS, SIMULTANEOUS, TERMINAL, State,
                           share_weights)
from niwa.ext.rng cimport splitmix64

from niwa.solver.results import ActionStat, SearchResult

cdef enum:
    FLAG_EXACT = 1
    FLAG_LOWER = 2
    FLAG_UPPER = 3
    DEPTH_EXACT = 127
    SIM_MAX_CELLS = 4096    # largest joint-action matrix solved at a simultaneous node
    NOT_A_VALUE = -2        # "no value here" from a step of the recursion (values are in [0, 1])

cdef double EPS = 1e-9


cdef inline double now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


# ---- zero-sum matrix games (exact, simplex) --------------------------------------------
cdef double matrix_game(double* payoff, int m, int n, double* x, double* y) except? -1.0:
    """Value of the zero-sum game where the row player (m actions) maximises payoff[i*n+j]
    and the column player minimises it; x, y receive optimal mixed strategies. Raises
    MemoryError when its tableau cannot be allocated.

    Shift the payoffs to be positive; then the column player's problem is the LP
    max sum(w) s.t. A w <= 1, w >= 0, whose optimum is 1/value and w = y/value; the row
    player's strategy is its dual, read off the objective row under the slack columns.
    Bland's rule keeps the simplex from cycling on degenerate games.
    """
    cdef int width = n + m + 1, i, j, r, c, it
    cdef double lo = payoff[0], shift, best, ratio, piv, f, total
    cdef double* t
    cdef int* basic
    for i in range(m * n):
        if payoff[i] < lo:
            lo = payoff[i]
    shift = 1.0 - lo
    t = <double*>calloc((m + 1) * width, sizeof(double))
    basic = <int*>malloc(m * sizeof(int))
    if t == NULL or basic == NULL:
        free(t)
        free(basic)
        raise MemoryError()
    for i in range(m):
        for j in range(n):
            t[i * width + j] = payoff[i * n + j] + shift
        t[i * width + n + i] = 1.0
        t[i * width + width - 1] = 1.0
        basic[i] = n + i
    for j in range(n):
        t[m * width + j] = -1.0
    for it in range(10000):
        c = -1
        for j in range(n + m):
            if t[m * width + j] < -1e-12:
                c = j           # Bland: the first improving column
                break
        if c < 0:
            break
        r = -1
        best = 0.0
        for i in range(m):
            if t[i * width + c] > 1e-12:
                ratio = t[i * width + width - 1] / t[i * width + c]
                if r < 0 or ratio < best - 1e-12 or (fabs(ratio - best) <= 1e-12
                                                      and basic[i] < basic[r]):
                    r = i
                    best = ratio
        if r < 0:
            break               # unbounded cannot happen with positive payoffs
        piv = t[r * width + c]
        for j in range(width):
            t[r * width + j] /= piv
        for i in range(m + 1):
            if i != r:
                f = t[i * width + c]
                if f != 0.0:
                    for j in range(width):
                        t[i * width + j] -= f * t[r * width + j]
        basic[r] = c
    total = t[m * width + width - 1]
    for j in range(n):
        y[j] = 0.0
    for i in range(m):
        if basic[i] < n:
            y[basic[i]] = t[i * width + width - 1] / total
    for i in range(m):
        x[i] = t[m * width + n + i] / total
    free(t)
    free(basic)
    return 1.0 / total - shift


def solve_matrix_game(payoff):
    """(value, row strategy, column strategy) of a zero-sum matrix game; the row player
    maximises. Exact up to floating point (simplex).

    >>> v, x, y = solve_matrix_game([[1, 0], [0, 1]])
    >>> round(v, 6), [round(p, 6) for p in x]
    (0.5, [0.5, 0.5])
    """
    rows = [list(map(float, r)) for r in payoff]
    cdef int m = len(rows), n = len(rows[0]) if rows else 0, i, j
    if m == 0 or n == 0 or any(len(r) != n for r in rows):
        raise ValueError("payoff must be a non-empty rectangular matrix")
    cdef double* a = <double*>malloc(m * n * sizeof(double))
    cdef double* x = <double*>malloc(m * sizeof(double))
    cdef double* y = <double*>malloc(n * sizeof(double))
    try:
        if a == NULL or x == NULL or y == NULL:
            raise MemoryError()
        for i in range(m):
            for j in range(n):
                a[i * n + j] = rows[i][j]
        v = matrix_game(a, m, n, x, y)
        return v, [x[i] for i in range(m)], [y[j] for j in range(n)]
    finally:
        free(a)
        free(x)
        free(y)


cdef class AlphaBeta:
    """Iterative-deepening PVS with a transposition table; see the module docstring.

    >>> from niwa.ext.lotus import LotusState
    >>> r = AlphaBeta(2).search(LotusState(), depth=3)
    >>> r.depth, r.best_name is not None
    (3, True)
    """

    def __cinit__(self):
        self.tt = NULL
        self.moves = NULL
        self.scores = NULL
        self.probs = NULL

    def __init__(self, int num_players, int tt_bits=20, bint star2=False):
        if not 1 <= num_players <= MAX_PLAYERS:
            raise ValueError(f"alpha-beta supports 1..{MAX_PLAYERS} players")
        if not 10 <= tt_bits <= 28:
            raise ValueError("tt_bits must be in 10..28")
        self.num_players = num_players
        self.tt_size = 1 << tt_bits
        self.tt_mask = self.tt_size - 1
        self.tt = <TTEntry*>calloc(self.tt_size, sizeof(TTEntry))
        self.moves = <int*>malloc(AB_MAX_PLY * MAX_ACTIONS * sizeof(int))
        self.scores = <float*>malloc(AB_MAX_PLY * MAX_ACTIONS * sizeof(float))
        self.probs = <double*>malloc(AB_MAX_PLY * MAX_ACTIONS * sizeof(double))
        if self.tt == NULL or self.moves == NULL or self.scores == NULL or self.probs == NULL:
            raise MemoryError()
        self.star2 = star2
        self.state_refs = None
        self.tt_used = 0
        self.clear_history()

    def __dealloc__(self):
        free(self.tt)
        free(self.moves)
        free(self.scores)
        free(self.probs)

    def clear_history(self):
        cdef int i
        for i in range(AB_HISTORY):
            self.history[i] = 0.0
        for i in range(AB_MAX_PLY):
            self.killers[i][0] = self.killers[i][1] = -1

    def clear_tt(self):
        cdef long long i
        for i in range(self.tt_size):
            self.tt[i].flag = 0
        self.tt_used = 0

    cdef inline int persp(self, int kind) noexcept:
        return 1 if (kind >= 0 and kind != self.root_player) else 0

    cdef double child_value(self, int ply, int depth, int kind, double alpha, double beta):
        """Search the state at ply+1 and return its value in the perspective of `kind`'s
        side (the node at `ply`), with the window given in that perspective."""
        cdef State child = <State>self.states[ply + 1]
        cdef int ck = child.c_current_player()
        if self.persp(ck) == self.persp(kind):
            return self.ab(ply + 1, depth, alpha, beta)
        return 1.0 - self.ab(ply + 1, depth, 1.0 - beta, 1.0 - alpha)

    # ---- the recursion: one method per step ------------------------------------------------
    cdef double ab(self, int ply, int depth, double alpha, double beta):
        """The value of the state at `ply`, in the perspective of its side, searched `depth`
        plies deep within the window (alpha, beta): leaf, TT probe, the search its kind of
        node needs, TT store."""
        cdef State s = <State>self.states[ply]
        cdef int kind = s.c_current_player(), tt_move = -1, best_move = -1
        cdef double v, best
        cdef uint64_t key
        cdef TTEntry* e
        cdef long long h0
        self.nodes += 1
        self.pv_len[ply] = 0
        if (self.nodes & 1023) == 0 and self.deadline > 0 and now() >= self.deadline:
            self.stop = True
        if self.stop:
            return 0.0
        v = self.leaf_value(s, ply, depth, kind)
        if v != NOT_A_VALUE:
            return v
        key = s.c_hash() ^ self.salt
        e = &self.tt[key & self.tt_mask]
        if e.flag and e.key == key:
            tt_move = e.best
            if ply > 0 and e.depth >= depth:     # (the root is always searched: moves, PV)
                v = self.tt_cutoff(e, alpha, beta)
                if v != NOT_A_VALUE:
                    return v
        h0 = self.horizon
        if kind == CHANCE:
            best = self.chance_node(ply, depth, alpha, beta)
        elif kind == SIMULTANEOUS:
            best = self.simultaneous_node(ply, depth)
        else:
            best = self.player_node(ply, depth, kind, alpha, beta, tt_move, &best_move)
        if self.stop:
            return 0.0
        self.tt_store(e, key, best, best_move, depth, self.horizon == h0, alpha, beta)
        return best

    cdef inline double leaf_value(self, State s, int ply, int depth, int kind) noexcept:
        """The value (for the side of `kind`) of a leaf: the end of the game, the end of the
        episode searched (exact, see the module docstring) or the horizon; NOT_A_VALUE for
        a node to search."""
        cdef double r[MAX_PLAYERS]
        cdef double v
        if kind == TERMINAL:
            s.c_returns(r)
            v = r[self.root_player]
        elif self.episode_mode and s.c_episode() != self.root_episode:
            v = s.c_evaluate(self.root_player)
        elif depth <= 0 or ply >= AB_MAX_PLY - 2:
            self.horizon += 1
            v = s.c_evaluate(self.root_player)
        else:
            return NOT_A_VALUE
        return 1.0 - v if self.persp(kind) else v

    cdef inline double tt_cutoff(self, TTEntry* e, double alpha, double beta) noexcept:
        """The value of a deep enough entry if it settles the node for this window, else
        NOT_A_VALUE; an inexact entry brings a heuristic value in (counted as a horizon)."""
        cdef double v = e.value
        if e.flag == FLAG_EXACT or (e.flag == FLAG_LOWER and v >= beta) or \
                (e.flag == FLAG_UPPER and v <= alpha):
            if e.depth != DEPTH_EXACT:
                self.horizon += 1
            return v
        return NOT_A_VALUE

    cdef inline void tt_store(self, TTEntry* e, uint64_t key, double best, int best_move,
                              int depth, bint exact, double alpha, double beta) noexcept:
        """Store a node searched within (alpha, beta) in its slot `e` (always replace, but an
        exact entry is kept against an inexact one of another position)."""
        if e.flag and e.depth == DEPTH_EXACT and not exact and e.key != key:
            return
        if not e.flag:
            self.tt_used += 1
        e.key = key
        e.value = <float>best
        e.depth = DEPTH_EXACT if exact else depth
        e.best = best_move
        if best <= alpha:
            e.flag = FLAG_UPPER
        elif best >= beta:
            e.flag = FLAG_LOWER
        else:
            e.flag = FLAG_EXACT

    cdef inline int order_moves(self, State s, int ply, int tt_move) noexcept:
        """Generate the moves at `ply` and score them for ordering: TT move > killer moves >
        history heuristic. Returns their number."""
        cdef int* mv = self.moves + ply * MAX_ACTIONS
        cdef float* score = self.scores + ply * MAX_ACTIONS
        cdef int n = s.c_legal_actions(mv), i, a
        for i in range(n):
            a = mv[i]
            if a == tt_move:
                score[i] = 3e9
            elif a == self.killers[ply][0]:
                score[i] = 2e9
            elif a == self.killers[ply][1]:
                score[i] = 1e9
            else:
                score[i] = self.history[a & (AB_HISTORY - 1)]
        return n

    cdef inline int next_move(self, int ply, int i, int n) noexcept:
        """The i-th move to try at `ply`: a selection sort step brings the best scored of
        the moves not tried yet to slot i (a cut-off usually spares sorting the rest)."""
        cdef int* mv = self.moves + ply * MAX_ACTIONS
        cdef float* score = self.scores + ply * MAX_ACTIONS
        cdef int j, k = i, a
        cdef float sc
        for j in range(i + 1, n):
            if score[j] > score[k]:
                k = j
        if k != i:
            a = mv[i]
            mv[i] = mv[k]
            mv[k] = a
            sc = score[i]
            score[i] = score[k]
            score[k] = sc
        return mv[i]

    cdef inline double child_leaf_value(self, State child, int ply, int depth, int side) noexcept:
        """The value (for `side`) of the child just made at ply+1 when it is a leaf cheaper
        to evaluate in place than to search (no call, no window games): the end of the
        episode searched (exact), the horizon, the end of the game; else NOT_A_VALUE. Not
        at the root when every root action is wanted with the full window."""
        cdef int ck = child.c_current_player()
        cdef double r[MAX_PLAYERS]
        cdef double v
        if ply == 0 and self.root_all:
            return NOT_A_VALUE
        if self.episode_mode and ck != TERMINAL and child.c_episode() != self.root_episode:
            v = child.c_evaluate(self.root_player)
        elif depth == 1 and ck >= 0:
            self.horizon += 1
            v = child.c_evaluate(self.root_player)
        elif ck == TERMINAL:
            child.c_returns(r)
            v = r[self.root_player]
        else:
            return NOT_A_VALUE
        self.nodes += 1
        self.pv_len[ply + 1] = 0
        return 1.0 - v if side else v

    cdef double player_node(self, int ply, int depth, int kind, double alpha, double beta,
                            int tt_move, int* best_move):
        """Principal-variation search of the player node at `ply`: the first move with the
        full window, the others with a null window and a re-search on fail-high. Returns
        the best value; its move goes to best_move[0]."""
        cdef State s = <State>self.states[ply]
        cdef State child = <State>self.states[ply + 1]
        cdef int side = self.persp(kind), n = self.order_moves(s, ply, tt_move), i, a
        cdef double v, best = -1.0
        for i in range(n):
            a = self.next_move(ply, i, n)
            child.c_copy_from(s)
            child.c_apply(a)
            v = self.child_leaf_value(child, ply, depth, side)
            if v != NOT_A_VALUE:
                pass
            elif ply == 0 and self.root_all:
                v = self.child_value(ply, depth - 1, kind, -EPS, 1.0 + EPS)
                if not self.stop:
                    self.root_values.append((a, v))
            elif i == 0:
                v = self.child_value(ply, depth - 1, kind, alpha, beta)
            else:
                v = self.child_value(ply, depth - 1, kind, alpha, alpha + EPS)
                if alpha < v < beta and not self.stop:
                    v = self.child_value(ply, depth - 1, kind, alpha, beta)
            if self.stop:
                return 0.0
            if v > best:
                best = v
                best_move[0] = a
                if v > alpha or (ply == 0 and i == 0):
                    self.update_pv(ply, a)
                if v > alpha:
                    alpha = v
            if alpha >= beta and not (ply == 0 and self.root_all):
                self.record_cutoff(ply, depth, a)
                break
        return best

    cdef inline void update_pv(self, int ply, int a) noexcept:
        """The line at `ply` becomes `a` followed by the line found below it."""
        cdef int j
        self.pv[ply][0] = a
        for j in range(self.pv_len[ply + 1]):
            self.pv[ply][j + 1] = self.pv[ply + 1][j]
        self.pv_len[ply] = self.pv_len[ply + 1] + 1

    cdef inline void record_cutoff(self, int ply, int depth, int a) noexcept:
        """A move that cut off: a killer at this ply, and history credit (more when deeper)."""
        if a != self.killers[ply][0]:
            self.killers[ply][1] = self.killers[ply][0]
            self.killers[ply][0] = a
        self.history[a & (AB_HISTORY - 1)] += depth * depth

    cdef double probe(self, int ply, int depth, double alpha, double beta):
        """Star2 probe of the state at `ply`: a lower bound (in its own perspective) from its
        first move only (TT move if known); terminal states give their exact value."""
        cdef State s = <State>self.states[ply]
        cdef int kind = s.c_current_player(), n, a
        cdef int* mv = self.moves + ply * MAX_ACTIONS
        cdef uint64_t key
        cdef TTEntry* e
        if kind < 0:
            return self.ab(ply, depth, alpha, beta) if kind == TERMINAL else -1.0
        key = s.c_hash() ^ self.salt
        e = &self.tt[key & self.tt_mask]
        n = s.c_legal_actions(mv)
        a = mv[0]
        if e.flag and e.key == key and e.best >= 0:
            a = e.best
        child = <State>self.states[ply + 1]
        child.c_copy_from(s)
        child.c_apply(a)
        return self.child_value(ply, depth - 1, kind, alpha, beta)

    cdef double chance_node(self, int ply, int depth, double alpha, double beta):
        """Expectimax with Star1 (and optionally Star2 probing); values in side 0 terms."""
        cdef State s = <State>self.states[ply]
        cdef State child = <State>self.states[ply + 1]
        cdef int* acts = self.moves + ply * MAX_ACTIONS
        cdef double* pr = self.probs + ply * MAX_ACTIONS
        cdef int n = s.c_chance_outcomes(acts, pr), i, most = 0, ck
        cdef double done = 0.0, p_done = 0.0, rest, lo, hi, v, bound
        for i in range(n):
            if pr[i] > pr[most]:
                most = i
        if self.star2 and n > 1:
            # Probing: a lower bound for every outcome from one move each; if even these
            # bounds put the average at or above beta, cut without full searches.
            bound = 0.0
            for i in range(n):
                child.c_copy_from(s)
                child.c_apply(acts[i])
                ck = child.c_current_player()
                if self.persp(ck) != 0:
                    bound = -1.0        # probing gives lower bounds only for side-0 nodes
                    break
                v = self.probe(ply + 1, depth, -EPS, 1.0 + EPS)
                if self.stop:
                    return 0.0
                if v < 0:
                    bound = -1.0
                    break
                bound += pr[i] * v
            if bound >= beta:
                return bound
        for i in range(n):
            rest = 1.0 - p_done - pr[i]
            if rest < 0:
                rest = 0.0
            lo = (alpha - done - rest * 1.0) / pr[i]
            hi = (beta - done - rest * 0.0) / pr[i]
            if lo >= 1.0:       # even the best outcome cannot lift the average above alpha
                return done + pr[i] + rest
            if hi <= 0.0:       # even the worst outcome keeps it at or above beta
                return done
            child.c_copy_from(s)
            child.c_apply(acts[i])
            v = self.child_value(ply, depth, CHANCE, lo if lo > -EPS else -EPS,
                                 hi if hi < 1.0 + EPS else 1.0 + EPS)
            if self.stop:
                return 0.0
            if i == most:
                self.update_pv(ply, acts[i])
            done += pr[i] * v
            p_done += pr[i]
            if v >= hi:         # fail high: a lower bound (the rest taken at 0)
                return done
            if v <= lo:         # fail low: an upper bound (the rest taken at 1)
                return done + rest
        return done

    cdef double simultaneous_node(self, int ply, int depth):
        """Exact matrix-game value: the root player's actions against the joint actions of
        the others (paranoid for 3-4 players), each cell searched with the full window."""
        cdef State s = <State>self.states[ply]
        cdef State child = <State>self.states[ply + 1]
        cdef int per[MAX_PLAYERS][64]
        cdef int cnt[MAX_PLAYERS]
        cdef int joint[MAX_PLAYERS]
        cdef int idx[MAX_PLAYERS]
        cdef int buf[MAX_ACTIONS]
        cdef int p, i, j, rows, cols = 1, q, rem
        cdef double v
        for p in range(self.num_players):
            cnt[p] = s.c_player_actions(p, buf)
            if cnt[p] > 64:
                cnt[p] = 64     # (no game here offers more than 64 simultaneous options)
            for i in range(cnt[p]):
                per[p][i] = buf[i]
            if p != self.root_player and cnt[p] > 0:
                cols *= cnt[p]
        rows = cnt[self.root_player] if cnt[self.root_player] > 0 else 1
        if rows * cols > SIM_MAX_CELLS:
            self.horizon += 1
            v = s.c_evaluate(self.root_player)
            return v
        cdef double* m = <double*>malloc(rows * cols * sizeof(double))
        cdef double* x = <double*>malloc(rows * sizeof(double))
        cdef double* y = <double*>malloc(cols * sizeof(double))
        try:
            if m == NULL or x == NULL or y == NULL:
                raise MemoryError()
            for i in range(rows):
                for j in range(cols):
                    rem = j
                    for p in range(self.num_players):
                        if cnt[p] == 0:
                            joint[p] = -1
                        elif p == self.root_player:
                            joint[p] = per[p][i]
                        else:
                            joint[p] = per[p][rem % cnt[p]]
                            rem //= cnt[p]
                    child.c_copy_from(s)
                    child.c_apply_joint(joint)
                    m[i * cols + j] = self.child_value(ply, depth - 1, SIMULTANEOUS, -EPS,
                                                       1.0 + EPS)
                    if self.stop:
                        return 0.0
            v = matrix_game(m, rows, cols, x, y)
            if ply == 0:
                self.root_strategy = {
                    "rows": [per[self.root_player][i] for i in range(rows)]
                    if cnt[self.root_player] else [],
                    "row_strategy": [x[i] for i in range(rows)],
                    "col_strategy": [y[j] for j in range(cols)],
                    "matrix": [[m[i * cols + j] for j in range(cols)] for i in range(rows)],
                }
            return v
        finally:    # (also when a search below runs out of memory)
            free(m)
            free(x)
            free(y)

    # ---- driver -----------------------------------------------------------------------
    def search(self, State state, int depth=64, double time_limit=0.0, player=None,
               bint root_values=False, int start_depth=1, bint episode=False):
        """Iterative deepening from depth 1 to `depth` (stops early once the value is
        proven, or when `time_limit` seconds have passed; the last finished iteration is
        reported). `player` is the root player (default: the mover, seat 0 at chance or
        simultaneous roots). With `root_values` every root action gets its exact-window
        value (slower: for `niwa solve`). With `episode` the search stops where the game's
        `c_episode()` changes (Haru: the end of the round) and "proven" means the value of
        the rest of this episode is exact (the result's `episode` names it). Returns a
        SearchResult (solver/results.py)."""
        if state.c_is_terminal():
            raise ValueError("cannot search a terminal position")
        if state.num_players != self.num_players:
            raise ValueError(f"this searcher was made for {self.num_players} players, "
                             f"the position has {state.num_players}")
        cdef int kind = state.c_current_player(), d
        cdef double t0 = now(), v
        cdef long long h0
        self._prepare(state, player, episode, t0 + time_limit if time_limit > 0 else 0.0)
        result = None
        max_depth = min(depth, AB_MAX_PLY - 2)
        for d in range(max(1, min(start_depth, max_depth)), max_depth + 1):
            h0 = self.horizon
            self.root_values = []
            last = d == max_depth
            (<State>self.state_refs[0]).c_copy_from(state)
            v = self.ab(0, d, -EPS, 1.0 + EPS)
            if self.stop:
                break
            proven = self.horizon == h0
            result = {"value": v if self.persp(kind) == 0 else 1.0 - v, "proven": proven,
                      "depth": d, "pv": [self.pv[0][i] for i in range(self.pv_len[0])],
                      "strategy": self.root_strategy,
                      "episode": self.root_episode if episode else None}
            if proven or last:
                break
        if root_values and result is not None and kind >= 0:
            self._search_root_values(state, result, max_depth)
        elapsed = now() - t0
        if result is None:
            result = {"value": None, "proven": False, "depth": 0, "pv": [], "strategy": None,
                      "episode": self.root_episode if episode else None}
        return self._report(state, result, elapsed)

    def _prepare(self, State state, player, bint episode, double deadline):
        """Set up a search from `state`: root player, TT salt, the state stack, counters."""
        cdef int kind = state.c_current_player(), i
        self.root_player = player if player is not None else (kind if kind >= 0 else 0)
        self.episode_mode = episode
        self.root_episode = state.c_episode()
        # (episode searches value leaves differently: keep their TT entries apart)
        cdef uint64_t x = 0x5EED + <uint64_t>self.root_player + \
            ((<uint64_t>(self.root_episode + 1) << 8) if episode else 0)
        self.salt = splitmix64(&x)
        if not self.state_refs or type(self.state_refs[0]) is not type(state) or \
                (<State>self.state_refs[0]).num_players != state.num_players or \
                self.state_refs[0].variant != state.variant:
            self.state_refs = [state.c_clone() for _ in range(AB_MAX_PLY)]
            for i in range(AB_MAX_PLY):
                self.states[i] = <PyObject*>self.state_refs[i]
        for i in range(AB_MAX_PLY):     # evaluate with the root's weights (copy_from keeps them)
            share_weights(<State>self.state_refs[i], state)
        self.nodes = 0
        self.horizon = 0
        self.stop = False
        self.deadline = deadline
        self.root_all = False
        self.root_strategy = None

    def _search_root_values(self, State state, dict result, int max_depth):
        """Every root action with the full window, into result["root_values"] (best first).
        Actions the main search cut off may need more depth to be exact: deepen until this
        pass is exact too, when the root value was proven (and as long as time allows)."""
        cdef int kind = state.c_current_player(), d = result["depth"]
        cdef long long h0
        self.root_all = True
        while True:
            self.root_values = []
            h0 = self.horizon
            (<State>self.state_refs[0]).c_copy_from(state)
            self.ab(0, d, -EPS, 1.0 + EPS)
            if self.stop or self.horizon == h0 or not result["proven"] or d >= max_depth:
                break
            d = min(max_depth, d + 2)
        self.root_all = False
        if not self.stop:
            result["root_values"] = sorted(
                ((a, val if self.persp(kind) == 0 else 1.0 - val)
                 for a, val in self.root_values), key=lambda t: -t[1])

    cdef int tt_best(self, State s):
        cdef uint64_t key = s.c_hash() ^ self.salt
        cdef TTEntry* e = &self.tt[key & self.tt_mask]
        return e.best if (e.flag and e.key == key) else -1

    def _line_move(self, State cur, int max_depth, double seconds):
        """The best move at `cur` by a fresh search (same root player and table salt as the
        search being reported, so its entries help), deepened until exact; -1 if none is
        found within `seconds`. Continues a proven line where the table lost it."""
        cdef int d, move = -1
        cdef long long h0
        saved = (self.nodes, self.stop, self.deadline)
        self.stop = False
        self.deadline = now() + seconds
        for d in range(1, max(1, min(max_depth, AB_MAX_PLY - 2)) + 1):
            h0 = self.horizon
            (<State>self.state_refs[0]).c_copy_from(cur)
            self.ab(0, d, -EPS, 1.0 + EPS)
            if self.stop:
                break
            if self.horizon == h0:      # exact: this move keeps the proven value
                move = self.pv[0][0] if self.pv_len[0] > 0 else -1
                break
        self.nodes, self.stop, self.deadline = saved
        return move

    def _report(self, State state, dict result, double elapsed):
        kind = state.c_current_player()
        pv_names = []
        extended = 0
        cur = state.c_clone()
        for a in result["pv"]:
            if cur.c_is_terminal() or cur.c_current_player() == SIMULTANEOUS:
                break
            pv_names.append(cur.action_to_string(a))
            (<State>cur).c_apply(a)
        # extend the line with the transposition table's best moves (cut-offs end the
        # triangular PV early), so that a proven win shows its whole winning line
        nodes = self.nodes
        while not cur.c_is_terminal() and cur.c_current_player() >= 0 and len(pv_names) < 200 \
                and len(pv_names) == len(result["pv"]) + extended:
            a = self.tt_best(cur)
            if (a < 0 or a not in cur.legal_actions()) and result["proven"] \
                    and result["episode"] is None:
                # the table lost this part of a proven line: search it again, so that a
                # proven result shows its line to the end of the game
                a = self._line_move(cur, result["depth"] - len(pv_names) + 2,
                                    max(1.0, 2 * elapsed))
            if a < 0 or a not in cur.legal_actions():
                break
            pv_names.append(cur.action_to_string(a))
            (<State>cur).c_apply(a)
            extended += 1
        best = result["pv"][0] if result["pv"] and kind >= 0 else None
        strategy = result["strategy"]
        best_name = state.action_to_string(best) if best is not None else None
        if kind == SIMULTANEOUS and strategy and strategy["rows"]:
            # the root player's most likely action in its optimal mixed strategy
            best = max(zip(strategy["row_strategy"], strategy["rows"], strict=True))[1]
            best_name = state.action_to_string(best, self.root_player)
        actions = [ActionStat(a, state.action_to_string(a), val)
                   for a, val in result.get("root_values", [])]
        return SearchResult(
            algo="alphabeta", value=result["value"], player=self.root_player,
            proven=result["proven"], best=best, best_name=best_name, actions=actions,
            pv=pv_names, depth=result["depth"], nodes=nodes, time_s=elapsed,
            nps=nodes / elapsed if elapsed > 0 else 0.0,
            tt_fill=(<double>self.tt_used) / self.tt_size, strategy=result["strategy"],
            episode=result["episode"])
