"""Opening books read off df-pn proofs (solver/book.py), `niwa book`, and `perfect` playing
from one."""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np
import pytest
from click.testing import CliRunner

from niwa.analysis.arena.game_loop import play
from niwa.cli.main import main
from niwa.ext.game import Rng
from niwa.ext.lotus import LotusState
from niwa.solver.agents import AgentError, make_agent
from niwa.solver.book import (
    Book,
    BookError,
    book_name,
    build_book,
    find_book,
    load_book,
    verify_book,
)
from niwa.solver.proof import ProofSearch

SMALL = dict(towers=3, trampoline="mandatory")     # a 0.3M-node proof, Black (seat 1) wins


@pytest.fixture(scope="module")
def small_book():
    return build_book("lotus", SMALL, plies=6, tt_mb=64, progress=False)


def book_positions(book):
    """Every winner's position of the book's tree (the loser's every move, the book's
    move for the winner), with the book's move there."""
    out, stack, seen = [], [(LotusState(**book.variant), book.plies)], set()
    while stack:
        s, left = stack.pop()
        if left <= 0 or s.is_terminal() or s.hash() in seen:
            continue
        seen.add(s.hash())
        legal = s.legal_actions()
        if s.current_player() == book.winner:
            a = book.lookup(s) if len(legal) > 1 else legal[0]
            out.append((s, a))
            stack.append((s.child(a), left - 1))
        else:
            stack.extend((s.child(a), left - 1) for a in legal)
    return out


def test_every_book_move_is_legal_and_proven_winning_by_a_fresh_search(small_book):
    assert small_book.winner == 1 and small_book.plies == 6
    positions = book_positions(small_book)
    assert len(positions) > 20 and small_book.entries > 20
    fresh = ProofSearch(tt_mb=64)
    for s, a in positions:
        assert a is not None and a in s.legal_actions(), s.to_notation()
        assert fresh.prove_value(s.child(a), small_book.winner) == 1, s.to_notation()
    assert verify_book(small_book, tt_mb=64) == len(positions)


def test_verify_book_finds_a_losing_move():
    book = build_book("lotus", dict(towers=2), plies=4, tt_mb=16, progress=False)
    assert verify_book(book, tt_mb=16) > 0
    # a book position where another move loses: the book with that move fails to verify
    search = ProofSearch(tt_mb=16)
    for s, a in book_positions(book):
        losing = [b for b in s.legal_actions()
                  if b != a and search.prove_value(s.child(b), book.winner) == 0]
        if losing:
            break
    assert losing
    i = int(np.searchsorted(book.keys, np.uint64(s.hash())))
    actions = book.actions.copy()
    actions[i] = losing[0]
    bad = Book(book.game, book.variant, book.plies, book.winner, book.keys, actions)
    with pytest.raises(BookError, match="does not win"):
        verify_book(bad, tt_mb=16)


def test_the_book_round_trips_and_a_damaged_one_fails_clearly(small_book, tmp_path):
    path = small_book.save(tmp_path / "b.npz")
    again = load_book(path)
    assert np.array_equal(again.keys, small_book.keys)
    assert np.array_equal(again.actions, small_book.actions)
    assert again.variant == small_book.variant and again.winner == 1
    s = LotusState(**SMALL)
    s.apply(s.legal_actions()[0])
    assert again.lookup(s) == small_book.lookup(s) is not None
    # an edited move, same metadata: the checksum no longer matches
    with np.load(path) as z:
        keys, actions, meta = z["keys"], z["actions"].copy(), z["meta"]
    actions[0] += 1
    np.savez(tmp_path / "bad.npz", keys=keys, actions=actions, meta=meta)
    # (rewritten without the file's own digest: refused for that; with a stale digest
    # copied over: refused by the file checksum; as niwa-book-1: by the inner checksum)
    with pytest.raises(BookError, match="no file checksum"):
        load_book(tmp_path / "bad.npz")
    stale = (tmp_path / "bad.npz").read_bytes()[:-2] + path.read_bytes()[-78:]
    (tmp_path / "stale.npz").write_bytes(stale)
    with pytest.raises(BookError, match="file checksum mismatch"):
        load_book(tmp_path / "stale.npz")
    # resealed with a valid file digest (a careful forger): the inner checksum still fails
    data = (tmp_path / "bad.npz").read_bytes()
    data = data[:-2] + struct.pack("<H", 76)
    (tmp_path / "sealed.npz").write_bytes(data + b"niwa-sha256:" +
                                          hashlib.sha256(data).hexdigest().encode())
    with pytest.raises(BookError, match=r"npz: checksum mismatch"):
        load_book(tmp_path / "sealed.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a book")
    with pytest.raises(BookError, match="not a book"):
        load_book(tmp_path / "junk.npz")
    # sealed text: numpy takes it for a pickle; the message does not pass its advice on
    junk = b"not a book" + struct.pack("<H", 76)
    (tmp_path / "sealed-junk.npz").write_bytes(junk + b"niwa-sha256:" +
                                               hashlib.sha256(junk).hexdigest().encode())
    with pytest.raises(BookError, match=r"not a readable book \(not a numpy") as e:
        load_book(tmp_path / "sealed-junk.npz")
    assert "pickle" not in str(e.value)


def test_a_book_with_parts_this_niwa_does_not_know_says_it_is_newer(small_book, tmp_path):
    # a later format may add an array (as `won` was added): an older reader must say so,
    # not call the book damaged because its checksum leaves the new array out
    from niwa.solver.book import sealed_archive

    path = small_book.save(tmp_path / "b.npz")
    with np.load(path) as z:
        arrays = {name: z[name] for name in z.files}
    (tmp_path / "newer.npz").write_bytes(sealed_archive(**arrays, lines=np.zeros(3)))
    with pytest.raises(BookError, match=r"holds parts this niwa does not know \(lines\): "
                                        r"it was written by a newer niwa"):
        load_book(tmp_path / "newer.npz")
    (tmp_path / "same.npz").write_bytes(sealed_archive(**arrays))
    assert load_book(tmp_path / "same.npz").sha256 == small_book.sha256


def test_books_are_found_under_niwa_books(small_book, tmp_path, monkeypatch):
    monkeypatch.setenv("NIWA_BOOKS", str(tmp_path))
    assert find_book("lotus", SMALL) is None
    small_book.save(tmp_path / book_name("lotus", SMALL))
    # another spelling of the same variant finds the same book
    spelled = dict(SMALL, rule="basic", lane="3")
    assert find_book("lotus", spelled) == tmp_path / book_name("lotus", SMALL)
    assert find_book("lotus", dict(towers=3)) is None


def test_a_book_linked_into_the_books_folder_is_refused(small_book, tmp_path, monkeypatch):
    """The books folder holds its books: a link there to a file elsewhere is refused, by
    name (niwa book info), or skipped where books are looked up on their own (the search
    proves afresh); a book named by its path may still be a link (the user chose it)."""
    folder, elsewhere = tmp_path / "books", tmp_path / "elsewhere.npz"
    folder.mkdir()
    small_book.save(elsewhere)
    (folder / book_name("lotus", SMALL)).symlink_to(elsewhere)
    monkeypatch.setenv("NIWA_BOOKS", str(folder))
    with pytest.raises(BookError, match="symbolic link"):
        find_book("lotus", SMALL)
    words = [f"{k}={v}" for k, v in SMALL.items()]
    r = CliRunner().invoke(main, ["book", "info", "lotus", *[a for w in words
                                                             for a in ("-v", w)]])
    errors = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.exit_code == 2 and len(errors) == 1 and "symbolic link" in errors[0], r.output
    assert str(folder / book_name("lotus", SMALL)) in errors[0]
    r = CliRunner().invoke(main, ["solve", f"lotus {' '.join(words)}", "--json",
                                  "--time", "0.2"])
    assert r.exit_code == 0 and json.loads(r.stdout)["source"] != "book", r.output
    r = CliRunner().invoke(main, ["book", "info", str(folder / book_name("lotus", SMALL))])
    assert r.exit_code == 0, r.output


def play_as(seat, perfect, opponent_spec, games, variant):
    results, sources = [], []
    for g in range(games):
        opponent = make_agent(opponent_spec, seed=100 + g)
        agents = [opponent, perfect] if seat == 1 else [perfect, opponent]
        for agent in agents:
            agent.reset()
        r = play(LotusState(**variant), agents, chance_rng=Rng(g))
        results.append(r.results[seat])
        sources.append(dict(perfect.sources))
    return results, sources


@pytest.mark.parametrize("opponent", ["random", "mcts:iters=100"])
def test_perfect_with_a_book_wins_every_game_as_the_winner(small_book, tmp_path, opponent):
    path = small_book.save(tmp_path / "b.npz")
    perfect = make_agent(f"perfect:time=2,tt_mb=64,book={path}", seed=1)
    results, sources = play_as(1, perfect, opponent, 12, SMALL)
    assert results == [1.0] * 12
    assert all(s.get("book", 0) >= 2 for s in sources), sources
    assert sum(s.get("fallback", 0) + s.get("lean", 0) for s in sources) == 0


def test_perfect_says_a_move_came_from_its_book(small_book, tmp_path):
    path = small_book.save(tmp_path / "b.npz")
    perfect = make_agent(f"perfect:time=1,tt_mb=16,book={path}", seed=1)
    s = LotusState(**SMALL)
    s.apply(s.legal_actions()[0])
    a = perfect.step(s, 1)
    assert a == small_book.lookup(s)
    assert perfect.analysis().algo == "book" and perfect.analysis().proven


def test_perfect_refuses_a_book_of_another_variant(small_book, tmp_path):
    path = small_book.save(tmp_path / "b.npz")
    perfect = make_agent(f"perfect:time=1,tt_mb=16,book={path}", seed=1)
    s = LotusState(towers=2)
    with pytest.raises(AgentError, match="not this game's variant"):
        perfect.step(s, 0)
    with pytest.raises(AgentError, match="no book"):
        make_agent(f"perfect:book={tmp_path / 'none.npz'}").step(s, 0)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_builds_checks_and_rejects_books(tmp_path):
    out = tmp_path / "t2.npz"
    r = run("book", "build", "lotus", "-v", "towers=2", "--plies", "4", "--tt-mb", "16",
            "--out", out, "--no-progress")
    assert r.exit_code == 0, r.output
    meta = json.loads(r.stdout.splitlines()[-1])
    assert meta["winner"] == 1 and meta["entries"] > 0 and out.is_file()
    r = run("book", "info", out, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["sha256"] == meta["sha256"]
    r = run("book", "info", out)
    assert r.exit_code == 0 and f"sha256    {meta['sha256']} (checksum ok)" in r.stdout
    assert "  game      lotus" in r.stdout and "  winner    seat 1" in r.stdout
    out.write_bytes(out.read_bytes()[:-20])
    r = run("book", "info", out)
    assert r.exit_code == 2 and "Traceback" not in r.output and "book" in r.output
    r = run("book", "build", "lotus", "--plies", "0")
    assert r.exit_code == 2
    r = run("book", "info", "nogame")
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("variant,tt_mb", [({"trampoline": "mandatory"}, 2048), ({}, 8192)],
                         ids=["basic-mandatory", "basic-optional"])
def test_the_shipped_full_lotus_books_verify(variant, tt_mb):
    # every move of a book shipped for full Lotus proved again from an empty table: about
    # the cost of the whole-game proof (mandatory: ~2 minutes and 2 GB; optional: ~10
    # minutes and 8 GB)
    from niwa.solver.book import PACKAGE_BOOKS

    book = load_book(PACKAGE_BOOKS / book_name("lotus", variant))
    assert book.winner == 1 and book.variant == book.variant | {"towers": 4}
    assert verify_book(book, tt_mb=tt_mb, progress=True) >= book.entries


def test_the_shipped_pro_mandatory_book_is_read_off_its_certificate():
    """Full pro/mandatory has no whole-game proof in one table to verify its book against:
    the shipped book is the book of its checked certificate (the top's, merged with the
    pieces of book each part left as it was checked), rebuilt here from the repository;
    and along every line of the loser's replies for its 8 plies it has a legal move. Its
    won positions are the roots of the parts in the certification's check ledger."""
    from pathlib import Path

    from niwa.solver.book import (
        PACKAGE_BOOKS,
        add_won_positions,
        book_from_certificate,
        merge_books,
    )
    from niwa.solver.certificate import load_certificate

    variant = {"rule": "pro", "trampoline": "mandatory"}
    shipped = load_book(PACKAGE_BOOKS / book_name("lotus", variant))
    home = Path(__file__).resolve().parents[1] / "bench/perfect-play/pro-rule/certification"
    cert = load_certificate(home / "lotus-towers4-pro-mandatory.npz")
    pieces = [load_book(p) for p in sorted((home / "pro-mandatory-ledger-book-pieces").glob(
        "*.npz"))]
    again = merge_books([book_from_certificate(cert, plies=8, missing_parts=True), *pieces])
    assert shipped.winner == cert.winner == 1 and shipped.plies == 8
    assert np.array_equal(again.keys, shipped.keys)
    assert np.array_equal(again.actions, shipped.actions)
    # its won positions: the roots of the parts its ledger holds checked (add_won_positions)
    again = add_won_positions(again, home / "pro-mandatory-ledger.jsonl")
    assert len(shipped.won) > 80_000 and np.array_equal(again.won, shipped.won)
    stack, seen, played = [(LotusState(**variant), 0)], set(), 0
    while stack:
        s, ply = stack.pop()
        if ply >= shipped.plies or s.is_terminal() or s.hash() in seen:
            continue
        seen.add(s.hash())
        moves = s.legal_actions()
        if s.current_player() == shipped.winner:
            assert shipped.lookup(s) in moves, s.to_notation()
            moves, played = [shipped.lookup(s)], played + 1
        for action in moves:
            child = s.clone()
            child.apply(action)
            stack.append((child, ply + 1))
    assert played > 400


# ---- books of certificates (a proof too long for one table gives its book this way) ----
PRO_CERT = "bench/perfect-play/certificates/lotus-towers3-pro-mandatory.npz"


@pytest.fixture(scope="module")
def pro_certificate():
    from pathlib import Path

    from niwa.solver.certificate import load_certificate

    return load_certificate(Path(__file__).resolve().parents[1] / PRO_CERT)


def test_a_certificates_book_holds_its_winner_moves_and_they_verify(pro_certificate):
    from niwa.solver.book import book_from_certificate

    book = book_from_certificate(pro_certificate, plies=5)
    assert book.winner == pro_certificate.winner and book.variant["rule"] == "pro"
    assert book.entries > 0 and book.info["certificate_sha256"] == pro_certificate.sha256
    assert verify_book(book, tt_mb=64) == book.entries      # fresh df-pn proofs
    deeper = book_from_certificate(pro_certificate, plies=5, max_nodes=2000)
    assert deeper.entries > book.entries and deeper.info["deepest"] > 5


def test_perfect_plays_the_pro_rule_from_a_certificates_book(pro_certificate, tmp_path):
    from niwa.solver.book import book_from_certificate

    book = book_from_certificate(pro_certificate, plies=6)
    path = book.save(tmp_path / "pro.npz")
    perfect = make_agent(f"perfect:time=5,tt_mb=64,book={path}", seed=1)
    s = LotusState(**book.variant)
    while s.current_player() != book.winner:        # the first stone(s) of the loser
        s.apply(s.legal_actions()[-1])
    assert perfect.step(s, book.winner) == book.lookup(s)
    assert perfect.analysis().algo == "book"


def test_a_certificate_not_from_the_start_gives_no_book(tmp_path):
    from niwa.solver.book import book_from_certificate
    from niwa.solver.certificate import extract_certificate

    s = LotusState(towers=2, lane=1, shared=3, trampoline_at=3)
    s.apply(s.legal_actions()[0])
    cert = extract_certificate(ProofSearch(tt_mb=8), s)
    with pytest.raises(BookError, match="not the start"):
        book_from_certificate(cert)
    path = cert.save(tmp_path / "c.npz")
    r = run("book", "from-certificate", path, "--out", tmp_path / "b.npz")
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "not the start" in r.output


def test_a_piece_of_book_from_any_root_and_its_mirror_merges_into_the_whole(tmp_path):
    """book_from_certificate(any_root=True) reads a book off a certificate of any position
    (a part), and mirror=True off its lane mirror; merged with the book of the top, whose
    line ended there, they give the book of the whole; books of other variants or winners
    are not merged."""
    from niwa.ext.registry import parse_position
    from niwa.solver.book import book_from_certificate, merge_books
    from niwa.solver.certificate import extract_certificate, parse_reference_position

    s = LotusState(towers=2, lane=1, shared=3, trampoline_at=3)
    s.apply(s.legal_actions()[0])
    cert = extract_certificate(ProofSearch(tt_mb=8), s)
    plain = book_from_certificate(cert, plies=6, any_root=True)
    mirrored = book_from_certificate(cert, plies=6, any_root=True, mirror=True)
    assert plain.entries == mirrored.entries > 0
    assert mirrored.info["mirror"] and mirrored.info["root"] == \
        parse_reference_position(cert.root).mirrored().to_notation()
    for book in (plain, mirrored):          # every move legal where it is stored
        root, seen = parse_position(book.info["root"]), 0
        stack = [(root, 6)]
        while stack:
            state, left = stack.pop()
            if state.is_terminal() or left == 0:
                continue
            move = book.lookup(state)
            if state.current_player() == book.winner:
                if move is None:
                    assert len(state.legal_actions()) == 1
                    move = state.legal_actions()[0]
                assert move in state.legal_actions()
                seen += 1
                stack.append((state.child(move), left - 1))
            else:
                stack.extend((state.child(a), left - 1) for a in state.legal_actions())
        assert seen >= book.entries
    merged = merge_books([plain, mirrored])
    assert merged.entries == plain.entries + mirrored.entries - \
        len(set(plain.keys.tolist()) & set(mirrored.keys.tolist()))
    other = book_from_certificate(cert, plies=3, any_root=True)
    other.variant = {**other.variant, "towers": 3}
    with pytest.raises(BookError, match="cannot be merged"):
        merge_books([plain, other])
    with pytest.raises(BookError, match="no book"):
        merge_books([])


def test_cli_writes_a_certificates_book(pro_certificate, tmp_path):
    from pathlib import Path

    cert = Path(__file__).resolve().parents[1] / PRO_CERT
    r = run("book", "from-certificate", cert, "--plies", "4", "--out", tmp_path / "b.npz")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["entries"] == load_book(tmp_path / "b.npz").entries > 0
