"""games.csv: the append-only log of finished games, and the row each game becomes.

One row is appended and flushed per finished game (a SIGKILL loses at most the game being
written, whose partial line is dropped on resume); at the end of a run the file is
rewritten in schedule order. `play_task` plays one scheduled game through the game loop
and returns its row: executors run it in worker processes.
"""

from __future__ import annotations

import csv
import json
import os
import time

from niwa.analysis.arena.finish import added_later, finish_column_names, finish_columns
from niwa.analysis.arena.game_loop import GameResult, first_line, play
from niwa.analysis.arena.game_record import task_record_line
from niwa.analysis.arena.schedule import GameTask, TournamentError


def csv_columns(n_players: int) -> list[str]:
    """The columns of games.csv; `termination` and the finishing order (`place_<seat>`,
    `points_<seat>`, see arena.finish) come last: older logs without them still load."""
    return (["game_id", "round", "table", "game", "variant", "deal_seed"]
            + [f"agent_{s}" for s in range(n_players)]
            + [f"result_{s}" for s in range(n_players)]
            + ["plies", "capped", "error_seat", "error", "scores", "duration_s"]
            + ["termination"] + finish_column_names(n_players))


def play_task(task: GameTask) -> dict:
    """Play one scheduled game to the end; agent failures forfeit the game, never raise."""
    from niwa.ext.game import Rng
    from niwa.ext.registry import get_game

    t0 = time.perf_counter()
    state = get_game(task.game).new(seed=task.deal_seed, **dict(task.variant))
    agents = _make_agents(task)
    if isinstance(agents, GameResult):
        result = agents
    else:
        result = play(state, agents, chance_rng=Rng(task.deal_seed), max_plies=task.max_plies,
                      time_limits=task.time_limits, labels=task.labels,
                      clocks=task.time_controls or None)
    # the game's record rides along with its row, for games.jsonl (arena.record_log)
    return {**game_row(task, result, time.perf_counter() - t0),
            **task_record_line(task, result)}


def _make_agents(task: GameTask):
    """The seats' agents, or the forfeit of the first that cannot be made."""
    from niwa.solver.agents import make_agent

    agents = []
    n = len(task.specs)
    for seat, spec in enumerate(task.specs):
        try:
            agents.append(make_agent(spec, seed=task.agent_seeds[seat]))
        except Exception as e:   # an agent that cannot even start loses
            return GameResult([0.0 if q == seat else 1.0 for q in range(n)], 0, False, seat,
                              f"seat {seat} ({task.labels[seat]}) failed to start: "
                              f"{first_line(e)}")
    return agents


def game_row(task: GameTask, result: GameResult, seconds: float) -> dict:
    """The games.csv row of a played game."""
    from niwa.ext.registry import find_game

    n = len(task.labels)
    stats = {}
    if not result.forfeited:
        try:
            stats = result.state.stats()
        except Exception:   # statistics are a bonus; never lose a game over them
            stats = {}
    return {
        "game_id": task.game_id, "round": task.round, "table": task.table,
        "game": task.game, "variant": " ".join(f"{k}={v}" for k, v in task.variant),
        "deal_seed": task.deal_seed,
        **{f"agent_{s}": task.labels[s] for s in range(n)},
        **{f"result_{s}": _fmt(result.results[s]) for s in range(n)},
        "plies": result.plies, "capped": int(result.capped),
        "error_seat": "" if result.error_seat is None else result.error_seat,
        "error": result.error,
        "scores": json.dumps(stats, separators=(",", ":"), sort_keys=True, default=str),
        "duration_s": f"{seconds:.4f}",
        "termination": result.termination or ("forfeit" if result.forfeited else "normal"),
        **finish_columns(result, find_game(task.game)),
        **dict(task.extra),
    }


def _fmt(x: float) -> str:
    return repr(round(float(x), 6))


def play_batch(tasks: list[GameTask]) -> list[dict]:
    return [play_task(t) for t in tasks]


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
        if reader.fieldnames != self.columns and self._older(reader.fieldnames):
            self._upgrade(reader)
            return
        if reader.fieldnames != self.columns:
            raise TournamentError(
                f"{self.path} has columns {reader.fieldnames}, not those of this tournament")
        for row in reader:
            gid = int(row["game_id"])
            self.rows.setdefault(gid, row)   # a duplicate could only be a replay: keep one

    def _older(self, fieldnames) -> bool:
        """A log of this tournament written before some columns existed."""
        missing = set(self.columns) - set(fieldnames)
        return set(fieldnames) < set(self.columns) and all(map(added_later, missing))

    def _upgrade(self, reader) -> None:
        """Rewrite an older log with today's columns (the new ones empty), atomically."""
        for row in reader:
            self.rows.setdefault(int(row["game_id"]), {c: row.get(c, "") for c in self.columns})
        tmp = self.path + ".tmp"
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=self.columns, lineterminator="\n")
            w.writeheader()
            w.writerows(self.rows.values())
        os.replace(tmp, self.path)

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
