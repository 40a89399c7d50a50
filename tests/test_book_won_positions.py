"""A book's won positions (niwa.solver.book: Book.won, add_won_positions, won_move,
`niwa book add-won`): the roots of a certification's checked parts, which let `perfect`
play proven moves below the book's own plies."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from part_ledgers import PRO, pro_certification

from niwa.cli.main import main
from niwa.ext.game import Rng
from niwa.ext.lotus import LotusState
from niwa.solver.book import (
    add_won_positions,
    book_from_certificate,
    load_book,
    won_move,
)
from niwa.solver.certificate import certificate_folder
from niwa.solver.perfect import PerfectAgent
from niwa.solver.proof import ProofSearch


@pytest.fixture(scope="module")
def certified(tmp_path_factory):
    folder = tmp_path_factory.mktemp("won")
    top, parts, ledger = pro_certification(folder)
    book = book_from_certificate(top, plies=2, parts=certificate_folder(parts))
    path = folder / "book.npz"
    book.save(path)
    return path, ledger


def test_won_positions_round_trip_and_change_the_checksum(certified, tmp_path):
    path, ledger = certified
    plain = load_book(path)
    assert len(plain.won) == 0 and "won" not in plain.meta()
    won = add_won_positions(plain, ledger)
    assert len(won.won) >= 3 and np.all(won.won[1:] > won.won[:-1])
    won.save(tmp_path / "won.npz")
    again = load_book(tmp_path / "won.npz")
    assert np.array_equal(again.won, won.won) and again.meta()["won"] == len(won.won)
    assert again.sha256 != plain.sha256 and again.info["won_from"] == "ledger.jsonl"
    assert np.array_equal(again.keys, plain.keys)


def test_every_won_move_wins_and_perfect_plays_them_past_the_book(certified, tmp_path):
    """Games of the book's winner (seat 1) against random moves: each move won_move gives
    is a win by a fresh proof, and perfect takes them (status says so) past its 2 plies."""
    path, ledger = certified
    book = add_won_positions(load_book(path), ledger)
    book.save(tmp_path / "won.npz")
    search = ProofSearch(tt_mb=16)
    found = 0
    for seed in range(8):
        rng, state = Rng(seed), LotusState(**PRO)
        while not state.is_terminal():
            if state.current_player() == 1:
                move = won_move(book, state)
                if move is not None:
                    found += 1
                    assert search.prove_value(state.child(move), 1) == 1.0
            legal = state.legal_actions()
            state.apply(legal[rng.next_u64() % len(legal)])
    assert found >= 8
    agent = PerfectAgent(book=str(tmp_path / "won.npz"), tables=False, time=1.0, tt_mb=16)
    statuses = []
    for seed in range(3):
        rng, state = Rng(seed), LotusState(**PRO)
        agent.reset()
        while not state.is_terminal():
            if state.current_player() == 1:
                state.apply(agent.step(state.clone(), 1))
                statuses.append(agent.analysis().status if agent.analysis() else "forced")
            else:
                legal = state.legal_actions()
                state.apply(legal[rng.next_u64() % len(legal)])
        assert state.returns()[1] == 1.0
    assert "book (a won position within 3 plies)" in statuses


def test_no_won_move_for_the_loser_or_without_won_positions(certified):
    path, ledger = certified
    book = add_won_positions(load_book(path), ledger)
    start = LotusState(**PRO)
    assert won_move(book, start) is None                      # seat 0 to move: the loser
    assert won_move(load_book(path), start.child(start.legal_actions()[0])) is None


def test_add_won_from_the_cli_and_a_ledger_of_another_variant(certified, tmp_path):
    path, ledger = certified
    runner = CliRunner()
    out = tmp_path / "won.npz"
    result = runner.invoke(main, ["book", "add-won", str(path), "--ledger", str(ledger),
                                  "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["won"] == len(load_book(out).won)
    info = runner.invoke(main, ["book", "info", str(out)])
    assert "  won       " in info.output and "checksum ok" in info.output
    other = tmp_path / "other.jsonl"
    other.write_text(ledger.read_text().replace('"towers": 2', '"towers": 3'))
    refused = runner.invoke(main, ["book", "add-won", str(path), "--ledger", str(other),
                                   "-o", str(tmp_path / "x.npz")])
    assert refused.exit_code == 2 and "not the book's lotus" in refused.output


def test_niwa_solve_knows_the_won_positions_of_a_book(certified, tmp_path, monkeypatch):
    """A part root of the ledger outside the book's own plies is answered from the book at
    once: won for its mover (seat 1, the winner), the move given when one reaches a won
    position or end within 3 plies and proven by a fresh search."""
    from niwa.ext.registry import parse_position
    from niwa.solver.book import book_name
    from niwa.solver.certificate import ledger_parts, load_certificate
    from niwa.solver.known import known_result

    path, ledger = certified
    top = load_certificate(path.parent / "top.npz")
    book = add_won_positions(book_from_certificate(top, plies=1, parts=certificate_folder(
        path.parent / "parts")), ledger)
    assert book.entries == 0        # (one ply: only the loser's start)
    book.save(tmp_path / book_name("lotus", PRO))
    monkeypatch.setenv("NIWA_BOOKS", str(tmp_path))
    roots = [parse_position(p.root) for p in ledger_parts(ledger)]
    roots = [s for s in roots if s.current_player() == 1]
    assert roots
    for root in roots:
        answer = known_result(root, folders=[])
        assert answer.value == 1.0 and "won position" in answer.status
        if answer.best is not None:
            assert ProofSearch(tt_mb=16).prove_value(root.child(answer.best), 1) == 1.0
    plain = tmp_path / "plain"
    plain.mkdir()
    book_from_certificate(top, plies=1).save(plain / book_name("lotus", PRO))
    monkeypatch.setenv("NIWA_BOOKS", str(plain))
    assert known_result(roots[0], folders=[]) is None       # without won positions
