"""Endgame tables on disk: where they live, their file format, building them (locally or
on Dask), loading them lazily, and answering a position from them.

The index and the retrograde kernel are the game's (niwa.ext.lotus_tables); this module is
the orchestration around them. The format and the numbers: docs/endgame-tables.md.

A table is two files in the tables folder (`--dir`, else $NIWA_TABLES, else
~/.cache/niwa/tables):
    NAME.npy    the values, one uint8 per position (numpy's .npy format, memory-mapped)
    NAME.json   the header: game, variant, stones, index scheme and version, counts,
                payload_sha256 (the sha256 of NAME.npy) and sha256, the digest of every
                other header field (payload_sha256 included), so one digest covers both
                files. A header is trusted only if its digest matches and its text is
                exactly what the writer makes of its fields; the payload only if its
                sha256 matches. A damaged table is refused with a one-line TableError
                naming the file (or, when tables are looked up, skipped with a warning).

>>> import tempfile
>>> from niwa.ext.lotus import LotusState
>>> variant = dict(lane=1, shared=3, trampoline_at=3, towers=2)
>>> folder = tempfile.mkdtemp()
>>> info = build_table(variant, 1, folder, progress=False)
>>> info["positions"], info["counts"]["wins"] + info["counts"]["losses"]
(82, 82)
>>> table = find_table(LotusState(**variant), folder)
>>> table.k
1
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from niwa.ext.errors import file_error_reason
from niwa.ext.lotus_tables import TableError  # noqa: F401  (one error class for tables)

FORMAT = "niwa-endgame-table"
FORMAT_VERSION = 2       # 2: the header's own digest (1 checked the payload only)
INDEX_SCHEME = "lotus-class-composition-colouring"
INDEX_VERSION = 1
ENCODING = ("uint8 per position: bit 7 set = the player to move wins; bits 0-6 = plies to "
            "the end with perfect play (winner fastest, loser slowest), 127 = 127 or more; "
            "0 = not computed")
SATURATED = 127          # the distance that means "127 plies or more"
ENV_DIR = "NIWA_TABLES"
GAMES = ("lotus",)


def default_dir() -> Path:
    """$NIWA_TABLES, else $XDG_CACHE_HOME/niwa/tables, else ~/.cache/niwa/tables."""
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "niwa" / "tables"


def tables_dir(directory=None) -> Path:
    return Path(directory).expanduser() if directory else default_dir()


def table_name(variant: dict, k: int) -> str:
    """'lotus-basic-optional-lane3-shared11-tramp8-towers4-k3'."""
    v = variant
    return (f"lotus-{v['rule']}-{v['trampoline']}-lane{v['lane']}-shared{v['shared']}-"
            f"tramp{v['trampoline_at']}-towers{v['towers']}-k{k}")


def make_index(variant: dict, k: int):
    """The index of the Lotus variant's positions with at most k stones a player outside
    the goal (niwa.ext.lotus_tables.LotusTableIndex); TableError for a bad request."""
    from niwa.ext.errors import VariantError
    from niwa.ext.lotus_tables import LotusTableIndex

    variant = dict(variant)
    if variant.get("players", 2) != 2:
        raise TableError(f"endgame tables are for 2 players, not players={variant['players']}")
    try:
        return LotusTableIndex(variant, k)
    except VariantError as e:
        raise TableError(str(e)) from None


# ---- building --------------------------------------------------------------------------
@dataclass
class ClassJob:
    """One class of a table, solved in a worker (local pool or Dask). Either its
    dependencies' values travel with it (`deps`: for workers that may be on other
    machines), or it reads them from the payload being built and writes its own values
    there (`payload`, the .npy file's path, and `spans`, class id -> (offset, size) of the
    classes it touches: for workers on this machine, so that no class's values pass
    through a pipe and the build's memory is page cache the kernel can write back)."""

    variant: dict
    k: int
    cls: int
    deps: dict | None = field(default=None, repr=False)
    payload: str | None = None
    spans: dict | None = field(default=None, repr=False)
    part: tuple[int, int] | None = None     # compositions [start, stop) of the build order

    def __repr__(self):
        part = f" compositions {self.part[0]}:{self.part[1]}" if self.part else ""
        return f"ClassJob(class {self.cls}{part} of {table_name(self.variant, self.k)})"

    def __call__(self) -> dict:
        import numpy as np

        t0 = time.perf_counter()
        index = make_index(self.variant, self.k)
        positions = None
        if self.payload is None:
            values = index.build_class(self.cls, self.deps)
        else:
            table = np.load(self.payload, mmap_mode="r+")
            deps = {d: table[o:o + n] for d, (o, n) in self.spans.items() if d != self.cls}
            at, size = self.spans[self.cls]
            if self.part is None:
                table[at:at + size] = index.build_class(self.cls, deps)
            else:
                start, stop = self.part
                order = _composition_order(index, self.variant, self.k, self.cls)[0]
                index.build_class(self.cls, deps, out=table[at:at + size], order=order,
                                  start=start, stop=stop)
                positions = (stop - start) * (size // len(order))
            table.flush()
            values = None
        return {"cls": self.cls, "values": values, "positions": positions,
                "duration_s": time.perf_counter() - t0}


# A class's build order (its compositions by decreasing progress) costs a second or two
# for the largest classes; the build works it out once, and the local workers, forked
# from the build's process, find it here for every part they solve.
_ORDERS: dict[tuple, tuple] = {}


def _composition_order(index, variant: dict, k: int, cls: int) -> tuple:
    key = (table_name(variant, k), cls)
    if key not in _ORDERS:
        _ORDERS.clear()         # one class at a time: the largest is 80 MB
        _ORDERS[key] = index.composition_order(cls)
    return _ORDERS[key]


def plan_parts(progress, pieces: int, least: int) -> list[list[tuple[int, int]]]:
    """Stages that solve one class in parts: lists of composition ranges [start, stop) of
    its build order, the ranges of a stage solved at once and the stages one after
    another. `progress`: each composition's progress in build order (non-increasing, from
    composition_order). Only a run of equal progress can be cut (a composition depends on
    those of higher progress only): a run of at least 2 * `least` compositions becomes a
    stage of up to `pieces` ranges; smaller runs go together, in order, into a stage of
    one range.

    >>> plan_parts([9, 7, 7, 7, 7, 7, 7, 5, 2, 2], pieces=2, least=2)
    [[(0, 1)], [(1, 4), (4, 7)], [(7, 10)]]
    """
    import numpy as np

    progress = np.asarray(progress)
    bounds = [0, *(np.flatnonzero(np.diff(progress)) + 1).tolist(), len(progress)]
    stages, pending = [], 0         # pending: the start of the range not yet staged
    for a, b in itertools.pairwise(bounds):
        n = min(pieces, (b - a) // max(least, 1))
        if n < 2:
            continue
        if pending < a:
            stages.append([(pending, a)])
        cuts = np.linspace(a, b, n + 1).round().astype(int).tolist()
        stages.append(list(itertools.pairwise(cuts)))
        pending = b
    if pending < len(progress):
        stages.append([(pending, len(progress))])
    return stages


class _PartJobs(list):
    """The parts of one stage, one to each worker (not batched)."""

    one_per_worker = True


class _LevelJobs:
    """The jobs of one level, made lazily (their dependency copies only as each is sent;
    none with `payload`, the path workers on this machine read and write)."""

    def __init__(self, index, classes, values, spans, variant, k, payload=None):
        self.index, self.classes, self.values, self.spans = index, classes, values, spans
        self.variant, self.k, self.payload = variant, k, payload

    def __len__(self):
        return len(self.classes)

    def __iter__(self):
        for c in self.classes:
            if self.payload is None:
                yield ClassJob(self.variant, self.k, c["id"],
                               _deps(self.index, c["id"], self.values, self.spans, copy=True))
            else:
                yield ClassJob(self.variant, self.k, c["id"], payload=self.payload,
                               spans=_touched_spans(self.index, c["id"], self.spans))


def _touched_spans(index, cls: int, spans: dict) -> dict:
    """Where class `cls` and the classes it depends on lie in the payload (a job on a
    local worker reads and writes only these)."""
    return {d: spans[d] for d in (cls, *index.dependencies(cls))}


def _split_classes(group: list, executor, payload, least: int) -> tuple[list, list]:
    """The classes of a level solved whole, and those solved in parts: larger than the
    level's share of a worker and than two parts (local workers only: the parts of a
    class write into the one payload file)."""
    workers = getattr(executor, "workers", 1) or 1
    if payload is None or workers < 2:
        return group, []
    share = sum(c["size"] for c in group) / workers
    split = [c for c in group if c["size"] > share and c["size"] >= 2 * least]
    return [c for c in group if c not in split], split


def _build_in_parts(index, c: dict, spans, variant, k, payload, executor, least, bar):
    """Solve class `c` in parts on the local workers, stage by stage (plan_parts)."""
    order, progress = _composition_order(index, variant, k, c["id"])
    per_composition = c["size"] // len(order)
    touched = _touched_spans(index, c["id"], spans)
    for stage in plan_parts(progress, executor.workers, -(-least // per_composition)):
        jobs = _PartJobs(ClassJob(variant, k, c["id"], payload=payload, part=part,
                                  spans=touched) for part in stage)
        for row in executor.run(jobs):
            bar.update(row["positions"])


def _deps(index, cls, values, spans, copy=False):
    """The values of the classes class `cls` depends on (views, or copies to send)."""
    out = {}
    for d in index.dependencies(cls):
        off, size = spans[d]
        out[d] = values[off:off + size].copy() if copy else values[off:off + size]
    return out


SPLIT_LEAST = 1 << 20      # positions (~0.5 s): the smallest part of a class worth a job


def build_table(variant: dict, k: int, directory=None, executor=None, progress=None,
                force=False, split_least: int = SPLIT_LEAST) -> dict:
    """Build the table of `variant` (2-player Lotus) for at most `k` stones a player
    outside the goal and write it to `directory`; returns its header.

    `executor`: None runs in this process; else an executor of the arena (analysis/arena/executors.py:
    LocalExecutor(n), DaskExecutor(...)) solves the classes of each level in parallel. The
    values do not depend on it (nor on the number of workers): every entry is the game's
    exact value. `progress`: a tqdm bar (None: only on a terminal).

    Local workers share the payload, and a class larger than its level's fair share of
    the workers (k = 5: the 2.7e9 positions with all ten stones on the board, 42% of the
    table, alone in its level) is solved in parts of at least `split_least` positions,
    stage by stage (plan_parts), so that no worker sits idle beside it."""
    import numpy as np
    from tqdm import tqdm

    index = make_index(variant, k)
    full_variant = dict(index.variant)
    folder = tables_dir(directory)
    name = table_name(full_variant, k)
    writable_folder(folder)     # first: a folder that cannot be made is its own error
    if not force and (folder / f"{name}.json").exists():
        raise TableError(f"{folder / name}.json exists already (--force rebuilds it)")
    classes = index.classes()
    spans = {c["id"]: (c["offset"], c["size"]) for c in classes}
    levels: dict[tuple, list] = {}
    for c in classes:
        levels.setdefault(c["level"], []).append(c)
    # the values are built in place in the payload file (a memory map), not in memory: a
    # k = 5 table is 6.4 GB, and with its classes copied to and from the workers the
    # build's main process held 13.8 GB (killed out of memory beside a proof)
    tmp = folder / f".{name}.npy.tmp"
    values = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.uint8, shape=(index.size,))
    # workers on this machine share the file; a Dask worker may be on another machine
    payload = str(tmp) if executor is not None and executor.name == "local" else None
    t0 = time.perf_counter()
    show = progress if progress is not None else os.isatty(2)
    bar = tqdm(total=index.size, unit="pos", unit_scale=True, desc=name, disable=not show)
    done = False
    try:
        for level in sorted(levels):
            group = levels[level]
            if executor is None:
                for c in group:
                    out = index.build_class(c["id"], _deps(index, c["id"], values, spans),
                                            progress=bar.update)
                    values[c["offset"]:c["offset"] + c["size"]] = out
            else:
                by_id = {c["id"]: c for c in group}
                whole, split = _split_classes(group, executor, payload, split_least)
                jobs = _LevelJobs(index, whole, values, spans, full_variant, k, payload)
                for row in executor.run(jobs):
                    c = by_id[row["cls"]]
                    if row["values"] is not None:
                        values[c["offset"]:c["offset"] + c["size"]] = row["values"]
                    bar.update(c["size"])
                for c in split:
                    _build_in_parts(index, c, spans, full_variant, k, payload, executor,
                                    split_least, bar)
        values.flush()
        seconds = time.perf_counter() - t0
        counts = _value_counts(values)
        missing = counts.pop("missing")
        if missing:
            raise TableError(f"{missing:,} positions were left without a value")
        done = True
    finally:
        bar.close()
        del values
        if not done:
            tmp.unlink(missing_ok=True)
    header = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "game": "lotus",
        "variant": full_variant, "stones": k,
        "index": {"scheme": INDEX_SCHEME, "version": INDEX_VERSION, "spaces": index.nspaces,
                  "classes": len(classes), "start_configurations": index.nstarts},
        "encoding": ENCODING, "positions": int(index.size),
        "counts": counts,
        "payload": f"{name}.npy", "payload_bytes": 0, "payload_sha256": "", "sha256": "",
        "build": {"seconds": round(seconds, 3),
                  "executor": executor.describe() if executor is not None else "this process",
                  "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "niwa": _version()},
    }
    seal_table(folder, name, tmp, header)
    return header


def _value_counts(values, chunk: int = 1 << 24) -> dict:
    """Wins, losses, the longest win and loss, saturated distances and missing values of a
    table's bytes, a chunk at a time (a k = 5 table is 6.4 GB: whole-array temporaries
    would need several times that)."""
    import numpy as np

    wins = longest_win = longest_loss = saturated = missing = 0
    for at in range(0, len(values), chunk):
        part = values[at:at + chunk]
        won = part >= 128
        depth = part & 127
        wins += int(np.count_nonzero(won))
        longest_win = max(longest_win, int(depth[won].max(initial=0)))
        longest_loss = max(longest_loss, int(depth[~won].max(initial=0)))
        saturated += int(np.count_nonzero(depth == SATURATED))
        missing += int(np.count_nonzero(part == 0))
    return {"wins": wins, "losses": len(values) - wins, "longest_win": longest_win,
            "longest_loss": longest_loss, "saturated": saturated, "missing": missing}


def writable_folder(folder) -> None:
    """Create the tables folder if needed; TableError (one line) if it cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TableError(f"cannot create the tables folder {folder}: {e.strerror}") from None
    if not os.access(folder, os.W_OK):
        raise TableError(f"the tables folder {folder} is not writable")


def seal_table(folder, name: str, tmp: Path, header: dict) -> None:
    """Put the payload written at `tmp` (a .npy file) in place, then its header with the
    payload's sha256 and the header's own digest (each through a temporary file renamed
    into place, so a reader never sees half a table)."""
    payload = folder / f"{name}.npy"
    header["payload"] = payload.name
    header["payload_sha256"] = sha256_of(tmp)
    header["payload_bytes"] = tmp.stat().st_size
    header["sha256"] = header_digest(header)
    os.replace(tmp, payload)
    tmp_h = folder / f".{name}.json.tmp"
    tmp_h.write_text(header_text(header))
    os.replace(tmp_h, folder / f"{name}.json")
    _LOADED.pop(str(folder / f"{name}.json"), None)
    _VERIFIED.discard(str(folder / f"{name}.json"))


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("niwa")
    except Exception:    # pragma: no cover - not installed
        return "unknown"


def sha256_of(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def header_text(header: dict) -> str:
    """The one text a header is written as (a header read back must equal it)."""
    return json.dumps(header, indent=2) + "\n"


def header_digest(header: dict) -> str:
    """sha256 of every header field but `sha256` itself (payload_sha256 included)."""
    fields = {k: v for k, v in header.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


# the fields read from a header, and their types (checked before any is used)
HEADER_FIELDS = {"format": str, "format_version": int, "game": str, "variant": dict,
                 "stones": int, "index": dict, "positions": int, "counts": dict,
                 "payload": str, "payload_bytes": int, "payload_sha256": str, "sha256": str,
                 "build": dict}
MAX_STONES = 10             # the largest k `niwa tables build --stones` takes
HEADER_LIMIT = 1 << 20      # bytes: a header is a few hundred; anything larger is not one


# ---- loading ---------------------------------------------------------------------------
def read_header(path) -> dict:
    """A table's header (NAME.json), checked for format, version, its own digest, its
    fields and where its payload is (NAME.npy beside it; neither file a symbolic link);
    TableError (one line naming the file) if not."""
    path = Path(path)
    rebuild = "rebuild it with niwa tables build ... --force"
    try:
        linked_elsewhere(path)
        if not path.is_file():
            raise TableError(f"{path} is not a regular file")
        if path.stat().st_size > HEADER_LIMIT:
            raise TableError(f"{path} is too large to be a table header")
        text = path.read_text(encoding="utf-8")
        header = json.loads(text)
    except OSError as e:
        raise TableError(f"cannot read {path}: {e.strerror}") from None
    except ValueError as e:     # bad UTF-8 or bad JSON
        raise TableError(f"{path} is not a table header ({e}); {rebuild}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TableError(f"{path} is not a niwa endgame table header")
    if header.get("format_version") != FORMAT_VERSION:
        raise TableError(f"{path}: format version {header.get('format_version')!r}; this niwa "
                         f"reads version {FORMAT_VERSION} (its header carries its own digest): "
                         f"{rebuild}")
    if text != header_text(header) or header.get("sha256") != header_digest(header):
        raise TableError(f"{path}: the header fails its checksum: the file is damaged or "
                         f"was edited; {rebuild}")
    for key, kind in HEADER_FIELDS.items():
        if not isinstance(header.get(key), kind) or isinstance(header.get(key), bool):
            raise TableError(f"{path}: header field {key!r} is missing or not a "
                             f"{kind.__name__}; {rebuild}")
    if header["game"] not in GAMES:
        raise TableError(f"{path}: a table of {header['game'][:40]!r}; endgame tables exist "
                         f"for {', '.join(GAMES)} only; {rebuild}")
    if not 1 <= header["stones"] <= MAX_STONES or header["positions"] < 1 or \
            header["payload_bytes"] < 1:
        raise TableError(f"{path}: stones {header['stones']}, {header['positions']} positions, "
                         f"{header['payload_bytes']} bytes: not a table's; {rebuild}")
    if header["payload"] != f"{path.stem}.npy":
        # a header names only its own values file, beside it: never a path elsewhere
        raise TableError(f"{path}: its payload must be {path.stem}.npy in the same folder, "
                         f"not {header['payload']!r}")
    linked_elsewhere(path.parent / header["payload"])
    index = header["index"]
    if index.get("scheme") != INDEX_SCHEME or index.get("version") != INDEX_VERSION:
        raise TableError(f"{path}: index {index.get('scheme')} v{index.get('version')}; this "
                         f"niwa uses {INDEX_SCHEME} v{INDEX_VERSION} (rebuild the table)")
    return header


def linked_elsewhere(path: Path) -> None:
    """TableError if `path` is a symbolic link: a table is the regular files of its folder
    (header and values alike), never a link to a file elsewhere that can change or vanish
    behind the header's back. (The folder itself may be a link.)"""
    if path.is_symlink():
        try:
            target = f" to {os.readlink(path)}"
        except OSError:
            target = ""
        raise TableError(f"{path} is a symbolic link{target}: a table's files must be "
                         f"regular files in the tables folder; copy the file there, or point "
                         f"--dir or NIWA_TABLES at the folder that holds it")


def payload_path(header_path, header: dict) -> Path:
    """The values file of a header read by read_header (beside it, named after it)."""
    return Path(header_path).parent / header["payload"]


def payload_check(header_path, header: dict) -> str:
    """'ok', 'missing' or 'FAILED' (size or sha256 differ, not a regular file, or the
    header's variant and stones do not index its number of positions)."""
    payload = payload_path(header_path, header)
    if not payload.exists():
        return "missing"
    try:
        if make_index(header["variant"], header["stones"]).size != header["positions"]:
            return "FAILED"
    except (TableError, TypeError, ValueError, KeyError, OverflowError):
        return "FAILED"
    if payload.is_symlink() or not payload.is_file() or \
            payload.stat().st_size != header["payload_bytes"]:
        return "FAILED"
    return "ok" if sha256_of(payload) == header["payload_sha256"] else "FAILED"


def _verify_checksum(payload: Path, header: dict) -> None:
    """Raise TableError unless the values file's sha256 is the one its header gives."""
    digest = sha256_of(payload)
    if digest != header["payload_sha256"]:
        raise TableError(f"{payload} fails its checksum (sha256 {digest[:12]}..., header "
                         f"says {header['payload_sha256'][:12]}...): the file is damaged; "
                         f"rebuild it with niwa tables build ... --force")


def load_table(header_path, verify=True):
    """The table whose header is `header_path`: a LotusTableIndex with its values attached
    (memory-mapped). `verify`: check the payload's sha256 against the header first."""
    import numpy as np

    header_path = Path(header_path)
    header = read_header(header_path)
    payload = payload_path(header_path, header)
    if not payload.exists():
        raise TableError(f"{header_path}: its values file {payload.name} is missing")
    if not payload.is_file():     # (read_header refused a link)
        raise TableError(f"{payload}: not a regular file")
    if payload.stat().st_size != header["payload_bytes"]:
        raise TableError(f"{payload}: {payload.stat().st_size:,} bytes, its header says "
                         f"{header['payload_bytes']:,}: the file is damaged; rebuild it with "
                         f"niwa tables build ... --force")
    if verify:
        _verify_checksum(payload, header)
    try:
        index = make_index(header["variant"], header["stones"])
    except (TypeError, ValueError, KeyError, OverflowError) as e:
        raise TableError(f"{header_path}: not a table of a Lotus variant ({e})") from None
    try:
        values = np.load(payload, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as e:
        raise TableError(f"{payload}: not a numpy array file ({file_error_reason(e)})") from None
    if values.dtype != np.uint8 or values.ndim != 1 or values.shape[0] != index.size:
        raise TableError(f"{payload}: {values.dtype} array of shape {values.shape}; the index "
                         f"expects {index.size:,} uint8 values")
    index.attach(values)
    return index


def list_tables(directory=None) -> list[tuple[Path, dict | None, str | None]]:
    """Every table header in the folder: (path, header or None, problem or None)."""
    folder = tables_dir(directory)
    out = []
    try:
        if not folder.is_dir():
            return out
        paths = sorted(folder.glob("*.json"))
    except OSError as e:        # a name too long, a folder we may not read...
        raise TableError(f"cannot read the tables folder {folder}: "
                         f"{e.strerror or type(e).__name__}") from None
    for path in paths:
        try:
            out.append((path, read_header(path), None))
        except TableError as e:
            out.append((path, None, str(e)))
    try:        # values without their header: a table whose header was lost
        orphans = sorted(p for p in folder.glob("*.npy") if not p.with_suffix(".json").exists())
    except OSError:
        orphans = []
    for payload in orphans:
        header = payload.with_suffix(".json")
        out.append((header, None, f"{payload} has no header {header.name} beside it: the "
                                  f"table is incomplete; rebuild it with niwa tables build "
                                  f"... --force, or delete {payload.name}"))
    return out


_LOADED: dict[str, object] = {}     # header path -> loaded table (this process)
_VERIFIED: set[str] = set()         # header paths of loaded tables whose checksum passed
_LISTED: dict[str, tuple] = {}      # folder -> (its mtime, list_tables of it)


def _listing(directory):
    """list_tables, kept per folder until the folder changes (a table added or removed)."""
    folder = tables_dir(directory)
    try:
        stamp = folder.stat().st_mtime_ns
    except OSError:
        return []
    cached = _LISTED.get(str(folder))
    if cached is None or cached[0] != stamp:
        cached = _LISTED[str(folder)] = (stamp, list_tables(folder))
    return cached[1]


def find_table(state, directory=None, verify=True):
    """The loaded table (largest k) for `state`'s game and variant in the folder, or None
    when there is none. Loaded on first use and kept for the process (lazily: nothing is
    read before a position of that variant asks). `verify=False`: skip the payload's
    checksum (7-10 s for the full game's k = 5), for a caller that takes the values as
    hints only; a later call that asks for it still verifies the table once."""
    if getattr(state, "game_name", None) not in GAMES or state.num_players != 2:
        return None
    from niwa.ext.lotus_tables import same_variant

    variant = state.variant
    best = None
    for path, header, problem in _listing(directory):
        if problem is not None:
            _warn_once(path, problem)
        if header is None or header.get("game") != state.game_name:
            continue
        if same_variant(header["variant"], variant) and \
                (best is None or header["stones"] > best[1]["stones"]):
            best = (path, header)
    if best is None:
        return None
    key = str(best[0])
    table = _LOADED.get(key)
    if table is None:
        table = _LOADED[key] = load_table(best[0], verify=verify)
        if verify:
            _VERIFIED.add(key)
    elif verify and key not in _VERIFIED:     # (loaded unverified before)
        _verify_checksum(payload_path(*best), best[1])
        _VERIFIED.add(key)
    return table


class TableWarning(UserWarning):
    """A table in the folder is damaged or unreadable and is not used."""


_WARNED: set[str] = set()


def _warn_once(path, problem: str) -> None:
    if str(path) not in _WARNED:
        _WARNED.add(str(path))
        warnings.warn(f"endgame table skipped: {problem}", TableWarning, stacklevel=3)


def resolve_tables(state, tables="auto"):
    """What a searcher should consult for `state`: `tables` may be "auto" (the default
    folder), a folder, a loaded table, or None (none)."""
    if tables is None or tables is False:
        return None
    if isinstance(tables, str | Path):
        return find_table(state, None if tables == "auto" else tables)
    return tables


# ---- answering -------------------------------------------------------------------------
def table_value(table, state):
    """(value for the mover 1.0/0.0, plies to the end) or None outside the table."""
    b = table.probe(state)
    if b <= 0:
        return None
    return (1.0 if b & 128 else 0.0), b & 127


def solve_from_table(state, table):
    """The SearchResult of a position inside `table`: its value, every move's value, and
    the principal variation to the end (the winner takes the fastest win, the loser the
    slowest loss), all read from the table."""
    from niwa.solver.results import ActionStat, SearchResult

    t0 = time.perf_counter()
    root = table_value(table, state)
    if root is None:
        raise TableError("the position is outside the table")
    mover = state.current_player()
    probes = 1
    actions = []
    for a, code in table.successors(state):
        probes += 1
        value, _ = _move_outcome(code)
        actions.append(ActionStat(a, state.action_to_string(a), value, proven=True))
    pv, cur = [], state.clone()
    best = None
    while not cur.is_terminal():
        choice = _table_move(table, cur)
        probes += len(cur.legal_actions())
        if best is None:
            best = choice
        pv.append(cur.action_to_string(choice))
        cur.apply(choice)
    elapsed = time.perf_counter() - t0
    return SearchResult(
        algo="tables", value=root[0], player=mover, proven=True, best=best,
        best_name=pv[0] if pv else None, actions=actions, pv=pv, depth=len(pv), nodes=probes,
        time_s=elapsed, nps=probes / elapsed if elapsed > 0 else 0.0,
        status=f"endgame table k={table.k}: {'win' if root[0] else 'loss'} in {root[1]}"
               f"{' or more' if root[1] >= SATURATED else ''} plies")


def table_move_values(table, state):
    """Every legal move of `state` (inside the table): (name, value for the mover, plies to
    the end counting the move), best first."""
    out = []
    for a, code in table.successors(state):
        value, plies = _move_outcome(code)
        out.append((state.action_to_string(a), value, plies))
    out.sort(key=lambda t: (-t[1], t[2] if t[1] else -t[2]))
    return out


def _move_outcome(code):
    """(value for the mover, plies to the end after the move + 1) from successors()'s code."""
    if code == 257:
        return 1.0, 1
    if code == 256:
        return 0.0, 1
    return (0.0 if code & 128 else 1.0), (code & 127) + 1


def _table_move(table, state):
    """The move the table's value asks for: the fastest win, else the slowest loss."""
    best, best_key = None, None
    for a, code in table.successors(state):
        value, plies = _move_outcome(code)
        key = (value, -plies if value else plies)
        if best_key is None or key > best_key:
            best, best_key = a, key
    return best
