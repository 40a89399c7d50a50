# cython: language_level=3
"""Monte Carlo tree search for any game behind the contract (ext/game.pxd).

Every iteration copies the root state into one scratch state, walks down the tree calling
the game's `c_*` methods through the vtable, expands one node, runs a playout in C and
backs the reward vector up. No Python object is touched per node or per iteration.

Tree. Nodes live in one C array (the pool) and point at each other by index: parent,
first child, next sibling. A node stores the sum of the reward vectors backed up through
it, so every player reads its own mean (max^n backups for 2-4 players). The pool grows by
doubling up to `max_nodes`; when it is full the search keeps iterating without expanding
(memory stays bounded). Should the machine run out of memory first, the search raises
MemoryError and forgets its tree.

Node kinds, following current_player():
- player node: UCT over its children, value read for the player who moves there;
- chance node: the outcome is sampled with the game's probabilities, one child per
  outcome seen;
- simultaneous node: decoupled selection. Each player keeps its own statistics per
  action ("arms") and picks by UCB (default), regret matching or Exp3; the joint action
  leads to a child keyed by all players' actions. The root's mixed strategy is reported.
- terminal: the game's returns.

MCTS-Solver (perfect information, `solver=True`): a terminal node is proven; a player node
is proven as soon as one child gives its mover the maximum return 1, or when all children
are proven (its mover takes the best); a chance node when all its outcomes are proven.
Proven nodes back up their exact value; the search stops when the root is proven.

Endgame tables (`tables=`, two players, not ISMCTS): a new leaf the tables know
(niwa.ext.exact.ExactValues) gets its exact value instead of a playout and, with the
solver, is proven like a terminal node.

The game's evaluation (`State.c_evaluate`) can guide the search three ways, each off by
default:
- implicit minimax backups (Lanctot, Winands, Pepels & Sturtevant 2014, `minimax=alpha`):
  every new leaf stores the evaluation of its position for every player, and each node
  keeps the max^n value of its children's stored evaluations (the mover's best child; a
  chance node the probability-weighted mean of its outcomes seen). Selection then ranks a
  child by (1 - alpha) * playout mean + alpha * that minimax value;
- progressive bias (Chaslot et al. 2008, `bias=w`): + w * (the child's minimax value) /
  (visits + 1), a pull that fades as the child is visited;
- `playout=greedy`: epsilon-greedy playouts on the evaluation (with probability `eps` a
  uniformly random action, else the action whose result evaluates best for the mover,
  every legal action tried); with `cutoff=k` every playout stops after k plies and the
  evaluation scores the position reached (random or greedy steps; the game's own
  `heuristic` playout always plays to the end).

Single-observer ISMCTS (`ismcts=True`): each iteration starts from
`resample_hidden(observer)` of the root, so the searcher never reads what the observer
cannot see. Nodes then stand for information sets: the legal actions are regenerated per
visit, children are added as they first appear, and UCB uses availability counts. Chance
events are not branched on (they are sampled into the determinization).
"""
from libc.math cimport exp, log, sqrt
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memset
from posix.time cimport CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, clock_gettime, timespec

from niwa.ext.exact cimport ExactValues
from niwa.ext.game cimport CHANCE, MAX_ACTIONS, MAX_PLAYERS, SIMULTANEOUS, TERMINAL, Rng, State
from niwa.ext.rng cimport RngState, rng_below, rng_seed, rng_uniform

from niwa.solver.agent_params import MCTS_DEFAULTS as _D
from niwa.solver.results import ActionStat, SearchResult

PLAYOUTS = ("random", "heuristic", "greedy")
SIM_POLICIES = ("ucb", "rm", "exp3")

cdef enum:
    PLAYOUT_RANDOM = 0
    PLAYOUT_HEURISTIC = 1
    PLAYOUT_GREEDY = 2
    SIM_UCB = 0
    SIM_RM = 1
    SIM_EXP3 = 2


cdef inline double now(bint cpu=False) noexcept nogil:
    """Wall-clock seconds, or with `cpu` the CPU seconds this thread has used (a time
    budget that means the same on a loaded machine)."""
    cdef timespec ts
    clock_gettime(CLOCK_THREAD_CPUTIME_ID if cpu else CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef inline int64_t joint_key(int* actions, int n) noexcept:
    # 16 bits per player (action ids < 65535): unique for up to 4 players.
    cdef int64_t key = 0
    cdef int p
    for p in range(n):
        key |= (<int64_t>(actions[p] + 1) & 0xFFFF) << (16 * p)
    return key


cdef inline int joint_action(int64_t key, int p) noexcept:
    return <int>((key >> (16 * p)) & 0xFFFF) - 1


cdef class MCTS:
    """A reusable search tree. One instance per agent; `search(state, ...)` per move.

    >>> from niwa.ext.lotus import LotusState
    >>> r = MCTS(2, seed=1).search(LotusState(), iterations=500)
    >>> r.iterations
    500
    """

    def __cinit__(self):
        self.nodes = NULL
        self.arms = NULL

    # the defaults are the `mcts` agent's, declared once in niwa.solver.agent_params
    def __init__(self, int num_players, double c=_D["c"], playout=_D["playout"],
                 int cutoff=_D["cutoff"], bint solver=_D["solver"], bint ismcts=False,
                 sim=_D["sim"], double gamma=_D["gamma"], int max_nodes=_D["nodes"], seed=0,
                 bint reuse=_D["reuse"], ExactValues tables=None, double minimax=_D["minimax"],
                 double bias=_D["bias"], double eps=_D["eps"]):
        if not 1 <= num_players <= MAX_PLAYERS:
            raise ValueError(f"MCTS supports 1..{MAX_PLAYERS} players")
        if playout not in PLAYOUTS:
            raise ValueError(f"playout must be one of {', '.join(PLAYOUTS)}, got {playout!r}")
        if sim not in SIM_POLICIES:
            raise ValueError(f"sim must be one of {', '.join(SIM_POLICIES)}, got {sim!r}")
        if max_nodes < 2:
            raise ValueError("max_nodes must be at least 2")
        if not 0 < gamma <= 1:
            raise ValueError("gamma must be in (0, 1]")
        if not 0 <= minimax <= 1:
            raise ValueError("minimax must be in [0, 1]")
        if not 0 <= eps <= 1:
            raise ValueError("eps must be in [0, 1]")
        if bias < 0:
            raise ValueError("bias must be at least 0")
        self.minimax = minimax
        self.bias = bias
        self.eps = eps
        self.use_heur = minimax > 0 or bias > 0
        self.num_players = num_players
        self.c = c
        self.playout = PLAYOUTS.index(playout)
        self.cutoff = cutoff
        self.solver = solver and not ismcts
        self.ismcts = ismcts
        self.sim_policy = SIM_POLICIES.index(sim)
        self.gamma = gamma
        self.max_nodes = max_nodes
        self.reuse = reuse and not ismcts
        self.cap_nodes = min(max_nodes, 4096)
        self.nodes = <Node*>malloc(self.cap_nodes * sizeof(Node))
        self.cap_arms = 256
        self.arms = <Arm*>malloc(self.cap_arms * sizeof(Arm))
        if self.nodes == NULL or self.arms == NULL:
            raise MemoryError()
        seed = 0 if seed is None else seed
        rng_seed(&self.rng, <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF))
        self.root_state = None
        self.exact = tables
        self.exact_on = False
        self.table_hits = 0
        self.clear()

    def __dealloc__(self):
        free(self.nodes)
        free(self.arms)

    def clear(self):
        """Forget the tree (a new game)."""
        self.num_nodes = 0
        self.num_arms = 0
        self.root = -1
        self.root_state = None
        self.iteration = 0

    # ---- pool ---------------------------------------------------------------------
    cdef int new_node(self, int parent, int64_t action, int kind) except -2:
        """Append a child of `parent` (or a root when parent < 0); -1 when the pool is full
        (max_nodes), MemoryError when it cannot grow."""
        cdef int idx, cap
        cdef Node* nd
        if self.num_nodes >= self.cap_nodes:
            if self.cap_nodes >= self.max_nodes:
                return -1
            cap = min(self.max_nodes, 2 * self.cap_nodes)
            nd = <Node*>realloc(self.nodes, cap * sizeof(Node))
            if nd == NULL:
                raise MemoryError()
            self.nodes = nd
            self.cap_nodes = cap
        idx = self.num_nodes
        self.num_nodes += 1
        nd = &self.nodes[idx]
        memset(nd, 0, sizeof(Node))
        nd.parent = parent
        nd.first_child = -1
        nd.arms = -1
        nd.kind = kind
        nd.action = action
        if parent >= 0:
            nd.next_sibling = self.nodes[parent].first_child
            self.nodes[parent].first_child = idx
        else:
            nd.next_sibling = -1
        return idx

    cdef int new_arm(self, int node, int player, int action) except -1:
        cdef int idx, cap
        cdef Arm* a
        if self.num_arms >= self.cap_arms:
            cap = 2 * self.cap_arms
            a = <Arm*>realloc(self.arms, cap * sizeof(Arm))
            if a == NULL:
                raise MemoryError()
            self.arms = a
            self.cap_arms = cap
        idx = self.num_arms
        self.num_arms += 1
        a = &self.arms[idx]
        memset(a, 0, sizeof(Arm))
        a.player = player
        a.action = action
        a.next = self.nodes[node].arms
        self.nodes[node].arms = idx
        return idx

    # ---- one iteration --------------------------------------------------------------
    cdef double child_mean(self, int child, int player) noexcept:
        cdef Node* ch = &self.nodes[child]
        if ch.proven:
            return ch.exact[player]
        return ch.value[player] / ch.visits

    cdef double child_score(self, int child, int mover) noexcept:
        """The exploitation term of a visited child for `mover`: its mean, mixed with its
        minimax value (implicit minimax backups) and progressive bias when those are on."""
        cdef Node* ch = &self.nodes[child]
        cdef double q = self.child_mean(child, mover), h
        if not self.use_heur or ch.proven:
            return q
        h = ch.heur[mover]
        return (1.0 - self.minimax) * q + self.minimax * h + self.bias * h / (ch.visits + 1.0)

    cdef int select_player(self, int node, State s) except -2:
        """The child to follow from a player node (creating children as needed); -1 if the
        pool is full before this node could be expanded."""
        cdef int mover = self.nodes[node].kind
        cdef int n, i, j, t, child, best = -1, unvisited = 0
        cdef double score, best_score = -1e300, logn
        cdef Node* ch
        if self.ismcts:
            # Children are the union of the actions seen; only those legal in this
            # determinization compete, and each counts how often it was available.
            n = s.c_legal_actions(self.acts)
            for i in range(n):
                child = self.nodes[node].first_child
                while child >= 0 and self.nodes[child].action != self.acts[i]:
                    child = self.nodes[child].next_sibling
                if child < 0:
                    child = self.new_node(node, self.acts[i], TERMINAL)
                    if child < 0:
                        return -1
                ch = &self.nodes[child]
                ch.avail += 1
                ch.stamp = self.iteration
                if ch.visits == 0:
                    unvisited += 1
                    if rng_below(&self.rng, unvisited) == 0:
                        best = child      # a uniformly random untried action
            if best >= 0:
                return best
            child = self.nodes[node].first_child
            while child >= 0:
                ch = &self.nodes[child]
                if ch.stamp == self.iteration:
                    score = self.child_score(child, mover) + \
                        self.c * sqrt(log(<double>ch.avail) / ch.visits)
                    if score > best_score:
                        best_score = score
                        best = child
                child = ch.next_sibling
            return best
        if not self.nodes[node].expanded:
            n = s.c_legal_actions(self.acts)
            if self.num_nodes + n > self.max_nodes:
                return -1
            # Shuffle so that untried actions are tried in random order.
            for i in range(n - 1, 0, -1):
                j = rng_below(&self.rng, i + 1)
                t = self.acts[i]
                self.acts[i] = self.acts[j]
                self.acts[j] = t
            for i in range(n):
                self.new_node(node, self.acts[i], TERMINAL)
            self.nodes[node].expanded = 1
        logn = log(self.nodes[node].visits + 1.0)
        child = self.nodes[node].first_child
        while child >= 0:
            ch = &self.nodes[child]
            if ch.visits == 0:
                return child
            score = self.child_score(child, mover) + self.c * sqrt(logn / ch.visits)
            if score > best_score:
                best_score = score
                best = child
            child = ch.next_sibling
        return best

    cdef int select_chance(self, int node, State s) except -2:
        cdef int a, child, n, i
        if self.ismcts:
            child = self.nodes[node].first_child     # one pass-through child
            if child < 0:
                child = self.new_node(node, -1, TERMINAL)
            return child
        a = s.c_sample_chance(&self.rng)
        child = self.nodes[node].first_child
        while child >= 0 and self.nodes[child].action != a:
            child = self.nodes[child].next_sibling
        if child >= 0:
            return child
        n = s.c_chance_outcomes(self.acts, self.probs)
        self.nodes[node].expanded = n
        child = self.new_node(node, a, TERMINAL)
        if child >= 0:
            for i in range(n):
                if self.acts[i] == a:
                    self.nodes[child].prob = self.probs[i]
        return child

    cdef int select_simultaneous(self, int node, int depth, State s) except -2:
        """Decoupled selection: every player with a choice picks one of its arms by its
        own policy; the child keyed by the joint action (created if new)."""
        cdef int joint[MAX_PLAYERS]
        cdef int p, n, best
        cdef double logn = log(self.nodes[node].visits + 1.0)
        for p in range(self.num_players):
            n = s.c_player_actions(p, self.acts)
            self.path_arms[depth][p] = -1
            joint[p] = -1
            if n == 0:
                continue
            self.stamp_arms(node, p, n)
            if self.sim_policy == SIM_UCB:
                best = self.ucb_arm(node, p, logn)
            else:
                best = self.sampled_arm(node, p)
            self.path_arms[depth][p] = best
            joint[p] = self.arms[best].action
        cdef int64_t key = joint_key(joint, self.num_players)
        cdef int child = self.nodes[node].first_child
        while child >= 0 and self.nodes[child].action != key:
            child = self.nodes[child].next_sibling
        if child < 0:
            child = self.new_node(node, key, TERMINAL)
        return child

    cdef int stamp_arms(self, int node, int p, int n) except -1:
        """Find or add player p's arms for its n actions in self.acts, and stamp them as
        legal in this iteration."""
        cdef int i, arm
        for i in range(n):
            arm = self.nodes[node].arms
            while arm >= 0 and not (self.arms[arm].player == p and
                                    self.arms[arm].action == self.acts[i]):
                arm = self.arms[arm].next
            if arm < 0:
                arm = self.new_arm(node, p, self.acts[i])
            self.arms[arm].stamp = self.iteration
        return 0

    cdef int ucb_arm(self, int node, int p, double logn) noexcept:
        """Player p's arm by UCB1 over its stamped arms; an untried arm first (uniformly
        among the untried)."""
        cdef int arm = self.nodes[node].arms, best = -1, k = 0
        cdef double score, best_score = -1e300
        cdef Arm* a
        while arm >= 0:
            a = &self.arms[arm]
            if a.player == p and a.stamp == self.iteration:
                if a.visits == 0:
                    k += 1
                    if rng_below(&self.rng, k) == 0:
                        best = arm
                        best_score = 1e300
                elif k == 0:
                    score = a.reward / a.visits + self.c * sqrt(logn / a.visits)
                    if score > best_score:
                        best_score = score
                        best = arm
            arm = a.next
        return best

    cdef int sampled_arm(self, int node, int p) noexcept:
        """Player p's arm drawn from its mixed strategy (regret matching or Exp3, mixed with
        gamma exploration); the strategy is added to its average."""
        cdef int arm, best = -1, k = 0
        cdef double total = 0.0, mx = -1e300, u
        cdef Arm* a
        arm = self.nodes[node].arms
        while arm >= 0:
            a = &self.arms[arm]
            if a.player == p and a.stamp == self.iteration:
                k += 1
                if self.sim_policy == SIM_RM:
                    total += a.regret if a.regret > 0 else 0.0
                elif a.regret > mx:
                    mx = a.regret
            arm = a.next
        if self.sim_policy == SIM_EXP3:
            arm = self.nodes[node].arms
            while arm >= 0:
                a = &self.arms[arm]
                if a.player == p and a.stamp == self.iteration:
                    a.sigma = exp((self.gamma / k) * (a.regret - mx))
                    total += a.sigma
                arm = a.next
        u = rng_uniform(&self.rng)
        arm = self.nodes[node].arms
        while arm >= 0:
            a = &self.arms[arm]
            if a.player == p and a.stamp == self.iteration:
                if self.sim_policy == SIM_RM:
                    a.sigma = (a.regret if a.regret > 0 else 0.0) / total \
                        if total > 0 else 1.0 / k
                else:
                    a.sigma = a.sigma / total
                a.sigma = (1.0 - self.gamma) * a.sigma + self.gamma / k
                a.strategy += a.sigma
                u -= a.sigma
                if best < 0 and u < 0:
                    best = arm
                if best < 0:
                    best = -2 - arm     # remember the last arm (rounding)
            arm = a.next
        return -2 - best if best < -1 else best

    cdef void greedy_step(self, State s, int p) noexcept:
        """One epsilon-greedy playout move for the mover `p`: a random action with
        probability eps, else the one whose result evaluates best for p (ties: first)."""
        cdef int acts[MAX_ACTIONS]
        cdef int n = s.c_legal_actions(acts), k, a, i
        cdef double v, best = -1.0
        if n == 1 or rng_uniform(&self.rng) < self.eps:
            s.c_apply(acts[rng_below(&self.rng, n)])
            return
        k = rng_below(&self.rng, n)     # start at a random action: ties broken at random
        a = acts[k]
        for i in range(n):
            self.trial.c_copy_from(s)
            self.trial.c_apply(acts[k])
            v = self.trial.c_evaluate(p)
            if v > best:
                best = v
                a = acts[k]
            k += 1
            if k == n:
                k = 0
        s.c_apply(a)

    cdef void leaf_rewards(self, State s, double* r) noexcept:
        cdef int p, n, ply, q
        cdef int joint[MAX_PLAYERS]
        if not s.c_is_terminal():
            if self.cutoff >= 0 or self.playout == PLAYOUT_GREEDY:
                ply = 0
                while (self.cutoff < 0 or ply < self.cutoff) and not s.c_is_terminal():
                    p = s.c_current_player()
                    if p == CHANCE:
                        s.c_apply(s.c_sample_chance(&self.rng))
                    elif p == SIMULTANEOUS:
                        for q in range(self.num_players):
                            n = s.c_player_actions(q, self.acts)
                            joint[q] = self.acts[rng_below(&self.rng, n)] if n > 0 else -1
                        s.c_apply_joint(joint)
                    elif self.playout == PLAYOUT_GREEDY:
                        self.greedy_step(s, p)
                    else:
                        n = s.c_legal_actions(self.acts)
                        s.c_apply(self.acts[rng_below(&self.rng, n)])
                    ply += 1
                if not s.c_is_terminal():
                    for p in range(self.num_players):
                        r[p] = s.c_evaluate(p)
                    return
            elif self.playout == PLAYOUT_HEURISTIC:
                s.c_heuristic_playout(&self.rng)
            else:
                s.c_random_playout(&self.rng)
        s.c_returns(r)

    cdef bint exact_leaf(self, State s, int mover, double* r) noexcept:
        """The returns of `s` from the endgame tables (two players), if they know it."""
        cdef int v = self.exact.c_value(s)
        if v < 0:
            return False
        self.table_hits += 1
        r[mover] = <double>v
        r[1 - mover] = 1.0 - v
        return True

    cdef void backup(self, int depth, double* r) noexcept:
        cdef int d, p, node, arm, b
        cdef double x
        cdef bint changed = False
        cdef Arm* a
        for d in range(depth, -1, -1):
            node = self.path[d]
            self.nodes[node].visits += 1
            for p in range(self.num_players):
                self.nodes[node].value[p] += r[p]
            if self.nodes[node].kind == SIMULTANEOUS:
                for p in range(self.num_players):
                    arm = self.path_arms[d][p]
                    if arm < 0:
                        continue
                    a = &self.arms[arm]
                    a.visits += 1
                    a.reward += r[p]
                    if self.sim_policy == SIM_EXP3:
                        a.regret += r[p] / a.sigma
                    elif self.sim_policy == SIM_RM:
                        x = r[p] / a.sigma
                        b = self.nodes[node].arms
                        while b >= 0:
                            if self.arms[b].player == p and self.arms[b].stamp == self.iteration:
                                self.arms[b].regret += (x if b == arm else 0.0) - r[p]
                            b = self.arms[b].next
            if d == depth:
                changed = self.nodes[node].proven != 0
            elif self.solver and changed and not self.nodes[node].proven:
                changed = self.try_prove(node)
            else:
                changed = False

    cdef void backup_heur(self, int depth) noexcept:
        """Implicit minimax: every node on the path above the new leaf takes the max^n value
        of its children's stored evaluations (proven children count with their exact
        value); a chance node the probability-weighted mean of the outcomes seen, a
        simultaneous node the visit-weighted mean of its joint children."""
        cdef int d, p, node, child, kind, best
        cdef double w, total, v, top
        cdef double acc[MAX_PLAYERS]
        cdef Node* ch
        cdef Node* nd
        for d in range(depth - 1, -1, -1):
            node = self.path[d]
            nd = &self.nodes[node]
            kind = nd.kind
            if nd.proven:
                for p in range(self.num_players):
                    nd.heur[p] = nd.exact[p]
                continue
            if kind >= 0:
                best = -1
                top = -1e300
                child = nd.first_child
                while child >= 0:
                    ch = &self.nodes[child]
                    if ch.visits > 0 or ch.proven:
                        v = ch.exact[kind] if ch.proven else ch.heur[kind]
                        if v > top:
                            top = v
                            best = child
                    child = ch.next_sibling
                if best < 0:
                    return
                ch = &self.nodes[best]
                for p in range(self.num_players):
                    nd.heur[p] = ch.exact[p] if ch.proven else ch.heur[p]
            elif kind == CHANCE or kind == SIMULTANEOUS:
                total = 0.0
                for p in range(self.num_players):
                    acc[p] = 0.0
                child = nd.first_child
                while child >= 0:
                    ch = &self.nodes[child]
                    if ch.visits > 0 or ch.proven:
                        w = ch.prob if kind == CHANCE else ch.visits
                        total += w
                        for p in range(self.num_players):
                            acc[p] += w * (ch.exact[p] if ch.proven else ch.heur[p])
                    child = ch.next_sibling
                if total <= 0:
                    return
                for p in range(self.num_players):
                    nd.heur[p] = acc[p] / total
            else:
                return

    cdef bint try_prove(self, int node) noexcept:
        """MCTS-Solver: prove `node` from its children if it can; True if it now is."""
        cdef Node* nd = &self.nodes[node]
        cdef int kind = nd.kind, child, p, count = 0
        cdef double best = -1.0, sum_prob = 0.0
        cdef int best_child = -1
        cdef double acc[MAX_PLAYERS]
        cdef Node* ch
        if kind == TERMINAL:
            return nd.proven != 0
        if kind >= 0:
            if not nd.expanded:
                return False
            child = nd.first_child
            while child >= 0:
                ch = &self.nodes[child]
                if not ch.proven:
                    count += 1      # unproven children: only a sure win proves the node
                elif ch.exact[kind] >= 1.0 - 1e-9:
                    best_child = child
                    count = 0
                    break
                elif ch.exact[kind] > best:
                    best = ch.exact[kind]
                    best_child = child
                child = ch.next_sibling
            if best_child < 0 or count > 0:
                return False
            for p in range(self.num_players):
                nd.exact[p] = self.nodes[best_child].exact[p]
            nd.proven = 1
            return True
        if kind == CHANCE:
            for p in range(self.num_players):
                acc[p] = 0.0
            child = nd.first_child
            while child >= 0:
                ch = &self.nodes[child]
                if not ch.proven:
                    return False
                count += 1
                sum_prob += ch.prob
                for p in range(self.num_players):
                    acc[p] += ch.prob * ch.exact[p]
                child = ch.next_sibling
            if count < nd.expanded or sum_prob < 1.0 - 1e-6:
                return False
            for p in range(self.num_players):
                nd.exact[p] = acc[p] / sum_prob
            nd.proven = 1
            return True
        return False

    cdef int iterate(self) except -1:
        cdef State s = self.scratch
        cdef int node = self.root, depth = 0, child, kind
        cdef double r[MAX_PLAYERS]
        cdef int joint[MAX_PLAYERS]
        cdef int p
        s.c_copy_from(self.root_state)
        if self.ismcts:
            s.c_resample_hidden(self.observer, &self.rng)
        self.path[0] = node
        while True:
            kind = s.c_current_player()
            if self.nodes[node].visits == 0 and node != self.root:
                self.nodes[node].kind = kind
                if kind == TERMINAL:
                    s.c_returns(r)
                    self.nodes[node].proven = 1
                    for p in range(self.num_players):
                        self.nodes[node].exact[p] = r[p]
                        self.nodes[node].heur[p] = r[p]
                elif self.exact_on and kind >= 0 and self.exact_leaf(s, kind, r):
                    # an endgame table knows this leaf: its exact value, and (MCTS-Solver)
                    # the node is proven like a terminal one
                    for p in range(self.num_players):
                        self.nodes[node].heur[p] = r[p]
                    if self.solver:
                        self.nodes[node].proven = 1
                        for p in range(self.num_players):
                            self.nodes[node].exact[p] = r[p]
                else:
                    if self.use_heur:
                        for p in range(self.num_players):
                            self.nodes[node].heur[p] = s.c_evaluate(p)
                    self.leaf_rewards(s, r)
                break
            if self.nodes[node].proven and not self.ismcts:
                # (ISMCTS never trusts a stored result: the same information set can end
                # differently in another determinization)
                for p in range(self.num_players):
                    r[p] = self.nodes[node].exact[p]
                break
            if kind != self.nodes[node].kind or kind == TERMINAL or depth >= MCTS_MAX_DEPTH - 1:
                # (ISMCTS: a determinization where this information set looks different)
                self.leaf_rewards(s, r)
                break
            if kind == CHANCE:
                child = self.select_chance(node, s)
            elif kind == SIMULTANEOUS:
                child = self.select_simultaneous(node, depth, s)
            else:
                child = self.select_player(node, s)
            if child < 0:       # pool full
                self.leaf_rewards(s, r)
                break
            if kind == SIMULTANEOUS:
                for p in range(self.num_players):
                    joint[p] = joint_action(self.nodes[child].action, p)
                s.c_apply_joint(joint)
            elif kind == CHANCE and self.ismcts:
                s.c_apply(s.c_sample_chance(&self.rng))
            elif kind == CHANCE:
                s.c_apply(<int>self.nodes[child].action)
            else:
                s.c_apply(<int>self.nodes[child].action)
            node = child
            depth += 1
            self.path[depth] = node
        self.backup(depth, r)
        if self.use_heur:
            self.backup_heur(depth)
        return 0

    # ---- tree reuse -------------------------------------------------------------------
    cdef State _child_state(self, State parent, int child):
        cdef State s = parent.c_clone()
        cdef int joint[MAX_PLAYERS]
        cdef int p
        cdef int kind = self.nodes[self.nodes[child].parent].kind
        if kind == SIMULTANEOUS:
            for p in range(self.num_players):
                joint[p] = joint_action(self.nodes[child].action, p)
            s.c_apply_joint(joint)
        else:
            s.c_apply(<int>self.nodes[child].action)
        return s

    def _find_descendant(self, State target, int max_depth):
        """(node, state) below the root whose state hashes like `target`, or None."""
        cdef uint64_t h = target.c_hash()
        cdef int child
        frontier = [(self.root, self.root_state)]
        for _ in range(max_depth):
            nxt = []
            for node, st in frontier:
                child = self.nodes[node].first_child
                while child >= 0:
                    cs = self._child_state(st, child)
                    if (<State>cs).c_hash() == h:
                        return child, cs
                    if self.nodes[child].visits > 0:
                        nxt.append((child, cs))
                    child = self.nodes[child].next_sibling
            frontier = nxt
            if len(frontier) > 2000:
                break
        return None

    def _compact(self, int new_root):
        """Keep only the subtree under new_root, renumbered from 0 (breadth first)."""
        cdef int* remap = <int*>malloc(self.num_nodes * sizeof(int))
        cdef Node* fresh = <Node*>malloc(self.cap_nodes * sizeof(Node))
        cdef Arm* fresh_arms = <Arm*>malloc(self.cap_arms * sizeof(Arm))
        cdef int i, head = 0, tail = 0, old, child, arm, n_arms = 0, prev
        # queue of old indices = order of the new pool
        cdef int* queue = <int*>malloc(self.num_nodes * sizeof(int))
        if remap == NULL or fresh == NULL or fresh_arms == NULL or queue == NULL:
            free(remap)
            free(fresh)
            free(fresh_arms)
            free(queue)
            raise MemoryError()
        for i in range(self.num_nodes):
            remap[i] = -1
        queue[tail] = new_root
        tail += 1
        remap[new_root] = 0
        while head < tail:
            old = queue[head]
            head += 1
            child = self.nodes[old].first_child
            while child >= 0:
                remap[child] = tail
                queue[tail] = child
                tail += 1
                child = self.nodes[child].next_sibling
        for i in range(tail):
            old = queue[i]
            fresh[i] = self.nodes[old]
            fresh[i].parent = remap[self.nodes[old].parent] if i > 0 else -1
            fresh[i].first_child = remap[self.nodes[old].first_child] \
                if self.nodes[old].first_child >= 0 else -1
            fresh[i].next_sibling = remap[self.nodes[old].next_sibling] \
                if (i > 0 and self.nodes[old].next_sibling >= 0) else -1
            # copy the arm list in order
            arm = self.nodes[old].arms
            prev = -1
            fresh[i].arms = -1
            while arm >= 0:
                fresh_arms[n_arms] = self.arms[arm]
                fresh_arms[n_arms].next = -1
                if prev < 0:
                    fresh[i].arms = n_arms
                else:
                    fresh_arms[prev].next = n_arms
                prev = n_arms
                n_arms += 1
                arm = self.arms[arm].next
        free(queue)
        free(remap)
        free(self.nodes)
        free(self.arms)
        self.nodes = fresh
        self.arms = fresh_arms
        self.num_nodes = tail
        self.num_arms = n_arms
        self.root = 0

    def _prepare_root(self, State state):
        cdef uint64_t h = state.c_hash()
        found = None
        if self.reuse and self.root >= 0 and self.root_state is not None \
                and type(self.root_state) is type(state):
            if self.root_state.c_hash() == h:
                found = (self.root, self.root_state)
            else:
                found = self._find_descendant(state, self.num_players + 2)
        if found is None:
            self.clear()
            self.root = self.new_node(-1, -1, state.c_current_player())
        else:
            if found[0] != self.root:
                self._compact(found[0])
            self.nodes[self.root].kind = state.c_current_player()
            self.nodes[self.root].parent = -1
        self.root_state = state.c_clone()
        self.scratch = state.c_clone()
        self.trial = state.c_clone()

    # ---- Python API -----------------------------------------------------------------
    def search(self, State state, long long iterations=0, double time_limit=0.0,
               observer=None, bint cpu_time=False):
        """Search from `state` within the budget (iterations and/or seconds; both 0 means
        1000 iterations; with `cpu_time` the seconds are this thread's CPU time, not the
        wall clock). `observer` is the seat whose knowledge ISMCTS respects (default: the
        player to move). Returns a SearchResult (see `summary()`)."""
        if state.c_is_terminal():
            raise ValueError("cannot search a terminal position")
        if state.num_players != self.num_players:
            raise ValueError(f"this searcher was made for {self.num_players} players, "
                             f"the position has {state.num_players}")
        if iterations <= 0 and time_limit <= 0:
            iterations = 1000
        cdef int mover = state.c_current_player()
        self.observer = observer if observer is not None else (mover if mover >= 0 else 0)
        self.exact_on = (self.exact is not None and self.num_players == 2 and not self.ismcts
                         and self.exact.accepts(state))
        self._prepare_root(state)
        cdef double t0 = now(cpu_time), elapsed = 0.0
        cdef long long done = 0
        cdef bint with_time = time_limit > 0
        try:
            while True:
                if iterations > 0 and done >= iterations:
                    break
                if self.nodes[self.root].proven:
                    break
                if with_time and (done & 7) == 0:     # (every 8: slow playouts overshoot little)
                    elapsed = now(cpu_time) - t0
                    if elapsed >= time_limit:
                        break
                self.iteration += 1
                self.iterate()
                done += 1
        except MemoryError:
            self.clear()    # (the node being expanded may have only some of its children)
            raise
        elapsed = now(cpu_time) - t0
        self.total_iterations += done
        return self.summary(done, elapsed)

    def _children(self, int node):
        out = []
        cdef int child = self.nodes[node].first_child
        while child >= 0:
            out.append(child)
            child = self.nodes[child].next_sibling
        return out

    def _node(self, int idx):
        """A node's statistics as a dict (for reports and tests)."""
        cdef Node nd = self.nodes[idx]
        return {"action": nd.action, "kind": nd.kind, "visits": nd.visits,
                "value": [nd.value[q] for q in range(self.num_players)],
                "proven": bool(nd.proven), "exact": [nd.exact[q] for q in range(self.num_players)],
                "heur": [nd.heur[q] for q in range(self.num_players)],
                "parent": nd.parent}

    def _mean(self, int idx, int player):
        if self.nodes[idx].visits == 0 and not self.nodes[idx].proven:
            return None
        return self.child_mean(idx, player)

    def _best_child(self, int node):
        """Robust child: a proven win for the mover if any, else most visits, avoiding
        proven losses when something else exists."""
        kids = self._children(node)
        if not kids:
            return -1
        kind = self.nodes[node].kind
        p = kind if kind >= 0 else self.observer
        keys = []
        for ch in kids:
            nd = self._node(ch)
            proven_win = nd["proven"] and nd["exact"][p] >= 1.0 - 1e-9
            proven_loss = nd["proven"] and nd["exact"][p] <= 1e-9
            keys.append(((proven_win, not proven_loss, nd["visits"], self._mean(ch, p) or 0.0), ch))
        return max(keys)[1]

    def _label(self, State st, int node, int child):
        kind = self.nodes[node].kind
        action = self.nodes[child].action
        if kind == SIMULTANEOUS:
            return "+".join(st.action_to_string(joint_action(action, q), q)
                            for q in range(self.num_players))
        if action < 0:
            return "?"
        return st.action_to_string(action)

    def summary(self, long long iterations=0, double elapsed=0.0):
        """The root's statistics: value for the mover, best action, every action with its
        visits/value, the principal variation (most visited line) and, at a simultaneous
        root, each player's mixed strategy."""
        cdef int root = self.root
        rn = self._node(root)
        kind = rn["kind"]
        p = kind if kind >= 0 else self.observer
        st = self.root_state
        kids = self._children(root)
        total = sum(self.nodes[ch].visits for ch in kids) or 1.0
        actions = []
        for ch in kids:
            nd = self._node(ch)
            actions.append(ActionStat(
                action=nd["action"] if kind != SIMULTANEOUS else
                [joint_action(nd["action"], q) for q in range(self.num_players)],
                name=self._label(st, root, ch), value=self._mean(ch, p),
                visits=int(nd["visits"]), share=nd["visits"] / total, proven=nd["proven"]))
        actions.sort(key=lambda a: -a.visits)
        if rn["proven"]:
            value = rn["exact"]
        else:
            value = [v / rn["visits"] if rn["visits"] else None for v in rn["value"]]
        best = best_name = strategies = None
        if kind == SIMULTANEOUS:
            strategies = self.root_strategies()
            mine = strategies[p] if p < len(strategies) else []
            if mine:    # the observer's most likely action under its mixed strategy
                top = max(mine, key=lambda row: row[1])
                best = top[0]
                best_name = st.action_to_string(top[0], p)
        elif kind != CHANCE:
            best_child = self._best_child(root)
            if best_child >= 0:
                best = self.nodes[best_child].action
                best_name = self._label(st, root, best_child)
        pv = self._principal_variation()
        return SearchResult(
            algo="ismcts" if self.ismcts else "mcts", value=value[p], player=p,
            proven=rn["proven"], best=best, best_name=best_name, actions=actions, pv=pv,
            depth=len(pv), nodes=self.num_nodes, iterations=iterations, time_s=elapsed,
            nps=iterations / elapsed if elapsed > 0 else 0.0,
            tt_fill=self.num_nodes / self.max_nodes, values=value,
            root_visits=int(rn["visits"]), max_nodes=self.max_nodes, strategies=strategies)

    def _principal_variation(self):
        """The most visited line (robust child at player nodes), named."""
        pv = []
        node, cur = self.root, self.root_state
        while len(pv) < 64:
            ch = self._best_child(node)
            if ch < 0 or self.nodes[ch].visits == 0 and not self.nodes[ch].proven:
                break
            if self.nodes[node].kind == CHANCE and self.nodes[ch].action < 0:
                break
            pv.append(self._label(cur, node, ch))
            cur = self._child_state(cur, ch)
            node = ch
        return pv

    def root_strategies(self):
        """At a simultaneous root: per player, [(action, probability, visits, mean)]. The
        probability is the visit share (UCB, Exp3) or the average strategy (regret
        matching)."""
        cdef int root = self.root, arm
        cdef Arm* a
        out = []
        for q in range(self.num_players):
            rows = []
            arm = self.nodes[root].arms
            while arm >= 0:
                a = &self.arms[arm]
                if a.player == q:
                    rows.append([a.action, a.strategy if self.sim_policy == SIM_RM else a.visits,
                                 int(a.visits), a.reward / a.visits if a.visits else None])
                arm = a.next
            total = sum(r[1] for r in rows) or 1.0
            for r in rows:
                r[1] = r[1] / total
            rows.sort(key=lambda r: r[0])
            out.append([tuple(r) for r in rows])
        return out

    def sample_strategy(self, int player, Rng rng):
        """An action for `player` drawn from the root's mixed strategy."""
        rows = self.root_strategies()[player]
        u = rng.random()
        for action, prob, _, _ in rows:
            u -= prob
            if u < 0:
                return action
        return rows[len(rows) - 1][0]

    @property
    def node_count(self):
        return self.num_nodes

    @property
    def arm_count(self):
        return self.num_arms

    @property
    def allocated_bytes(self):
        """Bytes the node and arm pools hold (capacity, not just the used part)."""
        return self.cap_nodes * sizeof(Node) + self.cap_arms * sizeof(Arm)

    @property
    def node_bytes(self):
        """Size of one tree node (arms of simultaneous nodes are extra)."""
        return sizeof(Node)

    @property
    def root_visits(self):
        return self.nodes[self.root].visits if self.root >= 0 else 0
