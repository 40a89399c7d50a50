"""Rule-variant experiments: play every combination of varied settings, measure, compare.

An *experiment* is a game, settings to vary (`rule=basic,pro`), the players (self-play with
one agent spec, a lineup of specs, or a sweep of strengths) and a number of games. It is cut
into *cells*, one per combination of varied settings (and per strength): each cell is an
ordinary tournament configuration (niwa.analysis.arena.tournament), played by the tournament
runner, so it is parallel, resumable and reproducible in the same way. All cells share one
log, games.csv: game_id = cell * 1,000,000 + the game's index in its cell's schedule, and a
`cell` column names the cell. Because a cell's schedule only grows at its end when more
games are asked for, `--resume --games N` can also extend a finished experiment.

Each cell has its own seed, derived from the experiment seed and the cell's label: cells are
independent samples, which is what the two-sample tests below assume.

Metrics (per cell), after Ludii's game-evaluation concepts, with 95% intervals:
- seat win rates: each seat's share of the *decisive* games (games with one sole winner;
  draws and --max-plies caps are counted apart), Wilson intervals;
- first-player advantage: seat 0's share minus the fair share 1/N, with the exact binomial
  test against 1/N; balance: 1 - (best seat's share - worst seat's share), with a test that
  wins are spread evenly over the seats;
- duration: plies (and turns or rounds when the game records them): mean, sd, quartiles;
- games with a running score (stats()["score_history"]): lead changes per game and the
  comeback rate (the winner was behind at some point); final scores (stats()["scores"]):
  per-seat means, the winner's margin; Bonsai goals (stats()["goals_claimed"]): each goal's
  claim rate; solo games: the win rate (the share reaching the configured level) and, where
  stats()["level_reached"] exists, the share reaching each level;
- Lotus (stats()["remaining"]): how far the runner-up still had to go when the game ended.

Between cells, one setting at a time (each value against the setting's first value, the
other settings and the strength held fixed): Fisher's exact test (2 seats)
or chi-square (more) of wins by seat, the difference of seat 0's share with Newcombe's
interval, Mann-Whitney on lengths, Holm-adjusted over all the comparisons of the run, and a
verdict sentence that says what the data support and no more.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from niwa.analysis import stats as st
from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.arena.game_log import GameLog, csv_columns
from niwa.analysis.arena.records import end_run, read_record, start_run, write_record
from niwa.analysis.arena.runner import RunResult, check_log, run_schedule
from niwa.analysis.arena.schedule import (
    Schedule,
    TournamentConfig,
    TournamentError,
    derive_seed,
    tables_for,
)
from niwa.analysis.arena.tournament import make_config
from niwa.ext.errors import NiwaError

STRIDE = 1_000_000          # game ids per cell in the shared games.csv
GAMES_CSV, META_JSON = "games.csv", "analysis.json"
VARIANTS_CSV, COMPARISONS_CSV, TRENDS_CSV = "variants.csv", "comparisons.csv", "strengths.csv"
ALPHA = 0.05


class AnalysisError(NiwaError):
    """An experiment that cannot be set up, resumed or analysed (one-line message)."""


# ---- the experiment --------------------------------------------------------------------
@dataclass
class Experiment:
    """Everything that fixes the games (the resume identity), plus the number of games."""

    game: str
    vary: list = field(default_factory=list)        # [[key, [value, ...]], ...] as given
    players: int | None = None                      # --players (a fixed setting)
    agents: list = field(default_factory=lambda: ["random"])  # one spec = self-play
    strengths: list = field(default_factory=list)   # self-play specs to sweep
    games: int = 1000                               # per cell
    seed: int = 1
    max_plies: int | None = None

    def identity(self) -> dict:
        """What must match on --resume (the number of games may change: it only extends)."""
        d = dataclasses.asdict(self)
        d.pop("games")
        return d

    @property
    def self_play(self) -> bool:
        return bool(self.strengths) or len(self.agents) == 1


@dataclass
class Cell:
    index: int
    settings: dict          # the varied settings, as given
    variant: dict           # the full variant the games are played with
    players: int
    strength: str | None    # the self-play spec of a strength sweep
    config: TournamentConfig
    games: int              # scheduled (--games rounded up to whole rounds)

    @property
    def variant_label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.settings.items()) or "default"

    @property
    def label(self) -> str:
        return self.variant_label + (f" ({self.strength})" if self.strength else "")


def parse_vary(items, game: str) -> list:
    """['rule=basic,pro'] -> [['rule', ['basic', 'pro']]], keys checked against the game."""
    from niwa.ext.registry import get_game

    info = get_game(game)
    out, seen = [], set()
    for item in items:
        key, eq, values = item.partition("=")
        key = key.strip().replace("-", "_")
        vals = [v.strip() for v in values.split(",") if v.strip()]
        if not eq or not key or not vals:
            raise AnalysisError(f"--vary {item!r} should be KEY=V1,V2,... (e.g. rule=basic,pro)")
        if key not in info.variants:
            raise AnalysisError(f"--vary {key}: {info.name} has no setting {key!r}; settings: "
                                f"{', '.join(info.variants)}")
        if key in seen:
            raise AnalysisError(f"--vary {key} is given twice; list all its values once")
        if len(set(vals)) != len(vals):
            raise AnalysisError(f"--vary {item!r} repeats a value")
        seen.add(key)
        out.append([key, vals])
    return out


def parse_strengths(items) -> list[str]:
    """['mcts:iters=100,1000'] -> ['mcts:iters=100', 'mcts:iters=1000'].

    In `NAME:KEY=V1,V2,...,OTHER=X`, a bare value continues the list of the key before it;
    at most one key may list several values. Several --strengths are concatenated.
    """
    from niwa.solver.agents import parse_spec

    specs = []
    for item in items:
        name, colon, rest = item.strip().partition(":")
        params: list[list] = []
        for tok in filter(None, (t.strip() for t in rest.split(","))):
            if "=" in tok:
                k, _, v = tok.partition("=")
                params.append([k.strip(), [v.strip()]])
            elif params:
                params[-1][1].append(tok)
            else:
                raise AnalysisError(f"--strengths {item!r} should be NAME:KEY=V1,V2,... "
                                    "(e.g. mcts:iters=100,1000,10000)")
        swept = [p for p in params if len(p[1]) > 1]
        if len(swept) > 1:
            raise AnalysisError(f"--strengths {item!r} lists several values for more than one "
                                "parameter; sweep one parameter at a time")
        combos = swept[0][1] if swept else [None]
        for value in combos:
            parts = [f"{k}={value if len(vs) > 1 else vs[0]}" for k, vs in params]
            spec = name.strip() + (":" + ",".join(parts) if colon and parts else "")
            parse_spec(spec)          # unknown agent or bad parameter: AgentError
            if spec in specs:
                raise AnalysisError(f"--strengths lists {spec!r} twice")
            specs.append(spec)
    return specs


def plan_cells(exp: Experiment) -> tuple[list[Cell], list[str]]:
    """The cells of an experiment (strength-major, then settings in --vary order) and notes
    for the user. Raises a one-line NiwaError on any bad setting, agent or count."""
    from niwa.ext.registry import get_game

    info = get_game(exp.game)
    if exp.games < 1:
        raise AnalysisError(f"--games must be at least 1, got {exp.games}")
    if exp.max_plies is not None and exp.max_plies < 1:
        raise AnalysisError(f"max_plies must be at least 1, got {exp.max_plies}")
    if exp.players is not None and any(k == "players" for k, _ in exp.vary):
        raise AnalysisError("give --players or --vary players=..., not both")
    if exp.strengths and len(exp.agents) > 1:
        raise AnalysisError("--strengths sweeps self-play; it cannot be combined with --agents")
    keys = [k for k, _ in exp.vary]
    combos = list(itertools.product(*[vals for _, vals in exp.vary])) or [()]
    lineups = [(s, None) for s in exp.strengths] or [(None, exp.agents)]
    cells, notes, rounded = [], [], set()
    for strength, lineup in lineups:
        for combo in combos:
            settings = dict(zip(keys, combo, strict=True))
            variant = dict(settings)
            if exp.players is not None and "players" in info.variants:
                variant["players"] = exp.players
            state = info.new(seed=0, **variant)          # VariantError on a bad value
            n = state.num_players
            if exp.players is not None and n != exp.players:
                raise AnalysisError(f"{info.name} is a {n}-player game; --players must be {n}")
            specs = [strength] * n if strength else (list(lineup) * n if len(lineup) == 1
                                                     else list(lineup))
            index = len(cells)
            label = " ".join(f"{k}={v}" for k, v in settings.items()) + "|" + " ".join(specs)
            seed = derive_seed(exp.seed, "cell", label)
            if n >= 2:
                per_round = len(tables_for(len(specs), n, "round-robin")) * math.factorial(n)
                rounds = math.ceil(exp.games / per_round)
                config, _ = make_config(info.name, specs, variant=variant, rounds=rounds,
                                        seed=seed, max_plies=exp.max_plies)
            else:       # solo: the tournament runner plays it, its schedule is ours
                from niwa.solver.agents import make_agent

                if len(specs) != 1:
                    raise AnalysisError("a solo game takes one agent (--agent SPEC)")
                make_agent(specs[0], seed=0)
                per_round, rounds = 1, exp.games
                config = TournamentConfig(game=info.name, agents=specs, players=1,
                                          variant=dict(state.variant), rounds=rounds,
                                          seed=seed, max_plies=exp.max_plies)
            if rounds * per_round != exp.games:
                rounded.add((per_round, rounds * per_round))
            if rounds * per_round > STRIDE:
                raise AnalysisError(f"at most {STRIDE} games per variant, not {rounds * per_round}")
            cells.append(Cell(index, settings, dict(state.variant), n, strength, config,
                              rounds * per_round))
    for per_round, total in sorted(rounded):
        notes.append(f"--games {exp.games} rounded up to {total} per variant so that every "
                     f"seat order is played equally often (rounds of {per_round} games)")
    return cells, notes


def cell_schedule(cell: Cell) -> Schedule:
    """The cell's games with their experiment-wide ids (cell * STRIDE + index in the cell)."""
    return Schedule(cell.config, first_id=cell.index * STRIDE, extra=(("cell", cell.index),))


class ExperimentSchedule:
    """Every cell's schedule, one after the other (lazily, like each cell's)."""

    def __init__(self, cells: list[Cell]):
        self.cells = cells
        self.parts = [cell_schedule(c) for c in cells]

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def __iter__(self):
        return itertools.chain.from_iterable(self.parts)

    def includes(self, game_id: int) -> bool:
        cell = game_id // STRIDE
        return cell < len(self.parts) and self.parts[cell].includes(game_id)

    def owns(self, game_id: int, row: dict) -> bool:
        """A row of one of the cells: its variant matches, and its seats too when the cell
        still schedules that game (a cell's games beyond --games stay in the log)."""
        cell = game_id // STRIDE
        if cell >= len(self.cells) or row["variant"] != _variant_text(self.cells[cell]):
            return False
        part = self.parts[cell]
        return not part.includes(game_id) or part.owns(game_id, row)


# ---- running ---------------------------------------------------------------------------
def load_saved(out_dir: str) -> dict | None:
    def checked(meta):
        Experiment(**meta["experiment"])
        return meta

    return read_record(os.path.join(out_dir, META_JSON), checked, AnalysisError, "analysis")


def saved_experiment(out_dir: str) -> Experiment | None:
    meta = load_saved(out_dir)
    return Experiment(**meta["experiment"]) if meta else None


def experiment_from_options(game: str | None, *, vary, lineup: list[str], strengths,
                            games: int, players: int | None, seed: int, given: set[str],
                            out_dir: str | None, resume: bool) -> Experiment:
    """The experiment of the command-line options; with `resume`, the one saved in out_dir
    with the options given again (`given` names the typed ones) replacing its settings."""
    saved = None
    if resume:
        saved = saved_experiment(out_dir)
        if saved is None:
            raise AnalysisError(f"nothing to resume in {out_dir}: no analysis.json there")
    game = game or saved.game
    return Experiment(
        game=game,
        vary=parse_vary(vary, game) if vary or not saved else saved.vary,
        players=players if "players" in given or not saved else saved.players,
        agents=lineup or (saved.agents if saved else ["random"]),
        strengths=parse_strengths(strengths) if strengths or not saved else saved.strengths,
        games=games if "games" in given or not saved else saved.games,
        seed=seed if "seed" in given or not saved else saved.seed,
        max_plies=saved.max_plies if saved else None)


def check_out_dir(exp: Experiment, out_dir: str, resume: bool) -> dict | None:
    meta = load_saved(out_dir)
    games_path = os.path.join(out_dir, GAMES_CSV)
    if resume:
        if meta is None:
            raise AnalysisError(f"nothing to resume: {os.path.join(out_dir, META_JSON)} "
                                "does not exist")
        old, new = Experiment(**meta["experiment"]).identity(), exp.identity()
        for k in old:
            if old[k] != new[k]:
                raise AnalysisError(f"{out_dir} holds a different experiment: {k} is {old[k]!r} "
                                    f"there, {new[k]!r} here (resume with the same options, "
                                    "or choose another --out)")
    elif meta is not None or (os.path.exists(games_path) and os.path.getsize(games_path)):
        raise AnalysisError(f"{out_dir} already holds an experiment; pass --resume to continue "
                            "it, or choose another --out")
    return meta


def game_columns(cells: list[Cell]) -> list[str]:
    return csv_columns(max(c.players for c in cells)) + ["cell"]


def run_experiment(exp: Experiment, cells: list[Cell], out_dir: str, executor=None,
                   resume: bool = False, progress: bool | None = None,
                   command: str = "") -> RunResult:
    """Play every cell's missing games into out_dir/games.csv (the arena's runner, log and
    executors; one pool for all cells, so no cell waits for another's stragglers).

    KeyboardInterrupt propagates after the log is closed: every finished game is kept.
    """
    executor = executor or LocalExecutor()
    meta = check_out_dir(exp, out_dir, resume) or {}
    os.makedirs(out_dir, exist_ok=True)
    schedule = ExperimentSchedule(cells)
    log = GameLog(os.path.join(out_dir, GAMES_CSV), game_columns(cells))
    check_log(log, schedule, lambda gid: AnalysisError(
        f"{GAMES_CSV} game {gid} does not belong to this experiment"))
    meta.update({"experiment": dataclasses.asdict(exp), "command": meta.get("command", command),
                 "cells": [{"cell": c.index, "label": c.label, "games": c.games,
                            "config": c.config.identity()} for c in cells],
                 "status": "running"})
    run = start_run(meta, command, executor, len(log.rows))
    write_record(os.path.join(out_dir, META_JSON), meta)
    result = run_schedule(schedule, log, executor, desc=exp.game, progress=progress)
    end_run(run, result.played_now)
    meta["status"] = "finished" if result.recorded == len(schedule) else "interrupted"
    write_record(os.path.join(out_dir, META_JSON), meta)
    if result.interrupted:
        raise KeyboardInterrupt
    return result


def _variant_text(cell: Cell) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(cell.config.variant.items()))


def read_games(out_dir: str, cells: list[Cell]) -> pd.DataFrame:
    """The scheduled games of games.csv (text columns; `cell` and `game_id` as ints)."""
    df = pd.read_csv(os.path.join(out_dir, GAMES_CSV), dtype=str, keep_default_na=False)
    df["game_id"] = df["game_id"].astype(int)
    df["cell"] = df["cell"].astype(int)
    wanted = (df["cell"] < len(cells)) & (
        df["game_id"] % STRIDE < df["cell"].map(lambda i: cells[i].games if i < len(cells) else 0))
    return df[wanted].sort_values("game_id").reset_index(drop=True)


# ---- per-cell metrics ------------------------------------------------------------------
def _stats(df: pd.DataFrame) -> list[dict]:
    out = []
    for text in df["scores"]:
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            value = {}
        out.append(value if isinstance(value, dict) else {})
    return out


def outcome_counts(results: np.ndarray) -> tuple[np.ndarray, int]:
    """(wins by seat, draws): a win is the sole best result of a game."""
    n_seats = results.shape[1] if results.ndim == 2 else 0
    wins = np.zeros(n_seats, dtype=int)
    draws = 0
    for res in results:
        best = res.max()
        top = np.flatnonzero(res == best)
        if len(top) == 1:
            wins[top[0]] += 1
        else:
            draws += 1
    return wins, draws


def lead_changes(history) -> tuple[int, int | None]:
    """(lead changes, last sole leader) along a running-score history [[s0, s1, ...], ...].

    The sole leader is the player strictly ahead of all others; a tie keeps no leader but
    does not count as a change; a change is a new sole leader different from the last.
    """
    changes, leader = 0, None
    for scores in history:
        scores = list(scores)
        if not scores:
            continue
        best = max(scores)
        if scores.count(best) != 1:
            continue
        now = scores.index(best)
        if leader is not None and now != leader:
            changes += 1
        leader = now
    return changes, leader


def was_behind(history, player: int) -> bool:
    """Whether `player` trailed someone strictly at some point of the history."""
    return any(max(s) > s[player] for s in history if len(s) > player)


def _number(value) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list) and value and all(isinstance(x, int | float) for x in value):
        return float(sum(value))
    return None


def _claims(goals) -> tuple[set, set]:
    """(goals in play, goals claimed) from the shapes a game may record: {goal: player or
    None/-1}, [[goals of seat 0], [goals of seat 1], ...], or [claimed goals]."""
    if isinstance(goals, dict):
        present = {str(g) for g in goals}
        # (careful: seat 0 == False, so no `in (None, -1, False)` here)
        claimed = {str(g) for g, who in goals.items()
                   if who is not None and not isinstance(who, bool) and who not in (-1, "")}
        return present, claimed
    if isinstance(goals, list):
        if all(isinstance(x, list) for x in goals):
            claimed = {str(g) for seat in goals for g in seat}
        else:
            claimed = {str(g) for g in goals}
        return set(), claimed
    return set(), set()


def solo_thresholds(game: str) -> dict | None:
    """{level: points} of a game's solo mode (module constant SOLO_THRESHOLDS), if any."""
    from niwa.ext.registry import get_game

    table = dict(get_game(game).solo_thresholds) or None
    return dict(table) if isinstance(table, dict) else None


def solo_level_reached(stats: dict, thresholds: dict) -> int | None:
    """Highest solo level a finished game reaches (0: none): Bonsai's solo goal is one goal
    tile of each of the 3 colours in play (names 'colour.size') and at least the level's
    points. None when the stats lack the score or the goals."""
    scores, goals = stats.get("scores"), stats.get("goals_claimed")
    if not (isinstance(scores, list) and scores and isinstance(goals, list) and goals):
        return None
    mine = goals[0] if isinstance(goals[0], list) else goals
    if len({str(g).split(".")[0] for g in mine}) < 3:
        return 0
    return max((lv for lv, pts in thresholds.items() if scores[0] >= pts), default=0)


def _interval_cols(prefix: str, k: int, n: int) -> dict:
    lo, hi = st.wilson_interval(k, n)
    return {prefix: k / n if n else math.nan, f"{prefix}_low": lo, f"{prefix}_high": hi}


def cell_metrics(cell: Cell, games: pd.DataFrame, max_players: int | None = None) -> dict:
    """Every metric of one cell as a flat dict (a row of variants.csv)."""
    n = cell.players
    row: dict = {"cell": cell.index, "label": cell.label, "variant": cell.variant_label,
                 "strength": cell.strength or "",
                 **{f"set_{k}": v for k, v in cell.settings.items()},
                 "players": n, "agents": " ".join(cell.config.agents),
                 "games_scheduled": cell.games, "games": len(games)}
    forfeit = games["error_seat"] != ""
    valid = games[~forfeit]
    row["forfeits"] = int(forfeit.sum())
    row["capped"] = int((valid["capped"] == "1").sum())
    g = _Finished(n, valid[[f"result_{s}" for s in range(n)]].astype(float).to_numpy()
                  .reshape(-1, n), _stats(valid), valid["plies"].astype(int).to_numpy())
    _seat_metrics(row, g, max_players or n)
    _duration_metrics(row, g)
    _running_score_metrics(row, g)
    _final_score_metrics(row, g)
    _goal_metrics(row, g)
    _solo_level_metrics(row, g, cell.config.game)
    _remaining_metrics(row, g)
    return row


@dataclass
class _Finished:
    """The games of a cell that ended without a forfeit."""

    n: int                  # players
    results: np.ndarray     # games x seats
    stats_list: list[dict]
    plies: np.ndarray

    @property
    def m(self) -> int:
        return len(self.plies)


def _seat_metrics(row: dict, g: _Finished, max_players: int) -> None:
    """Wins by seat with intervals, first-player advantage, balance (or the solo rate)."""
    n, results, m = g.n, g.results, g.m
    if n == 1:
        wins = int((results[:, 0] >= 1.0).sum())
        row.update({"draws": 0, "decisive": m, **_interval_cols("solo_win", wins, m)})
    else:
        wins_by_seat, draws = outcome_counts(results)
        decisive = int(wins_by_seat.sum())
        row.update({"draws": draws, "decisive": decisive})
        for s in range(max_players):
            if s < n:
                row.update(_interval_cols(f"win_{s}", int(wins_by_seat[s]), decisive))
                row[f"wins_{s}"] = int(wins_by_seat[s])
            else:
                row.update({f"win_{s}": math.nan, f"win_{s}_low": math.nan,
                            f"win_{s}_high": math.nan, f"wins_{s}": math.nan})
        fair = 1.0 / n
        share = wins_by_seat / decisive if decisive else np.full(n, math.nan)
        row.update({
            "fair_share": fair,
            "first_player_advantage": row["win_0"] - fair,
            "fpa_low": row["win_0_low"] - fair, "fpa_high": row["win_0_high"] - fair,
            "fpa_p": st.binomial_p(int(wins_by_seat[0]), decisive, fair),
            "balance": 1.0 - float(share.max() - share.min()) if decisive else math.nan,
            "seat_uniformity_p": st.seat_uniformity_p(wins_by_seat),
        })


def _duration_metrics(row: dict, g: _Finished) -> None:
    plies, stats_list, m = g.plies, g.stats_list, g.m
    for k, v in st.describe(plies).items():
        row[f"plies_{k}"] = v
    for key in ("turns", "rounds"):
        values = [x for x in (_number(s.get(key)) for s in stats_list) if x is not None]
        if values and len(values) == m:
            for k, v in st.describe(values).items():
                row[f"{key}_{k}"] = v


def _running_score_metrics(row: dict, g: _Finished) -> None:
    """Lead changes and comebacks, where the game keeps a running score."""
    n, results, stats_list, m = g.n, g.results, g.stats_list, g.m
    histories = [s.get("score_history") for s in stats_list]
    if m and all(isinstance(h, list) for h in histories):
        changes, comebacks, decided = [], 0, 0
        for h, res in zip(histories, results, strict=True):
            h = [x for x in h if isinstance(x, list) and len(x) == n]
            changes.append(lead_changes(h)[0])
            top = np.flatnonzero(res == res.max())
            if len(top) == 1:
                decided += 1
                comebacks += was_behind(h, int(top[0]))
        row["lead_changes_mean"] = float(np.mean(changes))
        row["lead_changes_sd"] = float(np.std(changes, ddof=1)) if m > 1 else 0.0
        row.update(_interval_cols("lead_change_games", int(sum(c > 0 for c in changes)), m))
        row.update(_interval_cols("comeback", comebacks, decided))


def _final_score_metrics(row: dict, g: _Finished) -> None:
    """Final scores per seat and the winner's margin (or the solo score)."""
    n, stats_list, m = g.n, g.stats_list, g.m
    scores = [s.get("scores") for s in stats_list]
    if m and all(isinstance(x, list) and len(x) == n and all(isinstance(v, int | float)
                                                             for v in x) for x in scores):
        arr = np.asarray(scores, dtype=float)
        for s in range(n):
            row[f"score_{s}_mean"] = float(arr[:, s].mean())
            row[f"score_{s}_sd"] = float(arr[:, s].std(ddof=1)) if m > 1 else 0.0
        if n == 1:
            for k, v in st.describe(arr[:, 0]).items():
                row[f"score_{k}"] = v
        else:
            ordered = np.sort(arr, axis=1)
            for k, v in st.describe(ordered[:, -1]).items():
                row[f"winner_score_{k}"] = v
            for k, v in st.describe(ordered[:, -1] - ordered[:, -2]).items():
                row[f"margin_{k}"] = v


def _goal_metrics(row: dict, g: _Finished) -> None:
    """Claim rate per goal (among the games where it was in play, when known)."""
    stats_list, m = g.stats_list, g.m
    goals = [s.get("goals_claimed") for s in stats_list]
    in_play = [s.get("goals_in_play") for s in stats_list]
    if m and all(g is not None for g in goals):
        present_counts: dict[str, int] = {}
        claim_counts: dict[str, int] = {}
        known_presence = False
        for g, listed in zip(goals, in_play, strict=True):
            present, claimed = _claims(g)
            if listed is not None:      # the game says which goals were dealt
                present = {str(name) for name in listed}
            known_presence |= bool(present)
            for name in present | claimed:
                present_counts[name] = present_counts.get(name, 0) + 1
            for name in claimed:
                claim_counts[name] = claim_counts.get(name, 0) + 1
        for name in sorted(present_counts):
            base = present_counts[name] if known_presence else m
            row.update(_interval_cols(f"goal_claim:{name}", claim_counts.get(name, 0), base))


def _solo_level_metrics(row: dict, g: _Finished, game: str) -> None:
    """Solo levels: recorded by the game, or derived from the score and the goals claimed."""
    n, stats_list, m = g.n, g.stats_list, g.m
    levels = [s.get("level_reached") for s in stats_list]
    thresholds = solo_thresholds(game)
    if n == 1 and thresholds and not all(isinstance(x, int) for x in levels):
        levels = [solo_level_reached(s, thresholds) for s in stats_list]
    if m and n == 1 and all(isinstance(x, int) for x in levels):
        top = max(thresholds) if thresholds else max(max(levels), 0)
        for level in range(1, top + 1):
            row.update(_interval_cols(f"reached_level_{level}",
                                      sum(x >= level for x in levels), m))


def _remaining_metrics(row: dict, g: _Finished) -> None:
    """Lotus: how far the best loser still had to go."""
    n, results, stats_list, m = g.n, g.results, g.stats_list, g.m
    remaining = [s.get("remaining") for s in stats_list]
    if m and n >= 2 and all(isinstance(x, list) and len(x) == n for x in remaining):
        gaps = []
        for rem, res in zip(remaining, results, strict=True):
            losers = [rem[s] for s in range(n) if res[s] < res.max()]
            if losers:
                gaps.append(min(losers))
        for k, v in st.describe(gaps).items():
            row[f"runner_up_remaining_{k}"] = v


# ---- comparisons -----------------------------------------------------------------------
def _pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def _pts(x: float) -> str:
    return f"{round(100 * x, 1) + 0.0:+.1f}"      # + 0.0: no "-0.0"


def _p(p: float) -> str:
    if p is None or math.isnan(p):
        return "n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def advantage_verdict(m: dict) -> str:
    """One sentence on a cell's first-player advantage (or solo result)."""
    if m["players"] == 1:
        return (f"{m['label']}: the solo game is won in {_pct(m['solo_win'])} of {m['games']} "
                f"games (95% CI {_pct(m['solo_win_low'])} to {_pct(m['solo_win_high'])}).")
    n, d = m["players"], m["decisive"]
    if d == 0:
        return f"{m['label']}: no decisive game, nothing to measure."
    fair = _pct(m["fair_share"])
    what = (f"seat 0 wins {_pct(m['win_0'])} of {d} decisive games (95% CI "
            f"{_pct(m['win_0_low'])} to {_pct(m['win_0_high'])}; fair share {fair})")
    p = _fpa_p(m)
    test = _p(p) + (f", Holm-adjusted over {m['fpa_tests']} variants"
                    if m.get("fpa_tests", 1) > 1 else "")
    if p < ALPHA:
        sign = "advantage" if m["first_player_advantage"] > 0 else "disadvantage"
        return f"{m['label']}: the first player has a significant {sign}: {what}, {test}."
    if m["fpa_p"] < ALPHA:      # significant alone, not among all the variants tested
        return (f"{m['label']}: a possible first-player advantage, not significant once "
                f"adjusted for the {m['fpa_tests']} variants tested: {what}, {test} "
                f"(unadjusted {_p(m['fpa_p'])}).")
    return (f"{m['label']}: no significant first-player advantage: {what}, {test}; "
            f"the true advantage{'' if n == 2 else ' of seat 0'} lies between "
            f"{_pts(m['fpa_low'])} and {_pts(m['fpa_high'])} points (95% CI).")


def _fpa_p(m: dict) -> float:
    """The first-player test's p-value, Holm-adjusted over the run's variants when known."""
    return m.get("fpa_p_adjusted", m.get("fpa_p", math.nan))


def compare_cells(a: Cell, b: Cell, ga: pd.DataFrame, gb: pd.DataFrame,
                  ma: dict, mb: dict) -> dict:
    """Cell b against baseline a: seat outcomes and lengths (p-values not yet adjusted)."""
    row = {"baseline": a.label, "variant": b.label, "baseline_cell": a.index,
           "variant_cell": b.index, "players": b.players,
           "games_baseline": ma["games"], "games_variant": mb["games"]}
    if a.players != b.players or a.players < 2:
        row["note"] = ("different player counts: compare the first-player advantages instead"
                       if a.players != b.players else "solo games: compare the win rates")
        if a.players == b.players == 1:
            ka, kb = round(ma["solo_win"] * ma["games"]), round(mb["solo_win"] * mb["games"])
            t = st.compare_tables([[kb, mb["games"] - kb], [ka, ma["games"] - ka]])
            d, lo, hi = st.newcombe_interval(kb, mb["games"], ka, ma["games"])
            row.update({"test": t.test, "p": t.p, "effect": t.effect,
                        "effect_name": t.effect_name, "diff": d, "diff_low": lo, "diff_high": hi})
        lt = st.compare_lengths(gb["plies"].astype(int), ga["plies"].astype(int))
        row.update({"length_p": lt.p, "length_rank_biserial": lt.rank_biserial})
        return row
    n = a.players
    wa = [ma[f"wins_{s}"] for s in range(n)]
    wb = [mb[f"wins_{s}"] for s in range(n)]
    t = st.compare_tables([wb, wa])
    d, lo, hi = st.newcombe_interval(wb[0], mb["decisive"], wa[0], ma["decisive"])
    row.update({"seat0_baseline": ma["win_0"], "seat0_variant": mb["win_0"],
                "diff": d, "diff_low": lo, "diff_high": hi,
                "test": t.test, "p": t.p, "effect": t.effect, "effect_name": t.effect_name,
                "odds_ratio": t.odds_ratio, "odds_ratio_low": t.odds_ratio_low,
                "odds_ratio_high": t.odds_ratio_high, "note": t.note})
    lt = st.compare_lengths(gb["plies"].astype(int), ga["plies"].astype(int))
    row.update({"plies_mean_baseline": ma["plies_mean"], "plies_mean_variant": mb["plies_mean"],
                "length_p": lt.p, "length_rank_biserial": lt.rank_biserial})
    return row


def comparison_verdict(c: dict, ma: dict, mb: dict) -> str:
    """A plain sentence that says what the (Holm-adjusted) test supports and no more."""
    p = c.get("p_adjusted", c.get("p", math.nan))
    if mb["players"] == 1 and ma["players"] == 1 and (p is None or math.isnan(p)):
        return (f"{c['variant']} vs {c['baseline']}: no test possible, every game has the "
                f"same outcome (solo wins {_pct(mb['solo_win'])} and {_pct(ma['solo_win'])} "
                f"of {mb['games']} and {ma['games']} games).")
    if "diff" not in c or p is None or math.isnan(p):
        return f"{c['variant']} vs {c['baseline']}: {c.get('note', 'not comparable')}."
    interval = f"{_pts(c['diff'])} points, 95% CI {_pts(c['diff_low'])} to {_pts(c['diff_high'])}"
    if mb["players"] == 1:
        if p < ALPHA:
            return (f"{c['variant']} changes the solo win rate against {c['baseline']}: "
                    f"{interval} ({c['test']}, {_p(p)}).")
        return (f"No significant difference in the solo win rate between {c['variant']} and "
                f"{c['baseline']} at {mb['games']} and {ma['games']} games ({_p(p)}; {interval}).")
    who = f"{c['variant']} vs {c['baseline']}"
    test = f"{c['test']} {_p(p)}" + (f", Holm-adjusted over {c['tests_in_run']} comparisons"
                                     if c.get("tests_in_run", 1) > 1 else "")
    if p >= ALPHA > c["p"]:
        test += f"; unadjusted {_p(c['p'])}"
    rates = f"seat 0 wins {_pct(mb['win_0'])} vs {_pct(ma['win_0'])}"
    if p >= ALPHA:
        return (f"{who}: no significant difference in seat balance at {mb['decisive']} and "
                f"{ma['decisive']} decisive games ({rates}; {test}); the "
                f"difference in seat 0's win rate is {interval}: the data cannot rule out "
                "a change anywhere in that range.")
    base_adv = _fpa_p(ma) < ALPHA and ma["first_player_advantage"] > 0
    var_adv = _fpa_p(mb) < ALPHA and mb["first_player_advantage"] > 0
    var_dis = _fpa_p(mb) < ALPHA and mb["first_player_advantage"] < 0
    smaller = abs(mb["first_player_advantage"]) < abs(ma["first_player_advantage"])
    if base_adv and not var_adv and not var_dis:
        head = (f"{c['variant']} removes the measurable first-player advantage of "
                f"{c['baseline']}")
        tail = (f"; what remains is within {_pts(mb['fpa_low'])} to {_pts(mb['fpa_high'])} "
                "points of the fair share")
    elif base_adv and var_adv and smaller:
        head, tail = f"{c['variant']} reduces but does not remove the first-player advantage", ""
    elif base_adv and var_dis:
        head, tail = f"{c['variant']} reverses the first-player advantage", ""
    elif smaller:
        head, tail = f"{c['variant']} moves the seats closer to balance than {c['baseline']}", ""
    else:
        slightly = " slightly" if abs(c["diff"]) < 0.02 else ""
        head, tail = (f"{c['variant']} shifts the seat balance{slightly} compared with "
                      f"{c['baseline']}"), ""
    return f"{head}: {rates} ({interval}; {test}){tail}."


# ---- strength sweeps -------------------------------------------------------------------
def strength_trends(cells: list[Cell], metrics: list[dict]) -> list[dict]:
    """Per variant: the first-player advantage from the weakest to the strongest agent."""
    out = []
    groups: dict[str, list[int]] = {}
    for c in cells:
        if c.strength:
            groups.setdefault(c.variant_label, []).append(c.index)
    for label, idx in groups.items():
        if len(idx) < 2 or metrics[idx[0]]["players"] < 2:
            continue
        n = metrics[idx[0]]["players"]
        table = [[metrics[i][f"wins_{s}"] for s in range(n)] for i in idx]
        t = st.compare_tables(table)
        weak, strong = metrics[idx[0]], metrics[idx[-1]]
        d, lo, hi = st.newcombe_interval(strong["wins_0"], strong["decisive"],
                                         weak["wins_0"], weak["decisive"])
        end = st.compare_tables([[strong["wins_0"], strong["decisive"] - strong["wins_0"]],
                                 [weak["wins_0"], weak["decisive"] - weak["wins_0"]]])
        row = {"variant": label, "weakest": cells[idx[0]].strength,
               "strongest": cells[idx[-1]].strength,
               "fpa_weakest": weak["first_player_advantage"],
               "fpa_strongest": strong["first_player_advantage"],
               "diff": d, "diff_low": lo, "diff_high": hi, "p_ends": end.p,
               "p_all": t.p, "test_all": t.test}
        row["_rates"] = (weak["win_0"], strong["win_0"])
        out.append(row)
    adjusted = st.holm([r["p_ends"] for r in out])
    for row, p in zip(out, adjusted, strict=True):
        row["p_ends_adjusted"] = p
        d = row["diff"]
        if p < ALPHA and d > 0:
            verdict = "grows with stronger play"
        elif p < ALPHA and d < 0:
            verdict = "shrinks with stronger play"
        else:
            verdict = "shows no significant change with strength"
        weak_rate, strong_rate = row.pop("_rates")
        held = f", Holm-adjusted over {len(out)} variants" if len(out) > 1 else ""
        if p >= ALPHA > row["p_ends"]:
            held += f"; unadjusted {_p(row['p_ends'])}"
        row["verdict"] = (f"{row['variant']}: the first-player advantage {verdict} (seat 0: "
                          f"{_pct(weak_rate)} with {row['weakest']} -> {_pct(strong_rate)} "
                          f"with {row['strongest']}; change {_pts(d)} points, 95% CI "
                          f"{_pts(row['diff_low'])} to {_pts(row['diff_high'])}, "
                          f"{_p(p)}{held}; all strengths {row['test_all']} {_p(row['p_all'])}).")
    return out


# ---- the whole analysis ----------------------------------------------------------------
@dataclass
class Summary:
    experiment: Experiment
    cells: list[Cell]
    metrics: list[dict]
    comparisons: list[dict]
    trends: list[dict]
    advantage_verdicts: list[str]
    games: pd.DataFrame


def summarise(exp: Experiment, cells: list[Cell], games: pd.DataFrame) -> Summary:
    maxp = max(c.players for c in cells)
    games = games.assign(cell=games["cell"].astype(int))
    per_cell = {c.index: games[games["cell"] == c.index] for c in cells}
    metrics = [cell_metrics(c, per_cell[c.index], maxp) for c in cells]
    fpa = st.holm([m.get("fpa_p", math.nan) for m in metrics])
    tested = sum(not math.isnan(p) for p in fpa)
    for m, p in zip(metrics, fpa, strict=True):
        if "fpa_p" in m:
            m["fpa_p_adjusted"], m["fpa_tests"] = p, tested
    comparisons = []
    # one setting at a time: each value against the key's first value, everything else
    # (the other settings, the strength) held fixed
    first = {k: vals[0] for k, vals in exp.vary}
    index = {(tuple(c.settings.items()), c.strength): c for c in cells}
    for key, _ in exp.vary:
        for b in cells:
            if b.settings[key] == first[key]:
                continue
            base_settings = tuple((k, first[key] if k == key else v)
                                  for k, v in b.settings.items())
            a = index[(base_settings, b.strength)]
            comparisons.append(compare_cells(a, b, per_cell[a.index], per_cell[b.index],
                                             metrics[a.index], metrics[b.index]))
    adjusted = st.holm([c.get("p", math.nan) for c in comparisons])
    tested = sum(not math.isnan(p) for p in adjusted)
    for c, p in zip(comparisons, adjusted, strict=True):
        c["p_adjusted"] = p
        c["tests_in_run"] = tested
        c["verdict"] = comparison_verdict(c, metrics[c["baseline_cell"]],
                                          metrics[c["variant_cell"]])
    for m in metrics:
        m["verdict"] = advantage_verdict(m)
    return Summary(exp, cells, metrics, comparisons, strength_trends(cells, metrics),
                   [m["verdict"] for m in metrics], games)


def write_tables(summary: Summary, out_dir: str) -> list[str]:
    written = []
    pd.DataFrame(summary.metrics).to_csv(os.path.join(out_dir, VARIANTS_CSV), index=False)
    written.append(VARIANTS_CSV)
    if summary.comparisons:
        pd.DataFrame(summary.comparisons).to_csv(os.path.join(out_dir, COMPARISONS_CSV),
                                                 index=False)
        written.append(COMPARISONS_CSV)
    if summary.trends:
        pd.DataFrame(summary.trends).to_csv(os.path.join(out_dir, TRENDS_CSV), index=False)
        written.append(TRENDS_CSV)
    return written


@dataclass
class AnalysisOutcome:
    summary: Summary | None
    run: RunResult
    files: list[str]


def analyse(exp: Experiment, out_dir: str, executor=None, resume: bool = False,
            progress: bool | None = None, command: str = "",
            plan: tuple[list[Cell], list[str]] | None = None) -> AnalysisOutcome:
    """Plan (unless `plan` is given), play or finish, measure, plot and report an
    experiment into out_dir."""
    from niwa.analysis.experiments import plots, report

    cells, notes = plan or plan_cells(exp)
    run = run_experiment(exp, cells, out_dir, executor, resume, progress, command)
    games = read_games(out_dir, cells)
    if games.empty:
        return AnalysisOutcome(None, run, [GAMES_CSV])
    summary = summarise(exp, cells, games)
    files = [GAMES_CSV, *write_tables(summary, out_dir)]
    files += plots.write_plots(summary, out_dir)
    exact = report.exact_results(exp, out_dir, cells)
    # the report shows the command that started the experiment, and any that continued it
    runs = (load_saved(out_dir) or {}).get("runs", [])
    commands = list(dict.fromkeys(r.get("command", "") for i, r in enumerate(runs)
                                  if r.get("command") and (i == 0 or r.get("games_played"))))
    if commands:
        command = commands[0]
        notes = notes + [f"Continued with `{c}`." for c in commands[1:]]
    report.write_report(summary, out_dir, plots=files, notes=notes, command=command,
                        exact=exact)
    files.append(report.REPORT_MD)
    return AnalysisOutcome(summary, run, files)


__all__ = ["AnalysisError", "Experiment", "Cell", "TournamentError", "analyse", "plan_cells",
           "parse_vary", "parse_strengths", "run_experiment", "summarise", "cell_metrics"]
