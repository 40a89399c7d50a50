"""games.jsonl beside games.csv: the game records of a run, kept consistent with its log.

`play_task` puts each game's record (one JSON line) in its row under RECORD_FIELD;
`RecordedGameLog` takes it out, appends it to games.jsonl *before* the row reaches
games.csv, and flushes. So a kill can leave a record without its row (the game is played
again on resume and its stale record dropped) but never a row without its record. On
resume the records of games absent from games.csv (or whose row was dropped as bad) are
dropped; at the end of a run the file is rewritten in schedule order with the games that
count, like games.csv. Like the log, it is streamed: nothing but ids is held in memory.
"""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Iterator

from niwa.analysis.arena import games_csv
from niwa.analysis.arena.game_record import RECORD_FIELD
from niwa.analysis.arena.games_csv import GameLog, IdSet

RECORDS_FILE = "games.jsonl"


def records_path(games_csv: str) -> str:
    return os.path.join(os.path.dirname(games_csv), RECORDS_FILE)


class RecordedGameLog(GameLog):
    """A GameLog that also keeps each game's record in games.jsonl."""

    def __init__(self, path: str, columns: list[str], check_row=None,
                 on_bad_rows: str = "stop"):
        self.records_file = None
        super().__init__(path, columns, check_row, on_bad_rows)
        self.records_path = records_path(path)
        self._rewrite_records()         # drop torn lines and games absent from the csv
        self.records_file = open(self.records_path, "a", encoding="utf-8")  # noqa: SIM115

    def _record_lines(self) -> Iterator[tuple[int, str]]:
        """(game id, line) of each readable record of a logged game, in file order."""
        if not os.path.exists(self.records_path):
            return
        with open(self.records_path, "rb") as f:
            for raw in f:
                if not raw.endswith(b"\n"):     # the part after the last newline: torn
                    return
                try:
                    line = raw.decode("utf-8").rstrip("\n")
                    gid = int(json.loads(line)["event"]["game_id"])
                except (ValueError, KeyError, TypeError):
                    continue
                if gid in self.done:
                    yield gid, line

    def _rewrite_records(self, keep=None, in_order: bool = False) -> None:
        records = ((gid, line) for gid, line in self._record_lines()
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

    def append(self, row: dict) -> None:
        row = dict(row)
        line = row.pop(RECORD_FIELD, None)
        if line is not None and int(row["game_id"]) not in self.done:
            self.records_file.write(line + "\n")
            self.records_file.flush()
        super().append(row)

    def close(self):
        if self.records_file is not None and not self.records_file.closed:
            self.records_file.close()
        super().close()

    def rewrite_sorted(self, keep=None) -> None:
        super().rewrite_sorted(keep)        # closes both files
        self._rewrite_records(keep, in_order=True)


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
