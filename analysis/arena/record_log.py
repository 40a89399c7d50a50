"""games.jsonl beside games.csv: the game records of a run, kept consistent with its log.

`play_task` puts each game's record (one JSON line) in its row under RECORD_FIELD;
`RecordedGameLog` takes it out, appends it to games.jsonl *before* the row reaches
games.csv, and flushes. So a kill can leave a record without its row (the game is played
again on resume and its stale record dropped) but never a row without its record. On
resume the records of games absent from games.csv are dropped; at the end of a run the
file is rewritten in schedule order with the games that count, like games.csv.
"""

from __future__ import annotations

import json
import os

from niwa.analysis.arena.game_log import GameLog
from niwa.analysis.arena.game_record import RECORD_FIELD

RECORDS_FILE = "games.jsonl"


def records_path(games_csv: str) -> str:
    return os.path.join(os.path.dirname(games_csv), RECORDS_FILE)


class RecordedGameLog(GameLog):
    """A GameLog that also keeps each game's record in games.jsonl."""

    def __init__(self, path: str, columns: list[str]):
        super().__init__(path, columns)
        self.records_path = records_path(path)
        self.lines: dict[int, str] = self._load_records()
        self._rewrite_records()         # drop partial lines and games absent from the csv
        self.records_file = open(self.records_path, "a", encoding="utf-8")  # noqa: SIM115

    def _load_records(self) -> dict[int, str]:
        if not os.path.exists(self.records_path):
            return {}
        with open(self.records_path, encoding="utf-8") as f:
            data = f.read()
        lines = {}
        for line in data.split("\n")[:-1]:    # the part after the last newline is a torn write
            try:
                gid = int(json.loads(line)["event"]["game_id"])
            except (ValueError, KeyError, TypeError):
                continue
            if gid in self.rows:
                lines.setdefault(gid, line)
        return lines

    def _rewrite_records(self, keep: set[int] | None = None) -> None:
        tmp = self.records_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            for gid in sorted(self.lines):
                if keep is None or gid in keep:
                    f.write(self.lines[gid] + "\n")
        os.replace(tmp, self.records_path)

    def append(self, row: dict) -> None:
        row = dict(row)
        line = row.pop(RECORD_FIELD, None)
        gid = int(row["game_id"])
        if line is not None and gid not in self.rows:
            self.records_file.write(line + "\n")
            self.records_file.flush()
            self.lines[gid] = line
        super().append(row)

    def close(self):
        if not self.records_file.closed:
            self.records_file.close()
        super().close()

    def rewrite_sorted(self, keep: set[int] | None = None) -> None:
        super().rewrite_sorted(keep)        # closes both files
        self._rewrite_records(keep)

