"""Exact moves (solver/exact_moves.py) shared by `perfect` and MCTS: MCTS's book=, proof=
and tables= options, their time budget, and their errors. No endgame tables here
(conftest points NIWA_TABLES at an empty folder)."""

import time

import pytest

from niwa.analysis.arena.game_loop import play
from niwa.ext.game import Rng
from niwa.ext.lotus import LotusState
from niwa.ext.registry import get_game
from niwa.solver.agents import AgentError, best_spec, make_agent, parse_spec
from niwa.solver.book import PACKAGE_BOOKS, book_name, load_book
from niwa.solver.exact_moves import ExactMoves
from niwa.solver.proof import ProofSearch

TINY = dict(towers=1, lane=1, shared=3, trampoline_at=3)


def positions(variant, count, seed):
    """`count` positions of a game of random moves (the mover has a choice in each)."""
    import random

    rng, s, out = random.Random(seed), LotusState(**variant), []
    while not s.is_terminal() and len(out) < count:
        if len(s.legal_actions()) > 1:
            out.append(s.clone())
        s.apply(rng.choice(s.legal_actions()))
    return out


def proven_winning(state, move) -> bool:
    """Whether `move` wins for the mover, by a proof of its own (a fresh table)."""
    child = state.clone()
    child.apply(move)
    if child.is_terminal():
        return child.returns()[state.current_player()] == 1.0
    r = ProofSearch(tt_mb=16).solve(child, time_limit=20, root_values=False, pv=False)
    return r.proven and r.value == 0.0      # the opponent, to move, is lost


def test_perfect_plays_the_exact_helpers_moves():
    """PerfectAgent asks ExactMoves (no copied logic): on the positions of a towers=2
    game its moves are the helper's proven moves, and the winning ones really win."""
    perfect = make_agent("perfect:time=2,tt_mb=32,book=none,tables=false", seed=0)
    exact = ExactMoves("test", tt_mb=32)
    wins = 0
    for s in positions(dict(towers=2), 10, seed=3):
        move = perfect.step(s, s.current_player())
        r = exact.proof_move(s, time_limit=2.0)
        assert r.proven and perfect.analysis().algo == "proof"
        assert move == r.best
        if r.value == 1.0:
            wins += 1
            assert proven_winning(s, move)
    assert wins > 0


def test_mcts_plays_the_shipped_book_for_the_winning_seat(monkeypatch, tmp_path):
    monkeypatch.setenv("NIWA_BOOKS", str(tmp_path))     # only the package's books
    s = LotusState()
    book = load_book(PACKAGE_BOOKS / book_name("lotus", s.variant))
    assert book.winner == 1
    agent = make_agent("mcts:book=auto,iters=50", seed=1)
    first = agent.step(s, 0)                # seat 0 is not the book's: MCTS searches
    assert agent.analysis().algo == "mcts"
    s.apply(first)
    move = agent.step(s, 1)
    assert move == book.lookup(s) and move is not None
    assert agent.analysis().algo == "book" and agent.analysis().proven


def test_mcts_proof_share_plays_a_proven_winning_move():
    s = LotusState(towers=2)
    s.apply(s.legal_actions()[0])           # seat 1 (the proven winner) to move
    agent = make_agent("mcts:proof=0.8,time=3,cpu=1", seed=1)
    move = agent.step(s, 1)
    assert agent.analysis().algo == "proof" and agent.analysis().value == 1.0
    assert proven_winning(s, move)
    tiny = LotusState(**TINY)
    agent = make_agent("mcts:proof=0.5,time=1", seed=1)
    move = agent.step(tiny, tiny.current_player())
    assert agent.analysis().algo == "proof" and move in tiny.legal_actions()


def test_mcts_move_stays_within_its_budget_with_a_failed_proof():
    """On the full board df-pn proves nothing in 30% of 0.2 s: MCTS gets the rest, and the
    move's CPU time is the budget (a generous tolerance for a loaded machine)."""
    s = LotusState()
    s.apply(s.legal_actions()[0])
    s.apply(s.legal_actions()[0])
    agent = make_agent("mcts:proof=0.3,time=0.2,cpu=1,cutoff=10,book=none", seed=1)
    agent.step(s, s.current_player())       # the proof table is allocated once, untimed here
    s.apply(s.legal_actions()[1])
    t0 = time.thread_time()
    agent.step(s, s.current_player())
    spent = time.thread_time() - t0
    assert agent.analysis().algo == "mcts"
    assert 0.15 <= spent <= 0.3, spent


def test_mcts_exact_options_are_checked():
    with pytest.raises(AgentError, match="proof=1.5 should be"):
        make_agent("mcts:proof=1.5")
    with pytest.raises(AgentError, match="no book file /nonexistent"):
        make_agent("mcts:book=/nonexistent")
    with pytest.raises(AgentError, match="proof_mb"):
        make_agent("mcts:proof_mb=0")


def test_mcts_exact_options_are_quiet_and_ignored_where_they_do_not_apply(capsys):
    """No book for towers=2 (nothing printed), and games proofs cannot decide play on."""
    s = LotusState(towers=2)
    agent = make_agent("mcts:book=auto,iters=30", seed=1)
    agent.step(s, 0)
    assert agent.analysis().algo == "mcts"
    for game in ("haru", "bonsai"):
        agents = [make_agent("mcts:book=auto,tables=true,proof=0.5,iters=30", seed=k)
                  for k in (1, 2)]
        r = play(get_game(game).new(seed=1), agents, chance_rng=Rng(1), max_plies=12,
                 forfeits=False)
        assert r.plies > 0 and r.error_seat is None
        assert all(a.exact is not None and a.exact.refusal for a in agents)
    assert capsys.readouterr().err == ""


def test_best_on_lotus_uses_the_exact_moves(monkeypatch, tmp_path):
    monkeypatch.setenv("NIWA_BOOKS", str(tmp_path))     # only the package's books
    name, params = parse_spec(best_spec("lotus", {"time": 0.05, "cpu": True}))
    assert name == "mcts" and params["book"] == "auto" and params["tables"] is True
    assert 0 < params["proof"] < 1 and params["time"] == 0.05 and params["cpu"] is True
    for variant in ({}, {"rule": "pro", "trampoline": "mandatory"}):   # (pro: its certificate's book)
        agent = make_agent("best:iters=50", seed=1)
        s = LotusState(**variant)
        while s.current_player() == 0:      # (the pro rule: seat 0 places two stones)
            s.apply(s.legal_actions()[3])
        book = load_book(PACKAGE_BOOKS / book_name("lotus", s.variant))
        assert agent.step(s, 1) == book.lookup(s) is not None
        assert agent.analysis().algo == "book"


@pytest.mark.parametrize("module", ["niwa.solver.exact_moves", "niwa.solver.perfect"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("spec", ["perfect:time=0.05,tt_mb=8", "best:iters=20"])
def test_a_slow_table_load_is_paid_before_the_first_timed_move(spec, tmp_path, monkeypatch):
    """An endgame table is loaded (its checksum read: seconds for a k = 5 table) when the
    game loop prepares the agents, off the move clock: a first move under a per-move
    limit shorter than the load does not forfeit, and the table is loaded once."""
    from niwa.solver import tables as tables_mod

    tables_mod.build_table(TINY, 1, tmp_path, progress=False)
    monkeypatch.setenv("NIWA_TABLES", str(tmp_path))
    monkeypatch.setenv("NIWA_BOOKS", str(tmp_path))
    for cache in ("_LOADED", "_VERIFIED", "_LISTED"):      # (this test's loads only)
        monkeypatch.setattr(tables_mod, cache, type(getattr(tables_mod, cache))())
    loads, real_load = [], tables_mod.load_table

    def slow_load(*args, **kwargs):
        loads.append(time.perf_counter())
        time.sleep(0.6)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(tables_mod, "load_table", slow_load)
    agents = [make_agent(spec, seed=1), make_agent("random", seed=2)]
    r = play(LotusState(**TINY), agents, chance_rng=Rng(1), time_limits=[0.5, None])
    assert r.error_seat is None, r
    assert len(loads) == 1
