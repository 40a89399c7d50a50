"""Files that cannot lie: every single-byte change, bit flip or truncation of an endgame
table (header or values) and of an opening book is refused with a one-line error naming
the file, or the file is skipped; nothing damaged ever answers."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from niwa.cli.main import main
from niwa.ext.errors import NiwaError
from niwa.ext.lotus import LotusState
from niwa.solver import tables as tables_mod
from niwa.solver.book import PACKAGE_BOOKS, BookError, build_book, load_book
from niwa.solver.tables import (
    TableError,
    TableWarning,
    build_table,
    header_digest,
    header_text,
    load_table,
    read_header,
)

TINY = dict(lane=1, shared=3, trampoline_at=3, towers=2)
RELAXED = settings(max_examples=300, deadline=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture])


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def table_files(tmp_path_factory):
    """The bytes of a tiny table: (header name, header bytes, payload name, payload bytes)."""
    d = tmp_path_factory.mktemp("table")
    header = build_table(TINY, 1, d, progress=False)
    name = Path(header["payload"]).stem
    return (f"{name}.json", (d / f"{name}.json").read_bytes(), f"{name}.npy",
            (d / f"{name}.npy").read_bytes())


def _write(folder, table_files, header=None, payload=None):
    hname, hbytes, pname, pbytes = table_files
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hname).write_bytes(hbytes if header is None else header)
    (folder / pname).write_bytes(pbytes if payload is None else payload)
    tables_mod._LOADED.clear()
    tables_mod._VERIFIED.clear()
    tables_mod._LISTED.clear()
    return folder / hname


def _refused(path):
    """load_table refuses it with a one-line TableError naming the file."""
    with pytest.raises(TableError) as e:
        load_table(path)
    assert "\n" not in str(e.value) and path.stem in str(e.value)


def test_the_intact_table_loads_and_answers(tmp_path, table_files):
    path = _write(tmp_path, table_files)
    assert load_table(path).k == 1
    assert read_header(path)["sha256"] == header_digest(read_header(path))


def test_every_bit_flip_of_the_values_is_refused(tmp_path, table_files):
    payload = table_files[3]
    for i in range(len(payload)):
        for bit in range(8):
            damaged = bytearray(payload)
            damaged[i] ^= 1 << bit
            _refused(_write(tmp_path, table_files, payload=bytes(damaged)))


def test_every_truncation_of_either_file_is_refused(tmp_path, table_files):
    _, hbytes, _, pbytes = table_files
    for n in range(len(pbytes)):
        _refused(_write(tmp_path, table_files, payload=pbytes[:n]))
    for n in range(len(hbytes)):
        _refused(_write(tmp_path, table_files, header=hbytes[:n]))


def test_every_bit_flip_of_the_header_is_refused(tmp_path, table_files):
    hbytes = table_files[1]
    for i in range(len(hbytes)):
        for bit in range(8):
            damaged = bytearray(hbytes)
            damaged[i] ^= 1 << bit
            _refused(_write(tmp_path, table_files, header=bytes(damaged)))


@RELAXED
@given(where=st.floats(0, 1, exclude_max=True), byte=st.integers(0, 255),
       in_header=st.booleans())
def test_any_byte_change_is_refused(tmp_path_factory, table_files, where, byte, in_header):
    data = bytearray(table_files[1] if in_header else table_files[3])
    i = int(where * len(data))
    if data[i] == byte:
        return
    data[i] = byte
    folder = tmp_path_factory.mktemp("t")
    _refused(_write(folder, table_files, **{"header" if in_header else "payload": bytes(data)}))


def test_the_trampoline_edit_is_refused_and_never_answers(tmp_path, table_files):
    """The audit's one-byte edit ("trampoline_at": 3 -> 4) would make the table answer
    for another variant."""
    hname, hbytes, _, _ = table_files
    text = hbytes.decode().replace('"trampoline_at": 3', '"trampoline_at": 4')
    assert text != hbytes.decode()
    path = _write(tmp_path, table_files, header=text.encode())
    _refused(path)
    r = run("tables", "info", "--dir", tmp_path)
    assert r.exit_code == 2 and "checksum ok" not in r.output and "Traceback" not in r.output
    position = LotusState(**{**TINY, "trampoline_at": 4}).to_notation()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = run("solve", position, "--tables", tmp_path, "--time", 2)
    assert r.exit_code == 0 and "source tables" not in r.output
    assert any(issubclass(w.category, TableWarning) for w in caught)


def _resealed(hbytes, **changes):
    """A header edited and given a matching digest (what a careful forger would do)."""
    header = json.loads(hbytes)
    header.update(changes)
    header["sha256"] = header_digest(header)
    return header_text(header).encode()


@pytest.mark.parametrize("payload", ["/dev/zero", "../elsewhere.npy", "other.npy"])
def test_a_header_cannot_point_outside_its_own_file(tmp_path, table_files, payload):
    path = _write(tmp_path, table_files, header=_resealed(table_files[1], payload=payload))
    _refused(path)
    r = run("tables", "info", "--dir", tmp_path)
    assert r.exit_code == 2 and "payload" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("field", ["variant", "stones", "payload_sha256", "index", "build"])
def test_a_resealed_header_without_a_field_is_refused_not_a_traceback(tmp_path, table_files,
                                                                       field):
    header = json.loads(table_files[1])
    del header[field]
    header["sha256"] = header_digest(header)
    path = _write(tmp_path, table_files, header=header_text(header).encode())
    _refused(path)
    r = run("solve", LotusState(**TINY).to_notation(), "--tables", tmp_path, "--time", 1)
    assert "Traceback" not in r.output and "KeyError" not in r.output


def test_a_version_1_table_is_refused_with_how_to_rebuild(tmp_path, table_files):
    header = json.loads(table_files[1])
    header["format_version"] = 1
    path = _write(tmp_path, table_files, header=header_text(header).encode())
    with pytest.raises(TableError, match="format version 1.*niwa tables build"):
        load_table(path)


# ---- books -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def book_bytes(tmp_path_factory):
    path = tmp_path_factory.mktemp("book") / "b.npz"
    build_book("lotus", TINY, plies=2, tt_mb=8, progress=False).save(path)
    return path.read_bytes()


def _book_refused(folder, data):
    path = folder / "b.npz"
    path.write_bytes(data)
    try:
        load_book(path)
    except BookError as e:
        assert "\n" not in str(e) and str(path) in str(e)
        return True
    return False


@RELAXED
@given(where=st.floats(0, 1, exclude_max=True), bit=st.integers(0, 7))
def test_a_bit_flip_of_a_book_is_refused(tmp_path_factory, book_bytes, where, bit):
    data = bytearray(book_bytes)
    data[int(where * len(data))] ^= 1 << bit
    assert _book_refused(tmp_path_factory.mktemp("b"), bytes(data))


@RELAXED
@given(where=st.floats(0, 1, exclude_max=True), byte=st.integers(0, 255))
def test_a_byte_change_of_a_book_is_refused(tmp_path_factory, book_bytes, where, byte):
    data = bytearray(book_bytes)
    i = int(where * len(data))
    if data[i] == byte:
        return
    data[i] = byte
    assert _book_refused(tmp_path_factory.mktemp("b"), bytes(data))


def test_every_truncation_of_a_book_is_refused(tmp_path, book_bytes):
    for n in range(len(book_bytes)):
        assert _book_refused(tmp_path, book_bytes[:n])


def test_the_shipped_books_still_load():
    shipped = sorted(PACKAGE_BOOKS.glob("*.npz"))
    assert shipped
    for path in shipped:
        assert load_book(path).entries > 0


def test_perfect_skips_a_damaged_book_it_finds_and_refuses_one_it_is_given(
        tmp_path, book_bytes, monkeypatch, capsys):
    from niwa.solver import exact_moves
    from niwa.solver.agents import AgentError, make_agent
    from niwa.solver.book import book_name

    data = bytearray(book_bytes)
    data[len(data) // 2] ^= 0x10
    monkeypatch.setenv("NIWA_BOOKS", str(tmp_path))
    (tmp_path / book_name("lotus", TINY)).write_bytes(bytes(data))
    monkeypatch.setattr(exact_moves, "_BOOKS", {})
    agent = make_agent("perfect:time=1,tt_mb=8", seed=1)
    s = LotusState(**TINY)
    assert agent.step(s, s.current_player()) in s.legal_actions()
    assert "is skipped" in capsys.readouterr().err
    with pytest.raises((AgentError, NiwaError)):
        make_agent(f"perfect:book={tmp_path / book_name('lotus', TINY)}", seed=1)


def test_an_old_format_book_is_refused_with_how_to_convert_and_upgrade_keeps_its_moves(
        tmp_path, book_bytes):
    from niwa.solver.book import _checksum

    (tmp_path / "new.npz").write_bytes(book_bytes)
    book = load_book(tmp_path / "new.npz")
    meta = {**book.meta(), "format": "niwa-book-1"}
    meta["sha256"] = _checksum(book.keys, book.actions, meta)
    old = tmp_path / "old.npz"
    with old.open("wb") as f:       # exactly how niwa-book-1 files were written
        np.savez_compressed(f, keys=book.keys, actions=book.actions,
                            meta=np.array(json.dumps(meta, sort_keys=True)))
    with pytest.raises(BookError, match="niwa book upgrade"):
        load_book(old)
    r = run("book", "upgrade", old, "--out", tmp_path / "up.npz")
    assert r.exit_code == 0, r.output
    again = load_book(tmp_path / "up.npz")
    assert np.array_equal(again.keys, book.keys) and np.array_equal(again.actions, book.actions)
    assert again.meta()["format"] == "niwa-book-2"
    # an old file whose checksum fails is not upgraded
    damaged = bytearray(old.read_bytes())
    damaged[len(damaged) // 3] ^= 4
    old.write_bytes(bytes(damaged))
    r = run("book", "upgrade", old, "--out", tmp_path / "up2.npz")
    assert r.exit_code == 2 and not (tmp_path / "up2.npz").exists()
