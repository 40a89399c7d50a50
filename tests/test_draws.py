"""Games with draws through the proof search and the commands: tic-tac-toe, a plain-Python
plugin (tests/example_games.py), against a plain minimax."""

import json

import pytest
from click.testing import CliRunner
from example_games import minimax, tictactoe_spec

from niwa.cli.main import main
from niwa.ext.registry import unregister_game
from niwa.solver.proof import ProofSearch


@pytest.fixture(autouse=True)
def ttt():
    spec = tictactoe_spec()
    yield spec
    unregister_game("tictactoe")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def reachable(spec):
    """Every reachable position that is not over, once each (by notation)."""
    seen, todo, out = set(), [spec.new()], []
    while todo:
        s = todo.pop()
        key = s.to_notation()
        if key in seen:
            continue
        seen.add(key)
        if s.is_terminal():
            continue
        out.append(s)
        for a in s.legal_actions():
            todo.append(s.child(a))
    return out


@pytest.fixture(scope="module")
def positions():
    spec = tictactoe_spec()
    try:
        return [(s, minimax(s, s.current_player())) for s in reachable(spec)]
    finally:
        unregister_game("tictactoe")


def test_the_start_is_a_proven_draw_with_every_move_valued(ttt):
    r = ProofSearch(tt_mb=4).solve(ttt.new())
    assert r.proven and r.value == 0.5 and r.summary().startswith("draw for player 0")
    # the centre and the corners draw; every edge draws too (tic-tac-toe has no losing
    # first move)
    assert {m.name: m.value for m in r.moves} == {n: 0.5 for n in
                                                  ("a1", "b1", "c1", "a2", "b2", "c2", "a3",
                                                   "b3", "c3")}
    assert len(r.pv) == 9       # a drawn game fills the board


def test_every_reachable_position_matches_minimax(ttt, positions):
    assert len(positions) == 4520
    search = ProofSearch(tt_mb=8)
    for state, expected in positions:
        r = search.solve(state, root_values=False, pv=False)
        assert r.proven and r.value == expected, state.to_notation()


def test_fresh_searches_agree_with_minimax_and_the_moves_with_the_children(ttt, positions):
    """A new table each time (no help from earlier proofs), and every root move's value
    equals minimax's value of the child for the mover."""
    for state, expected in positions[::97]:
        r = ProofSearch(tt_mb=1).solve(state)
        assert r.value == expected
        mover = state.current_player()
        for m in r.moves:
            assert m.value == minimax(state.child(m.action), mover), (state.to_notation(), m)
        if r.pv:
            assert r.moves and max(m.value for m in r.moves) == expected


def test_a_win_loss_game_needs_one_pass(ttt):
    from niwa.ext.lotus import LotusState

    search = ProofSearch(tt_mb=8)
    r = search.solve(LotusState(towers=1, lane=1, shared=3, trampoline_at=3))
    assert r.proven and r.value in (0.0, 1.0) and not search.draws_seen


def test_solve_command_says_draw(ttt):
    r = run("solve", "tictactoe")
    assert r.exit_code == 0, r.output
    assert "value 0.5000 (proven)" in r.output and "proven draw for player 0" in r.output
    r = run("solve", "tictactoe", "--json")
    out = json.loads(r.output)
    assert out["value"] == 0.5 and out["proven"] and len(out["actions"]) == 9
    r = run("solve", "tictactoe; board xx./oo./...; turn 0")
    assert r.exit_code == 0 and "value 1.0000 (proven)" in r.output and "best   c1" in r.output


def _batch(tmp_path, positions):
    lines = tmp_path / "positions.txt"
    lines.write_text("".join(s.to_notation() + "\n" for s, _ in positions))
    out = tmp_path / "values.csv"
    r = run("solve", "--batch", lines, "--out", out, "--tt-mb", 1, "--no-tables")
    assert r.exit_code == 0, r.output
    rows = out.read_text().splitlines()[1:]
    assert len(rows) == len(positions)
    for row, (state, expected) in zip(rows, positions, strict=True):
        notation, value, proven = row.split(",")[:3]
        assert notation == state.to_notation() and float(value) == expected and proven == "True"


def test_batch_solves_positions_of_a_game_with_draws(ttt, positions, tmp_path):
    _batch(tmp_path, positions[::23])


@pytest.mark.slow
def test_batch_solves_every_reachable_position(ttt, positions, tmp_path):
    _batch(tmp_path, positions)


def test_perfect_never_loses_and_draws_itself(ttt):
    from niwa.solver.agents import make_agent

    for seed in range(4):
        state = ttt.new()
        seats = [make_agent("perfect:time=2,tt_mb=4,book=none", seed=seed),
                 make_agent("random", seed=seed)]
        if seed % 2:
            seats.reverse()
        while not state.is_terminal():
            p = state.current_player()
            state.apply(seats[p].step(state, p))
        perfect_seat = 0 if seed % 2 == 0 else 1
        assert state.returns()[perfect_seat] >= 0.5


def test_analyse_with_the_proof_writes_its_report(ttt, tmp_path):
    r = run("analyse", "tictactoe", "--strengths", "mcts:iters=10,40", "--games", 8,
            "--rate-games", 0, "--workers", 1, "--out", tmp_path / "a", "--proof-time", 5)
    assert r.exit_code == 0, r.output
    report = (tmp_path / "a" / "report.md")
    assert report.exists(), sorted(p.name for p in (tmp_path / "a").iterdir())


def test_games_lists_a_game_without_options(ttt):
    r = run("games")
    assert r.exit_code == 0 and "\ntictactoe\n  (no variant options)\n" in r.output


def test_one_searcher_keeps_two_plain_python_games_with_equal_variants_apart(ttt, positions):
    """Every plain-Python game is a PythonGameState and tic-tac-toe's variant is {}: a
    misère twin (three in a row loses) with the same variant must not read its table."""
    from example_games import _tictactoe_class

    from niwa.ext.python_game import PythonGameState

    class Misere(_tictactoe_class()):
        game_name = "misere-tictactoe"

        def returns(self):
            return [1.0 - r for r in super().returns()]

    search = ProofSearch(tt_mb=8)
    for state, expected in positions[::151]:
        assert search.solve(state, root_values=False, pv=False).value == expected
        twin = Misere()
        twin.cells = list(state.game.cells)
        twin = PythonGameState(twin)
        r = search.solve(twin, root_values=False, pv=False)
        assert r.value == minimax(twin, twin.current_player()), state.to_notation()


def test_the_two_level_search_refuses_a_draw_instead_of_calling_it_a_loss(ttt, tmp_path):
    """Its top tree combines wins and losses only: a drawn position must stop it with one
    line, never come back as a proven loss."""
    r = run("solve", "tictactoe", "--checkpoint", tmp_path / "c", "--job-nodes", 50)
    assert r.exit_code == 2, r.output
    last = r.output.strip().splitlines()[-1]
    assert last.startswith("Error: ") and "draw" in last and "Traceback" not in r.output
    assert "proven loss" not in r.output and "proven win" not in r.output


def test_certify_jobs_is_refused_for_a_game_without_a_checker(tmp_path):
    r = run("solve", "tictactoe", "--checkpoint", tmp_path / "c", "--certify-jobs")
    assert r.exit_code == 2 and "--certify-jobs" in r.output and "tictactoe" in r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "c").exists()


def test_prove_below_finds_an_outright_win_for_either_seat(ttt, positions):
    """prove_below proves a won position again from its children (its own entry ignored)
    and returns a winning move: a win, not a draw, for seat 1 too, in a fresh table and in
    one that has met draws (where pass 1 answers only "at least a draw" for seat 1)."""
    won = [(s, s.current_player()) for s, v in positions if v == 1.0]
    assert {mover for _, mover in won} == {0, 1}
    seasoned = ProofSearch(tt_mb=8)
    seasoned.solve(ttt.new())
    assert seasoned.draws_seen
    for state, mover in won[::7]:
        for search in (ProofSearch(tt_mb=1), seasoned):
            a = search.prove_below(state, mover)
            assert a in state.legal_actions()
            assert minimax(state.child(a), mover) == 1.0, state.to_notation()
