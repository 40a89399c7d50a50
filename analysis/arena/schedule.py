"""Schedules: which games are played, in which seats, with which seeds.

A schedule is a pure function of its configuration, so a run can be cut anywhere and
finished later (resume), and every game's outcome depends only on the seed and the game's
index in the schedule, never on which worker or executor played it. It is generated
lazily: any game is computed from its index, and the number of games arithmetically, so
memory does not grow with the number of games.

Tables and seat orders. A *table* is the set of agents that sit down together (two agents
in a two-player game). Every round plays every table in every seat order (all
permutations, so each agent sits in each seat, and after each other agent, equally often)
on one fresh deal shared by the whole round: the same deal with seats swapped, as opening
pairs in chess, so the luck of the deal cancels. Game ids run round by round, table by
table, seat order by seat order.

Openings. With an opening suite (arena.openings), round r starts from the suite's
opening for r instead of the deal's initial position: every table and seat order of the
round plays it, so each opening is played with the seats swapped (rotated).

Seeds. deal_seed = H(seed, "deal", round) (the deal and the chance stream of every game of
the round); agent seed = H(seed, "agent", game_id, seat); H is BLAKE2b, stable everywhere.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field

from niwa.ext.errors import NiwaError
from niwa.solver.agent_spec import AgentSpec
from niwa.solver.time_control import parse_time_control

FORMATS = ("round-robin", "gauntlet")


class TournamentError(NiwaError):
    """A tournament that cannot be set up, resumed or run (one-line message)."""


MAX_GAME_ID = 2**63 - 1     # game ids fit a signed 64-bit integer (every CSV reader's)
MAX_MOVE_SECONDS = 86_400.0  # a day per move: the longest budget that means anything
MAX_PLIES = 10**9
MAX_SEED = 2**64 - 1


def identity_digest(identity: dict) -> str:
    """A digest of a run's identity, kept beside it in the run's record: a record edited
    by hand (its seed, say) no longer matches it, and resume refuses it."""
    text = json.dumps(identity, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def derive_seed(root: int, *labels) -> int:
    """A 63-bit seed from the tournament seed and labels (e.g. 'agent', game_id, seat)."""
    text = ":".join(str(x) for x in (root, *labels)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 1


@dataclass
class TournamentConfig:
    """Everything that fixes the schedule and the games' outcomes (the resume identity)."""

    game: str
    agents: list[str]
    players: int = 2
    variant: dict = field(default_factory=dict)   # the full variant, defaults filled in
    format: str = "round-robin"
    rounds: int = 1
    seed: int = 1
    max_plies: int | None = None
    move_time: float | None = None      # seconds per move for every agent
    time_margin: float = 0.5            # slack over an agent's own `time=` budget
    time_control: str | None = None     # --tc for every agent (a spec's tc= overrides it)
    sprt: dict | None = None            # SprtSpec.as_dict()
    openings: dict | None = None        # the opening suite (arena.openings.load_suite)
    # spec -> its label when it has a name (an engine's name= or handshake `id name`); found
    # when the run is set up, not part of the identity
    names: dict | None = None

    def identity(self) -> dict:
        # through JSON, so that a config read back from tournament.json compares equal
        data = asdict(self)
        data.pop("names")
        return json.loads(json.dumps(data, default=str))

    @property
    def labels(self) -> list[str]:
        """Agent names as shown in tables: the spec, or its name (`names`) unless another
        agent has the same; #2, #3... for repeated specs."""
        names = self.names or {}
        base = {spec: names.get(spec, spec) for spec in dict.fromkeys(self.agents)}
        shown = list(base.values())
        base = {spec: label if shown.count(label) == 1 else spec
                for spec, label in base.items()}
        seen: dict[str, int] = {}
        out = []
        for spec in self.agents:
            seen[spec] = seen.get(spec, 0) + 1
            out.append(base[spec] if seen[spec] == 1 else f"{base[spec]}#{seen[spec]}")
        return out


@dataclass(frozen=True)
class GameTask:
    """One scheduled game, self-contained so that any worker can play it."""

    game_id: int
    round: int
    table: int
    game: str
    variant: tuple          # sorted (key, value) pairs
    deal_seed: int
    seats: tuple            # agent index by seat
    specs: tuple            # AgentSpec by seat, without tc= (parsed once, built by the worker)
    labels: tuple           # agent label by seat (the spec, #2.. for a repeated spec)
    agent_seeds: tuple
    time_limits: tuple      # seconds per move by seat, or None
    max_plies: int | None
    extra: tuple = ()       # (column, value) pairs the game log adds to the row
    time_controls: tuple = ()   # arena.clock.TimeControl (or None) by seat; () = no clocks
    opening: object = None      # arena.openings.Opening the game starts from; None: the deal


def seat_orders(n: int) -> list[tuple[int, ...]]:
    """All seat permutations of an n-player table (2, 6 or 24): perfectly balanced."""
    return list(itertools.permutations(range(n)))


def tables_for(n_agents: int, n_players: int, fmt: str) -> list[tuple[int, ...]]:
    if fmt not in FORMATS:
        raise TournamentError(f"unknown --format {fmt!r}; expected {' or '.join(FORMATS)}")
    if n_agents < 2:
        raise TournamentError("a tournament needs at least 2 agents (--agents A B ...)")
    if n_agents < n_players:
        raise TournamentError(
            f"{n_players}-player games need at least {n_players} agents; repeat a spec to "
            "field the same agent twice (e.g. --agents mcts random random)")
    if fmt == "round-robin":
        return list(itertools.combinations(range(n_agents), n_players))
    return [(0, *rest) for rest in itertools.combinations(range(1, n_agents), n_players - 1)]


def time_limit_for(spec, move_time: float | None, margin: float) -> float | None:
    """Per-move limit: --move-time, else the agent's own `time=` budget plus the margin.
    `spec` is an AgentSpec or its text."""
    if move_time is not None:
        return float(move_time)
    params = AgentSpec.parse(spec).params
    if isinstance(params.get("time"), int | float) and params["time"] > 0:
        return float(params["time"]) + margin
    return None


def agent_clocks(config: TournamentConfig) -> tuple[list[AgentSpec], list]:
    """Each agent's spec as its constructor sees it (an AgentSpec without `tc=`) and its
    time control: its own `tc=`, else --tc, else None."""
    common = parse_time_control(config.time_control)
    specs, controls = [], []
    for text in config.agents:
        spec = AgentSpec.parse(text)
        specs.append(spec.without_clock())
        controls.append(spec.clock or common)
    return specs, controls


class Schedule(Sequence):
    """The games of one configuration, computed from their index (nothing is stored).

    A one-player configuration (a solo cell of an experiment) has one table and one seat
    order: one game per round. `first_id` offsets the game ids and `extra` adds columns to
    every row (an experiment's cells share one log).
    """

    def __init__(self, config: TournamentConfig, first_id: int = 0, extra: tuple = ()):
        self.config = config
        n = config.players
        self.tables = [(0,)] if n == 1 else tables_for(len(config.agents), n, config.format)
        self.orders = seat_orders(n)
        self.first_id, self.extra = first_id, extra
        self.variant = tuple(sorted(config.variant.items()))
        self.labels = config.labels
        self.agent_specs, self.controls = agent_clocks(config)    # each spec parsed once
        self.limits = [time_limit_for(s, config.move_time, config.time_margin)
                       for s in self.agent_specs]
        self.openings = None
        if config.openings:
            # imported here: arena.openings draws its openings with this module's seeds
            from niwa.analysis.arena.openings import OpeningSuite

            self.openings = OpeningSuite(config.openings, config.seed, config.game,
                                         config.variant)

    @property
    def per_round(self) -> int:
        return len(self.tables) * len(self.orders)

    def __len__(self) -> int:
        return self.config.rounds * self.per_round

    def __getitem__(self, index: int) -> GameTask:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"game {index} is not in a schedule of {len(self)} games")
        return self._task(index)

    def _task(self, index: int) -> GameTask:
        cfg = self.config
        rnd, within = divmod(index, self.per_round)
        t, o = divmod(within, len(self.orders))
        seats = tuple(self.tables[t][k] for k in self.orders[o])
        return GameTask(
            game_id=self.first_id + index, round=rnd, table=t, game=cfg.game,
            variant=self.variant, deal_seed=derive_seed(cfg.seed, "deal", rnd), seats=seats,
            specs=tuple(self.agent_specs[a] for a in seats),
            labels=tuple(self.labels[a] for a in seats),
            agent_seeds=tuple(derive_seed(cfg.seed, "agent", index, s)
                              for s in range(cfg.players)),
            time_limits=tuple(self.limits[a] for a in seats),
            max_plies=cfg.max_plies, extra=self.extra,
            time_controls=tuple(self.controls[a] for a in seats) if any(self.controls) else (),
            opening=self.openings.for_round(rnd) if self.openings else None)

    def __iter__(self) -> Iterator[GameTask]:
        return (self._task(i) for i in range(len(self)))

    def identity_digest(self) -> str:
        return identity_digest(self.config.identity())

    def __eq__(self, other) -> bool:
        if not isinstance(other, Schedule):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None

    def includes(self, game_id: int) -> bool:
        return 0 <= game_id - self.first_id < len(self)

    def id_ranges(self) -> list[tuple[int, int]]:
        """The game ids of the schedule, as [start, end) ranges."""
        return [(self.first_id, self.first_id + len(self))]

    def task_for(self, game_id: int) -> GameTask:
        return self._task(game_id - self.first_id)

    def check_row(self, game_id: int, row: dict) -> str | None:
        """What in a logged row contradicts this schedule's game `game_id` (what the
        configuration and the seeds fix: round, table, game, variant, deal seed, agents in
        their seats), or None. Resume validates every row with it."""
        if not self.includes(game_id):
            return f"is not one of the {len(self)} games of this schedule"
        task = self.task_for(game_id)
        expected = {"round": str(task.round), "table": str(task.table), "game": task.game,
                    "variant": variant_text(task.variant), "deal_seed": str(task.deal_seed),
                    **{f"agent_{s}": label for s, label in enumerate(task.labels)},
                    "opening": str(task.opening.id) if task.opening else "",
                    **{k: str(v) for k, v in task.extra}}
        for column, value in expected.items():
            if row.get(column) != value:
                return f"{column} is {row.get(column)!r}, the schedule says {value!r}"
        return None


def variant_text(variant: tuple) -> str:
    """A variant as games.csv shows it: 'key=value key=value' (sorted keys)."""
    return " ".join(f"{k}={v}" for k, v in variant)


def build_schedule(config: TournamentConfig) -> Schedule:
    return Schedule(config)


def games_per_round(config: TournamentConfig) -> int:
    n = config.players
    return len(tables_for(len(config.agents), n, config.format)) * math.factorial(n)
