"""games.jsonl beside games.csv: the game records of a run, kept consistent with its log.

`play_task` puts each game's record (one JSON line) in its row under RECORD_FIELD;
`RecordedGameLog` takes it out, appends it to games.jsonl *before* the row reaches
games.csv, and flushes. So a kill can leave a record without its row (the game is played
again on resume and its stale record dropped) but never, by itself, a row without its
record. Each line ends with a `check` tag, a checksum of the record (game_record.
record_check: all but the date, times and clocks), so that damage to the file (a flipped
byte, a lost line, a truncation) is seen on resume.

On resume (when the log is opened) every record is checked: records of games absent from
games.csv are dropped; a damaged line is set aside in games.jsonl.damaged (one note says
which lines matched no game); and every game of games.csv left without a good record is
*restored* before any new game is played (`restore_records`): the game is played again
from the schedule and its seeds, and its record kept only if the replay ends as its
games.csv row says (the same result, plies, termination...). A replay that differs (agents
on a clock, say) stops the run with a one-line GameLogError naming the game, or with
on_bad_rows="drop" replaces that row by the new game. At the end of a run the file is
rewritten in schedule order with the games that count, like games.csv. Like the log, it is
streamed: nothing but ids is held in memory (and the rows of the games being restored).

Record lines written before the `check` tag existed are kept when they replay to their
recorded end (parse_line) and are then sealed with one.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import json
import os
import re
from collections.abc import Iterator

from niwa.analysis.arena import games_csv
from niwa.analysis.arena.game_record import RECORD_FIELD, GameRecord, sealed_line, unsealed
from niwa.analysis.arena.games_csv import CHECK_COLUMN, GameLog, GameLogError, IdSet
from niwa.ext.errors import NiwaError

RECORDS_FILE = "games.jsonl"
DAMAGED_SUFFIX = ".damaged"     # where damaged lines are set aside (never thrown away)
MAX_LISTED = 10                 # ids or line numbers a note lists before "..."

_GAME_ID = re.compile(r'"event":\{"game_id":(-?\d+)')


def records_path(games_csv: str) -> str:
    return os.path.join(os.path.dirname(games_csv), RECORDS_FILE)


def _shown(items: list, more: int = 0) -> str:
    extra = len(items) - MAX_LISTED + more
    return ", ".join(str(x) for x in items[:MAX_LISTED]) + (" ..." if extra > 0 else "")


DROP_HINT = "pass --on-bad-rows drop to replace its row by a new game"


class RecordedGameLog(GameLog):
    """A GameLog that also keeps each game's record in games.jsonl (see the module).
    `way_out` ends the error of a record that cannot be restored (what the command
    offers instead)."""

    def __init__(self, path: str, columns: list[str], check_row=None,
                 on_bad_rows: str = "stop", way_out: str = DROP_HINT):
        self.records_file = None
        self.way_out = way_out
        super().__init__(path, columns, check_row, on_bad_rows)
        self.records_path = records_path(path)
        self.recorded = IdSet()             # the logged games whose record is in the file
        self._rewrite_records(note=True)    # drop torn lines and games absent from the csv
        self.records_file = open(self.records_path, "a", encoding="utf-8")  # noqa: SIM115

    # -- reading ----------------------------------------------------------------------
    def _record_lines(self, damaged: list) -> Iterator[tuple[int, str]]:
        """(game id, sealed line) of each good record of a logged game, in file order. A
        damaged line is appended to games.jsonl.damaged and noted in `damaged` as (line
        number, game id or None)."""
        if not os.path.exists(self.records_path):
            return
        aside = None
        try:
            with open(self.records_path, "rb") as f:
                for number, raw in enumerate(f, start=1):
                    if not raw.endswith(b"\n"):     # the part after the last newline: torn
                        return
                    if not raw.strip():
                        continue
                    gid, line = _good_record(raw)
                    if line is None:
                        if aside is None:
                            aside = open(self.records_path + DAMAGED_SUFFIX, "ab")  # noqa: SIM115
                        aside.write(raw)
                        damaged.append((number, gid))
                    elif gid in self.done:
                        yield gid, line
        finally:
            if aside is not None:
                aside.close()

    def _rewrite_records(self, keep=None, in_order: bool = False, note: bool = False) -> None:
        damaged: list = []
        records = ((gid, line) for gid, line in self._record_lines(damaged)
                   if keep is None or keep(gid))
        if in_order:
            records = _sorted_by_id(records, self.records_path + ".sort")
        seen = IdSet()
        tmp = self.records_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            for gid, line in records:
                if gid not in seen:
                    seen.add(gid)
                    f.write(line + "\n")
        os.replace(tmp, self.records_path)
        self.recorded = seen
        if note and damaged:
            self._note_damage(damaged)

    def _note_damage(self, damaged: list) -> None:
        name, aside = RECORDS_FILE, RECORDS_FILE + DAMAGED_SUFFIX

        def lacks(gid):
            return gid is not None and gid in self.done and gid not in self.recorded

        unmatched = [n for n, gid in damaged if not lacks(gid)]
        matched = [(n, gid) for n, gid in damaged if lacks(gid)]
        if unmatched:
            self.record_notes.append(
                f"{name}: {len(unmatched)} damaged line{'s' * (len(unmatched) > 1)} "
                f"(line {_shown(unmatched)}) match no game of games.csv that lacks its "
                f"record; set aside in {aside}")
        if matched:
            self.record_notes.append(
                f"{name}: {len(matched)} damaged record{'s' * (len(matched) > 1)} (line "
                f"{_shown([f'{n} game {gid}' for n, gid in matched])}) set aside in {aside}; "
                "their games are replayed to restore them")

    def missing_records(self) -> Iterator[int]:
        """The logged games without a good record, in id order (computed on ranges)."""
        have = self.recorded
        for start, end in zip(self.done.starts, self.done.ends, strict=True):
            gid = start
            while gid < end:
                gid = have.next_missing(gid)
                if gid >= end:
                    break
                i = bisect.bisect_right(have.starts, gid)
                stop = min(end, have.starts[i] if i < len(have.starts) else end)
                yield from range(gid, stop)
                gid = stop

    # -- restoring --------------------------------------------------------------------
    def restore_records(self, schedule, executor) -> None:
        """Replay the scheduled games of games.csv whose record is missing or damaged
        (the executor plays them as any game), keeping each record whose replay ends as
        the game's row says; see the module for a replay that differs."""
        ids = [gid for gid in self.missing_records() if schedule.includes(gid)]
        if not ids:
            return
        wanted = set(ids)
        # what a replay must reproduce of each row, as a digest (the rows stay on disk)
        logged = {int(r["game_id"]): self._outcome_digest(r) for r in self.read_rows()
                  if int(r["game_id"]) in wanted}
        restored, unrecordable, replaced = [], [], []
        stream = executor.run(_Tasks(schedule, ids))
        try:
            for row in stream:
                gid = int(row["game_id"])
                problem = (None if self._outcome_digest(row) == logged[gid]
                           else self.replay_differs(row, self._logged_row(gid)))
                if problem is not None:
                    if self.on_bad_rows != "drop":
                        raise GameLogError(
                            f"game {gid} has no good record in {self.records_path} and its "
                            f"replay differs from its games.csv row ({problem}), so its "
                            f"record cannot be restored; {self.way_out}")
                    replaced.append(row)
                    continue
                line = row.get(RECORD_FIELD)
                if line is None:        # a game without notation has no record to keep
                    unrecordable.append(gid)
                    continue
                self.records_file.write(line + "\n")
                self.records_file.flush()
                self.recorded.add(gid)
                restored.append(gid)
        finally:
            stream.close()
            self._note_restored(restored, unrecordable)
        if replaced:
            self.forget({int(row["game_id"]) for row in replaced})
            for row in replaced:
                self.append(row)
            self.record_notes.append(
                f"{RECORDS_FILE}: {len(replaced)} game{'s' * (len(replaced) > 1)} without a "
                f"good record replayed differently ({_shown([r['game_id'] for r in replaced])})"
                "; their games.csv rows are replaced by the new games (--on-bad-rows drop)")

    def _note_restored(self, restored: list[int], unrecordable: list[int]) -> None:
        if restored:
            self.record_notes.append(
                f"{RECORDS_FILE}: restored the record{'s' * (len(restored) > 1)} of "
                f"{len(restored)} game{'s' * (len(restored) > 1)} ({_shown(restored)}) by "
                "replaying them from the schedule; each replay ended as games.csv says")
        if unrecordable:
            self.record_notes.append(
                f"{RECORDS_FILE}: games {_shown(unrecordable)} have no record (their game "
                "has no notation)")

    def _outcome_digest(self, row: dict) -> bytes:
        """A digest of what replay_differs compares."""
        text = "\x1f".join(self._compared(row, column) for column in self.columns
                           if column not in ("duration_s", CHECK_COLUMN))
        return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()

    def _logged_row(self, game_id: int) -> dict:
        return next(r for r in self.read_rows() if int(r["game_id"]) == game_id)

    @staticmethod
    def _compared(row: dict, column: str) -> str:
        value = str(row.get(column, ""))
        return _NUMBER.sub("#", value) if column == "error" else value

    def replay_differs(self, row: dict, logged: dict) -> str | None:
        """What differs between a replayed game's row and its logged one (None: the same
        game): every column but the duration and the checksum; in the error message, only
        the words (its numbers are timings)."""
        for column in self.columns:
            if column in ("duration_s", CHECK_COLUMN):
                continue
            new, old = self._compared(row, column), self._compared(logged, column)
            if new != old:
                return f"{column} is {_clip(old)!r} in games.csv, {_clip(new)!r} in the replay"
        return None

    # -- writing ----------------------------------------------------------------------
    def append(self, row: dict) -> None:
        row = dict(row)
        line = row.pop(RECORD_FIELD, None)
        gid = int(row["game_id"])
        if line is not None and gid not in self.done:
            self.records_file.write(line + "\n")
            self.records_file.flush()
            self.recorded.add(gid)
        super().append(row)

    def close(self):
        if self.records_file is not None and not self.records_file.closed:
            self.records_file.close()
        super().close()

    def rewrite_sorted(self, keep=None) -> None:
        super().rewrite_sorted(keep)        # closes both files
        self._rewrite_records(keep, in_order=True)


_NUMBER = re.compile(r"\d+(\.\d+)?")


class _Tasks:
    """The scheduled games of `ids`, made as the executor takes them; len() known."""

    def __init__(self, schedule, ids: list[int]):
        self.schedule, self.ids = schedule, ids

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self):
        return (self.schedule.task_for(gid) for gid in self.ids)


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _good_record(raw: bytes) -> tuple[int | None, str | None]:
    """(game id, sealed line) of a good record line; (game id or None, None) of a damaged
    one: not UTF-8, a checksum that does not match, or, without a checksum (a line
    written before it existed), not a record that replays to its recorded end."""
    try:
        text = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        return _game_id_of(raw.decode("utf-8", "replace")), None
    body, good = unsealed(text)
    if good is not None:
        return _game_id_of(body), (text if good else None)
    try:
        data = json.loads(body)
        gid = int(data["event"]["game_id"])
        GameRecord.from_json(data).validate()
    except (ValueError, KeyError, TypeError, NiwaError):
        return _game_id_of(body), None
    return gid, sealed_line(data)


def _game_id_of(text: str) -> int | None:
    """The game id in a record's `event` tag (None if it cannot be found)."""
    m = _GAME_ID.search(text)
    if m is not None:
        return int(m.group(1))
    try:
        return int(json.loads(text)["event"]["game_id"])
    except (ValueError, KeyError, TypeError):
        return None


def _sorted_by_id(records: Iterator[tuple[int, str]], prefix: str):
    """The records in game-id order (a stable external merge sort: at most
    games_csv.SORT_CHUNK_ROWS of them in memory)."""
    chunks, batch = [], []

    def spill():
        path = f"{prefix}{len(chunks)}"
        batch.sort(key=lambda r: r[0])
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(f"{gid}\t{line}\n" for gid, line in batch)
        chunks.append(path)
        batch.clear()

    def read(path):
        with open(path, encoding="utf-8") as f:
            for text in f:
                gid, _, line = text.rstrip("\n").partition("\t")
                yield int(gid), line

    try:
        for record in records:
            batch.append(record)
            if len(batch) >= games_csv.SORT_CHUNK_ROWS:
                spill()
        batch.sort(key=lambda r: r[0])
        yield from heapq.merge(*(read(c) for c in chunks), batch, key=lambda r: r[0])
    finally:
        for c in chunks:
            os.remove(c)
