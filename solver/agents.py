"""The built-in agents: `random`, `greedy` (one ply with the game's evaluation),
`mcts:iters=2000,c=1.4` (UCT + MCTS-Solver, chance and simultaneous nodes; ISMCTS where
something is hidden), `ismcts:...`, `alphabeta:depth=8` or `alphabeta:time=1s`, `human`,
and `best:time=0.05` (the game's strongest known agent: the spec its GameSpec publishes as
`best_agent`, resolved on the first step, with `time=`/`iters=` and any override of that
spec's parameters, e.g. `best:time=0.05,c=1.0`). `perfect:time=1s` (df-pn proofs) lives in
niwa.solver.perfect. Agents that use the game's evaluation (greedy, mcts, ismcts,
alphabeta, best) also take its weights as `w_<name>=value` (GameSpec.eval_weights; e.g.
`mcts:cutoff=10,w_free=6`), each agent its own (EvalWeights).

The pieces they stand on are declared below this module, so that nothing here is imported
back: the Agent base class (agent_base), every parameter and default (agent_params), the
registry of names (agent_registry) and the spec value (agent_spec, `AgentSpec.parse`,
`make_agent`). Their names are re-exported here, where they have always been offered.
"""

from __future__ import annotations

import time

from niwa.ext.errors import IllegalActionError
from niwa.ext.game import PLAYER_SIMULTANEOUS
from niwa.solver.agent_base import WEIGHT_PREFIX, Agent, AgentError, EvalWeights, split_weights
from niwa.solver.agent_params import EXACT_PARAMS, game_mcts_defaults, mcts_settings
from niwa.solver.agent_registry import (
    PLUGIN_GROUP,
    REGISTRY,
    AgentEntry,
    describe_agents,
    load_agent_plugins,
    register_agent,
)
from niwa.solver.agent_spec import (
    AgentSpec,
    agent_settings,
    best_agent_spec,
    best_spec,
    make_agent,
    parse_spec,
)
from niwa.solver.alphabeta import AlphaBeta
from niwa.solver.budget import Pacer
from niwa.solver.exact_moves import ExactMoves
from niwa.solver.mcts import MCTS
from niwa.solver.results import SearchResult
from niwa.solver.tables import find_table

# the names this module has always offered, now declared in the modules below it
__all__ = [
    "PLUGIN_GROUP", "REGISTRY", "WEIGHT_PREFIX", "Agent", "AgentEntry", "AgentError",
    "AgentSpec", "AlphaBetaAgent", "BestAgent", "EvalWeights", "GreedyAgent", "HumanAgent",
    "ISMCTSAgent", "MCTSAgent", "RandomAgent", "agent_settings", "best_agent_spec",
    "best_spec", "describe_agents", "game_mcts_defaults",
    "load_agent_plugins", "make_agent", "mcts_settings", "parse_human_action", "parse_spec",
    "register_agent", "split_weights",
]


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


class MCTSAgent(Agent):
    """UCT / MCTS-Solver / decoupled simultaneous-move MCTS (solver.mcts.MCTS) with a tree
    kept between moves. At a simultaneous node the action is drawn from the root's mixed
    strategy for `player`. Where something is hidden from `player` it searches as ISMCTS
    (no agent ever reads hidden data)."""

    name = "mcts"
    ismcts = False
    searches_with_mcts = True       # the game's own MCTS defaults apply (agent_settings)

    def __init__(self, seed=None, **params):
        super().__init__(seed, **params)
        self.tree = None
        self.pacer = Pacer()
        self.exact = None       # the book, the tables' root answers and live proofs
        if params.get("book", "none") != "none" or params.get("proof", 0.0) > 0 \
                or params.get("tables"):
            self.exact = ExactMoves(self.name, book=params.get("book", "none"),
                                    tables=params.get("tables", False),
                                    tt_mb=params.get("proof_mb", EXACT_PARAMS["proof_mb"][1]),
                                    cpu_time=params.get("cpu", False), quiet=True)

    def _tree(self, state):
        p = mcts_settings(state, self.params)
        ismcts = self.ismcts or state.hides_from(self._player)
        if self.tree is None or self.tree.num_players != state.num_players \
                or self.tree.ismcts != ismcts:
            self.tree = MCTS(
                state.num_players, c=p["c"], playout=p["playout"], cutoff=p["cutoff"],
                solver=p["solver"], ismcts=ismcts, sim=p["sim"], gamma=p["gamma"],
                max_nodes=p["nodes"], seed=self.rng.next_u64(), reuse=p["reuse"],
                tables=find_table(state) if p.get("tables") else None,
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

    def prepare(self, state):
        if self.exact is not None:
            self.exact.prepare(state)


class ISMCTSAgent(MCTSAgent):
    """Single-observer information-set MCTS: every iteration determinizes the position with
    resample_hidden(player), so hidden opponent data cannot influence the move."""

    name = "ismcts"
    ismcts = True


class BestAgent(Agent):
    """The strongest agent niwa knows for the game at hand: the spec the game's GameSpec
    publishes as `best_agent`, resolved on the first step (an agent learns its game from
    the state), with this agent's `time=`/`iters=` and overrides of that spec's parameters
    on top. Everything else (clock, observe, reset, prepare, analysis) goes to the resolved
    agent."""

    name = "best"

    def __init__(self, seed=None, **params):
        super().__init__(seed, **params)
        self.seed = seed
        self.inner: Agent | None = None
        self.resolved: str | None = None    # the spec actually played, once known

    def _resolve(self, state) -> Agent:
        if self.inner is None:
            resolved = best_agent_spec(state.game_name, self.params)
            self.resolved = str(resolved)
            self.inner = make_agent(resolved, seed=self.seed)
            # the resolved agent's own time, for moves this agent is given none (only a
            # `time` override changes it)
            self._own_time = best_agent_spec(state.game_name).params.get("time")
        return self.inner

    def step(self, state, player):
        inner = self._resolve(state)
        inner.clock = self.clock
        # this move's time: a served engine replaces params["time"] for one move (go
        # movetime), after the resolved agent took the params it was made with
        time_now = self.params.get("time", self._own_time)
        if time_now is None:
            inner.params.pop("time", None)
        else:
            inner.params["time"] = time_now
        action = inner.step(state, player)
        self._last = self.inner.analysis()
        return action

    def observe(self, state, action):
        if self.inner is not None:
            self.inner.observe(state, action)

    def reset(self):
        if self.inner is not None:
            self.inner.reset()

    def prepare(self, state):
        self._resolve(state).prepare(state)


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
        legal = state.legal_actions(player)
        while True:
            text = self.prompt(f"player {player} move: ").strip()
            try:
                return parse_human_action(state, player, text, legal)
            except IllegalActionError as e:
                self.echo(str(e))


def parse_human_action(state, player, text, legal=None) -> int:
    """An action from what a person typed: its name (as listed) or its id."""
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
