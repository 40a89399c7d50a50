"""Certify a decided two-level proof end to end, measured: the certificate in parts, its
check with the reference rules, and the opening book read off it.

    python certify.py CHECKPOINT --name pro-mandatory --out /work/certs [--move LINE]
        [--copy-to DIR] [--ledger FILE] [--max-part-positions N]
        [--split 2] [--tables DIR | --no-tables] [--tt-mb 4096] [--huge-pages]
        [--leaf-budget 1000000000] [--plies 8] [--processes 2]

Three `niwa` commands, each run as its own process under GNU time (wall seconds and peak
resident memory), in this order; a step that fails stops the script with its error line:

1. `niwa proof extract CHECKPOINT --parts OUT/parts --split N --out OUT/NAME.npz`: every
   position N plies down is certified as a part of its own (saved as it is made, so a
   stopped run resumes), then the top certificate over them; with --processes P, it runs
   with `--workers P`: P processes fill the parts folder at once (each part made once),
   keeping the costliest proofs of their df-pn table in OUT/kept-proofs every
   --keep-every seconds (a run again loads them: a restart re-proves little);
2. `niwa proof check OUT/NAME.npz --parts OUT/parts --workers P`: the whole, parts
   included, with the plain-Python reference rules (table leaves solved again within
   --leaf-budget, the table ordering the moves tried), P parts at once, each part
   recorded in OUT/check-ledger.jsonl as it passes (run it again to resume a check);
3. `niwa book from-certificate` (only for a certificate of the start, no --move): the
   book that `perfect` and `best` play. A --move certificate whose root is not its own
   lane mirror (W3-a3 stands for W3-b3) is checked a second time mirrored instead
   (`--mirror`, into the same ledger), so that the certification of the whole, given
   that ledger, stops at it in either orientation; --copy-to DIR then keeps its top
   certificate (a few KB) in the repository beside the ledger.

Before a machine goes, `kill -USR1` the script: the extraction stops (the part in hand
is lost) and the checkers check every part already made, then the script ends;
`--check-only` does only that from the start.

A certification longer than a machine lives is carried by its check ledger alone (the
parts are too big for git; give --ledger a file in the repository): with
--check-as-made, each part is checked into the ledger as soon as it is saved (a row
"check part" each, beside the extraction, by one long-lived `niwa proof check -` a
checker), and the extraction, given the same ledger,
stops at every part recorded there, its file kept or not, so a new machine makes only
what the ledger lacks. Commit the ledger as it grows.

Each step appends a row to results/certificates.csv: the step, the case, its figures from
the command's --json line (positions, moves, bytes, sha256, parts ...), wall seconds, peak
memory and the exact command.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import fnmatch
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "certificates.csv"
COLUMNS = ["utc", "name", "step", "exit", "wall_s", "peak_rss_mb", "positions", "moves",
           "parts", "bytes", "sha256", "winner", "figures", "command"]


def niwa_command() -> str:
    """The `niwa` beside this Python (its venv need not be activated), else the one on PATH."""
    beside = Path(sys.executable).with_name("niwa")
    found = str(beside) if beside.is_file() else shutil.which("niwa")
    if found is None:
        sys.exit(f"certify.py: no `niwa` command beside {sys.executable} or on PATH "
                 "(install niwa in this Python: pip install -e .)")
    return found


def measured(cmd: list[str], label: str = "", count=None, total: int | None = None,
             started=None) -> tuple[int, float, float, str, str]:
    """Run `cmd` under GNU time: (exit status, wall s, peak RSS MB, stdout, stderr). While it
    runs, a progress bar shows `count()` (what the step has saved so far: parts made,
    parts checked), since the command's own bar is turned off to keep its output parseable.
    `started(proc)` is told the process (so that another thread can stop it)."""
    from tqdm import tqdm

    handle, name = tempfile.mkstemp(prefix="certify-", suffix=".time")  # (one per step:
    os.close(handle)                        # the parts' checks run beside the extraction)
    stats = Path(name)
    t0 = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        # its own process group: GNU time dies of a SIGTERM without passing it on, so a
        # stop reaches the niwa command below it through the group
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", str(stats), *cmd],
                                stdout=out, stderr=err, text=True, start_new_session=True)
        if started is not None:
            started(proc)
        bar = tqdm(desc=label, unit=" saved", total=total, disable=count is None)
        try:
            while True:
                if count is not None:
                    bar.update(max(0, count() - bar.n))
                if proc.poll() is not None:
                    break
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            if proc.poll() is None:         # interrupted: no process outlives the script
                kill_group(proc)
                proc.wait()
            bar.close()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    wall = time.monotonic() - t0
    try:
        peak_kb = float(stats.read_text().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        peak_kb = float("nan")
    stats.unlink(missing_ok=True)
    return proc.returncode, wall, peak_kb / 1024, stdout, stderr


def kill_group(proc) -> None:
    """SIGTERM the process group `proc` leads (its command and what that started)."""
    with contextlib.suppress(ProcessLookupError):     # (all of it ended already)
        os.killpg(proc.pid, signal.SIGTERM)


def files_in(folder: Path, pattern: str):
    """A counter of the files matching `pattern` in `folder` (for measured's bar)."""
    return lambda: len(fnmatch.filter(os.listdir(folder), pattern)) if folder.is_dir() else 0


def lines_in(path: Path):
    """A counter of the lines of `path` (a ledger written a line a part)."""
    def count() -> int:
        try:
            with open(path, "rb") as f:
                return sum(1 for _ in f)
        except OSError:
            return 0
    return count


def write_row(row: dict, to: Path | None = None) -> None:
    """Append `row` to `to` (default RESULTS, the campaign's CSV, printed too)."""
    path = RESULTS if to is None else to
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        if new:
            w.writeheader()
        w.writerow({k: row.get(k, "") for k in COLUMNS})
    if to is None:
        print(json.dumps(row), flush=True)


def write_step_row(name: str, label: str, code: int, wall: float, peak: float,
                   figures: dict, command: str, to: Path | None = None) -> None:
    """The row of one step (or one part's check): its figures from the command's --json
    line, wall seconds and peak memory (NaN: unknown, the command killed)."""
    write_row({"utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "name": name,
               "step": label, "exit": code, "wall_s": round(wall, 1),
               "peak_rss_mb": "" if peak != peak else round(peak),
               "positions": figures.get("nodes", ""), "moves": figures.get("edges", ""),
               "parts": figures.get("parts", ""), "bytes": figures.get("bytes", ""),
               "sha256": figures.get("sha256", ""), "winner": figures.get("winner", ""),
               "figures": json.dumps(figures, sort_keys=True) if figures else "",
               "command": command}, to)


def step(name: str, label: str, cmd: list[str], count=None, total=None,
         started=None) -> dict:
    """Run one step, write its row, and return its --json figures (exit on failure)."""
    code, wall, peak, out, err = measured(cmd, label, count, total, started)
    lines = [json.loads(x) for x in out.strip().splitlines() if x.startswith("{")]
    figures = lines[-1] if lines else {}
    write_step_row(name, label, code, wall, peak, figures, shlex.join(cmd))
    if code != 0:
        last = (err.strip().splitlines() or out.strip().splitlines() or ["?"])[-1]
        sys.exit(f"{label} failed (exit {code}): {last}")
    return figures


class CheckFailed(Exception):
    """The long-lived check refused a part, or ended: its last line."""


class CheckStream:
    """One long-lived `niwa proof check -` (its own process group), given a part a line
    and answering a JSON line each, so that its leaf memo lasts from part to part: a
    fresh command's first part searched 7.6 leaf positions per table leaf and checked
    4.2K positions/s, its fourth and later ones 0.3-1.3 and about 31K/s (the eighteenth
    session's batches of 16 parts, where the first two parts took 42% of the time)."""

    def __init__(self, cmd: list[str]):
        self.cmd = cmd
        self.err = tempfile.TemporaryFile("w+")     # (a pipe could fill and stall it)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, text=True, start_new_session=True)

    def check(self, line: str) -> dict:
        """The figures of one part's check (`line`: its path, or `--mirror PATH`), or
        CheckFailed with the command's last line."""
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, ValueError):
            line = ""
        if line.startswith("{"):
            return json.loads(line)
        self.proc.wait()
        self.err.seek(0)
        last = (self.err.read().strip().splitlines() or [line.strip() or "?"])[-1]
        raise CheckFailed(f"exit {self.proc.returncode}: {last}")

    def peak_mb(self) -> float:
        """The process's peak resident memory so far (VmHWM), NaN if unknown."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return float("nan")

    def close(self) -> None:
        """End it (input closed: it has nothing in hand between two parts)."""
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            kill_group(self.proc)
            self.proc.wait()
        self.err.close()


class CheckQueue:
    """The checks of one run's checkers: those in hand and those done. A checker takes the
    first check waiting that no other holds or has done (a look at the ledger taken just
    before another checker's line lands would still list it), then looks again."""

    def __init__(self):
        self.held: set = set()
        self.done: set = set()
        self.lock = threading.Lock()
        self.pieces_lock = threading.Lock()     # (both checkers may find a part checked)

    def take(self, todo: list):
        """The check of `todo` this checker makes (held until release), or None."""
        with self.lock:
            taken = next((c for c in todo if (c[0].name, c[1]) not in self.held
                          and (c[0].name, c[1]) not in self.done), None)
            if taken is not None:
                self.held.add((taken[0].name, taken[1]))
            return taken

    def release(self, check, done: bool) -> None:
        with self.lock:
            self.held.discard((check[0].name, check[1]))
            if done:
                self.done.add((check[0].name, check[1]))


class PartHeader(NamedTuple):
    """What PartChecker.waiting() needs of a part file, read from its header once."""

    mtime: int                  # the file's st_mtime_ns when read (a new one: read again)
    sha: str                    # the part's sha256, its name in the ledger
    orientations: tuple         # (False,), or (False, True) if its root is not its mirror
    deep: bool                  # too deep for the book: it leaves no piece
    cut: bool                   # it stops at parts of its own


class PartChecker(threading.Thread):
    """Checks each part saved in `parts` into `ledger` while the extraction runs, one at a
    time, each a row "check part", by one long-lived `niwa proof check -` (CheckStream),
    until stop() and then the parts left. A part refused stops the certification: the
    proof or its extraction is wrong."""

    LOOK_S = 10.0       # how long the checks found by one look are taken before another

    def __init__(self, name: str, niwa: str, parts: Path, ledger: Path, options: list[str],
                 queue: CheckQueue, pieces: Path | None = None, piece_plies: int = 4,
                 second=False, book_plies: int | None = None,
                 part_rows: Path | None = None, cuts: Path | None = None):
        super().__init__(daemon=True)
        # called with the failure as this checker stops on it: the extraction would go on
        # making parts no checker takes (26,950 parts in 18 minutes, once) and the failure
        # was told only at its end
        self.on_fail = None
        self.queue = queue
        # the second of two checkers takes the queue's other end (newest part first)
        self.second = second
        self.label, self.niwa, self.parts, self.ledger = name, niwa, parts, ledger
        self.options = options
        self.pieces, self.piece_plies = pieces, piece_plies
        # a part made at least so many plies below the top has no piece: the book ends
        # above it (a piece each of full pro/mandatory's many small deep parts cost 4 KB)
        self.book_plies = book_plies
        # a row a check in `part_rows` (the run's folder), their sums in the campaign's CSV
        # (summary()): a row a part there, 2 KB each, would grow it 4 KB a part
        self.part_rows = part_rows
        # the cut plans: at the last look of a wind-down, the mirrors of the parts of cuts
        # left unfinished are checked too (open_cut_mirrors)
        self.cuts = cuts
        self.winding_down = False
        self.totals = {"checks": 0, "positions": 0, "leaf_positions": 0, "time_s": 0.0,
                       "peak_rss_mb": 0.0}
        self.done: set[str] = set()     # part files checked here or found in the ledger
        # what waiting() needs of each part file, read once; read again at each look, the
        # headers of thousands of parts waiting took 3 s a check, ten times the check of a
        # small part
        self.headers: dict[str, PartHeader] = {}
        self.ledger_rows = None         # a CheckLedger, refreshed at each look
        self.folder = None              # the parts' certificate_folder, for book pieces
        self.failed: str | None = None
        self.stream: CheckStream | None = None
        self.finish = threading.Event()
        self.ended = threading.Event()  # (is_alive() is not to be trusted: see main())
        self.quit = False

    def stop(self, now: bool = False) -> None:
        """Check the parts left, then end; `now`: end at once, the check in hand killed."""
        self.quit = self.quit or now
        self.finish.set()
        stream = self.stream
        if now and stream is not None and stream.proc.poll() is None:
            kill_group(stream.proc)

    def waiting(self) -> list[tuple[Path, bool]]:
        """The (part file, False) checks not in the ledger yet, oldest part first: each
        part as it is (at its root). A part met at its root's lane mirror is checked that
        way too, inside the check of the certificate that meets it so, while its file is
        here; once its file is gone, a walk stops at it only in the ways the ledger holds
        (ledger_parts). Checking every part both ways, as before, took twice the checks
        and ledger lines, for a mirror met by 20% of the parts of full pro/mandatory's
        largest cut. A part found checked leaves its piece of book first (book_piece), if
        the book can reach it."""
        from niwa.solver.certificate import (
            PART_FILES,
            CertificateError,
            CheckLedger,
            _header_meta,
            certificate_folder,
        )

        if self.ledger_rows is None:
            self.ledger_rows = CheckLedger(self.ledger)
        checked = self.ledger_rows.refresh().rows
        out, refreshed = [], False
        files = []
        # only the files not done are looked at (a Path and a stat for each of 48,000
        # files, every look of two checkers, kept this process half a core busy)
        for name in fnmatch.filter(os.listdir(self.parts), PART_FILES):
            if name in self.done:
                continue
            path = self.parts / name
            try:
                files.append((os.stat(path).st_mtime_ns, path))
            except FileNotFoundError:
                continue
        for mtime, path in sorted(files, reverse=self.second):
            if path.name in self.done:
                continue
            known = self.headers.get(path.name)
            if known is None or known.mtime != mtime:                 # (new, or replaced)
                try:
                    meta = _header_meta(path)
                    sha, root = meta["sha256"], meta["root"]
                    # (a part made before parts recorded their depth is taken as deep:
                    # the pieces of the shallow ones were kept when the deep ones were
                    # removed, and 11,309 removed pieces came back in a session)
                    deep = self.book_plies is not None and \
                        int(meta.get("plies_from_top", self.book_plies)) >= self.book_plies
                except (CertificateError, KeyError, ValueError, TypeError):
                    continue            # being renamed into place, or not a certificate
                self.headers[path.name] = PartHeader(
                    mtime, sha, (False,) if own_mirror(root) else (False, True), deep,
                    bool(meta.get("parts")))
            header = self.headers[path.name]
            left = [] if (header.sha, False) in checked else [(path, False)]
            if not left:
                if self.pieces is not None and not header.deep:
                    # (the folder's index kept, and taken up to date once a look: read
                    # whole, its 40,000 headers took 9 s)
                    if self.folder is None:
                        self.folder, refreshed = certificate_folder(self.parts), True
                    elif not refreshed:
                        self.folder, refreshed = self.folder.refresh(), True
                    with self.queue.pieces_lock:
                        book_piece(path, header.sha, self.folder, self.pieces,
                                   self.piece_plies, header.orientations)
                self.done.add(path.name)
            out.extend(left)
        if self.finish.is_set() and self.winding_down and self.cuts is not None:
            out.extend(self.open_cut_mirrors(checked))
        return out

    def open_cut_mirrors(self, checked) -> list[tuple[Path, bool]]:
        """The (part file, True) checks of the saved parts below the cut tops not saved
        yet (a run stopped before the cut was whole) that stop at no part of their own, not
        in the ledger mirrored, each root not its own mirror. Such a part is checked at its
        root as made; its mirror only inside the check of the top that meets it so, once
        the top is made. On another machine the files are gone and a part is known by its
        ledger lines alone, so where a plan meets one mirrored, its walk would make it
        again (20% of the parts of full pro/mandatory's largest cut). Which of them a plan
        meets mirrored is not kept, so all are checked: a few hundred small checks at a
        wind-down. A part with parts is left out: its mirror's check goes down through all
        of them mirrored (a top-level part below the root's plan: 115M positions, hours);
        knowing which way the plan meets it needs a walk of the plan (not done yet)."""
        from niwa.solver.certificate import CertificateError, PartCuts, part_file_name

        out = []
        try:
            plans = PartCuts(self.cuts).plans() if self.cuts.exists() else {}
        except CertificateError:
            return out          # (a damaged cuts file: the extraction says so itself)
        for key, plan in plans.items():
            if (self.parts / part_file_name(key)).exists():
                continue        # (whole: its check met its parts each way it needed)
            for child in plan.children:
                name = part_file_name(child)
                header = self.headers.get(name)
                if header is None or len(header.orientations) < 2 or header.cut:
                    continue    # (not saved and read here, its root its own mirror, or cut)
                if (header.sha, True) not in checked and (header.sha, False) in checked:
                    out.append((self.parts / name, True))
        return out

    def run(self) -> None:
        try:
            self._run()
        except Exception as e:      # noqa: BLE001 (reported by the main thread)
            self.failed = f"checking the parts as made failed: {type(e).__name__}: {e}"
        finally:
            if self.failed and self.on_fail is not None:
                self.on_fail(self.failed)
            if self.stream is not None:
                if self.quit:
                    kill_group(self.stream.proc)
                self.stream.close()
            self.ended.set()

    def _run(self) -> None:
        while not self.quit:
            last_look = self.finish.is_set()
            todo = self.waiting() if self.parts.is_dir() else []
            looked, checked = time.monotonic(), False
            # the checks of one look, until it is LOOK_S old (a look at thousands of part
            # files takes 0.2 s, more than a small part's check)
            while time.monotonic() - looked < self.LOOK_S:
                if self.quit:       # (stopped while looking: start no other check)
                    return
                taken = self.queue.take(todo)
                if taken is None:
                    break
                done = False
                try:
                    self._check(*taken)
                    done = checked = True
                except CheckFailed as e:
                    if not self.quit:
                        self.failed = f"check part {taken[0]} failed ({e})"
                    return
                finally:
                    self.queue.release(taken, done)
            if checked:
                continue
            if last_look and not todo:
                return
            self.finish.wait(10.0)

    def _check(self, path: Path, mirrored: bool) -> None:
        """Check one part by the stream (started at the first), and write its row."""
        if self.stream is None:
            self.stream = CheckStream([self.niwa, "proof", "check", "-", "--parts",
                                       str(self.parts), "--json", "--no-progress",
                                       "--ledger", str(self.ledger), *self.options])
            if self.quit:   # stopped while it was started: it must not outlive us
                kill_group(self.stream.proc)
        line = ("--mirror " if mirrored else "") + str(path)
        figures = self.stream.check(line)
        peak = self.stream.peak_mb()
        write_step_row(self.label, "check part" + (" (mirror)" if mirrored else ""), 0,
                       figures.get("time_s", 0.0), peak, figures,
                       f"{shlex.join(self.stream.cmd)} <<< {shlex.quote(line)}",
                       self.part_rows)
        t = self.totals
        t["checks"] += 1
        t["positions"] += int(figures.get("nodes", 0))  # (its parts': in their own checks)
        t["leaf_positions"] += int(figures.get("leaf_positions", 0))
        t["time_s"] += float(figures.get("time_s", 0.0))
        if peak == peak:
            t["peak_rss_mb"] = max(t["peak_rss_mb"], peak)

    def summary(self, k: int) -> None:
        """The row of this checker's checks (if any) in the campaign's CSV."""
        t = self.totals
        if not t["checks"]:
            return
        figures = {**t, "time_s": round(t["time_s"], 1), "checker": k,
                   "part_rows": str(self.part_rows) if self.part_rows else ""}
        write_step_row(self.label, "check parts", 0, t["time_s"], t["peak_rss_mb"],
                       {**figures, "nodes": t["positions"]},
                       "" if self.stream is None else shlex.join(self.stream.cmd))


def book_piece(path: Path, sha: str, found, pieces: Path, plies: int,
               orientations=(False, True)) -> None:
    """Keep the book of a checked part's first `plies` plies (in `orientations`: False as
    it is, True its lane mirror) in `pieces`: the final book is read off the top
    certificate, and by then the parts' files of earlier machines are gone
    (book_from_parts merges the pieces in). `found`: the parts folder's
    certificate_folder, where the part's own parts are."""
    out = pieces / f"{sha[:16]}.npz"
    if out.exists():
        return
    from niwa.solver.book import book_from_certificate, merge_books
    from niwa.solver.certificate import load_certificate

    part = load_certificate(path)
    books = [book_from_certificate(part, plies=plies, parts=found, missing_parts=True,
                                   any_root=True, mirror=m) for m in orientations]
    piece = merge_books(books, plies=plies)
    piece.info.update(part_sha256=sha, root=part.root)
    pieces.mkdir(parents=True, exist_ok=True)
    piece.save(out)


def book_from_parts(name: str, book: Path, pieces: Path) -> None:
    """Merge the pieces of book kept from the parts (book_piece) into `book`,
    the book read off the top certificate, and write a row "book + pieces"."""
    from niwa.solver.book import load_book, merge_books

    found = sorted(pieces.glob("*.npz")) if pieces.is_dir() else []
    if not found:
        return
    t0 = time.monotonic()
    top = load_book(book)
    merged = merge_books([top, *(load_book(p) for p in found)])
    merged.info.update(top_book_entries=top.entries, pieces=len(found))
    merged.save(book)
    write_row({"utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "name": name,
               "step": "book + pieces", "exit": 0,
               "wall_s": round(time.monotonic() - t0, 1), "sha256": merged.sha256,
               "winner": merged.winner,
               "figures": json.dumps({"entries": merged.entries, "pieces": len(found),
                                      "top_book_entries": top.entries}),
               "command": f"merge {book} + {pieces}/*.npz"})


def expected_parts(a, parts: Path, ledger: Path | None = None) -> int | None:
    """The bar's total for the extraction: the parts saved plus those count_parts.py
    foresees (a floor), or None for a --move certificate or a count that fails."""
    from niwa.solver.certificate import PART_FILES

    if a.move is not None:
        return None
    sys.path.insert(0, str(HERE))
    try:
        from count_parts import count_parts

        counted = count_parts(a.checkpoint, parts, a.split, ledger)
    except Exception:    # noqa: BLE001 (only the bar's total: the extraction says what is wrong)
        return None
    finally:
        sys.path.remove(str(HERE))
    return files_in(parts, PART_FILES)() + counted["parts_to_make"]


def main(argv=None) -> None:
    global RESULTS      # (--results: the tests' rows kept out of the campaign's own)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint")
    p.add_argument("--name", required=True, help="the certificate's file name, without .npz")
    p.add_argument("--out", required=True, help="folder for the certificate and parts/")
    p.add_argument("--move", default=None,
                   help="a decided line of moves, not the root (its certificate is checked "
                        "in both orientations, unless its root is its own mirror)")
    p.add_argument("--copy-to", default=None,
                   help="a folder (in the repository) to copy the top certificate into, "
                        "once checked: the parts stay in OUT, the ledger holds their checks")
    p.add_argument("--split", type=int, default=2)
    p.add_argument("--tables", default=None)
    p.add_argument("--no-tables", action="store_true")
    p.add_argument("--tt-mb", default="4096")
    p.add_argument("--huge-pages", action="store_true")
    p.add_argument("--leaf-budget", default="1000000000")
    p.add_argument("--plies", default="8")
    p.add_argument("--processes", type=int, default=1,
                   help="processes that make (extract), then check, the parts at once")
    p.add_argument("--ledger", default=None,
                   help="the check ledger (default OUT/check-ledger.jsonl): its parts are "
                        "not made again, their files kept or not")
    p.add_argument("--max-part-positions", default="0",
                   help="cut a part whose walk passes so many positions (0: no bound)")
    p.add_argument("--cuts", default=None,
                   help="where the parts cut for --max-part-positions are kept (default: "
                        "beside the ledger, LEDGER-cuts.jsonl), so that a run again cuts "
                        "them at once instead of walking each to the bound first")
    p.add_argument("--check-as-made", action="store_true",
                   help="check each part into the ledger as soon as it is saved, and keep "
                        "the book of its first plies (--piece-plies) in --book-pieces")
    p.add_argument("--checkers", type=int, default=1, choices=(1, 2),
                   help="with --check-as-made: 2 checks at once (the first takes the "
                        "oldest parts first, the second the newest)")
    p.add_argument("--book-pieces", default=None,
                   help="where the parts' pieces of book are kept (default: beside the "
                        "ledger, LEDGER-book-pieces/)")
    p.add_argument("--piece-plies", type=int, default=4)
    p.add_argument("--keep-every", default="600",
                   help="seconds between two keeps of the extraction's costliest proofs "
                        "(OUT/kept-proofs, loaded by the next run)")
    p.add_argument("--roll-ledger-mb", type=float, default=8.0,
                   help="at the end, move the ledger's lines into a gzip archive beside it "
                        "if it has grown to so many MB (CheckLedger.roll)")
    p.add_argument("--part-rows", default=None,
                   help="the CSV of a row for each part's check (default: OUT/"
                        "part-checks.csv; the --results CSV gets their sums)")
    p.add_argument("--results", default=None,
                   help=f"the CSV the rows are appended to (default {RESULTS})")
    p.add_argument("--leaf-memo", default="15000000",
                   help="table-leaf values a checker keeps from part to part (about 140 "
                        "bytes each; emptied when full)")
    p.add_argument("--check-only", action="store_true",
                   help="with --check-as-made: make no part, check those in the folder "
                        "that the ledger lacks, then stop")
    a = p.parse_args(argv)
    if a.check_only and not a.check_as_made:
        p.error("--check-only checks the parts as made: give --check-as-made too")
    if a.results is not None:
        RESULTS = Path(a.results)
    niwa = niwa_command()      # (first: its one-line error where niwa is not installed)
    from niwa.solver.certificate import PART_FILES

    out = Path(a.out)
    parts = out / "parts"
    cert = out / f"{a.name}.npz"
    out.mkdir(parents=True, exist_ok=True)
    ledger = Path(a.ledger) if a.ledger else out / "check-ledger.jsonl"
    ledger.parent.mkdir(parents=True, exist_ok=True)
    ledger.touch()
    pieces = Path(a.book_pieces) if a.book_pieces else \
        ledger.with_name(ledger.stem + "-book-pieces")
    cuts = Path(a.cuts) if a.cuts else ledger.with_name(ledger.stem + "-cuts.jsonl")
    # the table the leaves came from orders the checker's search of them (an order only)
    order = [] if a.no_tables else ["--tables", a.tables or "auto"]
    extract = [niwa, "proof", "extract", a.checkpoint, "--out", str(cert), "--parts",
               str(parts), "--split", str(a.split), "--tt-mb", a.tt_mb, "--json",
               "--no-progress", "--ledger", str(ledger),
               "--max-part-positions", a.max_part_positions]
    extract += ["--cuts", str(cuts)] if a.max_part_positions not in ("0", "") else []
    extract += ["--move", a.move] if a.move else []
    extract += ["--no-tables"] if a.no_tables else (["--tables", a.tables] if a.tables else [])
    extract += ["--huge-pages"] if a.huge_pages else []
    extract += ["--workers", str(a.processes)]
    # the df-pn table's costliest proofs, kept beside the parts: a run again (a restart,
    # the next session on this machine) re-proves little of the parts it was making
    extract += ["--keep-proofs", str(out / "kept-proofs"), "--keep-every", a.keep_every]
    checkers, queue = [], CheckQueue()
    # SIGUSR1 winds the run down before a machine goes: the extraction is stopped (the
    # part it is making is lost) and the checkers go through every part already made
    extraction, wind_down = [], threading.Event()

    def checker_failed(message: str) -> None:
        print(f"certify.py: {message}; the extraction is stopped", file=sys.stderr,
              flush=True)
        for proc in extraction:
            if proc.poll() is None:
                kill_group(proc)

    if a.check_as_made:
        checkers = [PartChecker(a.name, niwa, parts, ledger,
                                ["--leaf-budget", a.leaf_budget, "--leaf-memo", a.leaf_memo,
                                 *order], queue, pieces, a.piece_plies, second=k == 1,
                                book_plies=None if a.move else int(a.plies),
                                part_rows=Path(a.part_rows) if a.part_rows
                                else out / "part-checks.csv",
                                cuts=cuts if a.move is None else None)
                    for k in range(a.checkers)]
        for checker in checkers:
            checker.on_fail = checker_failed
            checker.start()

    def stop_extraction(*_) -> None:
        wind_down.set()
        for proc in extraction:
            if proc.poll() is None:
                kill_group(proc)

    previous = signal.signal(signal.SIGUSR1, stop_extraction)
    if a.check_only:
        wind_down.set()
    try:
        made = None
        if not wind_down.is_set():
            try:
                made = step(a.name, "extract" + (f" ({a.processes} processes)"
                                                 if a.processes > 1 else ""),
                            extract, files_in(parts, PART_FILES),
                            expected_parts(a, parts, ledger), started=extraction.append)
            except SystemExit:
                if not wind_down.is_set() and not any(c.failed for c in checkers):
                    raise
        for checker in checkers:
            # (a run that ends whole checks the mirrors the whole's check needs there)
            checker.winding_down = wind_down.is_set()
            checker.stop()
        for checker in checkers:
            checker.ended.wait()
            if checker.failed:
                sys.exit(checker.failed)
    finally:
        # every checker stopped and waited for, whatever stopped us: a Thread.join() that a
        # signal interrupts marks its thread as ended though it runs on (CPython
        # bpo-45274), and the check it had started then outlived this script
        for checker in checkers:
            checker.stop(now=True)
        for checker in checkers:
            checker.ended.wait()
        for k, checker in enumerate(checkers):
            checker.summary(k)
        signal.signal(signal.SIGUSR1, previous)
    if wind_down.is_set():
        roll_ledger(ledger, a.roll_ledger_mb)
        print(f"certify.py: no part is being made and every part in {parts} is checked "
              f"into {ledger}; run the command again"
              f"{' without --check-only' if a.check_only else ''} to go on",
              flush=True)
        return
    check = [niwa, "proof", "check", str(cert), "--parts", str(parts), "--leaf-budget",
             a.leaf_budget, "--workers", str(a.processes), "--json", "--no-progress", *order,
             "--ledger", str(ledger)]
    workers = f" ({a.processes} processes)" if a.processes > 1 else ""
    step(a.name, "check" + workers, check, lines_in(ledger))
    from niwa.solver.certificate import load_certificate

    if a.move is not None and not own_mirror(load_certificate(cert).root):
        # a position off the start stands for its lane mirror too (W3-a3 for W3-b3): its
        # claim is checked that way as well, into the same ledger, so that a later
        # certification of the whole stops at it in either orientation
        step(a.name, "check (mirror)" + workers, [*check, "--mirror"], lines_in(ledger))
    if a.copy_to:
        kept = Path(a.copy_to) / cert.name
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cert, kept)
        print(f"certify.py: the top certificate copied to {kept}", flush=True)
    if a.move is None:
        book = out / f"{a.name}-book.npz"
        # (the parts of earlier machines are in the ledger only: their lines end there)
        step(a.name, "book", [niwa, "book", "from-certificate", str(cert), "--parts",
                              str(parts), "--plies", a.plies, "--out", str(book),
                              "--missing-parts"])
        book_from_parts(a.name, book, pieces)
    roll_ledger(ledger, a.roll_ledger_mb)
    print(f"certified: {cert} ({made.get('nodes')} positions at the top, "
          f"{made.get('parts')} parts in {parts})")


def own_mirror(root: str) -> bool:
    """Whether the position `root` (a certificate's root notation) is its own lane mirror
    (the start is): then one orientation of its check serves both."""
    from niwa.solver.certificate import parse_reference_position

    return parse_reference_position(root).mirrored().to_notation() == root


def roll_ledger(ledger: Path, mb: float) -> None:
    """Roll the ledger up (CheckLedger.roll) if its file has grown to `mb` MB: run after
    every check of this run has ended, and before the folder is committed."""
    from niwa.solver.certificate import CheckLedger

    if ledger.exists() and ledger.stat().st_size >= mb * 1e6:
        archive = CheckLedger(ledger).roll()
        if archive is not None:
            print(f"certify.py: the ledger's lines rolled up into {archive}", flush=True)


if __name__ == "__main__":
    # a SIGTERM unwinds like Ctrl-C, so that the step running is stopped with the script
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
