# cython: language_level=3
"""The adapter that lets a game written in plain Python use niwa's Cython searchers.

A plain-Python game is any object with the methods of the Python game contract
(documented in `niwa.ext.python_game`). `PythonGameState` wraps one and implements every
``c_*`` method of `niwa.ext.game.State` by calling it, so MCTS, alpha-beta, perft and
random or guided playouts run on it unchanged -- slower than a Cython engine (one Python
call per contract call), but complete.

>>> from niwa.ext.python_game import TERMINAL, PythonGame
>>> class Countdown(PythonGame):
...     '''Say 1 or 2; whoever reaches 0 wins.'''
...     game_name, num_players = "countdown", 2
...     def __init__(self, left=4, turn=0):
...         self.left, self.turn = left, turn
...     def current_player(self):
...         return TERMINAL if self.left == 0 else self.turn
...     def legal_actions(self, player=None):
...         return [a for a in (1, 2) if a <= self.left]
...     def apply(self, action):
...         self.left -= action
...         self.turn = self.turn if self.left == 0 else 1 - self.turn
...     def returns(self):
...         return [1.0, 0.0] if self.turn == 0 else [0.0, 1.0]
...     def to_notation(self):
...         return f"countdown; left {self.left}; turn {self.turn}"
>>> s = PythonGameState(Countdown())
>>> s.perft(3), s.legal_actions()
(4, [1, 2])
>>> from niwa.solver.alphabeta import AlphaBeta
>>> AlphaBeta(2).search(s, depth=10).value    # 4 is a multiple of 3: the mover wins
1.0

A method of the wrapped game that raises inside a search cannot unwind through the
searcher's C loops: the state then acts as finished, and the next Python-level call on
any wrapped state raises a GameContractError that names the method and the original error.
"""
from libc.stdint cimport uint64_t

from niwa.ext.game cimport (State, Rng, MAX_ACTIONS, MAX_PLAYERS, CHANCE, SIMULTANEOUS, TERMINAL,
                           share_weights)
from niwa.ext.rng cimport RngState, rng_next, splitmix64

from niwa.ext.errors import GameContractError, IllegalActionError
from niwa.ext.game import as_rng

# The contract's constants, for plain-Python games (`from niwa.ext.python_state import ...`
# or, the same values, niwa.ext.game's PLAYER_CHANCE / PLAYER_SIMULTANEOUS / PLAYER_TERMINAL).
PLAYER_CHANCE = CHANCE
PLAYER_SIMULTANEOUS = SIMULTANEOUS
PLAYER_TERMINAL = TERMINAL

# The first error a wrapped game raised where it could not propagate (inside a search).
_failure = None


cdef void _record(State s, str method, object error):
    """Keep the first failure; the state stops (acts as terminal) so searches end."""
    global _failure
    cdef PythonGameState state = <PythonGameState>s
    state.broken = True
    if _failure is None:
        game = getattr(state.game, "game_name", type(state.game).__name__)
        if isinstance(error, GameContractError):
            _failure = GameContractError(f"{game}: {error}")
        else:
            _failure = GameContractError(
                f"{game}: {method}() raised {type(error).__name__}: {error} (inside a search, "
                f"perft or playout)")
        _failure.__cause__ = error


def raise_pending():
    """Raise (and clear) the failure a wrapped game had inside a search, if any."""
    global _failure
    if _failure is not None:
        err, _failure = _failure, None
        raise err


cdef inline uint64_t fnv1a(bytes data) noexcept:
    """64-bit FNV-1a of `data`, finished with splitmix64 (stable across processes)."""
    cdef uint64_t h = 0xCBF29CE484222325ULL
    cdef const unsigned char* p = data
    cdef Py_ssize_t i
    for i in range(len(data)):
        h = (h ^ p[i]) * 0x100000001B3ULL
    return splitmix64(&h)


def notation_hash(str notation):
    """The 64-bit hash a game without its own `hash()` gets: FNV-1a of the notation.

    >>> notation_hash("nim; piles 3 4 5; turn 0") == notation_hash("nim; piles 3 4 5; turn 0")
    True
    """
    return fnv1a(notation.encode())


cdef class _Caps:
    """Which optional methods a game class offers (looked up once per class)."""
    cdef bint hash, evaluate, resample_hidden, information_state, episode, stats, render
    cdef bint string_to_action, apply_joint, chance_outcomes


_caps_by_type = {}


cdef _Caps caps_of(object game):
    cdef _Caps c = _caps_by_type.get(type(game))
    if c is not None:
        return c
    kind = type(game)
    missing = [m for m in ("current_player", "legal_actions", "apply", "clone", "returns",
                           "action_to_string", "to_notation")
               if not callable(getattr(kind, m, None))]
    missing += [a for a in ("num_players", "game_name") if not hasattr(game, a)]
    if missing:
        raise GameContractError(f"{kind.__name__} is not a niwa game: it lacks "
                                f"{', '.join(missing)} (see niwa.ext.python_game)")

    def offers(name):
        return callable(getattr(kind, name, None))

    c = _Caps()
    c.hash = offers("hash")
    c.evaluate = offers("evaluate")
    c.resample_hidden = offers("resample_hidden")
    c.information_state = offers("information_state")
    c.episode = offers("episode")
    c.stats = offers("stats")
    c.render = offers("render")
    c.string_to_action = offers("string_to_action")
    c.apply_joint = offers("apply_joint")
    c.chance_outcomes = offers("chance_outcomes")
    _caps_by_type[kind] = c
    return c


cdef int _to_player(State s, object value) except? -99:
    cdef int p = value
    if not (p == CHANCE or p == SIMULTANEOUS or p == TERMINAL or 0 <= p < s.num_players):
        raise GameContractError(
            f"current_player() returned {value!r}; expected a seat 0..{s.num_players - 1} or "
            f"CHANCE ({CHANCE}), SIMULTANEOUS ({SIMULTANEOUS}) or TERMINAL ({TERMINAL})")
    return p


cdef int _copy_actions(object actions, int* out) except -1:
    cdef int n = 0, a
    for x in actions:
        if n >= MAX_ACTIONS:
            raise GameContractError(f"more than {MAX_ACTIONS} legal actions")
        a = x
        if a < 0:
            raise GameContractError(f"action id {x!r} is negative; ids are 0, 1, 2, ...")
        out[n] = a
        n += 1
    return n


cdef class PythonGameState(State):
    """A plain-Python game (see niwa.ext.python_game) behind the Cython contract.

    Attribute reads this class does not define go to the wrapped game, so a game's own
    helpers (``state.piles``, ``state.score_breakdown()``) stay reachable.
    """
    cdef readonly object game       # the wrapped plain-Python game object
    cdef _Caps caps
    cdef public bint broken         # a wrapped method raised inside a search
    cdef object _spec               # the GameSpec that made it (None: found by name)

    def __init__(self, game, spec=None):
        self.caps = caps_of(game)
        self.game = game
        self._spec = spec
        self.num_players = int(game.num_players)
        if not 1 <= self.num_players <= MAX_PLAYERS:
            raise GameContractError(f"{game.game_name}: num_players must be 1..{MAX_PLAYERS}, "
                                    f"got {self.num_players}")
        self.broken = False

    cdef PythonGameState _wrap(self, object game):
        cdef PythonGameState s = PythonGameState.__new__(PythonGameState)
        s.caps = self.caps
        s.game = game
        s._spec = self._spec
        s.num_players = self.num_players
        s.broken = False
        share_weights(s, self)
        return s

    cdef double _game_evaluate(self, int player) except? -1.0:
        """The game's evaluate(player), given weights=(values...) when weights are set
        (a game declaring GameSpec.eval_weights takes that keyword)."""
        if self._weights is None:
            return float(self.game.evaluate(player))
        return float(self.game.evaluate(player, weights=tuple(self._weights)))

    # ---- C-level contract: every call goes to the wrapped game --------------------------
    cdef int c_current_player(self) noexcept:
        if self.broken:
            return TERMINAL
        try:
            return _to_player(self, self.game.current_player())
        except BaseException as e:
            _record(self, "current_player", e)
            return TERMINAL

    cdef int c_legal_actions(self, int* out) noexcept:
        if self.broken:
            return 0
        try:
            return _copy_actions(self.game.legal_actions(), out)
        except BaseException as e:
            _record(self, "legal_actions", e)
            return 0

    cdef int c_player_actions(self, int player, int* out) noexcept:
        cdef int p = self.c_current_player()
        if p == SIMULTANEOUS:
            try:
                return _copy_actions(self.game.legal_actions(player), out)
            except BaseException as e:
                _record(self, "legal_actions", e)
                return 0
        return self.c_legal_actions(out) if p == player else 0

    cdef void c_apply(self, int action) noexcept:
        if self.broken:
            return
        try:
            self.game.apply(action)
        except BaseException as e:
            _record(self, "apply", e)

    cdef void c_apply_joint(self, int* actions) noexcept:
        if self.broken:
            return
        try:
            self.game.apply_joint([actions[p] for p in range(self.num_players)])
        except BaseException as e:
            _record(self, "apply_joint", e)

    cdef void c_returns(self, double* out) noexcept:
        cdef int p
        for p in range(self.num_players):
            out[p] = 0.5
        if self.broken:
            return
        try:
            r = self.game.returns()
            if len(r) != self.num_players:
                raise GameContractError(f"returns() gave {len(r)} values for "
                                        f"{self.num_players} players")
            for p in range(self.num_players):
                out[p] = r[p]
        except BaseException as e:
            _record(self, "returns", e)

    cdef int c_chance_outcomes(self, int* actions, double* probs) noexcept:
        cdef int n = 0
        if self.broken or not self.caps.chance_outcomes:
            return 0
        try:
            for a, prob in self.game.chance_outcomes():
                if n >= MAX_ACTIONS or a < 0:
                    raise GameContractError(f"chance outcome {a!r} is negative, or there are "
                                            f"more than {MAX_ACTIONS}")
                actions[n] = a
                probs[n] = prob
                n += 1
            return n
        except BaseException as e:
            _record(self, "chance_outcomes", e)
            return 0

    cdef uint64_t c_hash(self) noexcept:
        if self.broken:
            return 0
        try:
            if self.caps.hash:
                return <uint64_t>(int(self.game.hash()) & 0xFFFFFFFFFFFFFFFF)
            return fnv1a(self.game.to_notation().encode())
        except BaseException as e:
            _record(self, "hash", e)
            return 0

    cdef State c_clone(self):
        try:
            return self._wrap(self.game.clone())
        except BaseException as e:
            _record(self, "clone", e)
            broken = self._wrap(self.game)
            broken.broken = True
            return broken

    cdef void c_copy_from(self, State other) noexcept:
        cdef PythonGameState o = <PythonGameState>other
        self.caps = o.caps
        self._spec = o._spec
        self.num_players = o.num_players
        self.broken = o.broken
        try:
            self.game = o.game.clone()
        except BaseException as e:
            _record(self, "clone", e)

    cdef double c_evaluate(self, int player) noexcept:
        if self.broken:
            return 0.5
        if not self.caps.evaluate:
            return State.c_evaluate(self, player)
        try:
            return self._game_evaluate(player)
        except BaseException as e:
            _record(self, "evaluate", e)
            return 0.5

    cdef void c_resample_hidden(self, int player, RngState* rng) noexcept:
        if self.broken or not self.caps.resample_hidden:
            return
        try:
            self.game = self.game.resample_hidden(player, Rng(rng_next(rng) >> 1))
        except BaseException as e:
            _record(self, "resample_hidden", e)

    cdef int c_episode(self) noexcept:
        if self.broken or not self.caps.episode:
            return 0
        try:
            return int(self.game.episode())
        except BaseException as e:
            _record(self, "episode", e)
            return 0

    # ---- Python API: straight to the wrapped game, errors propagate ----------------------
    @property
    def game_name(self):
        return self.game.game_name

    @property
    def spec(self):
        """The GameSpec python_game_spec built around this game (else found by name)."""
        if self._spec is not None:
            return self._spec
        from niwa.ext.registry import find_game     # (the registry sits above the contract)

        return find_game(self.game_name)

    def hides_from(self, int player):
        """The game's own hides_from(player) if it has one, else whether its
        information_state differs from its notation (State.hides_from)."""
        raise_pending()
        if hasattr(self.game, "hides_from"):
            return bool(self.game.hides_from(player))
        return State.hides_from(self, player)

    @property
    def variant(self):
        return dict(self.game.variant) if hasattr(self.game, "variant") else {}

    def current_player(self):
        raise_pending()
        return _to_player(self, self.game.current_player())

    def is_terminal(self):
        return self.current_player() == TERMINAL

    def is_chance_node(self):
        return self.current_player() == CHANCE

    def is_simultaneous_node(self):
        return self.current_player() == SIMULTANEOUS

    def legal_actions(self, player=None):
        raise_pending()
        p = self.current_player()
        if p == TERMINAL:
            return []
        if p == CHANCE:
            return [a for a, _ in self.chance_outcomes()] if player is None else []
        if p == SIMULTANEOUS:
            if player is None:
                return []     # as every game: ask legal_actions(player) for each player
            return [int(a) for a in self.game.legal_actions(player)]
        if player is not None and player != p:
            return []
        return [int(a) for a in self.game.legal_actions()]

    def chance_outcomes(self):
        raise_pending()
        if not self.caps.chance_outcomes or self.current_player() != CHANCE:
            return []
        return [(int(a), float(prob)) for a, prob in self.game.chance_outcomes()]

    def apply(self, action):
        raise_pending()
        a = self._coerce_action(action)
        if self.current_player() == SIMULTANEOUS:
            raise IllegalActionError("this is a simultaneous node: use apply_joint([a0, a1, ...])")
        legal = self.legal_actions()
        if a not in legal:
            raise IllegalActionError(
                f"illegal action {action!r} in {self.game_name} position; legal: "
                + ", ".join(self.action_to_string(b) for b in legal))
        self.game.apply(a)

    def apply_joint(self, actions):
        raise_pending()
        if self.current_player() != SIMULTANEOUS:
            raise IllegalActionError("apply_joint needs a simultaneous node")
        if len(actions) != self.num_players:
            raise IllegalActionError(f"apply_joint needs {self.num_players} actions")
        joint = []
        for p, act in enumerate(actions):
            a = self._coerce_action(act, p)
            if a not in self.legal_actions(p):
                raise IllegalActionError(f"illegal action {act!r} for player {p}")
            joint.append(a)
        self.game.apply_joint(joint)

    def clone(self):
        raise_pending()
        return self._wrap(self.game.clone())

    def returns(self):
        raise_pending()
        r = [float(x) for x in self.game.returns()]
        if len(r) != self.num_players:
            raise GameContractError(f"{self.game_name}: returns() gave {len(r)} values for "
                                    f"{self.num_players} players")
        return r

    def hash(self):
        raise_pending()
        if self.caps.hash:
            return int(self.game.hash()) & 0xFFFFFFFFFFFFFFFF
        return fnv1a(self.game.to_notation().encode())

    def evaluate(self, int player):
        raise_pending()
        if self.caps.evaluate:
            return self._game_evaluate(player)
        return State.evaluate(self, player)

    def episode(self):
        return int(self.game.episode()) if self.caps.episode else 0

    def stats(self):
        return dict(self.game.stats()) if self.caps.stats else {}

    def information_state(self, int player):
        if self.caps.information_state:
            return self.game.information_state(player)
        return self.to_notation()

    def resample_hidden(self, int player, rng=None):
        raise_pending()
        if not self.caps.resample_hidden:
            return self.clone()
        return self._wrap(self.game.resample_hidden(player, as_rng(rng)))

    def action_to_string(self, int action, player=None):
        raise_pending()     # (searches name their moves last: a failure inside surfaces here)
        return str(self.game.action_to_string(action, player))

    def string_to_action(self, str text, player=None):
        if self.caps.string_to_action:
            return int(self.game.string_to_action(text, player))
        return State.string_to_action(self, text, player)

    def to_notation(self):
        return self.game.to_notation()

    def render(self):
        return self.game.render() if self.caps.render else self.to_notation()

    # Searches and playouts run the C contract: surface a failure as soon as they return.
    def perft(self, int depth):
        n = State.perft(self, depth)
        raise_pending()
        return n

    def perft_divide(self, int depth):
        out = State.perft_divide(self, depth)
        raise_pending()
        return out

    def random_playout(self, rng=None):
        n = State.random_playout(self, rng)
        raise_pending()
        return n

    def heuristic_playout(self, rng=None):
        n = State.heuristic_playout(self, rng)
        raise_pending()
        return n

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.game, name)

    def __reduce__(self):
        return (PythonGameState, (self.game,))


def batch_playouts(State start, long long games, seed=0, policy="random"):
    """Play `games` playouts from `start` (random, or guided by the game's evaluation with
    policy="heuristic") through the C contract; returns (games, actions, wins by seat),
    where a game counts as a win for the seat with the single highest return."""
    cdef Rng rng = seed if isinstance(seed, Rng) else Rng(seed)
    cdef State s
    cdef long long g, actions = 0
    cdef bint guided = policy == "heuristic"
    wins = [0] * start.num_players
    for g in range(games):
        s = start.c_clone()
        actions += s.c_heuristic_playout(&rng.s) if guided else s.c_random_playout(&rng.s)
        raise_pending()
        w = s.winner()
        if w is not None:
            wins[w] += 1
    return games, actions, wins
