"""Bot-vs-bot tournaments: a fixed schedule, fair seating, reproducible seeds, parallel runs.

The schedule is a pure function of the configuration, so a run can be cut anywhere and
finished later (`resume`), and every game's outcome depends only on the tournament seed and
the game's index in the schedule, never on which worker or executor played it.

Schedule. A *table* is the set of agents that sit down together (two agents in a two-player
game). Every round plays every table in every seat order (all permutations, so each agent
sits in each seat, and after each other agent, equally often) on one fresh deal shared by
the whole round: the same deal with seats swapped, as opening pairs in chess, so the luck
of the deal cancels. Game ids run round by round, table by table, seat order by seat order.

Seeds. deal_seed = H(seed, "deal", round) (the deal and the chance stream of every game of
the round); agent seed = H(seed, "agent", game_id, seat); H is BLAKE2b, stable everywhere.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import math
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

import numpy as np

from niwa.ext.errors import NiwaError
from niwa.ext.game import PLAYER_CHANCE as CHANCE
from niwa.ext.game import PLAYER_SIMULTANEOUS as SIMULTANEOUS
from niwa.ext.game import PLAYER_TERMINAL as TERMINAL
from niwa.ext.registry import sample_outcome

FORMATS = ("round-robin", "gauntlet")


class TournamentError(NiwaError):
    """A tournament that cannot be set up, resumed or run (one-line message)."""


def derive_seed(root: int, *labels) -> int:
    """A 63-bit seed from the tournament seed and labels (e.g. 'agent', game_id, seat)."""
    text = ":".join(str(x) for x in (root, *labels)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 1


# ---- configuration and schedule --------------------------------------------------------
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
    sprt: dict | None = None            # SprtSpec.as_dict()

    def identity(self) -> dict:
        # through JSON, so that a config read back from tournament.json compares equal
        return json.loads(json.dumps(asdict(self), default=str))

    @property
    def labels(self) -> list[str]:
        """Agent names as shown in tables: the spec, with #2, #3... for repeated specs."""
        seen: dict[str, int] = {}
        out = []
        for spec in self.agents:
            seen[spec] = seen.get(spec, 0) + 1
            out.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
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
    specs: tuple            # agent spec by seat
    labels: tuple           # agent label by seat (the spec, #2.. for a repeated spec)
    agent_seeds: tuple
    time_limits: tuple      # seconds per move by seat, or None
    max_plies: int | None


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


def time_limit_for(spec: str, move_time: float | None, margin: float) -> float | None:
    """Per-move limit: --move-time, else the agent's own `time=` budget plus the margin."""
    if move_time is not None:
        return float(move_time)
    from niwa.solver.agents import parse_spec

    _, params = parse_spec(spec)
    if isinstance(params.get("time"), int | float) and params["time"] > 0:
        return float(params["time"]) + margin
    return None


def build_schedule(config: TournamentConfig) -> list[GameTask]:
    n = config.players
    tables = tables_for(len(config.agents), n, config.format)
    orders = seat_orders(n)
    variant = tuple(sorted(config.variant.items()))
    limits = [time_limit_for(s, config.move_time, config.time_margin) for s in config.agents]
    labels = config.labels
    tasks = []
    for rnd in range(config.rounds):
        deal_seed = derive_seed(config.seed, "deal", rnd)
        for t, table in enumerate(tables):
            for order in orders:
                seats = tuple(table[k] for k in order)
                gid = len(tasks)
                tasks.append(GameTask(
                    game_id=gid, round=rnd, table=t, game=config.game, variant=variant,
                    deal_seed=deal_seed, seats=seats,
                    specs=tuple(config.agents[a] for a in seats),
                    labels=tuple(labels[a] for a in seats),
                    agent_seeds=tuple(derive_seed(config.seed, "agent", gid, s)
                                      for s in range(n)),
                    time_limits=tuple(limits[a] for a in seats),
                    max_plies=config.max_plies))
    return tasks


def games_per_round(config: TournamentConfig) -> int:
    n = config.players
    return len(tables_for(len(config.agents), n, config.format)) * math.factorial(n)


# ---- playing one game ------------------------------------------------------------------
def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def play_game(task: GameTask) -> dict:
    """Play one scheduled game to the end; agent failures forfeit the game, never raise."""
    from niwa.ext.game import Rng
    from niwa.ext.registry import get_game
    from niwa.solver.agents import make_agent

    t0 = time.perf_counter()
    state = get_game(task.game).new(seed=task.deal_seed, **dict(task.variant))
    n = state.num_players
    chance_rng = Rng(task.deal_seed)
    plies = 0
    error_seat, error = None, ""
    capped = False
    agents: list = [None] * n

    def forfeit(seat, what):
        nonlocal error_seat, error
        error_seat, error = seat, f"seat {seat} ({task.labels[seat]}) {what}"

    for seat in range(n):
        try:
            agents[seat] = make_agent(task.specs[seat], seed=task.agent_seeds[seat])
            agents[seat].reset()
        except Exception as e:   # an agent that cannot even start loses
            forfeit(seat, f"failed to start: {_first_line(e)}")
            break

    def ask(seat):
        """The seat's action, or None after recording a forfeit (crash or time overrun)."""
        start = time.perf_counter()
        try:
            action = agents[seat].step(state.clone(), seat)
        except Exception as e:
            forfeit(seat, f"crashed: {_first_line(e)}")
            return None
        spent = time.perf_counter() - start
        limit = task.time_limits[seat]
        if limit is not None and spent > limit:
            forfeit(seat, f"exceeded its time budget: {spent:.3f}s > {limit:.3f}s per move")
            return None
        return action

    def tell_all(before, action):
        for seat in range(n):
            try:
                agents[seat].observe(before, action)
            except Exception as e:
                forfeit(seat, f"crashed in observe: {_first_line(e)}")
                return False
        return True

    while error_seat is None:
        player = state.current_player()
        if player == TERMINAL:
            break
        if task.max_plies is not None and plies >= task.max_plies:
            capped = True
            break
        before = state.clone()
        if player == CHANCE:
            action = sample_outcome(state.chance_outcomes(), chance_rng)
            state.apply(action)
        elif player == SIMULTANEOUS:
            action = []
            for seat in range(n):
                # every seat chooses from the same position: nobody sees another's pick
                a = ask(seat) if state.legal_actions(seat) else -1
                if a is None:
                    break
                action.append(a)
            if error_seat is not None:
                break
            try:
                state.apply_joint(action)
            except Exception as e:
                bad = _illegal_seat(state, action)
                forfeit(bad, f"played an illegal action: {_first_line(e)}")
                break
        else:
            action = ask(player)
            if action is None:
                break
            try:
                state.apply(action)
            except Exception as e:
                forfeit(player, f"played an illegal action: {_first_line(e)}")
                break
        plies += 1
        if not tell_all(before, action):
            break

    if error_seat is not None:
        # the offender loses; everyone else is credited the win over it
        results = [0.0 if s == error_seat else 1.0 for s in range(n)]
    elif capped:
        results = [1.0 / n] * n
    else:
        results = [float(r) for r in state.returns()]
    stats = {}
    if error_seat is None:
        try:
            stats = state.stats()
        except Exception:   # statistics are a bonus; never lose a game over them
            stats = {}
    return {
        "game_id": task.game_id, "round": task.round, "table": task.table,
        "game": task.game, "variant": " ".join(f"{k}={v}" for k, v in task.variant),
        "deal_seed": task.deal_seed,
        **{f"agent_{s}": task.labels[s] for s in range(n)},
        **{f"result_{s}": _fmt(results[s]) for s in range(n)},
        "plies": plies, "capped": int(capped),
        "error_seat": "" if error_seat is None else error_seat, "error": error,
        "scores": json.dumps(stats, separators=(",", ":"), sort_keys=True, default=str),
        "duration_s": f"{time.perf_counter() - t0:.4f}",
    }


def _illegal_seat(state, joint) -> int:
    for seat, a in enumerate(joint):
        if a not in state.legal_actions(seat):
            return seat
    return 0


def _fmt(x: float) -> str:
    return repr(round(float(x), 6))


def play_batch(tasks: list[GameTask]) -> list[dict]:
    return [play_game(t) for t in tasks]


def csv_columns(n_players: int) -> list[str]:
    return (["game_id", "round", "table", "game", "variant", "deal_seed"]
            + [f"agent_{s}" for s in range(n_players)]
            + [f"result_{s}" for s in range(n_players)]
            + ["plies", "capped", "error_seat", "error", "scores", "duration_s"])


# ---- the resumable game log ------------------------------------------------------------
class GameLog:
    """games.csv: one row appended and flushed per finished game (SIGKILL-safe)."""

    def __init__(self, path: str, columns: list[str]):
        self.path = path
        self.columns = columns
        self.rows: dict[int, dict] = {}
        if os.path.exists(path):
            self._load()
        self.file = open(path, "a", newline="", encoding="utf-8")  # noqa: SIM115
        self.writer = csv.DictWriter(self.file, fieldnames=columns, lineterminator="\n")
        if not self.rows and os.path.getsize(path) == 0:
            self.writer.writeheader()
            self.file.flush()

    def _load(self):
        with open(self.path, "rb+") as f:
            data = f.read()
            # a kill in the middle of a write leaves a partial last line: drop it (that
            # game is simply played again)
            cut = data.rfind(b"\n") + 1
            if cut < len(data):
                f.truncate(cut)
                data = data[:cut]
        lines = data.decode("utf-8").splitlines()
        if not lines:
            return
        reader = csv.DictReader(lines)
        if reader.fieldnames != self.columns:
            raise TournamentError(
                f"{self.path} has columns {reader.fieldnames}, not those of this tournament")
        for row in reader:
            gid = int(row["game_id"])
            self.rows.setdefault(gid, row)   # a duplicate could only be a replay: keep one

    def append(self, row: dict) -> None:
        if row["game_id"] in self.rows:
            return
        self.writer.writerow(row)
        self.file.flush()
        self.rows[int(row["game_id"])] = {k: str(v) for k, v in row.items()}

    def close(self):
        self.file.close()

    def rewrite_sorted(self, keep: set[int] | None = None) -> None:
        """Final games.csv in schedule order (atomically), optionally only the kept ids."""
        self.close()
        tmp = self.path + ".tmp"
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=self.columns, lineterminator="\n")
            w.writeheader()
            for gid in sorted(self.rows):
                if keep is None or gid in keep:
                    w.writerow(self.rows[gid])
        os.replace(tmp, self.path)


# ---- executors -------------------------------------------------------------------------
class BatchSizer:
    """Batches sized to ~target seconds of play from the durations seen so far."""

    def __init__(self, workers: int, target_s: float = 0.25, cap: int = 256):
        self.workers, self.target_s, self.cap = workers, target_s, cap
        self.seconds = 0.0
        self.games = 0

    def record(self, row: dict):
        self.seconds += float(row["duration_s"])
        self.games += 1

    def next_size(self, remaining: int) -> int:
        if self.games < self.workers:
            return 1
        per_game = max(self.seconds / self.games, 1e-5)
        size = int(self.target_s / per_game)
        # keep the tail balanced: never take more than a fair share of what is left
        size = min(size, self.cap, math.ceil(remaining / (2 * self.workers)))
        return max(size, 1)


_RESULT_QUEUE = None


def _worker_init(queue, parent_pid):
    """Stream rows back one game at a time; die with the parent (even after its SIGKILL)."""
    import signal
    import threading

    global _RESULT_QUEUE
    _RESULT_QUEUE = queue
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles Ctrl-C

    def watch():
        while True:
            if os.getppid() != parent_pid:
                os._exit(1)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def _worker_batch(tasks: list[GameTask]) -> int:
    # Each row goes back as soon as its game ends; only games shorter than SEND_EVERY_S
    # are grouped (so a kill can lose at most that much finished play per worker).
    rows, last = [], time.monotonic()
    for task in tasks:
        rows.append(play_game(task))
        if time.monotonic() - last >= SEND_EVERY_S:
            _RESULT_QUEUE.put(rows)
            rows, last = [], time.monotonic()
    if rows:
        _RESULT_QUEUE.put(rows)
    return len(tasks)


SEND_EVERY_S = 0.02


class LocalExecutor:
    """A process pool on this machine (workers=1 plays in this process)."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or default_workers()

    def describe(self) -> str:
        return f"local, {self.workers} worker{'s' * (self.workers != 1)}"

    def run(self, tasks: list[GameTask]) -> Iterator[dict]:
        if self.workers == 1 or len(tasks) <= 1:
            for t in tasks:
                yield play_game(t)
            return
        yield from self._run_pool(tasks)

    def _run_pool(self, tasks):
        import multiprocessing as mp
        import queue as queue_mod
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() \
            else mp.get_context("spawn")
        results = ctx.Queue()
        sizer = BatchSizer(self.workers)
        pending = list(reversed(tasks))
        outstanding: dict = {}          # future -> set of game ids still to arrive
        waiting_ids: set[int] = set()
        pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_worker_init,
                                   initargs=(results, os.getpid()))
        try:
            while pending or waiting_ids:
                while pending and len(outstanding) < 2 * self.workers:
                    size = sizer.next_size(len(pending))
                    batch = [pending.pop() for _ in range(min(size, len(pending)))]
                    fut = pool.submit(_worker_batch, batch)
                    outstanding[fut] = {t.game_id for t in batch}
                    waiting_ids.update(t.game_id for t in batch)
                try:
                    rows = results.get(timeout=0.2)
                except queue_mod.Empty:
                    rows = []
                for row in rows:
                    sizer.record(row)
                    waiting_ids.discard(row["game_id"])
                    for ids in outstanding.values():
                        if row["game_id"] in ids:
                            ids.discard(row["game_id"])
                            break
                    yield row
                done, _ = wait(list(outstanding), timeout=0, return_when=FIRST_COMPLETED)
                for fut in done:
                    fut.result()        # re-raises a worker's failure (BrokenProcessPool)
                    if not outstanding[fut]:
                        del outstanding[fut]
        except BrokenProcessPool:
            raise TournamentError(
                "a worker process died (killed or crashed in native code); finished games "
                "are saved: rerun with --resume") from None
        finally:
            procs = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in procs:          # our own workers, possibly mid-game: stop them
                if proc.is_alive():
                    proc.terminate()
            for proc in procs:
                proc.join(timeout=5)
            results.close()


class DaskExecutor:
    """The same schedule on an existing Dask distributed cluster (pip install niwa[dist])."""

    name = "dask"

    def __init__(self, address: str, workers: int | None = None, timeout: float = 10):
        try:
            from distributed import Client
        except ImportError:
            raise TournamentError(
                "--executor dask:// needs dask and distributed: pip install 'niwa[dist]'"
            ) from None
        self.address = "tcp://" + address.split("://", 1)[1] if "://" in address else address
        try:
            self.client = Client(self.address, timeout=f"{timeout}s")
        except (OSError, TimeoutError) as e:
            raise TournamentError(f"cannot reach the Dask scheduler at {self.address}: "
                                  f"{_first_line(e)}") from None
        self.workers = workers or max(sum(self.client.nthreads().values()), 1)

    def describe(self) -> str:
        return f"dask at {self.address}, {self.workers} worker threads"

    def run(self, tasks: list[GameTask]) -> Iterator[dict]:
        from distributed import as_completed

        sizer = BatchSizer(self.workers, target_s=1.0)
        pending = list(reversed(tasks))

        def submit():
            size = sizer.next_size(len(pending))
            batch = [pending.pop() for _ in range(min(size, len(pending)))]
            return self.client.submit(play_batch, batch, pure=False)

        stream = as_completed([submit() for _ in range(min(2 * self.workers, len(pending)))])
        try:
            for fut in stream:
                try:
                    rows = fut.result()
                except Exception as e:    # e.g. a worker without niwa installed
                    raise TournamentError(
                        f"a game failed on the Dask cluster: {_first_line(e)} (finished games "
                        "are saved: fix the workers and rerun with --resume)") from None
                for row in rows:
                    sizer.record(row)
                    yield row
                if pending:
                    stream.add(submit())
        finally:
            stream.clear()

    def close(self):
        self.client.close()


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def make_executor(spec: str, workers: int | None):
    spec = (spec or "local").strip()
    if spec == "local":
        return LocalExecutor(workers)
    if spec.startswith("dask://"):
        if not spec[len("dask://"):]:
            raise TournamentError("--executor dask:// needs HOST:PORT, e.g. dask://10.0.0.5:8786")
        return DaskExecutor(spec, workers)
    raise TournamentError(f"unknown --executor {spec!r}; expected local or dask://HOST:PORT")


# ---- running a tournament --------------------------------------------------------------
GAMES_CSV, META_JSON = "games.csv", "tournament.json"
OUTPUT_FILES = ("games.csv", "standings.csv", "pairs.csv", "seats.csv", "tournament.json",
                "ratings.png")


@dataclass
class TournamentOutcome:
    config: TournamentConfig
    out_dir: str
    tables: object              # niwa.analysis.stats.standings.Tables
    played_now: int
    total: int
    finished: bool
    sprt: dict | None
    meta: dict


def read_record(path: str, parse, error: type[NiwaError], what: str):
    """`parse(record)` of the JSON record at `path`, None if there is no file; a file that
    is not such a record raises `error` in one line naming it (a tournament or analysis)."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return parse(json.load(f))
    except (ValueError, KeyError, TypeError) as e:
        raise error(f"{path} is not a niwa {what} record: {_first_line(e)}") from None


def load_saved_config(out_dir: str) -> TournamentConfig | None:
    return read_record(os.path.join(out_dir, META_JSON),
                       lambda meta: TournamentConfig(**meta["config"]), TournamentError,
                       "tournament")


def _agent_settings(config) -> dict:
    """Each spec with every default filled in, so the run can be rebuilt if defaults move."""
    from niwa.solver.agents import agent_settings

    return {spec: agent_settings(spec, config.game) for spec in config.agents}


def _versions(executor) -> dict:
    import platform
    import sys
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in ("niwa", "numpy", "pandas", "scipy", "dask", "distributed"):
        if pkg in ("dask", "distributed") and not isinstance(executor, DaskExecutor):
            continue
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def write_record(path: str, data: dict) -> None:
    """Write a JSON record atomically (a crash leaves the old one whole)."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, default=str)
        f.write("\n")
    os.replace(tmp, path)


def _check_identity(saved: TournamentConfig, config: TournamentConfig, out_dir: str):
    a, b = saved.identity(), config.identity()
    diff = [k for k in a if a[k] != b.get(k)]
    if diff:
        k = diff[0]
        raise TournamentError(
            f"{out_dir} holds a different tournament: {k} is {a[k]!r} there, {b[k]!r} here "
            "(resume with the same options, or choose another --out)")


class _SprtFeed:
    """Feeds finished game pairs to the SPRT strictly in schedule order, so the stopping
    point (and so every table) is the same whatever the number of workers."""

    def __init__(self, spec: dict, labels: list[str]):
        from niwa.analysis.stats.sprt import SprtSpec, SprtTracker

        self.tracker = SprtTracker(SprtSpec(**spec))
        self.tested = labels[0]
        self.next_pair = 0
        self.stop_after: int | None = None   # last game id that counts

    def _score(self, row) -> float:
        seat = 0 if row["agent_0"] == self.tested else 1
        other = 1 - seat
        mine, theirs = float(row[f"result_{seat}"]), float(row[f"result_{other}"])
        return 1.0 if mine > theirs else 0.0 if mine < theirs else 0.5

    def advance(self, rows: dict) -> bool:
        while self.stop_after is None:
            first, second = 2 * self.next_pair, 2 * self.next_pair + 1
            if first not in rows or second not in rows:
                break
            decision = self.tracker.add_pair(self._score(rows[first]), self._score(rows[second]))
            self.next_pair += 1
            if decision:
                self.stop_after = second
        return self.stop_after is not None


class _Leader:
    """Running score share per agent, for the progress bar (full points to the sole best
    result, shared points on a tie)."""

    def __init__(self, n_players: int):
        self.n = n_players
        self.points: dict[str, float] = {}
        self.games: dict[str, int] = {}

    def add(self, row: dict) -> None:
        res = [float(row[f"result_{s}"]) for s in range(self.n)]
        best = max(res)
        for s in range(self.n):
            label = row[f"agent_{s}"]
            self.points[label] = self.points.get(label, 0.0) + (res[s] == best) / res.count(best)
            self.games[label] = self.games.get(label, 0) + 1

    def __str__(self) -> str:
        if not self.points:
            return "-"
        top = max(self.points, key=lambda k: (self.points[k] / self.games[k], k))
        return f"{top} {100 * self.points[top] / self.games[top]:.0f}%"


def check_out_dir(config: TournamentConfig, out_dir: str, resume: bool):
    """The saved config of out_dir when resuming it is allowed; TournamentError otherwise."""
    saved = load_saved_config(out_dir)
    games_path = os.path.join(out_dir, GAMES_CSV)
    if resume:
        if saved is None:
            raise TournamentError(
                f"nothing to resume: {os.path.join(out_dir, META_JSON)} does not exist")
        _check_identity(saved, config, out_dir)
    elif saved is not None or (os.path.exists(games_path) and os.path.getsize(games_path)):
        raise TournamentError(
            f"{out_dir} already holds a tournament; pass --resume to finish it, or choose "
            "another --out")
    return saved


def run_tournament(config: TournamentConfig, out_dir: str, executor=None, resume=False,
                   progress: bool | None = None, command: str = "") -> TournamentOutcome:
    """Play (or finish) the tournament into out_dir and write every table."""
    from tqdm.auto import tqdm

    from niwa.analysis.stats.standings import compute_tables, plot_ratings, read_games

    executor = executor or LocalExecutor()
    saved = check_out_dir(config, out_dir, resume)
    os.makedirs(out_dir, exist_ok=True)
    games_path = os.path.join(out_dir, GAMES_CSV)
    meta_path = os.path.join(out_dir, META_JSON)

    schedule = build_schedule(config)
    columns = csv_columns(config.players)
    log = GameLog(games_path, columns)
    for gid, row in log.rows.items():
        if gid >= len(schedule) or tuple(row[f"agent_{s}"] for s in range(config.players)) \
                != schedule[gid].labels:
            raise TournamentError(f"{games_path} game {gid} does not belong to this schedule")

    meta = {}
    if saved is not None and os.path.exists(meta_path):
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    run_record = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": command,
                  "executor": executor.describe(), "games_before": len(log.rows)}
    meta.update({
        "command": meta.get("command", command), "config": config.identity(),
        "labels": config.labels, "seed": config.seed, "status": "running",
        "schedule": {"games": len(schedule), "rounds": config.rounds,
                     "games_per_round": games_per_round(config),
                     "seat_orders": math.factorial(config.players)},
        "agent_settings": _agent_settings(config),
        "versions": _versions(executor),
    })
    meta.setdefault("runs", []).append(run_record)
    write_record(meta_path, meta)

    sprt = _SprtFeed(config.sprt, config.labels) if config.sprt else None
    stopped = sprt.advance(log.rows) if sprt else False
    todo = [] if stopped else [t for t in schedule if t.game_id not in log.rows]
    played_now = 0
    tqdm.monitor_interval = 0   # no monitor thread to be copied into forked workers
    # progress=None: a bar only on a terminal (tqdm's disable=None)
    bar = tqdm(total=len(schedule), initial=len(log.rows), unit="game",
               disable=None if progress is None else not progress, dynamic_ncols=True,
               smoothing=0.05, desc=config.game)
    interrupted = False
    leader = _Leader(config.players)
    for row in log.rows.values():
        leader.add(row)
    last_postfix = 0.0
    stream = executor.run(todo)
    try:
        for row in stream:
            log.append(row)
            leader.add(row)
            played_now += 1
            bar.update(1)
            if time.monotonic() - last_postfix > 0.5 or played_now == len(todo):
                last_postfix = time.monotonic()
                bar.set_postfix_str(f"leader {leader}", refresh=False)
            if sprt and sprt.advance(log.rows):
                stopped = True
                break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        stream.close()          # stops the pool: games still in flight are abandoned
        bar.close()
        if hasattr(executor, "close"):
            executor.close()

    keep = set(range(sprt.stop_after + 1)) if sprt and sprt.stop_after is not None else None
    finished = stopped or (not interrupted and len(log.rows) >= len(schedule))
    if finished:
        log.rewrite_sorted(keep)
    else:
        log.close()
    if keep is not None:
        log.rows = {g: r for g, r in log.rows.items() if g in keep}

    tables = None
    if log.rows:
        tables = compute_tables(read_games(games_path).pipe(
            lambda df: df[df["game_id"].astype(int).isin(list(log.rows))]),
            config.labels, config.players)
        tables.standings.to_csv(os.path.join(out_dir, "standings.csv"), index=False)
        tables.pairs.to_csv(os.path.join(out_dir, "pairs.csv"), index=False)
        tables.seats.to_csv(os.path.join(out_dir, "seats.csv"), index=False)
        plot_ratings(tables, os.path.join(out_dir, "ratings.png"),
                     f"{config.game}: {len(log.rows)} games")

    errors = [r["error"] for r in log.rows.values() if r["error"]]
    run_record.update({"ended": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "games_played": played_now})
    meta.update({
        "status": ("sprt-stopped" if stopped and sprt else "finished" if finished
                   else "interrupted"),
        "games_recorded": len(log.rows),
        "forfeits": len(errors), "forfeit_examples": errors[:5],
        "capped": sum(r["capped"] == "1" for r in log.rows.values()),
    })
    if sprt:
        meta["sprt"] = {**sprt.tracker.summary(), "tested": config.labels[0],
                        "against": config.labels[1], "stopped_after_games": len(log.rows)
                        if stopped else None}
    if tables is not None:
        meta["standings"] = tables.standings.replace({np.nan: None}).to_dict("records")
        meta["seat_advantage_elo"] = [round(float(x), 1) for x in tables.fit.seat_elo]
    write_record(meta_path, meta)
    if interrupted:
        raise KeyboardInterrupt
    return TournamentOutcome(config, out_dir, tables, played_now, len(schedule), finished,
                             meta.get("sprt"), meta)


def make_config(game: str, agents, *, variant: dict | None = None, players: int | None = None,
                fmt: str = "round-robin", games: int | None = None, rounds: int | None = None,
                seed: int = 1, max_plies: int | None = None, move_time: float | None = None,
                time_margin: float = 0.5, sprt: str | dict | None = None
                ) -> tuple[TournamentConfig, list[str]]:
    """Validate the options (NiwaError with one line on any problem); returns the config
    and notes for the user (e.g. --games rounded up to a whole number of rounds)."""
    from niwa.analysis.stats.sprt import SprtSpec, parse_sprt
    from niwa.ext.registry import get_game
    from niwa.solver.agents import make_agent, parse_spec

    notes = []
    info = get_game(game)
    variant = dict(variant or {})
    if players is not None:
        if "players" in info.variants:
            variant["players"] = players     # the game checks the range (VariantError)
        elif players != info.new(seed=0, **variant).num_players:
            n = info.new(seed=0, **variant).num_players
            raise TournamentError(f"{info.name} is a {n}-player game; --players must be {n}")
    state = info.new(seed=0, **variant)
    n_players = state.num_players
    if n_players < 2:
        raise TournamentError(f"a tournament needs games of 2 or more players, not {n_players}")
    agents = [a.strip() for a in agents]
    for spec in agents:
        make_agent(spec, seed=0)      # unknown agent or bad parameter: AgentError here
        if parse_spec(spec)[0] == "human":
            raise TournamentError("the human agent cannot sit in a tournament; "
                                  "play it with `niwa play`")
    if fmt not in FORMATS:
        raise TournamentError(f"unknown --format {fmt!r}; expected {' or '.join(FORMATS)}")
    if games is not None and rounds is not None:
        raise TournamentError("give --games or --rounds, not both")
    for name, value in (("--games", games), ("--rounds", rounds), ("--max-plies", max_plies)):
        if value is not None and value < 1:
            raise TournamentError(f"{name} must be at least 1, got {value}")
    if move_time is not None and not move_time > 0:
        raise TournamentError(f"--move-time must be positive, got {move_time}")
    sprt_spec = None
    if sprt:
        sprt_spec = parse_sprt(sprt) if isinstance(sprt, str) else SprtSpec(**sprt)
        if len(agents) != 2 or n_players != 2:
            raise TournamentError("--sprt tests two agents in a two-player game "
                                  f"(here {len(agents)} agents, {n_players} players)")
    config = TournamentConfig(
        game=info.name, agents=agents, players=n_players, variant=dict(state.variant),
        format=fmt, rounds=1, seed=int(seed), max_plies=max_plies, move_time=move_time,
        time_margin=float(time_margin), sprt=sprt_spec.as_dict() if sprt_spec else None)
    tables = tables_for(len(agents), n_players, fmt)
    orders = math.factorial(n_players)
    if rounds is None:
        wanted = games if games is not None else (2000 if sprt_spec else 10)
        rounds = math.ceil(wanted / orders)
        if rounds * orders != wanted:
            notes.append(f"--games {wanted} rounded up to {rounds * orders} so that every "
                         f"seat order ({orders}) is played equally often")
    config.rounds = int(rounds)
    notes.append(f"{len(tables)} table{'s' * (len(tables) != 1)} x {orders} seat orders x "
                 f"{config.rounds} rounds = {len(tables) * orders * config.rounds} games")
    return config, notes
