"""games.csv: the append-only log of finished games, and the row each game becomes.

One row is appended and flushed per finished game (a SIGKILL loses at most the game being
written, whose partial line is dropped on resume); at the end of a run the file is
rewritten in schedule order. Each row ends with a checksum (`check`), and every row is
validated when a run resumes (GameLog). Only the ids of the logged games are kept in
memory, so the log of a run of any length costs constant memory. `play_task` plays one
scheduled game through the game loop and returns its row: executors run it in worker
processes.
"""

from __future__ import annotations

import bisect
import csv
import hashlib
import heapq
import io
import json
import math
import os
import time
from collections.abc import Iterator

from niwa.analysis.arena.finish import added_later, finish_column_names, finish_columns
from niwa.analysis.arena.game_loop import GameResult, PlyNote, Watcher, first_line, play
from niwa.analysis.arena.game_record import task_record_line
from niwa.analysis.arena.schedule import GameTask, variant_text
from niwa.ext.errors import NiwaError
from niwa.ext.game import PLAYER_CHANCE, PLAYER_SIMULTANEOUS, Rng
from niwa.ext.registry import find_game, get_game


class GameLogError(NiwaError):
    """A games.csv that cannot be resumed: columns of another run, or a bad row (one-line
    message naming the file and the line)."""


def holds_games(games_path: str) -> bool:
    """Whether a games.csv holds more than a header (a run that got as far as a game)."""
    if not os.path.exists(games_path):
        return False
    with open(games_path, "rb") as f:
        f.readline()
        return bool(f.read(1))


def csv_columns(n_players: int) -> list[str]:
    """The columns of games.csv; `termination`, the finishing order (`place_<seat>`,
    `points_<seat>`, see arena.finish) and the `opening` (its id in the suite, empty
    without one) come last: older logs without them still load."""
    return (["game_id", "round", "table", "game", "variant", "deal_seed"]
            + [f"agent_{s}" for s in range(n_players)]
            + [f"result_{s}" for s in range(n_players)]
            + ["plies", "capped", "error_seat", "error", "scores", "duration_s"]
            + ["termination"] + finish_column_names(n_players) + ["opening"])


def play_task(task: GameTask, move_clock=None) -> dict:
    """Play one scheduled game to the end; agent failures forfeit the game, never raise.
    `move_clock` is the game loop's (a watchdog's view of the move in progress; if it is
    also a Watcher, it is told every ply, as the executors' is)."""
    t0 = time.perf_counter()
    state = start_position(task)
    agents = _make_agents(task)
    if isinstance(agents, GameResult):
        result = agents
    else:
        opening_plies = len(task.opening.moves) if task.opening else 0
        max_plies = (None if task.max_plies is None
                     else max(0, task.max_plies - opening_plies))    # counted from the start
        try:
            result = play(state, agents, chance_rng=Rng(task.deal_seed), max_plies=max_plies,
                          time_limits=task.time_limits, labels=task.labels,
                          clocks=task.time_controls or None, move_clock=move_clock,
                          watcher=move_clock if isinstance(move_clock, Watcher) else None)
        finally:
            close_agents(agents)
    # the game's record rides along with its row, for games.jsonl (arena.games_jsonl)
    return {**game_row(task, result, time.perf_counter() - t0),
            **task_record_line(task, result)}


def start_position(task: GameTask):
    """Where a scheduled game starts: its opening's position, else its deal."""
    if task.opening is not None:
        return task.opening.state()
    return get_game(task.game).new(seed=task.deal_seed, **dict(task.variant))


def played_until(task: GameTask, slots: list[int]) -> tuple:
    """(start, state, actions, notes) of a game its worker could not finish, rebuilt from
    the plies it played (flat slots, arena.executors: player, microseconds or -1, k, then
    k action ids per ply): the start position, the position reached, and the game loop's
    (player, action) and PlyNote of each ply (notation and thinking time; comments are
    not kept). Slots that do not replay end the game there."""
    start = start_position(task)
    state = start.clone()
    actions, notes = [], []
    i = 0
    while i + 3 <= len(slots):
        player, micros, k = slots[i], slots[i + 1], slots[i + 2]
        picks = list(slots[i + 3:i + 3 + k])
        i += 3 + k
        if len(picks) != k or k < 1:
            break
        seconds = None if micros < 0 else micros / 1e6
        try:
            if player == PLAYER_SIMULTANEOUS:
                names = [state.action_to_string(a, q) if a >= 0 else ""
                         for q, a in enumerate(picks)]
                action = picks
                state.apply_joint(picks)
            else:
                action = picks[0]
                names = (state.action_to_string(action) if player == PLAYER_CHANCE
                         else state.action_to_string(action, player))
                state.apply(action)
        except Exception:   # slots that do not fit the game: keep what replayed
            break
        actions.append((player, action))
        notes.append(PlyNote(names, seconds))
    return start, state, actions, notes


def _make_agents(task: GameTask):
    """The seats' agents, or the forfeit of the first that cannot be made."""
    from niwa.solver.agent_spec import make_agent

    agents = []
    n = len(task.specs)
    for seat, spec in enumerate(task.specs):
        try:
            agents.append(make_agent(spec, seed=task.agent_seeds[seat]))
        except Exception as e:   # an agent that cannot even start loses
            close_agents(agents)
            return GameResult([0.0 if q == seat else 1.0 for q in range(n)], 0, False, seat,
                              f"seat {seat} ({task.labels[seat]}) failed to start: "
                              f"{first_line(e)}", termination="start")
    return agents


def close_agents(agents) -> None:
    """End what the agents hold when their game is over (an external engine's process
    group): agents are made per game, and a process must not outlive its game."""
    for agent in agents:
        close = getattr(agent, "close", None)
        if callable(close):
            try:
                close()
            except Exception:   # the game is over: a failing close costs nothing more
                pass


def game_row(task: GameTask, result: GameResult, seconds: float) -> dict:
    """The games.csv row of a played game."""
    n = len(task.labels)
    stats = {}
    if not result.forfeited:
        try:
            stats = result.state.stats()
        except Exception:   # statistics are a bonus; never lose a game over them
            stats = {}
    return {
        "game_id": task.game_id, "round": task.round, "table": task.table,
        "game": task.game, "variant": variant_text(task.variant),
        "deal_seed": task.deal_seed,
        **{f"agent_{s}": task.labels[s] for s in range(n)},
        **{f"result_{s}": _fmt(result.results[s]) for s in range(n)},
        "plies": result.plies + (len(task.opening.moves) if task.opening else 0),
        "capped": int(result.capped),
        "error_seat": "" if result.error_seat is None else result.error_seat,
        "error": result.error,
        "scores": json.dumps(stats, separators=(",", ":"), sort_keys=True, default=str),
        "duration_s": f"{seconds:.4f}",
        "termination": result.termination or ("forfeit" if result.forfeited else "normal"),
        **finish_columns(result, find_game(task.game)),
        "opening": task.opening.id if task.opening else "",
        **dict(task.extra),
    }


def _fmt(x: float) -> str:
    return repr(round(float(x), 6))


CHECK_COLUMN = "check"          # the last column: a checksum of the row (see row_check)
ON_BAD_ROWS = ("stop", "drop")
SORT_CHUNK_ROWS = 50_000        # rows sorted in memory at once by the final rewrite


def row_check(fields: list[str], columns: list[str]) -> str:
    """The checksum of a row: BLAKE2b (64 bits, hex) of its fields except duration_s (the
    one field that differs between equal games). It detects a result, ply count or seed
    edited by hand, so that a resume never builds tables on silently changed games."""
    text = "\x1f".join(v for c, v in zip(columns, fields, strict=False) if c != "duration_s")
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


class IdSet:
    """A set of game ids stored as sorted disjoint [start, end) ranges: games finish
    almost in schedule order, so a run of any length needs a handful of ranges."""

    def __init__(self):
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.count = 0

    def __contains__(self, gid: int) -> bool:
        i = bisect.bisect_right(self.starts, gid) - 1
        return i >= 0 and gid < self.ends[i]

    def __len__(self) -> int:
        return self.count

    def add(self, gid: int) -> None:
        if gid in self:
            return
        self.count += 1
        i = bisect.bisect_right(self.starts, gid) - 1
        joins_left = i >= 0 and self.ends[i] == gid
        joins_right = i + 1 < len(self.starts) and self.starts[i + 1] == gid + 1
        if joins_left and joins_right:
            self.ends[i] = self.ends[i + 1]
            del self.starts[i + 1], self.ends[i + 1]
        elif joins_left:
            self.ends[i] = gid + 1
        elif joins_right:
            self.starts[i + 1] = gid
        else:
            self.starts.insert(i + 1, gid)
            self.ends.insert(i + 1, gid + 1)

    def next_missing(self, gid: int) -> int:
        """The smallest id >= gid not in the set."""
        i = bisect.bisect_right(self.starts, gid) - 1
        return self.ends[i] if i >= 0 and gid < self.ends[i] else gid


class BadRow(Exception):
    """A games.csv line that cannot be kept (internal; GameLog reports or drops it)."""


class GameLog:
    """games.csv: one row appended and flushed per finished game (SIGKILL-safe).

    Nothing but the ids of the logged games is kept in memory (`done`, a few ranges), so a
    run of any length runs in constant memory; rows are streamed from the file when needed
    (`read_rows`). Every line is validated when the log is opened: `check_row(game_id,
    row)` returns what contradicts the schedule (None if nothing), the checksum detects
    edits. A bad line stops with a one-line GameLogError naming the file and the line
    (on_bad_rows="stop"), or is dropped and its game played again ("drop").
    """

    def __init__(self, path: str, columns: list[str], check_row=None,
                 on_bad_rows: str = "stop"):
        if on_bad_rows not in ON_BAD_ROWS:
            raise GameLogError(f"--on-bad-rows must be {' or '.join(ON_BAD_ROWS)}, "
                               f"not {on_bad_rows!r}")
        self.path = path
        self.columns = [*columns, CHECK_COLUMN]
        self.check_row = check_row
        self.on_bad_rows = on_bad_rows
        self.done = IdSet()
        self.dropped: list[str] = []        # "line N: why" of each bad line dropped
        self.record_notes: list[str] = []   # what was restored beside the rows (one line each)
        self.file = None
        if os.path.exists(path):
            _drop_torn_last_line(path)
            self._upgrade_older_log()
            for _ in self.read_rows(note_dropped=True):
                pass
        self.file = open(path, "a", newline="", encoding="utf-8")  # noqa: SIM115
        self.writer = csv.writer(self.file, lineterminator="\n")
        if os.path.getsize(path) == 0:
            self.writer.writerow(self.columns)
            self.file.flush()

    # -- reading ----------------------------------------------------------------------
    def read_rows(self, note_dropped: bool = False) -> Iterator[dict]:
        """The valid rows of the file in file order, each game once (the first valid row
        of a game id; a later one can only be a replay), blank lines skipped."""
        if not os.path.exists(self.path):
            return
        seen = IdSet()
        with open(self.path, "rb") as f:
            header = f.readline()
            if not header:
                return
            if _split(header, 1, self.path) != self.columns:
                raise GameLogError(
                    f"{self.path} line 1: the columns are not those of this run (expected "
                    f"{','.join(self.columns)})")
            for number, line in enumerate(f, start=2):
                if not line.strip():
                    continue
                try:
                    row = self._parse(line, number)
                except BadRow as e:
                    if self.on_bad_rows == "stop":
                        raise GameLogError(
                            f"{self.path} line {number}: {e} (pass --on-bad-rows drop to "
                            "drop such rows and replay their games)") from None
                    if note_dropped:
                        self.dropped.append(f"line {number}: {e}")
                    continue
                gid = int(row["game_id"])
                if gid in seen:
                    continue
                seen.add(gid)
                if note_dropped:
                    self.done.add(gid)
                yield row

    def _parse(self, line: bytes, number: int) -> dict:
        fields = _split(line, number, self.path, BadRow)
        if len(fields) != len(self.columns):
            raise BadRow(f"has {len(fields)} fields, expected {len(self.columns)}")
        row = dict(zip(self.columns, fields, strict=True))
        try:
            gid = int(row["game_id"])
        except ValueError:
            raise BadRow(f"game_id {row['game_id']!r} is not an integer") from None
        if row[CHECK_COLUMN] != row_check(fields[:-1], self.columns):
            raise BadRow(f"game {gid}: the checksum does not match (the row was edited)")
        problem = _value_problem(row) or (self.check_row(gid, row) if self.check_row else None)
        if problem:
            raise BadRow(f"game {gid}: {problem}")
        return row

    # -- writing ----------------------------------------------------------------------
    def _upgrade_older_log(self) -> None:
        """A log of this run written before some columns existed (termination, the
        finishing order, the checksum): rewritten with today's columns, the new ones empty
        and the checksum computed, atomically and streaming. A line that cannot be
        upgraded is copied as it is, for the validation to report with its number."""
        with open(self.path, "rb") as f:
            header = f.readline()
        try:
            fieldnames = next(csv.reader([header.decode("utf-8").rstrip("\r\n")]), [])
        except (UnicodeDecodeError, csv.Error):
            return
        missing = set(self.columns) - set(fieldnames)
        if fieldnames == self.columns or not set(fieldnames) < set(self.columns) or not all(
                c == CHECK_COLUMN or added_later(c) for c in missing):
            return
        tmp = self.path + ".tmp"
        with open(self.path, "rb") as f, open(tmp, "wb") as out:
            f.readline()
            out.write(_csv_line(self.columns))
            for line in f:
                try:
                    fields = next(csv.reader([line.decode("utf-8").rstrip("\r\n")]), [])
                except (UnicodeDecodeError, csv.Error):
                    fields = []
                if len(fields) != len(fieldnames):
                    out.write(line)
                    continue
                old = dict(zip(fieldnames, fields, strict=True))
                values = [old.get(c, "") for c in self.columns[:-1]]
                out.write(_csv_line([*values, row_check(values, self.columns)]))
        os.replace(tmp, self.path)

    def append(self, row: dict) -> None:
        gid = int(row["game_id"])
        if gid in self.done:
            return
        fields = [str(row.get(c, "")) for c in self.columns[:-1]]
        self.writer.writerow([*fields, row_check(fields, self.columns)])
        self.file.flush()
        self.done.add(gid)

    def close(self):
        if self.file is not None:
            self.file.close()

    def restore_records(self, schedule, executor) -> None:
        """Before a run: restore what the log keeps beside its rows (the game records,
        arena.games_jsonl); a plain log keeps nothing else."""

    def forget(self, game_ids: set[int]) -> None:
        """Drop the rows of these games (atomically, streaming), so that they can be
        logged again."""
        if self.file is not None:
            self.file.close()
        tmp = self.path + ".tmp"
        self.done = IdSet()
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(self.columns)
            for row in self.read_rows():
                gid = int(row["game_id"])
                if gid not in game_ids:
                    w.writerow([row[c] for c in self.columns])
                    self.done.add(gid)
        os.replace(tmp, self.path)
        self.file = open(self.path, "a", newline="", encoding="utf-8")  # noqa: SIM115
        self.writer = csv.writer(self.file, lineterminator="\n")

    def rewrite_sorted(self, keep=None) -> None:
        """Final games.csv in schedule order (atomically), only the valid rows, only
        those for which `keep(game_id)` holds if given. External merge sort: at most
        SORT_CHUNK_ROWS rows are in memory, whatever the length of the log."""
        self.close()
        chunks, rows = [], []
        tmp = self.path + ".tmp"
        try:
            for row in self.read_rows():
                if keep is None or keep(int(row["game_id"])):
                    rows.append([row[c] for c in self.columns])
                if len(rows) >= SORT_CHUNK_ROWS:
                    chunks.append(_sorted_chunk(rows, f"{self.path}.sort{len(chunks)}"))
                    rows = []
            rows.sort(key=_game_id)
            with open(tmp, "w", newline="", encoding="utf-8") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(self.columns)
                readers = [csv.reader(open(c, newline="", encoding="utf-8"))  # noqa: SIM115
                           for c in chunks]
                w.writerows(heapq.merge(*readers, rows, key=_game_id))
            os.replace(tmp, self.path)
        finally:
            for c in chunks:
                os.remove(c)


def _csv_line(fields: list[str]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(fields)
    return buffer.getvalue().encode("utf-8")


def _game_id(fields: list[str]) -> int:
    return int(fields[0])


def _sorted_chunk(rows: list[list[str]], path: str) -> str:
    rows.sort(key=_game_id)
    with open(path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    return path


def _split(line: bytes, number: int, path: str, error=GameLogError) -> list[str]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        message = f"is not UTF-8 text (byte {e.start + 1})"
        raise (BadRow(message) if error is BadRow
               else error(f"{path} line {number}: {message}")) from None
    try:
        return next(csv.reader([text.rstrip("\r\n")]), [])
    except csv.Error as e:
        raise (BadRow(f"is not a CSV row: {e}") if error is BadRow
               else error(f"{path} line {number}: is not a CSV row: {e}")) from None


def _value_problem(row: dict) -> str | None:
    """What is wrong with the values of a row, whatever the schedule (None if nothing)."""
    results = [v for k, v in row.items() if k.startswith("result_") and v != ""]
    try:
        values = [float(v) for v in results]
    except ValueError:
        return f"a result is not a number ({', '.join(results)})"
    if not values or not all(math.isfinite(v) for v in values):
        return f"the results ({', '.join(results)}) are not finite numbers"
    if not row["plies"].isdigit():
        return f"plies {row['plies']!r} is not a count"
    if row["capped"] not in ("0", "1"):
        return f"capped {row['capped']!r} is not 0 or 1"
    if row["error_seat"] != "" and not row["error_seat"].isdigit():
        return f"error_seat {row['error_seat']!r} is not a seat"
    return None


def _drop_torn_last_line(path: str) -> None:
    """A kill in the middle of a write leaves a partial last line: drop it (that game is
    simply played again). Only the file's tail is read."""
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        pos = size
        while pos > 0:
            step = min(65536, pos)
            f.seek(pos - step)
            block = f.read(step)
            cut = block.rfind(b"\n")
            if cut >= 0:
                end = pos - step + cut + 1
                if end < size:
                    f.truncate(end)
                return
            pos -= step
        f.truncate(0)
