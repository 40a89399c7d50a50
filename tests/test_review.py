"""niwa review: verdicts against exact values (Lotus endgames inside the tables, judged by
an independent df-pn proof), one perspective across rows, forced moves, streaming."""

from __future__ import annotations

import csv
import random

import pytest
from click.testing import CliRunner

from niwa.analysis.arena.game_record import GameRecord, Move, Seat
from niwa.analysis.arena.review import Judge, review_rows
from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch
from niwa.solver.tables import build_table, find_table

STANDARD = dict(players=2, rule="basic", trampoline="optional")     # the standard board
SMALL = dict(players=2, towers=3, lane=2, shared=5, trampoline_at=4)
TINY = dict(players=2, towers=2, lane=1, shared=3, trampoline_at=3)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _record(start: LotusState, actions: list[int]) -> GameRecord:
    state, moves = start.clone(), []
    for a in actions:
        moves.append(Move(state.current_player(), state.action_to_string(a)))
        state.apply(a)
    return GameRecord("lotus", dict(start.variant), [Seat("a"), Seat("b")],
                      start.to_notation(), [float(x) for x in state.returns()], "normal",
                      moves, final=state.to_notation())


def endgame_records(table, count: int, seed: int) -> list[GameRecord]:
    """`count` games from proven endgame positions (inside `table`) where the mover wins
    and has a losing move: half start with a losing move, half with a winning one, and
    go on with random moves to the end (every later position is inside the table too)."""
    rng = random.Random(seed)
    proof = ProofSearch(tt_mb=16)
    records = []
    while len(records) < count:
        state = LotusState(**STANDARD)
        while not state.is_terminal() and table.index(state) < 0:
            state.apply(rng.choice(state.legal_actions()))
        while not state.is_terminal():
            mover = state.current_player()
            values = {a: proof.prove_value(state.child(a), mover)
                      for a in state.legal_actions()}
            winning = [a for a, v in values.items() if v == 1]
            losing = [a for a, v in values.items() if v == 0]
            if winning and losing:
                break
            state.apply(rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        first = rng.choice(losing if len(records) % 2 == 0 else winning)
        actions, cur = [first], state.child(first)
        while not cur.is_terminal():
            actions.append(rng.choice(cur.legal_actions()))
            cur.apply(actions[-1])
        records.append(_record(state, actions))
    return records


def truth(record: GameRecord):
    """For every seat move: (exact value before, exact value after) for its mover, by the
    df-pn proof search without tables."""
    proof = ProofSearch(tt_mb=16)
    out = []
    states = [s for _, s in record.positions()]

    def value(s, seat):
        return float(s.returns()[seat]) if s.is_terminal() else proof.prove_value(s, seat)

    for ply, move in enumerate(record.moves):
        out.append((value(states[ply], move.by), value(states[ply + 1], move.by)))
    return out


def check_endgames(tmp_path, table_dir, records) -> dict:
    """Review each record through the command line with the tables only (no proof, no
    search needed) and check every verdict against the proof; returns the counts."""
    path = tmp_path / "endgames.jsonl"
    path.write_text("".join(r.to_line() + "\n" for r in records))
    counts = {"keep": 0, "win_to_loss": 0, "forced": 0, "positions": len(records)}
    for number, record in enumerate(records, 1):
        out = tmp_path / f"r{number}"
        r = run("review", path, "--game", number, "--tables", table_dir, "--prove-time", 0,
                "--agent", "alphabeta:depth=2", "--out", out)
        assert r.exit_code == 0, r.output
        with open(f"{out}.csv") as f:
            rows = list(csv.DictReader(f))
        assert len(rows) == len(record.moves)
        for row, (before, after) in zip(rows, truth(record), strict=True):
            assert {row["source_before"], row["source_after"]} <= {"table", "end"}, row
            assert float(row["value_before"]) == before and float(row["value_after"]) == after
            if row["verdict"] == "forced":
                counts["forced"] += 1
                assert float(row["drop"]) == 0 and before == after
            elif after == before:
                counts["keep"] += 1
                assert row["verdict"] == "", row        # the tables say it keeps the value
            else:
                assert (before, after) == (1.0, 0.0)    # Lotus has no draws
                counts["win_to_loss"] += 1
                assert row["verdict"] == "blunder", row
        assert rows[0]["verdict"] == ("blunder" if number % 2 == 1 else "")
    return counts


@pytest.fixture(scope="module")
def table_k2(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables")
    build_table(STANDARD, 2, folder, progress=False)
    return folder


def test_review_of_20_proven_endgames_flags_exactly_the_moves_that_lose_a_win(
        tmp_path, table_k2):
    table = find_table(LotusState(**STANDARD), table_k2)
    counts = check_endgames(tmp_path, table_k2, endgame_records(table, 20, seed=11))
    print(counts)
    assert counts["win_to_loss"] >= 10 and counts["keep"] >= 20 and counts["forced"] > 0


@pytest.mark.slow
def test_review_of_100_proven_endgames_with_3_stones_each(tmp_path, tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables-k3")
    build_table(STANDARD, 3, folder, progress=False)
    table = find_table(LotusState(**STANDARD), folder)
    counts = check_endgames(tmp_path, folder, endgame_records(table, 100, seed=5))
    print(counts)
    assert counts["win_to_loss"] >= 50


def _random_game(variant: dict, seed: int, plies: int | None = None) -> GameRecord:
    rng = random.Random(seed)
    start = LotusState(**variant)
    state, actions = start.clone(), []
    while not state.is_terminal() and (plies is None or len(actions) < plies):
        actions.append(rng.choice(state.legal_actions()))
        state.apply(actions[-1])
    record = _record(start, actions)
    if not state.is_terminal():
        record.termination = "quit"         # stopped early
    return record


@pytest.mark.parametrize("agent", ["alphabeta:depth=4", "mcts:iters=100"])
def test_values_are_in_one_perspective_and_forced_moves_are_never_flagged(tmp_path, agent):
    """Searcher's values only (no tables, no proofs): the value after a move, for its
    mover, is one minus the next row's value before (the other seat moves next); a move
    with one legal action is 'forced' with no drop."""
    record = _random_game(SMALL, seed=3)
    path = tmp_path / "g.jsonl"
    path.write_text(record.to_line() + "\n")
    r = run("review", path, "--agent", agent, "--prove-time", 0, "--no-tables",
            "--threshold", "0.2", "--inaccuracy", "0.1")
    assert r.exit_code == 0, r.output
    assert "values: for the seat that moves in the row" in r.output
    with open(tmp_path / "g-game1-review.csv") as f:
        rows = list(csv.DictReader(f))
    states = [s for _, s in record.positions()]
    assert len(rows) == len(record.moves) > 10
    forced = 0
    for k, row in enumerate(rows):
        if len(states[k].legal_actions()) == 1:
            forced += 1
            assert row["verdict"] == "forced" and float(row["drop"]) == 0
            assert row["value_before"] == row["value_after"]
        if k + 1 < len(rows) and rows[k + 1]["by"] != row["by"]:
            assert abs(float(row["value_after"]) + float(rows[k + 1]["value_before"]) - 1) < 1e-5
        assert row["source_before"] in ("search", "proof", "end")
        drop = float(row["drop"])
        verdict = row["verdict"]
        if row["drop_basis"] == "search":
            assert verdict == ("mistake" if drop > 0.2 else "inaccuracy" if drop > 0.1 else "")
    assert forced > 0
    last = r.output.rstrip().splitlines()[-1]
    assert "forced" in last and "mistake" in last and "blunder" in last


def test_rows_stream_as_they_are_computed(monkeypatch):
    """The first row comes before the rest of the game is searched."""
    record = _random_game(SMALL, seed=4)
    searched = []
    original = Judge.search

    def spy(self, state, seat, seed=0):
        searched.append(seed)
        return original(self, state, seat, seed)

    monkeypatch.setattr(Judge, "search", spy)
    rows = review_rows(record, "alphabeta:depth=2", tables=None, prove_time=0)
    first = next(rows)
    assert first.ply == 1 and max(searched) <= 2
    rest = list(rows)
    assert len(rest) == len(record.moves) - 1 and max(searched) > 10


def test_progress_bar_on_stderr_and_rows_on_stdout(tmp_path):
    record = _random_game(SMALL, seed=5, plies=12)
    path = tmp_path / "g.jsonl"
    path.write_text(record.to_line() + "\n")
    r = CliRunner().invoke(main, ["review", str(path), "--agent", "alphabeta:depth=2",
                                  "--prove-time", "0", "--progress"])
    assert r.exit_code == 0, r.output
    assert "review: 100%" in r.stderr and "12/12" in r.stderr
    assert "  12  seat" in r.stdout and "100%" not in r.stdout
    assert (tmp_path / "g-game1-review.png").stat().st_size > 0


def test_proof_values_are_used_where_the_proof_decides(tmp_path):
    """On a tiny board the df-pn proof decides every position: every row is exact."""
    record = _random_game(TINY, seed=6)
    path = tmp_path / "g.jsonl"
    path.write_text(record.to_line() + "\n")
    r = run("review", path, "--agent", "alphabeta:depth=2", "--prove-time", 5, "--no-tables")
    assert r.exit_code == 0, r.output
    with open(tmp_path / "g-game1-review.csv") as f:
        rows = list(csv.DictReader(f))
    for row, (before, after) in zip(rows, truth(record), strict=True):
        assert row["source_before"] in ("proof", "end") and row["source_after"] in ("proof", "end")
        assert (float(row["value_before"]), float(row["value_after"])) == (before, after)
        if row["verdict"] != "forced":
            assert row["verdict"] == ("blunder" if after < before else "")


@pytest.mark.parametrize("args, message", [
    (["--threshold", "0.1", "--inaccuracy", "0.2"], "0 <= inaccuracy <= mistake"),
    (["--inaccuracy", "-1"], "0 <= inaccuracy <= mistake"),
    (["--prove-time", "-1"], "--prove-time must be >= 0"),
    (["--agent", "random"], "review needs a searcher"),
    (["--out", "/nonexistent-folder/x"], "cannot write /nonexistent-folder/x.csv"),
])
def test_bad_options_are_one_error_line(tmp_path, args, message):
    path = tmp_path / "g.jsonl"
    path.write_text(_random_game(SMALL, seed=7, plies=6).to_line() + "\n")
    r = run("review", path, *args)
    assert r.exit_code == 2 and message in r.output, r.output
    assert "Traceback" not in r.output


def test_the_calibration_script_runs_on_a_tiny_budget(tmp_path):
    """bench/review-calibration/run.py end to end: a k = 1 table, a few positions."""
    import importlib.util
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "bench" / "review-calibration" / "run.py"
    spec = importlib.util.spec_from_file_location("bench_review_calibration", script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    assert module.main(["--dir", str(tmp_path / "t"), "--stones", "1", "--table-positions",
                        "4", "--small-positions", "6", "--searcher", "alphabeta:depth=2",
                        "--results", str(tmp_path / "r")]) == 0
    with open(tmp_path / "r" / "thresholds.csv") as f:
        rows = list(csv.DictReader(f))
    assert {(r["valuation"], r["verdict"]) for r in rows} == {
        (v, w) for v in ("mean", "deep") for w in ("mistake", "inaccuracy")}
    assert module.threshold_for([0.0] * 98 + [0.5, 0.9], 0.01) == 0.5
    assert module.auc([0.0, 0.1], [0.2, 0.3]) == 1.0


def test_the_full_games_opening_is_valued_from_the_shipped_book():
    """A full basic Lotus game that follows the book's winner (seat 1) for 6 plies: every
    position is known (the winner's from the book, the loser's through its moves, all into
    the book), so each move's drop is exact: none for the loser's moves from a proven loss,
    none for the winner's book moves. --no-known leaves them to the search."""
    from niwa.solver.book import find_book, load_book

    start = LotusState()
    book = load_book(find_book("lotus", start.variant))
    rng = random.Random(5)
    state, actions = start.clone(), []
    while len(actions) < 6:
        move = book.lookup(state) if state.current_player() == book.winner else \
            rng.choice(state.legal_actions())
        actions.append(move)
        state.apply(move)
    record = _record(start, actions)
    record.termination = "quit"
    rows = list(review_rows(record, "alphabeta:depth=1", tables=None, prove_time=0))
    assert [r.source_text for r in rows] == ["known"] * 6
    assert [(r.before, r.after, r.drop, r.drop_basis) for r in rows] == \
        [(0.0, 0.0, 0.0, "exact"), (1.0, 1.0, 0.0, "exact")] * 3
    searched = list(review_rows(record, "alphabeta:depth=1", tables=None, prove_time=0,
                                known=False))
    assert {r.source_text for r in searched} == {"search"}
