"""The agents registry: one spec string names an agent everywhere (CLI, tournaments,
analysis). A spec is `name` or `name:key=value,key=value`, e.g. `mcts:iters=2000,c=1.4`.

Agents: `random`, `greedy` (one ply with the game's evaluation), `mcts:iters=2000,c=1.4`
(UCT + MCTS-Solver, chance and simultaneous nodes; ISMCTS where something is hidden),
`ismcts:...`, `alphabeta:depth=8` or `alphabeta:time=1s`, `perfect:time=1s` (df-pn proofs), `human`,
and `best:time=0.05` (the game's strongest known agent: the spec its GameSpec publishes as
`best_agent`, resolved on the first step, with `time=`/`iters=` and any override of that
spec's parameters, e.g. `best:time=0.05,c=1.0`).
`describe_agents()` lists every parameter with its default. Agents that use the game's
evaluation (greedy, mcts, ismcts, alphabeta, best) also take its weights as `w_<name>=value`
(GameSpec.eval_weights; e.g. `mcts:cutoff=10,w_free=6`), each agent its own (EvalWeights).

An agent is asked for one action at a time:
    agent.step(state, player) -> action
`player` is the seat to act for; at a SIMULTANEOUS node it says whose choice is wanted
(agents must not read the other players' pending choices). Agents that keep a tree may
implement `observe(state, action)` / `reset()`; the defaults do nothing.

Clocks: before each move a game loop with time controls sets `agent.clock` to the seat's
`ClockReading` (seconds left, increment, moves to go; None without a clock). Agents may
ignore it; the built-in searchers given no `time=` and no `iters=`/`depth=` then choose
their own time per move from it (niwa.solver.budget).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from importlib.metadata import entry_points

from niwa.ext.errors import NiwaError
from niwa.ext.game import PLAYER_SIMULTANEOUS, Rng
from niwa.ext.registry import find_game
from niwa.solver.budget import ClockReading, Pacer
from niwa.solver.results import SearchResult


class AgentError(NiwaError):
    """An unknown agent, or a bad parameter in an agent spec."""


class Agent:
    name = "agent"
    clock: ClockReading | None = None    # set by a game loop with clocks before each step
    _last: SearchResult | None = None

    def __init__(self, seed: int | None = None, **params):
        self.rng = Rng(0 if seed is None else seed)
        self.params = params
        self.weights = EvalWeights(self.name, params)

    def step(self, state, player: int) -> int:
        raise NotImplementedError

    def observe(self, state, action) -> None:
        """Told every action applied to the game (for tree reuse); optional."""

    def reset(self) -> None:
        """A new game starts."""

    def analysis(self) -> SearchResult | None:
        """What the agent found at its last step (value, visits, line...), for logs; None
        when it reports nothing. Searching agents keep their search's result as-is."""
        return self._last

    def __repr__(self):
        return f"<{type(self).__name__} {self.params}>"


WEIGHT_PREFIX = "w_"     # agent parameter w_<name>: the game's evaluation weight <name>


def split_weights(params: dict) -> tuple[dict, dict]:
    """(the parameters other than weights, {weight name: value}) of an agent's params."""
    rest = {k: v for k, v in params.items() if not k.startswith(WEIGHT_PREFIX)}
    return rest, {k[len(WEIGHT_PREFIX):]: v for k, v in params.items()
                  if k.startswith(WEIGHT_PREFIX)}


class EvalWeights:
    """An agent's `w_<name>=value` parameters: checked against the game's declared weights
    (GameSpec.eval_weights) when the agent first sees the game, then set on a copy of each
    position it searches, so its evaluation (and the game's heuristic playout policy) uses
    them while another agent in the same process keeps its own."""

    def __init__(self, agent: str, params: dict):
        self.agent = agent
        self.given = split_weights(params)[1]
        self.game: str | None = None
        self.values: list[float] | None = None

    def check(self, game: str) -> list[float]:
        """The full weight vector for `game`; AgentError for an unknown or bad weight."""
        if self.game != game:
            spec = find_game(game)
            if spec is None or not spec.eval_weights:
                raise AgentError(f"agent {self.agent!r}: {game} declares no evaluation "
                                 f"weights, so {WEIGHT_PREFIX}{next(iter(self.given))} "
                                 "means nothing")
            try:
                self.values = spec.weight_values(self.given, WEIGHT_PREFIX)
            except ValueError as e:
                raise AgentError(f"agent {self.agent!r}: {e}") from None
            self.game = game
        return self.values

    def apply(self, state):
        """`state` itself without weights given, else a copy evaluating with them."""
        if not self.given:
            return state
        values = self.check(state.game_name)
        weighted = state.clone()
        weighted.set_weights(values)
        return weighted


class RandomAgent(Agent):
    """Uniformly random legal action."""

    name = "random"

    def step(self, state, player):
        return self.rng.choice(state.legal_actions(player))


def _is_simultaneous(state) -> bool:
    return state.current_player() == PLAYER_SIMULTANEOUS


class GreedyAgent(Agent):
    """One ply with the game's evaluation: the action whose result evaluates best for the
    mover (a won position is worth 1). At a simultaneous node each own action is scored
    against the other players' actions chosen uniformly at random. Ties: random."""

    name = "greedy"

    def step(self, state, player):
        actions = state.legal_actions(player)
        if len(actions) == 1:
            return actions[0]
        state = self.weights.apply(state)
        scores = []
        for a in actions:
            if _is_simultaneous(state):
                total = 0.0
                samples = 8
                for _ in range(samples):
                    joint = [a if q == player else self.rng.choice(state.legal_actions(q) or [-1])
                             for q in range(state.num_players)]
                    child = state.clone()
                    child.apply_joint(joint)
                    total += _value_for(child, player)
                scores.append(total / samples)
            else:
                scores.append(_value_for(state.child(a), player))
        top = max(scores)
        self._last = SearchResult(algo="greedy", value=top, player=player)
        return self.rng.choice([a for a, v in zip(actions, scores, strict=True) if v >= top - 1e-12])


def _value_for(state, player) -> float:
    if state.is_terminal():
        return state.returns()[player]
    return state.evaluate(player)


def hides_something_from(state, player) -> bool:
    """True when `player` cannot see the whole position (e.g. the opponent's hand); for a
    game with no notation to compare, what its spec declares."""
    try:
        return state.information_state(player) != state.to_notation()
    except NotImplementedError:
        from niwa.ext.registry import spec_of

        spec = spec_of(state)
        return spec is not None and spec.traits.hidden_information


class MCTSAgent(Agent):
    """UCT / MCTS-Solver / decoupled simultaneous-move MCTS (solver.mcts.MCTS) with a tree
    kept between moves. At a simultaneous node the action is drawn from the root's mixed
    strategy for `player`. Where something is hidden from `player` it searches as ISMCTS
    (no agent ever reads hidden data)."""

    name = "mcts"
    ismcts = False

    def __init__(self, seed=None, **params):
        super().__init__(seed, **params)
        self.tree = None
        self.pacer = Pacer()
        self.exact = None       # the book, the tables' root answers and live proofs
        if params.get("book", "none") != "none" or params.get("proof", 0.0) > 0 \
                or params.get("tables"):
            from niwa.solver.exact_moves import ExactMoves

            self.exact = ExactMoves(self.name, book=params.get("book", "none"),
                                    tables=params.get("tables", False),
                                    tt_mb=params.get("proof_mb", _EXACT_PARAMS["proof_mb"][1]),
                                    cpu_time=params.get("cpu", False), quiet=True)

    def _tree(self, state):
        from niwa.solver.mcts import MCTS

        p = mcts_settings(state, self.params)
        ismcts = self.ismcts or hides_something_from(state, self._player)
        if self.tree is None or self.tree.num_players != state.num_players \
                or self.tree.ismcts != ismcts:
            self.tree = MCTS(
                state.num_players, c=p["c"], playout=p["playout"], cutoff=p["cutoff"],
                solver=p["solver"], ismcts=ismcts, sim=p["sim"], gamma=p["gamma"],
                max_nodes=p["nodes"], seed=self.rng.next_u64(), reuse=p["reuse"],
                tables=_tables_for(state) if p.get("tables") else None,
                minimax=p["minimax"], bias=p["bias"], eps=p["eps"])
        return self.tree

    def step(self, state, player):
        actions = state.legal_actions(player)
        if len(actions) == 1 and not _is_simultaneous(state):
            return actions[0]
        iters = self.params.get("iters", 0 if self.params.get("time") else 2000)
        time_limit = self.params.get("time", 0.0)
        paced = self.clock is not None and "iters" not in self.params and not time_limit
        if paced:
            iters, time_limit = 0, self.pacer.time_limit(self.clock, state)
        self._player = player
        cpu = self.params.get("cpu", False)
        clock = time.thread_time if cpu else time.perf_counter     # the search's clock
        if self.exact is not None:
            self.exact.prepare(state)       # (loads the book and the table once, untimed)
        t0, wall0 = clock(), time.perf_counter()
        result = self._exact_move(state, player, actions, time_limit)
        if result is None:
            left = max(time_limit - (clock() - t0), 1e-4) if time_limit else 0.0
            result = self._tree(state).search(self.weights.apply(state), iterations=iters,
                                              time_limit=left, observer=player, cpu_time=cpu)
        if paced:
            self.pacer.took(time_limit, time.perf_counter() - wall0)
        self._last = result
        if _is_simultaneous(state):
            return self.tree.sample_strategy(player, self.rng)
        return result.best

    def _exact_move(self, state, player, actions, time_limit):
        """The book's move for the seat it wins, the table's move inside the endgame table,
        else a proven move from a df-pn attempt given `proof` of the time budget (none
        without one); None when nothing exact is known (or the game is not for proofs)."""
        if self.exact is None or not self.exact.applies(state):
            return None
        result = self.exact.book_move(state, player, actions) or self.exact.table_move(state)
        share = self.params.get("proof", 0.0)
        if result is None and share > 0 and time_limit > 0:
            # the attempt and its follow-up (a tenth more) stay within share * budget
            result = self.exact.proof_move(state, share * time_limit / 1.1)
        if result is not None and result.proven and result.best in actions:
            return result
        return None

    def reset(self):
        if self.tree is not None:
            self.tree.clear()
        if self.exact is not None:
            self.exact.reset()


class ISMCTSAgent(MCTSAgent):
    """Single-observer information-set MCTS: every iteration determinizes the position with
    resample_hidden(player), so hidden opponent data cannot influence the move."""

    name = "ismcts"
    ismcts = True


class BestAgent(Agent):
    """The strongest agent niwa knows for the game at hand: the spec the game's GameSpec
    publishes as `best_agent`, resolved on the first step (an agent learns its game from
    the state), with this agent's `time=`/`iters=` and overrides of that spec's parameters
    on top. Everything else (clock, observe, reset, analysis) goes to the resolved agent."""

    name = "best"

    def __init__(self, seed=None, **params):
        super().__init__(seed, **params)
        self.seed = seed
        self.inner: Agent | None = None
        self.resolved: str | None = None    # the spec actually played, once known

    def step(self, state, player):
        if self.inner is None:
            self.resolved = best_spec(state.game_name, self.params)
            self.inner = make_agent(self.resolved, seed=self.seed)
        self.inner.clock = self.clock
        action = self.inner.step(state, player)
        self._last = self.inner.analysis()
        return action

    def observe(self, state, action):
        if self.inner is not None:
            self.inner.observe(state, action)

    def reset(self):
        if self.inner is not None:
            self.inner.reset()


def best_spec(game: str, overrides: dict | None = None) -> str:
    """The spec `best` plays on `game`: the game's published `best_agent` (plain `mcts` for
    a game outside the registry) with `overrides` (parameter -> value) replacing or adding
    parameters, checked as any spec is (AgentError when the resolved agent lacks one).

    >>> best_spec("lotus", {"time": 0.05}).endswith("time=0.05")
    True
    """
    spec = find_game(game)
    name, params = parse_spec(spec.best_agent if spec is not None else "mcts")
    merged = {**params, **(overrides or {})}
    text = name + (":" + ",".join(f"{k}={v}" for k, v in merged.items()) if merged else "")
    try:
        parse_spec(text)
    except AgentError as e:
        raise AgentError(f"best on {game} plays {name}: {e}") from None
    return text


class AlphaBetaAgent(Agent):
    """Iterative-deepening alpha-beta (solver.alphabeta.AlphaBeta) to `depth` plies or for
    `time` seconds. Hidden information is never read: the search runs on
    resample_hidden(player) (`dets` determinizations, the most chosen action wins)."""

    name = "alphabeta"

    def __init__(self, seed=None, **params):
        super().__init__(seed, **params)
        self.searcher = None
        self.pacer = Pacer()

    def step(self, state, player):
        from niwa.solver.alphabeta import AlphaBeta

        actions = state.legal_actions(player)
        if len(actions) == 1 and not _is_simultaneous(state):
            return actions[0]
        if self.searcher is None or self.searcher.num_players != state.num_players:
            self.searcher = AlphaBeta(state.num_players, tt_bits=self.params.get("tt", 20))
        time_limit = self.params.get("time", 0.0)
        paced = self.clock is not None and "depth" not in self.params and not time_limit
        if paced:
            time_limit = self.pacer.time_limit(self.clock, state)
        depth = self.params.get("depth", 64 if time_limit else 8)
        t0 = time.perf_counter()
        dets = max(1, self.params.get("dets", 1))
        votes = {}
        for _ in range(dets):
            view = self.weights.apply(state).resample_hidden(player, self.rng.next_u64())
            r = self.searcher.search(view, depth=depth, time_limit=time_limit / dets,
                                     player=player)
            self._last = r
            if _is_simultaneous(state):
                choice = self._sample_row(r, actions)
            else:
                choice = r.best if r.best in actions else self.rng.choice(actions)
            votes[choice] = votes.get(choice, 0) + 1
        if paced:
            self.pacer.took(time_limit, time.perf_counter() - t0)
        return max(votes, key=lambda a: (votes[a], -actions.index(a)))

    def _sample_row(self, r, actions):
        strategy = r.strategy
        if not strategy or not strategy["rows"]:
            return self.rng.choice(actions)
        u = self.rng.random()
        for a, prob in zip(strategy["rows"], strategy["row_strategy"], strict=True):
            u -= prob
            if u < 0:
                return a
        return strategy["rows"][-1]

    def reset(self):
        self.searcher = None


class HumanAgent(Agent):
    """A person at the terminal: reads an action name or id from stdin. `niwa play`
    drives humans itself (board, numbered moves, undo); this is the plain fallback."""

    name = "human"

    def __init__(self, seed=None, prompt=input, echo=print, **params):
        super().__init__(seed, **params)
        self.prompt = prompt
        self.echo = echo

    def step(self, state, player):
        from niwa.ext.errors import IllegalActionError

        legal = state.legal_actions(player)
        while True:
            text = self.prompt(f"player {player} move: ").strip()
            try:
                return parse_human_action(state, player, text, legal)
            except IllegalActionError as e:
                self.echo(str(e))


def parse_human_action(state, player, text, legal=None) -> int:
    """An action from what a person typed: its name (as listed) or its id."""
    from niwa.ext.errors import IllegalActionError

    legal = state.legal_actions(player) if legal is None else legal
    text = text.strip()
    names = {state.action_to_string(a, player): a for a in legal}
    if text in names:
        return names[text]
    if text.isascii() and text.lstrip("-").isdigit() and len(text) <= 18 \
            and int(text) in legal:
        return int(text)
    lowered = {k.lower(): v for k, v in names.items()}
    if text.lower() in lowered:
        return lowered[text.lower()]
    raise IllegalActionError(
        f"unknown or illegal move {text!r}; legal: " + ", ".join(names))


_MCTS_PARAMS = {
    "iters": (int, 2000, "iterations per move (default 2000 unless time is given)"),
    "time": (float, 0.0, "seconds per move, e.g. time=1s"),
    "cpu": (bool, False, "time= counts the search thread's CPU seconds, not wall-clock "
                         "seconds (fair budgets on a loaded machine)"),
    "c": (float, 1.4, "UCT exploration constant"),
    "playout": (str, "random", "random | heuristic (the game's own policy, else guided by its "
                               "evaluation) | greedy (epsilon-greedy on the evaluation)"),
    "eps": (float, 0.1, "greedy playouts: share of uniformly random moves"),
    "cutoff": (int, -1, "stop playouts after this many plies and use the evaluation"),
    "minimax": (float, 0.0, "implicit minimax backups: weight of the evaluation's max^n "
                            "value in selection (0 = off)"),
    "bias": (float, 0.0, "progressive bias: weight of the evaluation, fading as 1/visits"),
    "solver": (bool, True, "MCTS-Solver: back up proven wins/losses"),
    "sim": (str, "ucb", "simultaneous nodes: ucb | rm (regret matching) | exp3"),
    "gamma": (float, 0.1, "exploration of rm / exp3"),
    "nodes": (int, 1_000_000, "node cap (memory bound)"),
    "reuse": (bool, True, "keep the tree between moves"),
}


def game_mcts_defaults(state) -> dict:
    """The MCTS settings a game tunes for itself (its spec's mcts_defaults), e.g. a
    smaller exploration constant where playout results are close together; none for
    games outside the registry (the test toys)."""
    spec = find_game(state.game_name)
    return dict(spec.mcts_defaults) if spec is not None else {}


def mcts_settings(state, params: dict) -> dict:
    """Every MCTS setting for a search of `state`: the spec's own values over the game's
    defaults over the generic defaults."""
    return {**{k: v[1] for k, v in _MCTS_PARAMS.items()}, **game_mcts_defaults(state), **params}


def _tables_for(state):
    """The endgame table of `state`'s variant in the default folder ($NIWA_TABLES, else
    ~/.cache/niwa/tables), or None (agents with tables=true)."""
    from niwa.solver.tables import find_table

    return find_table(state)


_TABLES_PARAM = (bool, False, "exact values from the endgame tables of the variant in "
                              "$NIWA_TABLES (else ~/.cache/niwa/tables), if built")
# MCTS's exact moves (solver.exact_moves), for games the df-pn proof search can decide
# (two players, deterministic, alternating, perfect information); ignored in other games
_EXACT_PARAMS = {
    "tables": (bool, False, "exact values from the endgame tables of the variant in "
                            "$NIWA_TABLES (else ~/.cache/niwa/tables), if built: at the "
                            "leaves, and the table's move when the position is inside it"),
    "book": (str, "none", "opening book (two-player proof games): auto (the variant's book, "
                          "from `niwa book build` or the package), none, or a book file's "
                          "path; its move is played for the seat the book wins"),
    "proof": (float, 0.0, "share of the move's time budget (time= or the clock; none "
                          "under iters= alone) given first to a df-pn proof attempt "
                          "(two-player proof games; 0 = off): a proven win plays a proving "
                          "move, a proven loss the hardest-to-refute one, else MCTS "
                          "searches for the rest of the budget"),
    "proof_mb": (float, 256.0, "proof table in MB (one per process, shared with `perfect`, "
                               "kept across moves and games of the same variant)"),
}


def _perfect_agent(seed=None, **params):
    """solver.perfect.PerfectAgent, imported when first built (it builds on this module)."""
    from niwa.solver.perfect import PerfectAgent

    return PerfectAgent(seed=seed, **params)


@dataclass
class AgentSpec:
    factory: type
    params: dict = field(default_factory=dict)   # name -> (type, default, help)
    help: str = ""
    # also accepts any parameter of another registered agent, kept as text and checked when
    # the agent knows what it plays (the `best` agent's overrides)
    open_params: bool = False
    # also accepts w_<name>=value: the game's evaluation weight <name> (EvalWeights)
    weights: bool = False


REGISTRY: dict[str, AgentSpec] = {
    "random": AgentSpec(RandomAgent, {}, "uniformly random legal action"),
    "greedy": AgentSpec(GreedyAgent, {}, "one ply with the game's evaluation",
                        weights=True),
    "mcts": AgentSpec(MCTSAgent, {**_MCTS_PARAMS, **_EXACT_PARAMS},
                      "UCT with MCTS-Solver, chance and "
                      "simultaneous nodes, e.g. mcts:iters=2000,c=1.4", weights=True),
    "ismcts": AgentSpec(ISMCTSAgent, {k: v for k, v in _MCTS_PARAMS.items() if k != "solver"},
                        "single-observer information-set MCTS, e.g. ismcts:iters=2000",
                        weights=True),
    "alphabeta": AgentSpec(AlphaBetaAgent, {
        "depth": (int, 8, "plies (default 8, or as deep as time allows)"),
        "time": (float, 0.0, "seconds per move, e.g. time=1s"),
        "tt": (int, 20, "log2 of the transposition-table entries"),
        "dets": (int, 1, "determinizations when something is hidden"),
    }, "iterative-deepening alpha-beta, e.g. alphabeta:depth=8 or alphabeta:time=1s",
        weights=True),
    "human": AgentSpec(HumanAgent, {}, "a person typing moves at the terminal"),
    "best": AgentSpec(BestAgent, {
        "time": (float, 0.0, "seconds per move, e.g. time=0.05"),
        "iters": (int, 0, "iterations per move (MCTS-based best agents)"),
    }, "the game's strongest known agent (its GameSpec's best_agent, see `niwa agents` "
       "below), e.g. best:time=0.05; any parameter of that agent may be overridden, e.g. "
       "best:time=0.05,c=1.0", open_params=True, weights=True),
    "perfect": AgentSpec(_perfect_agent, {
        "time": (float, 1.0, "seconds of proof search per move (its follow-up as long again)"),
        "tt_mb": (float, 256.0, "proof table in MB, one per process, kept across moves and "
                                "games of the same variant"),
        "fallback": (str, "mcts", "the agent that moves when no proof is found in time "
                                  "(one parameter at most: fallback=mcts:iters=500)"),
        # on by default: with the tables built, perfect wins every game it should (README)
        "tables": (bool, True, _TABLES_PARAM[2]),
        "book": (str, "auto", "opening book: auto (the variant's book from `niwa book "
                              "build` or the package), none, or a book file's path"),
    }, "plays its opening book, else proven wins from df-pn proofs (two-player "
       "perfect-information games), else the hardest-to-refute move, else its fallback, "
       "e.g. perfect:time=1s"),
}


PLUGIN_GROUP = "niwa.agents"
_plugins_loaded = False


def register_agent(name: str, factory, params: dict | None = None, help: str = "") -> None:
    REGISTRY[name] = AgentSpec(factory, params or {}, help)


def load_agent_plugins() -> None:
    """Register the agents of installed packages, once: every entry point of the
    `niwa.agents` group names a zero-argument callable that calls register_agent(). An
    entry point that cannot be imported (its optional dependency is missing, as
    niwa[openspiel] without open_spiel) is skipped: its agents are simply not offered."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            register = ep.load()
        except ImportError:
            continue
        register()


def parse_spec(spec: str) -> tuple[str, dict]:
    """'mcts:iters=200,c=1.4' -> ('mcts', {'iters': 200, 'c': 1.4}) with types checked."""
    load_agent_plugins()
    spec = spec.strip()
    name, _, rest = spec.partition(":")
    name = name.strip().lower()
    if name not in REGISTRY:
        raise AgentError(f"unknown agent {name!r}; available: {', '.join(sorted(REGISTRY))}")
    entry = REGISTRY[name]
    params = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            raise AgentError(f"agent parameter {item!r} in {spec!r} should be key=value")
        if key in params:
            raise AgentError(f"agent {name!r} parameter {key} is given twice in {spec!r}")
        if key.startswith(WEIGHT_PREFIX) and entry.weights:
            params[key] = _weight_value(name, key, value.strip())
            continue
        if key not in entry.params and entry.open_params and any(
                key in other.params for other in REGISTRY.values()):
            params[key] = value.strip()     # checked once the agent knows what it plays
            continue
        if key not in entry.params:
            known = ", ".join(entry.params) or "none"
            raise AgentError(f"agent {name!r} has no parameter {key!r}; parameters: {known}")
        typ = entry.params[key][0]
        try:
            params[key] = _convert(typ, value.strip())
        except ValueError:
            raise AgentError(
                f"agent {name!r} parameter {key}={value!r} should be {typ.__name__}"
            ) from None
        allowed = _CHOICES.get(key)
        if allowed and params[key] not in allowed:
            raise AgentError(f"agent {name!r} parameter {key}={value!r} should be one of "
                             f"{', '.join(allowed)}")
        if typ in (int, float):
            _check_range(name, key, value.strip(), params[key])
    return name, params


def _weight_value(agent: str, key: str, text: str) -> float:
    """A `w_<name>=` value as a finite float (its name and range are checked against the
    game when the agent first sees it, EvalWeights.check)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise AgentError(f"agent {agent!r} weight {key}={text!r} should be a number") from None
    if not math.isfinite(value):
        raise AgentError(f"agent {agent!r} weight {key}={text} should be a finite number")
    return value


_CHOICES = {"playout": ("random", "heuristic", "greedy"), "sim": ("ucb", "rm", "exp3")}
# what each number means bounds it (low, high, low excluded?): a value outside could only
# hang a searcher (time=inf, nan), overflow its C types (iters=1e20) or mean nothing (c=-1)
_RANGES = {
    "iters": (1, 10**9, False),         # ~an hour of MCTS at the fastest playouts
    "time": (0.0, 86_400.0, False),     # seconds per move; 0 = no time budget
    "c": (0.0, 100.0, False),
    "cutoff": (-1, 10**6, False),       # -1 = play out to the end
    "gamma": (0.0, 1.0, True),
    "eps": (0.0, 1.0, False),
    "minimax": (0.0, 1.0, False),
    "proof": (0.0, 0.9, False),         # share of the budget; MCTS keeps at least a tenth
    "proof_mb": (1.0, 65_536.0, False),
    "bias": (0.0, 100.0, False),
    "nodes": (2, 10**9, False),
    "depth": (1, 500, False),
    "tt": (10, 28, False),              # as `niwa solve --tt`: 2^28 entries of 24 bytes
    "dets": (1, 10_000, False),
}
_INT64 = 2**63 - 1      # any other integer parameter of a registered agent fits a C long long


def _check_range(agent: str, key: str, text: str, value) -> None:
    """A number parameter must be finite and within its meaning (one-line AgentError)."""
    import math

    if isinstance(value, float) and not math.isfinite(value):
        raise AgentError(f"agent {agent!r} parameter {key}={text} should be a finite number")
    low, high, low_open = _RANGES.get(key, (-_INT64, _INT64, False))
    if value < low or value > high or (low_open and value == low):
        lowest = ("positive" if (low_open and low == 0) or low == 1
                  else f"above {low}" if low_open else f"at least {low}")
        raise AgentError(f"agent {agent!r} parameter {key}={text} should be {lowest} and at "
                         f"most {high}")


def _convert(typ, value: str):
    if typ is bool:
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(value)
    if typ is float and value.endswith("s"):   # time budgets like 1s / 0.5s
        value = value[:-1]
    return typ(value)


def agent_settings(spec: str, game: str) -> dict:
    """Every parameter of the agent `spec` names on `game`, defaults filled in (the game's
    own MCTS defaults included): what a run records so that its agents can be rebuilt
    exactly even if defaults change later."""
    from niwa.ext.registry import get_game

    name, params = parse_spec(spec)
    if name == "best":     # what it resolves to on this game, fully (and checked here)
        resolved = best_spec(game, params)
        return {**agent_settings(resolved, game), "agent": "best", "resolves_to": resolved}
    entry = REGISTRY[name]
    settings = {key: default for key, (_, default, _) in entry.params.items()}
    if isinstance(entry.factory, type) and issubclass(entry.factory, MCTSAgent):
        settings.update(get_game(game).mcts_defaults)
    return {"agent": name, **settings, **params}


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build an agent from its spec string; AgentError lists what exists when it's wrong."""
    name, params = parse_spec(spec)
    agent = REGISTRY[name].factory(seed=seed, **params)
    agent.spec = spec
    return agent


def describe_agents() -> list[tuple[str, str, dict]]:
    load_agent_plugins()
    return [(n, e.help, e.params) for n, e in sorted(REGISTRY.items())]

