# cython: language_level=3
"""The game contract: a Cython base type every niwa game derives from.

Python users call the plain methods (``legal_actions()``, ``apply(a)``, ...); Cython
searchers call the ``c_*`` methods declared in game.pxd through the vtable.

Conventions (OpenSpiel's): actions are small non-negative ints, meaningful per game;
``current_player()`` is a seat number, or CHANCE (-1), SIMULTANEOUS (-2) or TERMINAL (-4).
``perft(n)`` counts action sequences of length n, where a chance outcome counts as one
action and a simultaneous node contributes one step per joint action.
"""
from array import array

from libc.stdint cimport uint64_t
from libc.time cimport time as c_time

from niwa.ext.rng cimport RngState, rng_seed, rng_next, rng_below, rng_uniform

from niwa.ext.errors import IllegalActionError

cdef enum:
    HEURISTIC_SAMPLES = 4   # actions the default heuristic playout evaluates on a guided turn

# The contract's constants for Python code (import these, never retype the numbers).
PLAYER_CHANCE = CHANCE
PLAYER_SIMULTANEOUS = SIMULTANEOUS
PLAYER_TERMINAL = TERMINAL
ACTION_BOUND = MAX_ACTIONS      # every game's action and outcome ids are below this
PLAYER_BOUND = MAX_PLAYERS


cdef class Rng:
    """Seedable xoshiro256** generator shared by engines and searchers.

    >>> r = Rng(7); r.below(6) == Rng(7).below(6)
    True
    """

    def __init__(self, seed=None):
        if seed is None:
            seed = int(c_time(NULL))
        self.seed = int(seed)
        rng_seed(&self.s, <uint64_t>(self.seed & 0xFFFFFFFFFFFFFFFF))

    def below(self, int n):
        """A uniform integer in [0, n)."""
        if n <= 0:
            raise ValueError("Rng.below needs n > 0")
        return rng_below(&self.s, n)

    def random(self):
        """A uniform float in [0, 1)."""
        return rng_uniform(&self.s)

    def next_u64(self):
        return rng_next(&self.s)

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def shuffle(self, list seq):
        cdef Py_ssize_t i, j
        for i in range(len(seq) - 1, 0, -1):
            j = rng_below(&self.s, i + 1)
            seq[i], seq[j] = seq[j], seq[i]


def as_rng(rng):
    """Accept an Rng, an int seed or None (clock-seeded)."""
    if isinstance(rng, Rng):
        return rng
    return Rng(rng)


cdef int play_out(State s, RngState* rng, bint guided) noexcept:
    """Play `s` to the end through the contract; uniformly random, or `guided` as
    State.c_heuristic_playout describes. Returns the plies played."""
    cdef int buf[MAX_ACTIONS]
    cdef int joint[MAX_PLAYERS]
    cdef int plies = 0, p, q, n, k, i, t, a
    cdef double v, best
    cdef State trial = s.c_clone() if guided else None
    while True:
        p = s.c_current_player()
        if p == TERMINAL:
            return plies
        if p == CHANCE:
            s.c_apply(s.c_sample_chance(rng))
        elif p == SIMULTANEOUS:
            for q in range(s.num_players):
                n = s.c_player_actions(q, buf)
                joint[q] = buf[rng_below(rng, n)] if n > 0 else -1
            s.c_apply_joint(joint)
        else:
            n = s.c_legal_actions(buf)
            if not guided or n == 1 or rng_below(rng, 2) == 0:
                a = buf[rng_below(rng, n)]
            else:
                best = -1.0
                a = buf[0]
                for k in range(min(n, HEURISTIC_SAMPLES)):
                    i = k + rng_below(rng, n - k)    # a partial shuffle: k-th sample
                    t = buf[k]
                    buf[k] = buf[i]
                    buf[i] = t
                    trial.c_copy_from(s)
                    trial.c_apply(buf[k])
                    v = trial.c_evaluate(p)
                    if v > best:
                        best = v
                        a = buf[k]
            s.c_apply(a)
        plies += 1


cdef class State:
    """Base of every game state. Subclasses override the c_* methods."""

    # ---- C-level contract (overridden by games) -------------------------------------
    cdef int c_current_player(self) noexcept:
        return TERMINAL

    cdef int c_legal_actions(self, int* out) noexcept:
        return 0

    cdef int c_player_actions(self, int player, int* out) noexcept:
        if self.c_current_player() == player:
            return self.c_legal_actions(out)
        return 0

    cdef void c_apply(self, int action) noexcept:
        pass

    cdef void c_apply_joint(self, int* actions) noexcept:
        pass

    cdef bint c_is_terminal(self) noexcept:
        return self.c_current_player() == TERMINAL

    cdef void c_returns(self, double* out) noexcept:
        cdef int p
        for p in range(self.num_players):
            out[p] = 0.0

    cdef int c_chance_outcomes(self, int* actions, double* probs) noexcept:
        return 0

    cdef int c_sample_chance(self, RngState* rng) noexcept:
        cdef int acts[MAX_ACTIONS]
        cdef double probs[MAX_ACTIONS]
        cdef int n = self.c_chance_outcomes(acts, probs)
        cdef double u = rng_uniform(rng)
        cdef int i
        for i in range(n - 1):
            u -= probs[i]
            if u < 0:
                return acts[i]
        return acts[n - 1]

    cdef uint64_t c_hash(self) noexcept:
        return 0

    cdef uint64_t c_symmetric_hash(self) noexcept:
        return self.c_hash()

    cdef State c_clone(self):
        raise NotImplementedError

    cdef void c_copy_from(self, State other) noexcept:
        pass

    cdef int c_random_playout(self, RngState* rng) noexcept:
        return play_out(self, rng, False)

    cdef int c_heuristic_playout(self, RngState* rng) noexcept:
        """The default game-heuristic playout, guided by the game's evaluation: on half of
        the turns (at random) the mover tries up to HEURISTIC_SAMPLES of its legal actions,
        drawn at random, and plays the one whose result it evaluates best; the other turns,
        and chance and simultaneous steps, are uniformly random (diversity keeps playout
        averages meaningful). A game with a cheaper policy of its own overrides this."""
        return play_out(self, rng, True)

    cdef double c_evaluate(self, int player) noexcept:
        cdef double r[MAX_PLAYERS]
        if self.c_is_terminal():
            self.c_returns(r)
            return r[player]
        return 0.5

    cdef void c_resample_hidden(self, int player, RngState* rng) noexcept:
        pass  # perfect-information games have nothing hidden

    cdef int c_episode(self) noexcept:
        """An episode counter a game may expose (Haru: the round number); searchers may
        treat its change as a leaf. Default: 0 (the whole game is one episode)."""
        return 0

    # ---- Python API ---------------------------------------------------------------
    @property
    def game_name(self):
        raise NotImplementedError

    @property
    def variant(self):
        """The variant settings as a dict (keys as in `niwa games`)."""
        raise NotImplementedError

    @property
    def spec(self):
        """The GameSpec of the game this state belongs to (as OpenSpiel's
        State::GetGame()): its variants, traits, bounds and defaults. Each engine returns
        its own SPEC; this default finds it by game name in the registry, for states of
        games written before the contract asked (None outside the registry)."""
        from niwa.ext.registry import find_game     # (the registry sits above the contract)

        return find_game(self.game_name)

    def hides_from(self, int player):
        """True when `player` cannot see the whole position (e.g. the opponent's hand):
        what that player knows (information_state) differs from the full position. A game
        with no notation to compare answers what its spec declares."""
        try:
            return self.information_state(player) != self.to_notation()
        except NotImplementedError:
            spec = self.spec
            return spec is not None and spec.traits.hidden_information

    def current_player(self):
        return self.c_current_player()

    def is_terminal(self):
        return bool(self.c_is_terminal())

    def is_chance_node(self):
        return self.c_current_player() == CHANCE

    def is_simultaneous_node(self):
        return self.c_current_player() == SIMULTANEOUS

    def legal_actions(self, player=None):
        """Legal actions of the mover, or of `player` (needed at simultaneous nodes)."""
        cdef int buf[MAX_ACTIONS]
        cdef int n, i
        if player is None:
            if self.c_current_player() == CHANCE:
                return [a for a, _ in self.chance_outcomes()]
            n = self.c_legal_actions(buf)
        else:
            n = self.c_player_actions(player, buf)
        return [buf[i] for i in range(n)]

    def chance_outcomes(self):
        cdef int acts[MAX_ACTIONS]
        cdef double probs[MAX_ACTIONS]
        cdef int n = self.c_chance_outcomes(acts, probs)
        return [(acts[i], probs[i]) for i in range(n)]

    def _coerce_action(self, action, player=None):
        if isinstance(action, str):
            return self.string_to_action(action, player) if player is not None \
                else self.string_to_action(action)
        return int(action)

    def apply(self, action):
        """Apply one action (an int, or its string as printed by action_to_string)."""
        a = self._coerce_action(action)
        if self.c_current_player() == SIMULTANEOUS:
            raise IllegalActionError("this is a simultaneous node: use apply_joint([a0, a1, ...])")
        if a not in self.legal_actions():
            raise IllegalActionError(
                f"illegal action {action!r} in {self.game_name} position; legal: "
                + ", ".join(self.action_to_string(b) for b in self.legal_actions()))
        self.c_apply(a)

    def apply_joint(self, actions):
        """Apply one action per player at a simultaneous node."""
        cdef int joint[MAX_PLAYERS]
        if self.c_current_player() != SIMULTANEOUS:
            raise IllegalActionError("apply_joint needs a simultaneous node")
        if len(actions) != self.num_players:
            raise IllegalActionError(f"apply_joint needs {self.num_players} actions")
        for p, act in enumerate(actions):
            a = self._coerce_action(act, p)
            if a not in self.legal_actions(p):
                raise IllegalActionError(f"illegal action {act!r} for player {p}")
            joint[p] = a
        self.c_apply_joint(joint)

    def child(self, action):
        """A new state: this one after `action`."""
        s = self.clone()
        s.apply(action)
        return s

    def clone(self):
        return self.c_clone()

    def set_weights(self, values):
        """Evaluate with these weights (the game's GameSpec.eval_weights, in order, all of
        them), or with the game's defaults for None. Clones made afterwards inherit them;
        searchers set them on their root copy (the agents' `w_<name>=` parameters)."""
        cdef double[::1] view
        if values is None:
            self.c_weights = NULL
            self._weights = None
            return
        spec = self.spec
        expected = len(spec.eval_weights) if spec is not None else 0
        arr = array("d", values)
        if len(arr) != expected or expected == 0:
            raise ValueError(f"{self.game_name} takes {expected} evaluation weights, "
                             f"got {len(arr)}")
        view = arr
        self._weights = arr
        self.c_weights = &view[0]

    @property
    def eval_weights(self):
        """The weights this state evaluates with (a tuple), or None for the defaults."""
        return None if self._weights is None else tuple(self._weights)

    def stats(self):
        """Secondary statistics of the position, as the game's spec declares them (its
        `stats` fields); written to games.csv for finished games. Default: none."""
        return {}

    def winner(self):
        """The winning seat once the game is over; None while it runs, after a draw or
        shared first place (and, in games that say so, a lost solo game)."""
        if not self.c_is_terminal():
            return None
        r = self.returns()
        best = max(r)
        return r.index(best) if r.count(best) == 1 else None

    def returns(self):
        cdef double r[MAX_PLAYERS]
        self.c_returns(r)
        return [r[p] for p in range(self.num_players)]

    def hash(self):
        """Zobrist-style 64-bit hash of everything that affects play."""
        return self.c_hash()

    def symmetric_hash(self):
        """A hash shared by positions that a symmetry of the rules makes equal in value
        (equal to hash() for games that declare no symmetry)."""
        return self.c_symmetric_hash()

    def evaluate(self, int player):
        return self.c_evaluate(player)

    def episode(self):
        """The game's episode counter (Haru: the round number; 0 for one-episode games)."""
        return self.c_episode()

    def random_playout(self, rng=None):
        """Play this state to the end with uniformly random actions, in C. Returns plies."""
        cdef Rng r = as_rng(rng)
        return self.c_random_playout(&r.s)

    def heuristic_playout(self, rng=None):
        cdef Rng r = as_rng(rng)
        return self.c_heuristic_playout(&r.s)

    def resample_hidden(self, int player, rng=None):
        """A full state consistent with what `player` knows (hidden parts resampled)."""
        cdef Rng r = as_rng(rng)
        cdef State s = self.c_clone()
        s.c_resample_hidden(player, &r.s)
        return s

    def information_state(self, int player):
        """What `player` knows, as a string (equals the notation for perfect information)."""
        return self.to_notation()

    def perft(self, int depth):
        """Number of action sequences of length exactly `depth` from this state."""
        if depth < 0:
            raise ValueError("perft depth must be >= 0")
        return _perft(self, depth)

    def perft_divide(self, int depth):
        """[(action string, perft(depth-1) of the child)] for every first action."""
        if depth < 1:
            raise ValueError("perft --divide needs depth >= 1")
        out = []
        for label, child in self._children():
            out.append((label, _perft(child, depth - 1)))
        return out

    def _children(self):
        """(label, child state) for each step of perft: actions, outcomes or joint actions."""
        p = self.c_current_player()
        if p == TERMINAL:
            return []
        if p == SIMULTANEOUS:
            import itertools
            per = [self.legal_actions(q) for q in range(self.num_players)]
            res = []
            for combo in itertools.product(*per):
                s = self.clone()
                s.apply_joint(list(combo))
                res.append(("+".join(self.action_to_string(a, q) for q, a in enumerate(combo)), s))
            return res
        res = []
        for a in self.legal_actions():
            s = self.clone()
            (<State>s).c_apply(a)
            res.append((self.action_to_string(a), s))
        return res

    # ---- per-game Python API (overridden) -------------------------------------------
    def action_to_string(self, int action, player=None):
        return str(action)

    def string_to_action(self, str text, player=None):
        """Parse an action string, as printed by action_to_string, or a plain integer."""
        text = text.strip()
        if player is None:
            legal = self.legal_actions()
        else:
            legal = self.legal_actions(player)
        for a in legal:
            if self.action_to_string(a, player) == text:
                return a
        if text.isascii() and text.lstrip("-").isdigit() and len(text) <= 18:
            return int(text)    # ('²' is a digit to isdigit, not to int(); 18 digits fit)
        raise IllegalActionError(
            f"unknown or illegal action {text!r}; legal: "
            + ", ".join(self.action_to_string(a, player) for a in legal))

    def to_notation(self):
        raise NotImplementedError

    def render(self):
        """A picture of the position for a terminal."""
        return self.to_notation()

    def to_json(self):
        return {"notation": self.to_notation()}

    def __str__(self):
        return self.to_notation()

    def __repr__(self):
        return f"<{type(self).__name__} {self.to_notation()!r}>"

    def __eq__(self, other):
        return isinstance(other, State) and type(self) is type(other) \
            and self.to_notation() == other.to_notation()

    def __hash__(self):
        return hash(self.c_hash())


cdef long long _perft(State s, int depth):
    """Generic perft via the C contract; one scratch child per level, no Python per leaf."""
    cdef int buf[MAX_ACTIONS]
    cdef double probs[MAX_ACTIONS]
    cdef int n, i, q, p
    cdef long long total = 0
    if depth == 0:
        return 1
    p = s.c_current_player()
    if p == TERMINAL:
        return 0
    if p == SIMULTANEOUS:
        return _perft_joint(s, depth)
    if p == CHANCE:
        n = s.c_chance_outcomes(buf, probs)
    else:
        n = s.c_legal_actions(buf)
    if depth == 1:
        return n
    cdef State child = s.c_clone()
    for i in range(n):
        child.c_copy_from(s)
        child.c_apply(buf[i])
        total += _perft(child, depth - 1)
    return total


cdef long long _perft_joint(State s, int depth):
    """Perft at a simultaneous node: one step per joint action (every combination of the
    players' own actions, as _children() lists them), enumerated in C."""
    cdef int per[MAX_PLAYERS][MAX_ACTIONS]
    cdef int cnt[MAX_PLAYERS]
    cdef int idx[MAX_PLAYERS]
    cdef int joint[MAX_PLAYERS]
    cdef int q, k, np = s.num_players
    cdef long long combos = 1, total = 0, c
    for q in range(np):
        cnt[q] = s.c_player_actions(q, per[q])
        combos *= cnt[q]
        idx[q] = 0
    if depth == 1 or combos == 0:
        return combos
    cdef State child = s.c_clone()
    for c in range(combos):
        for q in range(np):
            joint[q] = per[q][idx[q]]
        child.c_copy_from(s)
        child.c_apply_joint(joint)
        total += _perft(child, depth - 1)
        for k in range(np - 1, -1, -1):     # the next combination, last player fastest
            idx[k] += 1
            if idx[k] < cnt[k]:
                break
            idx[k] = 0
    return total
