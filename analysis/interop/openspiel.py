"""niwa games as OpenSpiel games, and OpenSpiel bots as niwa agents (`pip install niwa[openspiel]`).

    >>> import pyspiel
    >>> from niwa.analysis.interop import openspiel as nos
    >>> names = nos.register_games()            # done on import; every installed game
    >>> {'niwa_bonsai', 'niwa_haru', 'niwa_lotus'} <= set(names)
    True
    >>> game = pyspiel.load_game("niwa_lotus(players=3,rule=pro)")
    >>> state = game.new_initial_state()
    >>> state.legal_actions()[:3]
    [0, 2, 4]

Each niwa game is one OpenSpiel Python game, `niwa_<name>`, whose parameters are the
game's variant keys with their defaults (`niwa games` lists them). A state wraps a niwa
engine state, so every OpenSpiel algorithm written against the State API (MCTSBot,
ISMCTSBot, CFR on tiny variants, evaluate_bots...) runs on the Cython engine.

Mapping (niwa and OpenSpiel share the vocabulary, so it is one to one):
- actions are the engine's action ids; `num_distinct_actions` is the game's own bound
  as the game's spec declares it;
- returns are the engine's: 1 to the winner, 0 to the others (ties split), so with 2-4
  players the game is CONSTANT_SUM with utility_sum 1; a one-player game is GENERAL_SUM;
- observation_string(p) is the engine's `information_state(p)` (what p sees now: the
  notation with hidden parts masked; the plain notation in perfect-information games);
- information_state_string(p): in a perfect-information game, the initial notation and
  the action history (as OpenSpiel's own board games do: perfect recall); in an
  imperfect-information game, p's own past actions, the step count and p's current view.
  That is not strictly perfect recall: histories that differ only in something p saw and
  the engine's view has since dropped (Haru: the flowers of finished rounds, which no
  longer affect play) share one string;
- `turn_based=True` (a game parameter, simultaneous games only) presents each
  simultaneous node as consecutive decisions, seat 0 first; the later seats do not see
  the earlier picks (they stay pending in the adapter until the last seat has chosen).
  OpenSpiel's sequential-only algorithms (MCTSBot, ISMCTSBot, CFR) need that view;
- a variant key whose default is a word but whose other choices are numbers (Lotus
  `towers`: auto|1..4) is an int parameter, 0 standing for the word.

Known limits: OpenSpiel's C++ `pyspiel.ISMCTSBot` crashes (segfault) on every game
implemented in Python, its own `python_kuhn_poker` included; use the Python
`open_spiel.python.algorithms.ismcts.ISMCTSBot`, which works through
`resample_from_infostate` (the engine's `resample_hidden`). Python ISMCTSBot has no
`restart_at`, so `evaluate_bots` cannot drive it; step it yourself.

Agents: importing this module registers `openspiel-mcts` (sims=, c=, rollouts=, time=,
solve=) and `openspiel-random` in niwa's agent registry.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np
import pyspiel

from niwa.ext.game import PLAYER_CHANCE as CHANCE
from niwa.ext.game import PLAYER_SIMULTANEOUS as SIMULTANEOUS
from niwa.ext.registry import games as niwa_games
from niwa.ext.registry import get_game
from niwa.solver.agents import Agent, register_agent
from niwa.solver.results import SearchResult

PREFIX = "niwa_"

Dynamics = pyspiel.GameType.Dynamics
ChanceMode = pyspiel.GameType.ChanceMode
Information = pyspiel.GameType.Information
Utility = pyspiel.GameType.Utility


# ---- what kind of game each niwa game is ----------------------------------------------
@dataclass(frozen=True)
class Traits:
    simultaneous: bool
    chance: bool
    perfect_information: bool


def traits_of(name: str, variant: dict) -> Traits:
    """The game's kind, as its spec declares it (tests check it against random playouts)."""
    spec = get_game(name)
    return Traits(simultaneous=spec.simultaneous(variant), chance=spec.traits.chance,
                  perfect_information=spec.traits.perfect_information)


def probe_traits(start, playouts: int = 20, seed: int = 1) -> Traits:
    """What random playouts reveal: chance and simultaneous nodes, hidden information."""
    from niwa.ext.game import Rng
    from niwa.solver.solve import has_hidden_information

    rng = Rng(seed)
    seen_chance = seen_simultaneous = hidden = False
    for _ in range(playouts):
        s = start.clone()
        while not s.is_terminal():
            p = s.current_player()
            hidden = hidden or has_hidden_information(s)
            if p == CHANCE:
                seen_chance = True
                outcomes = s.chance_outcomes()
                s.apply(outcomes[rng.below(len(outcomes))][0])
            elif p == SIMULTANEOUS:
                seen_simultaneous = True
                s.apply_joint([rng.choice(s.legal_actions(q)) for q in range(s.num_players)])
            else:
                s.apply(rng.choice(s.legal_actions()))
    return Traits(seen_simultaneous, seen_chance, not hidden)


def max_game_length(state) -> int:
    """A bound on the number of steps (actions, chance outcomes, joint actions) of a game."""
    return int(state.spec.max_game_length(state.variant))


def num_distinct_actions(state) -> int:
    return int(state.spec.num_distinct_actions(state.variant))


# ---- game and state ---------------------------------------------------------------------
def _mixed_keys(name: str) -> set[str]:
    """Variant keys whose default is a word but whose other choices are numbers (lotus
    `towers`: auto|1..4). OpenSpiel types a parameter by its default and reads `towers=3`
    in a game string as an int, so such a key is an int parameter there, 0 = the word."""
    out = set()
    for o in get_game(name).options:
        if isinstance(o.default, str) and not isinstance(o.choices, range) \
                and any(isinstance(c, int) for c in o.choices) and 0 not in o.choices:
            out.add(o.key)
    return out


def _parameter_spec(name: str) -> dict:
    """OpenSpiel parameters: the variant keys with their defaults (+ turn_based)."""
    mixed = _mixed_keys(name)
    spec = {}
    for o in get_game(name).options:
        spec[o.key] = 0 if o.key in mixed else o.default
    if traits_of(name, get_game(name).defaults()).simultaneous:
        spec["turn_based"] = False
    return spec


def _to_variant(name: str, params: dict) -> dict:
    """OpenSpiel parameters -> niwa variant settings."""
    defaults = get_game(name).defaults()
    return {k: (defaults[k] if k in _mixed_keys(name) and v == 0 else v) for k, v in params.items()}


def _to_params(name: str, variant: dict) -> dict:
    """niwa variant settings -> OpenSpiel parameters (typed like the specification)."""
    spec = _parameter_spec(name)
    out = {}
    for k, v in variant.items():
        if isinstance(spec.get(k), int) and not isinstance(spec.get(k), bool) and isinstance(v, str):
            v = 0 if v == get_game(name).defaults()[k] else int(v)
        elif isinstance(spec.get(k), str):
            v = str(v)
        out[k] = v
    return out


def _player_range(name: str) -> tuple[int, int]:
    traits = get_game(name).traits
    return traits.min_players, traits.max_players


def _game_type(name: str, traits: Traits, n_players: int | None = None,
               turn_based: bool = False) -> pyspiel.GameType:
    lo, hi = _player_range(name)
    simultaneous = traits.simultaneous and not turn_based
    constant_sum = (n_players or lo) >= 2
    return pyspiel.GameType(
        short_name=PREFIX + name,
        long_name=f"niwa {name} (Cython engine)",
        dynamics=Dynamics.SIMULTANEOUS if simultaneous else Dynamics.SEQUENTIAL,
        chance_mode=ChanceMode.EXPLICIT_STOCHASTIC if traits.chance else ChanceMode.DETERMINISTIC,
        information=(Information.PERFECT_INFORMATION if traits.perfect_information
                     else Information.IMPERFECT_INFORMATION),
        utility=Utility.CONSTANT_SUM if constant_sum else Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=hi,
        min_num_players=lo,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=False,
        parameter_specification=_parameter_spec(name),
    )


class NiwaGame(pyspiel.Game):
    """One niwa game and variant, as an OpenSpiel game."""

    niwa_name = ""      # set on the per-game subclass made by register_games()

    def __init__(self, params=None):
        params = dict(params or {})
        self.turn_based = bool(params.pop("turn_based", False))
        info = get_game(self.niwa_name)
        self._initial = info.new(**_to_variant(self.niwa_name, params))   # VariantError if bad
        self.variant = dict(self._initial.variant)
        self.traits = traits_of(self.niwa_name, self.variant)
        n = self._initial.num_players
        n_actions = num_distinct_actions(self._initial)
        game_info = pyspiel.GameInfo(
            num_distinct_actions=n_actions,
            max_chance_outcomes=n_actions if self.traits.chance else 0,
            num_players=n,
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0 if n >= 2 else None,
            max_game_length=max_game_length(self._initial) * (n if self.turn_based else 1),
        )
        given = dict(params)
        if self.turn_based:
            given["turn_based"] = True
        super().__init__(_game_type(self.niwa_name, self.traits, n, self.turn_based),
                         game_info, given)

    def new_initial_state(self):
        return NiwaSpielState(self, self._initial.clone())

    def state_from_niwa(self, niwa_state, first: int = 0):
        """An OpenSpiel state of this game at a niwa position (same game and variant).

        With turn_based, a simultaneous node is entered with seat `first` to choose first
        (an agent asked for seat p searches with p first: nobody sees p's pick).
        """
        return NiwaSpielState(self, niwa_state.clone(), first=first)

    def make_py_observer(self, iig_obs_type=None, params=None):
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return NiwaObserver(perfect_recall)


class _Core:
    """Everything a state holds, in one object that clones cheaply (OpenSpiel clones
    Python states with copy.deepcopy, which reaches here)."""

    __slots__ = ("state", "steps", "own", "pending", "first")

    def __init__(self, state, steps=0, own=None, pending=None, first=0):
        self.state = state          # the niwa engine state
        self.steps = steps          # actions applied (a joint action counts once)
        self.own = own              # per seat: linked list (prev, action) of its own actions
        #                             (kept only where information is imperfect)
        self.pending = pending      # turn_based: picks made at this simultaneous node
        self.first = first

    def __deepcopy__(self, memo):
        return _Core(self.state.clone(), self.steps, self.own,
                     None if self.pending is None else list(self.pending), self.first)


class NiwaSpielState(pyspiel.State):
    """An OpenSpiel state holding a niwa engine state (`.niwa`)."""

    def __init__(self, game: NiwaGame, niwa_state, first: int = 0):
        super().__init__(game)
        n = niwa_state.num_players
        self._core = _Core(niwa_state, 0, None if game.traits.perfect_information else [None] * n,
                           [] if game.turn_based else None, first)
        self._initial_text = game._initial.to_notation()

    @property
    def niwa(self):
        """The niwa engine state (with turn_based, picks pending here are not applied)."""
        return self._core.state

    # --- whose turn ---
    def _seat_order(self, k):
        return (self._core.first + k) % self._core.state.num_players

    def current_player(self):
        core = self._core
        p = core.state.current_player()
        if p == SIMULTANEOUS and core.pending is not None:
            return self._seat_order(len(core.pending))
        return p

    def is_terminal(self):
        return self._core.state.is_terminal()

    def is_chance_node(self):
        return self._core.state.current_player() == CHANCE

    def is_simultaneous_node(self):
        return self._core.state.current_player() == SIMULTANEOUS and self._core.pending is None

    def _legal_actions(self, player):
        return sorted(self._core.state.legal_actions(player))

    def chance_outcomes(self):
        return sorted(self._core.state.chance_outcomes())

    # --- moves ---
    def _record(self, player, action):
        """Remember a seat's own action (copy on write: clones share the lists)."""
        if self._core.own is None:
            return
        own = list(self._core.own)
        own[player] = (own[player], action)
        self._core.own = own

    def _apply_action(self, action):
        core = self._core
        s = core.state
        p = s.current_player()
        if p == SIMULTANEOUS:          # turn_based view: one seat's pick, held back
            seat = self._seat_order(len(core.pending))
            core.pending.append(action)
            self._record(seat, action)
            if len(core.pending) == s.num_players:
                joint = [0] * s.num_players
                for k, a in enumerate(core.pending):
                    joint[self._seat_order(k)] = a
                core.pending = []
                s.apply_joint(joint)
                core.steps += 1
            return
        if p >= 0:
            self._record(p, action)
        s.apply(action)
        core.steps += 1

    def _apply_actions(self, actions):
        for p, a in enumerate(actions):
            if a >= 0:
                self._record(p, a)
        self._core.state.apply_joint(list(actions))
        self._core.steps += 1

    def returns(self):
        s = self._core.state
        return s.returns() if s.is_terminal() else [0.0] * s.num_players

    def rewards(self):
        return self.returns()

    # --- strings ---
    def _action_to_string(self, player, action):
        s = self._core.state
        if player >= 0 and s.current_player() == SIMULTANEOUS:
            return s.action_to_string(action, player)
        return s.action_to_string(action)

    def observation_text(self, player):
        return self._core.state.information_state(player)

    def information_state_text(self, player):
        game = self.get_game()
        if game.traits.perfect_information:
            return self._initial_text + " | " + " ".join(map(str, self.history()))
        own, node = [], self._core.own[player]
        while node is not None:
            node, a = node
            own.append(a)
        return (f"seat {player}; own {' '.join(map(str, reversed(own))) or '-'}; "
                f"step {self._core.steps}.{len(self._core.pending or ())}; "
                + self._core.state.information_state(player))

    def resample_from_infostate(self, player_id, probability_sampler):
        """A state `player_id` cannot tell apart from this one (ISMCTSBot calls this)."""
        seed = int(probability_sampler() * (1 << 62)) if callable(probability_sampler) else 0
        clone = self.clone()
        core = clone._core
        core.state = self._core.state.resample_hidden(player_id, seed)
        if core.pending:
            # Turn-based view: the picks already made by other seats at this node are
            # hidden from player_id too; redraw them among the legal ones of the new deal.
            from niwa.ext.game import Rng

            rng = Rng(seed ^ 0x5EED)
            own = None if core.own is None else list(core.own)
            for k in range(len(core.pending)):
                seat = self._seat_order(k)
                if seat != player_id:
                    core.pending[k] = rng.choice(core.state.legal_actions(seat))
                    if own is not None:
                        own[seat] = (own[seat][0], core.pending[k])
            core.own = own
        return clone

    def __str__(self):
        return self._core.state.to_notation()


class NiwaObserver:
    """Observation (what the player sees now) or information state (perfect recall) as a
    string; niwa offers no tensors."""

    def __init__(self, perfect_recall: bool):
        self.perfect_recall = perfect_recall
        self.tensor = None
        self.dict = {}

    def set_from(self, state, player):
        pass

    def string_from(self, state, player):
        if self.perfect_recall:
            return state.information_state_text(player)
        return state.observation_text(player)


# ---- registration -------------------------------------------------------------------------
_REGISTERED: dict[str, type] = {}


def register_games() -> list[str]:
    """Register every niwa game (once) with OpenSpiel; returns the short names."""
    for name in niwa_games():
        short = PREFIX + name
        if short in _REGISTERED:
            continue
        try:
            get_game(name).new()
        except Exception:       # a game still being built (not importable yet): skip it
            continue
        cls = type(f"Niwa{name.title()}Game", (NiwaGame,), {"niwa_name": name})
        defaults = get_game(name).defaults()
        pyspiel.register_game(_game_type(name, traits_of(name, defaults)), cls)
        _REGISTERED[short] = cls
    return sorted(_REGISTERED)


def load_game(name: str, **params) -> NiwaGame:
    """The OpenSpiel game for a niwa game name and variant settings."""
    register_games()
    return _cached_game(name.strip().lower().removeprefix(PREFIX), tuple(sorted(params.items())))


@functools.lru_cache(maxsize=64)
def _cached_game(name, params):
    register_games()
    return pyspiel.load_game(PREFIX + name, dict(params))


def game_for(niwa_state, turn_based: bool | None = None) -> NiwaGame:
    """The OpenSpiel game matching a niwa state's game and variant."""
    name = niwa_state.game_name
    params = _to_params(name, niwa_state.variant)
    if turn_based is None:
        turn_based = traits_of(name, niwa_state.variant).simultaneous
    if turn_based:
        params["turn_based"] = True
    return load_game(name, **params)


# ---- OpenSpiel bots as niwa agents -----------------------------------------------------------
def timed_mcts_bot(game, uct_c, seconds, evaluator, random_state, solve=True):
    """OpenSpiel's MCTSBot, searching for `seconds` per move instead of a simulation count.

    The search is the library's own; only the stopping rule changes: once the time is
    up, the root is marked as settled, which ends MCTSBot's loop after that simulation
    (the move is still chosen from the root's children by their statistics).
    """
    from open_spiel.python.algorithms import mcts

    class TimedMCTSBot(mcts.MCTSBot):
        def mcts_search(self, state):
            self.deadline = time.perf_counter() + seconds
            self.simulations = 0
            return super().mcts_search(state)

        def _apply_tree_policy(self, root, state):
            self.simulations += 1
            # the second simulation expands the root, so there is always a move to pick
            if self.simulations >= 2 and root.outcome is None \
                    and time.perf_counter() >= self.deadline:
                root.outcome = np.zeros(game.num_players())   # stop after this simulation
            return super()._apply_tree_policy(root, state)

    return TimedMCTSBot(game, uct_c, 1 << 40, evaluator, solve=solve, random_state=random_state)


class OpenSpielMCTSAgent(Agent):
    """OpenSpiel's Python MCTSBot (random-rollout evaluator) playing through the adapter.

    Imperfect-information games: the bot searches one determinization,
    `resample_hidden(player)`, so it never reads what its seat cannot see. Simultaneous
    nodes: the bot searches the turn-based view with its own seat choosing first.
    """

    name = "openspiel-mcts"

    def __init__(self, seed=None, sims=1000, c=2.0, rollouts=1, time=0.0, solve=True):
        super().__init__(seed=seed, sims=sims, c=c, rollouts=rollouts, time=time, solve=solve)
        self.np_rng = np.random.RandomState((0 if seed is None else seed) % (1 << 32))
        self.sims, self.c, self.rollouts, self.time, self.solve = sims, c, rollouts, time, solve
        self.last_simulations = 0

    def step(self, state, player):
        from open_spiel.python.algorithms import mcts

        if not traits_of(state.game_name, state.variant).perfect_information:
            state = state.resample_hidden(player, self.rng.next_u64() >> 1)
        game = game_for(state)
        spiel_state = game.state_from_niwa(state, first=player)
        evaluator = mcts.RandomRolloutEvaluator(self.rollouts, self.np_rng)
        if self.time > 0:
            bot = timed_mcts_bot(game, self.c, self.time, evaluator, self.np_rng, self.solve)
        else:
            bot = mcts.MCTSBot(game, self.c, self.sims, evaluator, solve=self.solve,
                               random_state=self.np_rng)
        action = bot.step(spiel_state)
        self.last_simulations = getattr(bot, "simulations", self.sims)
        self._last = SearchResult(algo="openspiel-mcts", value=None, player=player,
                                  iterations=self.last_simulations)
        return int(action)


class OpenSpielRandomAgent(Agent):
    """pyspiel's uniform random bot (a check that the adapter's legal actions are the
    engine's; plays like niwa's `random`)."""

    name = "openspiel-random"

    def step(self, state, player):
        game = game_for(state)
        spiel_state = game.state_from_niwa(state, first=player)
        bot = pyspiel.make_uniform_random_bot(player, int(self.rng.next_u64() >> 33))
        return int(bot.step(spiel_state))


def register_agents() -> None:
    """Add the OpenSpiel agents to niwa's agent registry (idempotent)."""
    register_agent("openspiel-mcts", OpenSpielMCTSAgent, {
        "sims": (int, 1000, "MCTS simulations per move (ignored when time is set)"),
        "c": (float, 2.0, "UCT exploration constant"),
        "rollouts": (int, 1, "random rollouts per leaf evaluation"),
        "time": (float, 0.0, "seconds per move; 0 = use sims"),
        "solve": (bool, True, "MCTS-Solver backups of proven results"),
    }, "OpenSpiel's Python MCTSBot through the adapter (needs niwa[openspiel])")
    register_agent("openspiel-random", OpenSpielRandomAgent, {},
                   "pyspiel's uniform random bot through the adapter (needs niwa[openspiel])")


register_agents()
register_games()        # `import niwa.analysis.interop.openspiel` is enough for pyspiel.load_game
