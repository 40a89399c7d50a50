"""`niwa tune`: tune an agent's numeric parameters by SPSA, as fishtest does.

Method: simultaneous perturbation stochastic approximation (J. C. Spall, "Multivariate
stochastic approximation using a simultaneous perturbation gradient approximation", IEEE
Trans. Autom. Control 37(3), 1992; "Implementation of the simultaneous perturbation
algorithm for stochastic optimization", IEEE Trans. Aerosp. Electron. Syst. 34(3), 1998),
in the form of fishtest's SPSA tuner (github.com/official-stockfish/fishtest).

Model. theta holds p parameters, each in [low_i, high_i]. Iteration k = 0..N-1:

    delta_i  = +1 or -1, one fair coin per parameter: derive_seed(seed, 'tune', k, 'sign', name)
    c_k,i    = c_i / (k + 1)^gamma                      (perturbation)
    a_k,i    = a_i / (A + k + 1)^alpha                  (gain)
    theta+   = clip(theta + c_k delta),  theta- = clip(theta - c_k delta)
    score_k  = mean over the iteration's games of (points of theta+ - points of theta-),
               points 1 / 0.5 / 0 for a better / equal / worse result; so score in [-1, 1].
               The games are pairs on one deal with the seats swapped (the deal's luck
               cancels): deal seed derive_seed(seed, 'tune', k, 'deal', pair).
    theta_i <- clip_i(theta_i + a_k,i * score_k / (c_k,i * delta_i))

With an opponent (--opponent SPEC) each deal is played four times instead, theta+ and
theta- each in both seats against the opponent, and score_k = theta+'s mean points against
it minus theta-'s (again in [-1, 1]).

(fishtest writes the step r_k c_k result delta with r_k = a_k / c_k^2: the same thing; 1/delta
= delta.) Integer parameters move as reals and are rounded only when a spec is built.

Defaults, fishtest's: alpha = 0.602, gamma = 0.101, A = 10% of the iterations. The gains are
set from the parameter range, as in fishtest, by their values at the last iteration:
c_end = c_frac (high - low) and a_end = step_frac (high - low) c_end, so that a unit score
moves theta by step_frac of the range at the end; then c = c_end N^gamma and
a = a_end (A + N)^alpha. fishtest's usual choice, c_end about (high - low) / 20 and
r_end = a_end / c_end^2 = 0.002, suits its runs of tens of thousands of game pairs; for runs
of a hundred or two iterations the defaults here are larger, c_frac = 0.2 and
step_frac = 0.04 (measured on Lotus MCTS's c from 5 in 150 iterations of 2 games: 0.1 / 0.02
reached only 3.6, 0.2 / 0.04 reached 1.15; see tests/test_tune.py's slow test).

The run: each iteration's games are a schedule fed to the run engine (arena.runner), played
in parallel on the executor (local pool or Dask), appended to games.csv as they end. theta
is a pure function of the logged games, so an interrupted run resumes (complete iterations
are replayed from games.csv, the rest played) to the same trajectory, and the result does
not depend on the number of workers.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import asdict, dataclass, field

from niwa.analysis.arena.executors import DaskExecutor, LocalExecutor
from niwa.analysis.arena.games_csv import csv_columns, holds_games
from niwa.analysis.arena.games_jsonl import RecordedGameLog
from niwa.analysis.arena.openings import OpeningSuite, load_suite, parse_openings
from niwa.analysis.arena.run_record import end_run, read_record, start_run, versions, write_record
from niwa.analysis.arena.runner import run_schedule
from niwa.analysis.arena.schedule import GameTask, derive_seed
from niwa.ext.errors import NiwaError
from niwa.ext.registry import get_game
from niwa.solver.agent_base import WEIGHT_PREFIX
from niwa.solver.agent_registry import REGISTRY, load_agent_plugins
from niwa.solver.agent_spec import AgentSpec, agent_settings, best_agent_spec, check_for_game, make_agent

ALPHA, GAMMA = 0.602, 0.101
A_FRACTION = 0.1
C_FRACTION, STEP_FRACTION = 0.2, 0.04

TRAJECTORY_CSV, GAMES_CSV, META_JSON, PLOT_PNG = (
    "trajectory.csv", "games.csv", "tune.json", "trajectory.png")


MAX_PARAM = 1e9    # the widest parameter range tuned (|LOW|, |HIGH|)


class TuneError(NiwaError):
    """A tuning run that cannot be set up or resumed (one-line message)."""


# --- parameters ----------------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    name: str
    low: float
    high: float
    integer: bool = False


def parse_param(text: str, agent: str, game: str | None = None) -> Param:
    """'c=0.1:5' for the agent `agent` (its registry name) -> Param; TuneError otherwise.
    A name `w_<weight>` is one of `game`'s evaluation weights (GameSpec.eval_weights), for
    agents that take weights; its range must lie within the weight's declared one."""
    load_agent_plugins()
    name, eq, rng = text.partition("=")
    name = name.strip()
    low_s, colon, high_s = rng.partition(":")
    if not eq or not colon:
        raise TuneError(f"--param {text!r} should be NAME=LOW:HIGH, e.g. c=0.1:5")
    weight = None
    if name.startswith(WEIGHT_PREFIX) and REGISTRY[agent].weights and game is not None:
        weight = _declared_weight(game, name)
        typ = float
    else:
        params = REGISTRY[agent].params
        if name not in params:
            raise TuneError(f"agent {agent!r} has no parameter {name!r}; parameters: "
                            f"{', '.join(params) or 'none'}")
        typ = params[name][0]
    if typ not in (int, float):
        raise TuneError(f"--param {name}: agent {agent!r} parameter {name} is "
                        f"{typ.__name__}, not numeric")
    try:
        low, high = float(low_s), float(high_s)
    except ValueError:
        raise TuneError(f"--param {text!r}: LOW and HIGH should be numbers") from None
    if not (math.isfinite(low) and math.isfinite(high)):
        raise TuneError(f"--param {text!r}: LOW and HIGH should be finite")
    if max(abs(low), abs(high)) > MAX_PARAM:
        # SPSA steps are fractions of HIGH - LOW: a range this wide overflows them
        raise TuneError(f"--param {text!r}: LOW and HIGH should be within "
                        f"-{MAX_PARAM:g}..{MAX_PARAM:g}")
    if low >= high:
        raise TuneError(f"--param {text!r}: LOW should be below HIGH")
    if weight is not None and (low < weight.low or high > weight.high):
        raise TuneError(f"--param {text!r}: {game} weight {weight.name} is declared in "
                        f"{weight.low:g}..{weight.high:g}")
    return Param(name, low, high, typ is int)


def _declared_weight(game: str, name: str):
    """The EvalWeight `w_<weight>` names on `game`; TuneError listing the valid names."""
    declared = {f"w_{w.name}": w for w in get_game(game).eval_weights}
    if name not in declared:
        raise TuneError(f"{game} has no evaluation weight {name!r}; weights: "
                        f"{', '.join(declared) or 'none'}")
    return declared[name]


def start_value(settings: dict, p: Param, game: str) -> float:
    """Where tuning `p` starts: its value in the agent spec, else its default (a weight's:
    the game's declared default)."""
    if p.name in settings:
        return float(settings[p.name])
    return float(_declared_weight(game, p.name).default)


# --- the SPSA step (pure) ------------------------------------------------------------------

@dataclass(frozen=True)
class Gains:
    """Per-parameter c and a, and the shared A, alpha, gamma (see the module's model)."""

    c: tuple
    a: tuple
    A: float
    alpha: float = ALPHA
    gamma: float = GAMMA

    def c_k(self, k: int) -> tuple:
        return tuple(c / (k + 1) ** self.gamma for c in self.c)

    def a_k(self, k: int) -> tuple:
        return tuple(a / (self.A + k + 1) ** self.alpha for a in self.a)


def default_gains(params, iterations: int, c_frac: float = C_FRACTION,
                  step_frac: float = STEP_FRACTION, alpha: float = ALPHA,
                  gamma: float = GAMMA) -> Gains:
    """fishtest's schedule from c_end and a_end at the last iteration (module docstring)."""
    A = A_FRACTION * iterations
    c_end = [c_frac * (p.high - p.low) for p in params]
    a_end = [step_frac * (p.high - p.low) * ce for p, ce in zip(params, c_end, strict=True)]
    return Gains(c=tuple(ce * iterations ** gamma for ce in c_end),
                 a=tuple(ae * (A + iterations) ** alpha for ae in a_end),
                 A=A, alpha=alpha, gamma=gamma)


def signs(seed: int, k: int, params) -> tuple:
    """The +-1 perturbation of iteration k, one coin per parameter (by name)."""
    return tuple(1 if derive_seed(seed, "tune", k, "sign", p.name) & 1 else -1
                 for p in params)


def clip(params, theta) -> tuple:
    return tuple(min(max(float(x), p.low), p.high) for p, x in zip(params, theta, strict=True))


def perturbed(params, theta, c_k, delta) -> tuple[tuple, tuple]:
    """theta+ and theta- (clipped)."""
    plus = clip(params, [t + c * d for t, c, d in zip(theta, c_k, delta, strict=True)])
    minus = clip(params, [t - c * d for t, c, d in zip(theta, c_k, delta, strict=True)])
    return plus, minus


def spsa_step(params, theta, c_k, a_k, delta, score: float) -> tuple:
    """theta after one iteration whose theta+ scored `score` (in [-1, 1]) over theta-."""
    return clip(params, [t + a * score / (c * d)
                         for t, c, a, d in zip(theta, c_k, a_k, delta, strict=True)])


def value_text(p: Param, x: float) -> str:
    """A parameter's value as it goes into a spec: integers rounded, reals to 6 digits."""
    return str(int(round(x))) if p.integer else format(float(x), ".6g")


def spec_with(agent_spec, params, theta, digits: int | None = None) -> str:
    """The agent spec's text with the tuned parameters set to theta (the others kept, in
    order; new ones last), checked as any spec is."""
    values = {p.name: (format(float(x), f".{digits}g") if digits and not p.integer
                       else value_text(p, x)) for p, x in zip(params, theta, strict=True)}
    return str(AgentSpec.parse(agent_spec).replace(**values))


def _outcome(row) -> float:
    """+1 / 0 / -1: the agent in seat plus_seat did better / as well / worse."""
    s = int(row["plus_seat"])
    mine, theirs = float(row[f"result_{s}"]), float(row[f"result_{1 - s}"])
    return 1.0 if mine > theirs else -1.0 if mine < theirs else 0.0


def pair_score(rows) -> float:
    """score_k: the mean over the games of (points of theta+ - points of theta-); with an
    opponent (rows with side '+' / '-'), theta+'s mean points against it minus theta-'s."""
    if any(row.get("side") in ("+", "-") for row in rows):
        plus = [_outcome(r) for r in rows if r["side"] == "+"]
        minus = [_outcome(r) for r in rows if r["side"] == "-"]
        return (sum(plus) / len(plus) - sum(minus) / len(minus)) / 2
    return sum(_outcome(r) for r in rows) / len(rows)


# --- the run --------------------------------------------------------------------------------

@dataclass
class TuneConfig:
    """Everything that fixes the run's games and trajectory (the resume identity)."""

    game: str
    agent: str                      # the spec tuned; its values of the params are the start
    params: list                    # [name, low, high, integer]
    start: list                     # theta_0
    iterations: int
    pairs: int = 1                  # seat-swapped game pairs per iteration
    opponent: str | None = None     # None: theta+ against theta-; else both against it
    variant: dict = field(default_factory=dict)
    seed: int = 1
    c_frac: float = C_FRACTION
    step_frac: float = STEP_FRACTION
    alpha: float = ALPHA
    gamma: float = GAMMA
    max_plies: int | None = None
    openings: dict | None = None    # an opening suite (arena.openings): deal j of iteration
                                    # k starts from the suite's opening k * pairs + j

    def identity(self) -> dict:
        return json.loads(json.dumps(asdict(self), default=str))

    @property
    def param_list(self) -> list[Param]:
        return [Param(n, float(lo), float(hi), bool(i)) for n, lo, hi, i in self.params]

    @property
    def games_per_iteration(self) -> int:
        return (4 if self.opponent else 2) * self.pairs


def make_tune_config(game: str, agent: str, params: list[str], *, iterations: int = 100,
                     games_per_iteration: int | None = None, variant: dict | None = None, seed: int = 1,
                     c_frac: float = C_FRACTION, step_frac: float = STEP_FRACTION,
                     max_plies: int | None = None, opponent: str | None = None,
                     openings: str | None = None) -> TuneConfig:
    """Validate the options (one-line NiwaError) and fix the start from the agent spec."""

    info = get_game(game)
    state = info.new(seed=0, **dict(variant or {}))
    if state.num_players != 2:
        raise TuneError(f"niwa tune plays two-player games; {info.name} here has "
                        f"{state.num_players} players")
    made = make_agent(agent, seed=0)
    if made.weights.given:      # w_<name> in the spec itself: known on this game?
        made.weights.check(info.name)
    spec = AgentSpec.parse(agent)
    name = spec.name
    if name == "best":      # its parameters are those of the agent it plays on this game
        name = best_agent_spec(info.name, spec.params).name
    if not params:
        raise TuneError("give at least one --param NAME=LOW:HIGH")
    plist = [parse_param(t, name, info.name) for t in params]
    names = [p.name for p in plist]
    if len(set(names)) != len(names):
        raise TuneError("a parameter is given twice in --param")
    if iterations < 1:
        raise TuneError(f"--iterations must be at least 1, got {iterations}")
    unit = 4 if opponent else 2
    if games_per_iteration is None:
        games_per_iteration = unit
    if games_per_iteration < unit or games_per_iteration % unit:
        raise TuneError(f"--games-per-iteration must be a positive multiple of {unit} "
                        f"(seat-swapped pairs{', for theta+ and theta-' if opponent else ''})"
                        f", got {games_per_iteration}")
    for label, x in (("--c-frac", c_frac), ("--step-frac", step_frac)):
        if not (math.isfinite(x) and x > 0):
            raise TuneError(f"{label} must be positive, got {x}")
    if opponent:
        opponent = opponent.strip()
        make_agent(opponent, seed=0)
        check_for_game(opponent, state)
    settings = agent_settings(agent, info.name)
    start = clip(plist, [start_value(settings, p, info.name) for p in plist])
    for p, x in zip(plist, start, strict=True):   # the clipped start must still be valid
        make_agent(spec_with(agent, [p], [x]), seed=0)
    return TuneConfig(game=info.name, agent=agent.strip(),
                      params=[[p.name, p.low, p.high, p.integer] for p in plist],
                      start=list(start), iterations=int(iterations),
                      pairs=games_per_iteration // unit, opponent=opponent or None,
                      variant=dict(state.variant),
                      seed=int(seed), c_frac=float(c_frac), step_frac=float(step_frac),
                      max_plies=max_plies,
                      openings=load_suite(parse_openings(openings), info.name,
                                          dict(state.variant)) if openings else None)


class IterationSchedule:
    """The games of iteration k: `pairs` deals, each played twice with the seats swapped,
    theta+ against theta- (or four times: theta+, then theta-, against the opponent).
    Game ids k*G .. k*G+G-1 (G games per iteration)."""

    def __init__(self, config: TuneConfig, k: int, plus_spec: str, minus_spec: str):
        self.config, self.k = config, k
        self.plus, self.minus = plus_spec, minus_spec     # the labels in games.csv
        # each spec parsed once; the workers get the values
        self.parsed = {text: AgentSpec.parse(text)
                       for text in (plus_spec, minus_spec, config.opponent) if text}
        self.n = config.games_per_iteration
        self.first_id = k * self.n
        self.variant = tuple(sorted(config.variant.items()))
        self.openings = _suite(config) if config.openings else None

    def __len__(self) -> int:
        return self.n

    def _task(self, j: int) -> GameTask:
        cfg = self.config
        if cfg.opponent:        # per deal: theta+ in seat 0, 1, then theta- in seat 0, 1
            pair, r = divmod(j, 4)
            side, plus_seat = "+-"[r // 2], r % 2
            tuned = self.plus if side == "+" else self.minus
            other = cfg.opponent
        else:
            pair, plus_seat = divmod(j, 2)
            side, tuned, other = "", self.plus, self.minus
        labels = (tuned, other) if plus_seat == 0 else (other, tuned)
        return GameTask(
            game_id=self.first_id + j, round=self.k, table=pair, game=cfg.game,
            variant=self.variant, deal_seed=derive_seed(cfg.seed, "tune", self.k, "deal", pair),
            seats=(0, 1) if plus_seat == 0 else (1, 0),
            specs=tuple(self.parsed[text] for text in labels), labels=labels,
            agent_seeds=tuple(derive_seed(cfg.seed, "tune", self.k, "agent", j, s)
                              for s in range(2)),
            time_limits=(None, None), max_plies=cfg.max_plies,
            extra=(("iteration", self.k), ("plus_seat", plus_seat), ("side", side)),
            opening=(self.openings.for_round(self.k * cfg.pairs + pair) if self.openings
                     else None))

    def __iter__(self):
        return (self._task(j) for j in range(self.n))

    def id_ranges(self) -> list[tuple[int, int]]:
        return [(self.first_id, self.first_id + self.n)]

    def task_for(self, game_id: int) -> GameTask:
        return self._task(game_id - self.first_id)

    def includes(self, game_id: int) -> bool:
        return 0 <= game_id - self.first_id < self.n

    def check_row(self, game_id: int, row: dict) -> str | None:
        """What in a logged row of this iteration contradicts its schedule, or None."""
        if not self.includes(game_id):
            return f"is not a game of iteration {self.k}"
        task = self.task_for(game_id)
        expected = {"deal_seed": str(task.deal_seed), "agent_0": task.labels[0],
                    "agent_1": task.labels[1], "iteration": str(self.k),
                    "plus_seat": str(dict(task.extra)["plus_seat"]),
                    "side": dict(task.extra)["side"],
                    "opening": str(task.opening.id) if task.opening else ""}
        for key, value in expected.items():
            if str(row.get(key, "")) != value:
                return f"{key} is {row.get(key)!r}, not {value!r} (another tuning run?)"
        return None


_SUITES: dict[str, OpeningSuite] = {}


def _suite(config: TuneConfig) -> OpeningSuite:
    """The run's opening suite, one per run and process: a generated suite draws its
    openings in order, so every iteration's schedule shares the openings drawn so far."""
    key = json.dumps([config.openings, config.seed, config.game, config.variant],
                     sort_keys=True, default=str)
    if key not in _SUITES:
        _SUITES.clear()             # one run at a time: do not keep older runs' openings
        _SUITES[key] = OpeningSuite(config.openings, config.seed, config.game,
                                    config.variant)
    return _SUITES[key]


class _Checker:
    """check_row for games.csv: each row against its iteration's schedule once that
    iteration has been reached (the log is reopened, so revalidated, every iteration)."""

    def __init__(self, games_per_iteration: int):
        self.g = games_per_iteration
        self.schedules: dict[int, IterationSchedule] = {}

    def __call__(self, game_id: int, row: dict) -> str | None:
        sched = self.schedules.get(game_id // self.g)
        return None if sched is None else sched.check_row(game_id, row)


class _KeepOpen:
    """The executor for one iteration's batch: the runner closes what it is given, the
    tuning run closes the real executor once, at its end."""

    def __init__(self, executor):
        self.executor = executor

    def run(self, tasks):
        return self.executor.run(tasks)


def games_columns() -> list[str]:
    return csv_columns(2) + ["iteration", "plus_seat", "side"]


def trajectory_columns(params) -> list[str]:
    return (["iteration"] + [p.name for p in params] + [f"c_k_{p.name}" for p in params]
            + [f"a_k_{p.name}" for p in params] + [f"sign_{p.name}" for p in params]
            + ["score"])


@dataclass
class TuneOutcome:
    config: TuneConfig
    out_dir: str
    theta: tuple
    final_spec: str
    trajectory: list
    played_now: int
    finished: bool
    meta: dict
    notes: list[str] = field(default_factory=list)   # records restored, damage found


def load_saved(out_dir: str) -> TuneConfig | None:
    return read_record(os.path.join(out_dir, META_JSON),
                       lambda meta: TuneConfig(**meta["config"]), TuneError, "tuning run")


def check_out_dir(config: TuneConfig, out_dir: str, resume: bool) -> None:
    """Whether the run may go into out_dir (TuneError if not). --resume into a folder
    without a record (a run killed before it wrote anything, or a new folder) starts the
    run: the same command can be repeated until the run ends."""
    saved = load_saved(out_dir)
    games_path = os.path.join(out_dir, GAMES_CSV)
    if resume:
        if saved is None:
            if holds_games(games_path):
                raise TuneError(f"{games_path} holds games but "
                                f"{os.path.join(out_dir, META_JSON)} does not exist: cannot "
                                "tell which tuning run it is")
            return
        a, b = saved.identity(), config.identity()
        diff = [k for k in a if a[k] != b.get(k)]
        if diff:
            k = diff[0]
            raise TuneError(f"{out_dir} holds a different tuning run: {k} is {a[k]!r} there, "
                            f"{b[k]!r} here (resume with the same options, or another --out)")
    elif saved is not None or holds_games(games_path):
        raise TuneError(f"{out_dir} already holds a tuning run; pass --resume to finish it, "
                        "or choose another --out")


def trajectory_row(k: int, params, theta, c_k, a_k, delta, score: float) -> dict:
    """One row of trajectory.csv: the parameters after iteration k, its gains and signs."""
    return {"iteration": k, **{p.name: repr(x) for p, x in zip(params, theta, strict=True)},
            **{f"c_k_{p.name}": repr(x) for p, x in zip(params, c_k, strict=True)},
            **{f"a_k_{p.name}": repr(x) for p, x in zip(params, a_k, strict=True)},
            **{f"sign_{p.name}": d for p, d in zip(params, delta, strict=True)},
            "score": repr(score)}


def run_tune(config: TuneConfig, out_dir: str, executor=None, resume: bool = False,
             progress: bool | None = False, command: str = "",
             on_iteration=None) -> TuneOutcome:
    """Play (or finish) the tuning run into out_dir; `on_iteration(k, row)` is called
    after each iteration (the CLI's progress line; tests interrupt through it)."""
    executor = executor or LocalExecutor(1)
    check_out_dir(config, out_dir, resume)
    os.makedirs(out_dir, exist_ok=True)
    games_path = os.path.join(out_dir, GAMES_CSV)
    meta_path = os.path.join(out_dir, META_JSON)
    meta = (read_record(meta_path, dict, TuneError, "tuning run") or {}) if resume else {}
    params = config.param_list
    gains = default_gains(params, config.iterations, config.c_frac, config.step_frac,
                          config.alpha, config.gamma)
    meta.update({"command": meta.get("command", command), "config": config.identity(),
                 "gains": asdict(gains), "status": "running",
                 "versions": versions(isinstance(executor, DaskExecutor))})
    checker = _Checker(config.games_per_iteration)
    games_before = 0
    notes: list[str] = []       # records restored, damage found (one line each)
    if os.path.exists(games_path):
        log = _open_log(games_path, checker)
        games_before = len(log.done)
        notes += log.record_notes
        log.close()
    run_record = start_run(meta, command, executor, games_before)
    # the run's identity before the first byte of games.csv: a kill at any moment leaves
    # a folder that --resume finishes
    write_record(meta_path, meta)

    theta = tuple(config.start)
    trajectory: list[dict] = []
    played = 0
    interrupted = False
    try:
        for k in range(config.iterations):
            c_k, a_k, delta = gains.c_k(k), gains.a_k(k), signs(config.seed, k, params)
            plus, minus = perturbed(params, theta, c_k, delta)
            sched = IterationSchedule(config, k, spec_with(config.agent, params, plus),
                                      spec_with(config.agent, params, minus))
            checker.schedules[k] = sched
            log = _open_log(games_path, checker)
            result = run_schedule(sched, log, _KeepOpen(executor), desc=f"iteration {k}",
                                  progress=progress)
            played += result.played_now
            notes += [note for note in result.notes if note not in notes]
            if result.interrupted:
                interrupted = True
                break
            if not result.finished:
                break
            rows = [r for r in log.read_rows() if sched.includes(int(r["game_id"]))]
            score = pair_score(rows)
            theta = spsa_step(params, theta, c_k, a_k, delta, score)
            row = trajectory_row(k, params, theta, c_k, a_k, delta, score)
            trajectory.append(row)
            _write_trajectory(out_dir, params, trajectory)
            if on_iteration is not None:
                on_iteration(k, row)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if hasattr(executor, "close"):
            executor.close()

    finished = len(trajectory) == config.iterations
    final_spec = spec_with(config.agent, params, theta, digits=3)
    end_run(run_record, played)
    if notes:
        run_record["record_notes"] = notes
    meta.update({"status": "finished" if finished else "interrupted",
                 "iterations_done": len(trajectory),
                 "theta": list(theta), "final_spec": final_spec})
    write_record(meta_path, meta)
    if trajectory:
        plot_trajectory(params, trajectory, os.path.join(out_dir, PLOT_PNG),
                        f"{config.game}: SPSA on {config.agent}")
    if interrupted:
        raise KeyboardInterrupt
    return TuneOutcome(config, out_dir, theta, final_spec, trajectory, played, finished, meta,
                       notes)


def _open_log(games_path: str, checker) -> RecordedGameLog:
    return RecordedGameLog(games_path, games_columns(), check_row=checker,
                           way_out="start the run again in another --out (a tuning run "
                                   "replays exactly only without time= budgets)")


def _write_trajectory(out_dir: str, params, rows) -> None:
    path = os.path.join(out_dir, TRAJECTORY_CSV)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=trajectory_columns(params), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def plot_trajectory(params, rows, path: str, title: str = "") -> None:
    """One panel per parameter: theta after each iteration, the range's bounds dotted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(params), 1, figsize=(7, 2.2 * len(params) + 0.8),
                             squeeze=False, sharex=True)
    ks = [int(r["iteration"]) + 1 for r in rows]
    for ax, p in zip(axes[:, 0], params, strict=True):
        ax.plot(ks, [float(r[p.name]) for r in rows], color="tab:blue")
        for bound in (p.low, p.high):
            ax.axhline(bound, color="grey", lw=0.8, ls=":")
        ax.set_ylabel(p.name)
    axes[-1, 0].set_xlabel("iteration")
    if title:
        axes[0, 0].set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
