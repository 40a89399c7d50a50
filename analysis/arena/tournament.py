"""Bot-vs-bot tournaments: a schedule (arena.schedule) fed to the run engine
(arena.runner), then the standings (stats.standings) written beside the game log.

Output in the tournament folder: games.csv, standings.csv, pairs.csv, seats.csv,
tournament.json (the configuration, the runs, the versions, the summary) and ratings.png.
See docs/tournament.md.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from niwa.analysis.arena.clock import parse_time_control
from niwa.analysis.arena.executors import DaskExecutor, LocalExecutor
from niwa.analysis.arena.games_csv import csv_columns, holds_games
from niwa.analysis.arena.games_jsonl import RecordedGameLog
from niwa.analysis.arena.live import LiveReport
from niwa.analysis.arena.openings import load_suite, parse_openings
from niwa.analysis.arena.run_record import (
    end_run,
    option_flag,
    read_record,
    refuse_untrusted_programs,
    require_folder_and_game,
    start_run,
    versions,
    write_record,
)
from niwa.analysis.arena.runner import RunResult, run_schedule
from niwa.analysis.arena.schedule import (
    FORMATS,
    MAX_GAME_ID,
    MAX_MOVE_SECONDS,
    MAX_PLIES,
    MAX_SEED,
    Schedule,
    TournamentConfig,
    TournamentError,
    agent_clocks,
    games_per_round,
    identity_digest,
    tables_for,
)
from niwa.ext.registry import get_game

GAMES_CSV, META_JSON = "games.csv", "tournament.json"


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
    notes: list[str] = field(default_factory=list)   # records restored, damage found


def load_saved_config(out_dir: str) -> TournamentConfig | None:
    """The configuration recorded in out_dir (None if there is none); a record edited by
    hand (its seed, say) no longer matches its identity digest and is refused."""
    path = os.path.join(out_dir, META_JSON)

    def parse(meta):
        config = TournamentConfig(**meta["config"])
        digest = meta.get("identity_digest")
        if (digest is not None and digest != identity_digest(config.identity())) \
                or ("seed" in meta and meta["seed"] != config.seed):
            raise TournamentError(
                f"{path}: the configuration was edited (it no longer matches its "
                "identity_digest); restore it, or start a new tournament in another --out")
        return config

    return read_record(path, parse, TournamentError, "tournament")


def _agent_settings(config) -> dict:
    """Each spec with every default filled in, so the run can be rebuilt if defaults move."""
    from niwa.solver.agent_spec import AgentSpec, agent_settings

    return {text: agent_settings(AgentSpec.parse(text).without_clock(), config.game)
            for text in config.agents}


def _time_controls(config) -> dict:
    """Each agent's time control as text (None: no clock), for tournament.json."""
    return {label: None if tc is None else str(tc)
            for label, tc in zip(config.labels, agent_clocks(config)[1], strict=True)}


def _check_identity(saved: TournamentConfig, config: TournamentConfig, out_dir: str):
    a, b = saved.identity(), config.identity()
    if b["rounds"] < a["rounds"]:
        raise TournamentError(
            f"{out_dir} holds a tournament of {a['rounds']} rounds; --resume can add games "
            f"(more --games or --rounds), not remove them ({b['rounds']} rounds here)")
    # more rounds grow the run: the schedule is the same, game for game, then goes on
    diff = [k for k in a if a[k] != b.get(k) and k != "rounds"]
    if diff:
        k = diff[0]
        raise TournamentError(
            f"{out_dir} holds a different tournament: {k} is {a[k]!r} there, {b[k]!r} here "
            "(resume with the same options, or choose another --out)")


class SprtStop:
    """The SPRT as the runner's stop rule: feeds finished game pairs to the test strictly
    in schedule order, so the stopping point (and so every table) is the same whatever
    the number of workers. Only the scores of games that finished ahead of their turn are
    kept (a few, as games finish almost in order)."""

    def __init__(self, spec: dict, labels: list[str]):
        from niwa.analysis.stats.sprt import SprtSpec, SprtTracker

        self.tracker = SprtTracker(SprtSpec(**spec))
        self.tested = labels[0]
        self.next_pair = 0
        self.waiting: dict[int, float] = {}   # game id -> score, not yet tested
        self.stop_after: int | None = None   # last game id that counts

    def _score(self, row) -> float:
        seat = 0 if row["agent_0"] == self.tested else 1
        other = 1 - seat
        mine, theirs = float(row[f"result_{seat}"]), float(row[f"result_{other}"])
        return 1.0 if mine > theirs else 0.0 if mine < theirs else 0.5

    def keep(self, game_id: int) -> bool:
        return self.stop_after is None or game_id <= self.stop_after

    def add(self, row: dict) -> None:
        gid = int(row["game_id"])
        if self.stop_after is None and gid >= 2 * self.next_pair:
            self.waiting[gid] = self._score(row)

    def should_stop(self) -> bool:
        while self.stop_after is None:
            first, second = 2 * self.next_pair, 2 * self.next_pair + 1
            if first not in self.waiting or second not in self.waiting:
                break
            decision = self.tracker.add_pair(self.waiting.pop(first), self.waiting.pop(second))
            self.next_pair += 1
            if decision:
                self.stop_after = second
                self.waiting.clear()
        return self.stop_after is not None


class Leader:
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
    """The saved config of out_dir when resuming it is allowed; TournamentError otherwise.

    --resume into a folder without a record (a run killed before it wrote anything, or a
    new folder) starts the tournament: so the same command can be repeated until it ends."""
    saved = load_saved_config(out_dir)
    games_path = os.path.join(out_dir, GAMES_CSV)
    if resume:
        if saved is None and holds_games(games_path):
            raise TournamentError(
                f"{games_path} holds games but {os.path.join(out_dir, META_JSON)} does not "
                "exist: cannot tell which tournament it is")
        if saved is not None:
            _check_identity(saved, config, out_dir)
    elif saved is not None or holds_games(games_path):
        raise TournamentError(
            f"{out_dir} already holds a tournament; pass --resume to finish it, or choose "
            "another --out")
    return saved


def run_tournament(config: TournamentConfig, out_dir: str, executor=None, resume=False,
                   progress: bool | None = None, command: str = "",
                   on_bad_rows: str = "stop", report=None,
                   report_every: int = 10, on_start=None) -> TournamentOutcome:
    """Play (or finish) the tournament into out_dir and write every table.

    `on_start` (no arguments) is called once the folder's earlier games are read and
    checked, before anything is written: a command prints its header there, so a folder
    it refuses gets the one error line only.

    `report` (a function of one line of text, e.g. click.echo) receives a line per finished
    game and a status block every `report_every` games (arena.live); None: silent.

    The record (tournament.json) is written before the first byte of games.csv, so a kill
    at any moment leaves a folder that --resume finishes."""
    executor = executor or LocalExecutor()
    saved = check_out_dir(config, out_dir, resume)
    os.makedirs(out_dir, exist_ok=True)
    games_path = os.path.join(out_dir, GAMES_CSV)
    meta_path = os.path.join(out_dir, META_JSON)
    schedule = Schedule(config)

    def open_log():
        return RecordedGameLog(games_path, csv_columns(config.players), schedule.check_row,
                               on_bad_rows)

    log = open_log() if os.path.exists(games_path) else None
    meta = (read_record(meta_path, dict, TournamentError, "tournament") or {}) if saved else {}
    if on_start is not None:
        on_start()
    meta.update({
        "command": meta.get("command", command), "config": config.identity(),
        "identity_digest": identity_digest(config.identity()),
        "labels": config.labels, "seed": config.seed, "status": "running",
        "schedule": {"games": len(schedule), "rounds": config.rounds,
                     "games_per_round": games_per_round(config),
                     "seat_orders": math.factorial(config.players)},
        "agent_settings": _agent_settings(config),
        "time_controls": _time_controls(config),
        "versions": versions(isinstance(executor, DaskExecutor)),
    })
    run_record = start_run(meta, command, executor, len(log.done) if log else 0)
    if log is not None and log.dropped:
        run_record["dropped_rows"] = log.dropped[:20]
    write_record(meta_path, meta)
    log = log or open_log()

    sprt = SprtStop(config.sprt, config.labels) if config.sprt else None
    reporter = None if report is None else LiveReport(
        config.labels, config.players, len(schedule), report_every, report, sprt)
    result = run_schedule(schedule, log, executor, desc=config.game, progress=progress,
                          stop_rule=sprt, status=Leader(config.players), reporter=reporter)
    rows = list(log.read_rows())
    tables = write_tables(config, out_dir, rows) if rows else None
    end_run(run_record, result.played_now)
    if result.notes:
        run_record["record_notes"] = result.notes
    _summarise(meta, config, rows, result, sprt, tables)
    write_record(meta_path, meta)
    if result.interrupted:
        raise KeyboardInterrupt
    return TournamentOutcome(config, out_dir, tables, result.played_now, len(schedule),
                             result.finished, meta.get("sprt"), meta, result.notes)


def write_tables(config: TournamentConfig, out_dir: str, rows: list[dict]):
    """standings.csv, pairs.csv, seats.csv and ratings.png from the games that count (the
    valid rows of the log)."""
    import pandas as pd

    from niwa.analysis.stats.standings import compute_tables

    tables = compute_tables(pd.DataFrame(rows), config.labels, config.players)
    tables.standings.to_csv(os.path.join(out_dir, "standings.csv"), index=False)
    tables.pairs.to_csv(os.path.join(out_dir, "pairs.csv"), index=False)
    tables.seats.to_csv(os.path.join(out_dir, "seats.csv"), index=False)
    plot_ratings(tables, os.path.join(out_dir, "ratings.png"),
                 f"{config.game}: {len(rows)} games")
    return tables


def plot_ratings(tables, path: str, title: str = "") -> None:
    """Ratings with 95% interval bars, strongest on top (PNG, Agg backend)."""
    st = tables.standings.iloc[::-1]
    plot_elo_intervals(st["agent"], st["rating"], st["rating_low"], st["rating_high"], path,
                       "Elo (mean 0), 95% interval", title)


def plot_elo_intervals(agents, elo, low, high, path, xlabel: str, title: str = "",
                       color: str = "tab:green", width: float = 7, row: float = 0.5,
                       pad: float = 1.5) -> None:
    """One row per agent, bottom to top in the order given: its Elo with the interval
    [low, high] as a bar (PNG, Agg backend). Tournaments and the strength ladder use it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    elo, low, high = (np.asarray(x, dtype=float) for x in (elo, low, high))
    y = np.arange(len(elo))
    fig, ax = plt.subplots(figsize=(width, row * len(elo) + pad))
    ax.errorbar(elo, y, xerr=np.vstack([elo - low, high - elo]), fmt="o", capsize=4,
                color=color)
    ax.axvline(0, color="grey", lw=0.8, ls=":")
    ax.set_yticks(y, list(agents))
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _summarise(meta: dict, config: TournamentConfig, rows: list[dict], result: RunResult,
               sprt: SprtStop | None, tables) -> None:
    errors = [r["error"] for r in rows if r["error"]]
    meta.update({
        "status": ("sprt-stopped" if result.stopped and sprt else "finished" if result.finished
                   else "interrupted"),
        "games_recorded": len(rows),
        "forfeits": len(errors), "forfeit_examples": errors[:5],
        "lost_on_time": sum(r.get("termination") == "time" for r in rows),
        "capped": sum(r["capped"] == "1" for r in rows),
    })
    if sprt:
        meta["sprt"] = {**sprt.tracker.summary(), "tested": config.labels[0],
                        "against": config.labels[1], "stopped_after_games": len(rows)
                        if result.stopped else None}
    if tables is not None:
        meta["standings"] = tables.standings.replace({np.nan: None}).to_dict("records")
        meta["seat_advantage_elo"] = [round(float(x), 1) for x in tables.fit.seat_elo]


def checked_sprt(sprt: str | dict, n_agents: int, n_players: int, spell=option_flag):
    """The --sprt test (SprtSpec) of a string or a saved dict, checked for this tournament."""
    from niwa.analysis.stats.sprt import SprtSpec, parse_sprt

    spec = parse_sprt(sprt) if isinstance(sprt, str) else SprtSpec(**sprt)
    if not all(-4000 <= v <= 4000 for v in (spec.elo0, spec.elo1)):
        raise TournamentError(f"{spell('sprt')} elo0 and elo1 must be finite Elo differences "
                              f"within +-4000, got elo0={spec.elo0:g} elo1={spec.elo1:g}")
    if n_agents != 2 or n_players != 2:
        raise TournamentError(f"{spell('sprt')} tests two agents in a two-player game "
                              f"(here {n_agents} agents, {n_players} players)")
    return spec


def make_config(game: str, agents, *, variant: dict | None = None, players: int | None = None,
                fmt: str = "round-robin", games: int | None = None, rounds: int | None = None,
                seed: int = 1, max_plies: int | None = None, move_time: float | None = None,
                time_margin: float = 0.5, sprt: str | dict | None = None,
                time_control: str | None = None, openings: str | dict | None = None,
                spell=option_flag) -> tuple[TournamentConfig, list[str]]:
    """Validate the options (NiwaError with one line on any problem, naming the option as
    `spell` spells it: the command's flag by default); returns the config and notes for
    the user (e.g. --games rounded up to a whole number of rounds)."""
    from niwa.solver.agent_spec import AgentSpec, check_for_game, make_agent
    from niwa.solver.protocol import check_engines

    notes = []
    info = get_game(game)
    variant = dict(variant or {})
    if players is not None:
        if "players" in info.variants:
            variant["players"] = players     # the game checks the range (VariantError)
        elif players != info.new(seed=0, **variant).num_players:
            n = info.new(seed=0, **variant).num_players
            raise TournamentError(f"{info.name} is a {n}-player game; {spell('players')} "
                                  f"must be {n}")
    state = info.new(seed=0, **variant)
    n_players = state.num_players
    if n_players < 2:
        raise TournamentError(f"a tournament needs games of 2 or more players, not {n_players}")
    agents = [a.strip() for a in agents]
    if time_control is not None:
        time_control = str(parse_time_control(time_control) or "") or None  # normal form
    for text in agents:
        spec = AgentSpec.parse(text)    # unknown agent, bad parameter or tc=: one line here
        make_agent(spec.without_clock(), seed=0)     # an agent that cannot start fails here
        check_for_game(spec, state)     # and one whose w_NAME= the game does not know
        if spec.name == "human":
            raise TournamentError("the human agent cannot sit in a tournament; "
                                  "play it with `niwa play`")
    if fmt not in FORMATS:
        raise TournamentError(f"unknown {spell('fmt')} {fmt!r}; expected "
                              f"{' or '.join(FORMATS)}")
    if games is not None and rounds is not None:
        raise TournamentError(f"give {spell('games')} or {spell('rounds')}, not both")
    for key, value, high in (("games", games, MAX_GAME_ID), ("rounds", rounds, MAX_GAME_ID),
                             ("max_plies", max_plies, MAX_PLIES), ("seed", seed, MAX_SEED)):
        name = spell(key)
        if value is not None and not (isinstance(value, int) and (key == "seed" or value >= 1)):
            raise TournamentError(f"{name} must be a whole number of at least 1, got {value}")
        if value is not None and not 0 <= value <= high:
            raise TournamentError(f"{name} must be between {1 - (key == 'seed')} and "
                                  f"{high}, got {value}")
    if move_time is not None and not 0 < move_time <= MAX_MOVE_SECONDS:
        raise TournamentError(f"{spell('move_time')} must be above 0 and at most "
                              f"{MAX_MOVE_SECONDS:g} seconds, got {move_time}")
    if not 0 <= time_margin <= MAX_MOVE_SECONDS:     # also refuses nan
        raise TournamentError(f"{spell('time_margin')} must be between 0 and "
                              f"{MAX_MOVE_SECONDS:g} seconds, got {time_margin}")
    sprt_spec = checked_sprt(sprt, len(agents), n_players, spell) if sprt else None
    if openings is not None:
        suite = parse_openings(openings) if isinstance(openings, str) else dict(openings)
        openings = load_suite(suite, info.name, dict(state.variant))
    names = check_engines(agents, info.name)    # an engine that cannot start stops here
    config = TournamentConfig(
        game=info.name, agents=agents, players=n_players, variant=dict(state.variant),
        format=fmt, rounds=1, seed=int(seed), max_plies=max_plies, move_time=move_time,
        time_margin=float(time_margin), sprt=sprt_spec.as_dict() if sprt_spec else None,
        time_control=time_control, openings=openings, names=names or None)
    tables = tables_for(len(agents), n_players, fmt)
    orders = math.factorial(n_players)
    if rounds is None:
        wanted = games if games is not None else (2000 if sprt_spec else 10)
        rounds = math.ceil(wanted / orders)
        if rounds * orders != wanted:
            notes.append(f"--games {wanted} rounded up to {rounds * orders} so that every "
                         f"seat order ({orders}) is played equally often")
    config.rounds = int(rounds)
    total = len(tables) * orders * config.rounds
    if total > MAX_GAME_ID:
        raise TournamentError(f"{config.rounds} rounds would schedule {total} games; at most "
                              f"{MAX_GAME_ID} (game ids are 64-bit integers)")
    notes.append(f"{len(tables)} table{'s' * (len(tables) != 1)} x {orders} seat orders x "
                 f"{config.rounds} rounds = {len(tables) * orders * config.rounds} games")
    return config, notes


def resume_or_make_config(game: str | None, agents, *, given: set[str], out_dir: str | None,
                          resume: bool, variant: dict | None = None,
                          trust_engines: bool = False, spell=option_flag, **options
                          ) -> tuple[TournamentConfig, list[str]]:
    """The configuration of a new tournament (make_config), or, with `resume`, the one
    saved in out_dir with only the options in `given` (typed again) replacing the saved
    settings; the agents, game and variant replace them when given at all. Saved agents
    that start a program (engine:cmd=...) are refused unless `trust_engines`
    (run_record.refuse_untrusted_programs). `niwa tournament` and niwa.tournament() both
    start here: a resume without a folder, a new tournament without a game or with fewer
    than two agents are refused in one line, naming the options as `spell` spells them
    (the command's flags by default)."""
    agents = list(agents)
    require_folder_and_game(resume, out_dir, game, what="the tournament to finish",
                            example="niwa tournament lotus --agents random random",
                            error=TournamentError, spell=spell)
    if not resume and len(agents) < 2:
        raise TournamentError(f"give at least two agents: {spell('agents')} A B [C ...]")
    if not resume:
        return make_config(game, list(agents), variant=variant, spell=spell, **options)
    saved = load_saved_config(out_dir)
    if saved is None:
        if game and len(agents) >= 2:   # nothing recorded yet: --resume starts the run
            return make_config(game, list(agents), variant=variant, spell=spell, **options)
        raise TournamentError(f"nothing to resume in {out_dir}: no tournament.json there")
    if game and get_game(game).name != saved.game:
        raise TournamentError(f"{out_dir} holds a {saved.game} tournament, not {game}")
    if not agents:
        refuse_untrusted_programs(os.path.join(out_dir, META_JSON), saved.agents,
                                  again="--agents with every agent, as saved",
                                  error=TournamentError, trust=trust_engines)
    if not ({"games", "rounds"} & given):
        options["rounds"] = saved.rounds
    kept = {"players": None, "fmt": saved.format, "seed": saved.seed,
            "max_plies": saved.max_plies, "move_time": saved.move_time,
            "time_margin": saved.time_margin, "sprt": saved.sprt,
            "time_control": saved.time_control, "openings": saved.openings}
    for name, value in kept.items():
        if name not in given:
            options[name] = value
    return make_config(game or saved.game, list(agents) or saved.agents,
                       variant=variant if variant else saved.variant, spell=spell, **options)
