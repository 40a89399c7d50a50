"""The strength ladder campaign (bench/ladder/run.py, loaded by path: campaign code is
not in the package): its schedule, pool, ratings, the check of the expected order as
relations, games repeated move for move counted once, and the resumable pair folders with
added blocks."""

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from niwa.analysis.stats.ratings import RatingFit

RUN_PY = Path(__file__).resolve().parents[1] / "bench" / "ladder" / "run.py"
_spec = importlib.util.spec_from_file_location("bench_ladder_run", RUN_PY)
ladder = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = ladder        # dataclasses look their module up there
_spec.loader.exec_module(ladder)

POOL = ladder.pool_for("lotus", perfect=True)


def test_ladder_schedule_is_connected_and_sparse():
    for n in range(3, 12):
        pairs = ladder.schedule_pairs(n)
        reached, frontier = {0}, [0]
        while frontier:
            i = frontier.pop()
            for a, b in pairs:
                for x, y in ((a, b), (b, a)):
                    if x == i and y not in reached:
                        reached.add(y)
                        frontier.append(y)
        assert reached == set(range(n))
        assert len(pairs) <= 2 * n and all(a < b for a, b in pairs)


def test_ladder_pool_follows_the_issue():
    assert POOL[0] == "random" and "greedy" in POOL
    assert [p for p in POOL if p.startswith("mcts:iters=")] == \
        ["mcts:iters=100", "mcts:iters=1000", "mcts:iters=10000"]
    assert sum(p.startswith("alphabeta") for p in POOL) == 2
    assert sum(p.startswith("best:") for p in POOL) == 2
    assert POOL[-1].startswith("perfect")
    with pytest.raises(ValueError):
        ladder.pool_for("haru", perfect=True)


def test_expected_relations_are_the_defensible_ones_and_all_scheduled():
    rels = {(r.weaker, r.stronger) for r in ladder.expected_relations(POOL)}
    best10, best50, perfect = POOL[-3], POOL[-2], POOL[-1]
    assert rels == {("random", "greedy"), ("greedy", "mcts:iters=100"),
                    ("mcts:iters=100", "mcts:iters=1000"),
                    ("mcts:iters=1000", "mcts:iters=10000"),
                    ("alphabeta:depth=2", "alphabeta:depth=6"), (best10, best50),
                    ("mcts:iters=10000", best50), (best50, perfect)}
    # alpha-beta is never placed against MCTS or greedy
    assert not any(("alphabeta" in a) != ("alphabeta" in b) for a, b in rels)
    scheduled = {(POOL[i], POOL[j]) for i, j in ladder.make_ladder("lotus", True).pairs}
    assert rels <= scheduled


def _fit(elo, cov):
    return RatingFit(np.array(elo, float), np.array(cov, float), np.zeros(2), np.zeros((2, 2)))


def test_relation_verdicts_holds_unresolved_violated():
    labels = ["a", "b", "c", "d"]
    # b is 200 above a (se 50): holds; c is 30 above b (se ~71): open; d 300 below c
    fit = _fit([0, 200, 230, -70], np.diag([0.0, 2500.0, 2500.0, 2500.0]))
    rels = [ladder.Relation("a", "b", "x"), ladder.Relation("b", "c", "y"),
            ladder.Relation("c", "d", "z"), ladder.Relation("a", "missing", "w")]
    table = ladder.check_relations(rels, labels, fit)
    assert list(table.status) == ["holds", "not resolved", "violated"]   # missing: no row
    first = table.iloc[0]
    assert first.elo_diff == 200 and math.isclose(first.low, 200 - 1.96 * 50, abs_tol=0.2)
    assert first.los > 0.999 and table.iloc[2].los < 0.001
    assert 0.5 < table.iloc[1].los < 0.975
    # the covariance counts: b and c moving together make their difference sure
    together = _fit([0, 200, 230, -70], [[0, 0, 0, 0], [0, 2500, 2490, 0],
                                        [0, 2490, 2500, 0], [0, 0, 0, 2500]])
    assert ladder.check_relations(rels[1:2], labels, together).status[0] == "holds"
    assert ladder.relation_status(-1.0, 1.0) == "not resolved"


def _games(results):
    """games.csv-like rows: (agent_0, agent_1, result_0) per game."""
    rows = []
    for gid, (a, b, r0) in enumerate(results):
        rows.append({"game_id": str(gid), "agent_0": a, "agent_1": b, "result_0": str(float(r0)),
                     "result_1": str(1.0 - r0), "error_seat": "", "capped": "0"})
    return pd.DataFrame(rows)


def test_ladder_ratings_are_anchored_at_random_and_judge_the_relations():
    lad = ladder.Ladder("lotus", ("random", "greedy", "mcts:iters=100"),
                        ((0, 1), (1, 2), (0, 2)))
    res = []
    for k in range(20):
        res += [("random", "greedy", 0), ("greedy", "random", 1)]          # greedy always wins
        res += [("greedy", "mcts:iters=100", k % 5 != 0),                   # mcts loses 80%
                ("mcts:iters=100", "greedy", k % 5 == 0)]
        res += [("random", "mcts:iters=100", 0), ("mcts:iters=100", "random", 1)]
    table, pairs, relations = ladder.ratings(lad, _games(res))
    random_row = table[table.agent == "random"].iloc[0]
    assert random_row.elo == 0 and random_row.elo_low == 0 and random_row.elo_high == 0
    assert (table[table.agent != "random"].elo > 0).all()
    assert list(relations.status) == ["holds", "violated"]
    assert len(pairs) == 3 and math.isclose(pairs.iloc[0].stronger_score_pct, 100.0)
    assert ladder.open_pairs(lad, relations) == []
    relations.loc[1, "status"] = "not resolved"
    assert ladder.open_pairs(lad, relations) == [1]


def test_ladder_plays_resumes_grows_and_writes_its_files(tmp_path):
    from niwa.analysis.arena.executors import LocalExecutor

    lad = ladder.Ladder("lotus", ("random", "greedy", "mcts:iters=20"), ((0, 1), (1, 2)))
    runs, out = tmp_path / "runs", tmp_path / "out"
    ladder.play_pairs(lad, 2, runs, LocalExecutor(1), seed=1, progress=False)
    first = ladder.collect_games(lad, runs)
    ladder.play_pairs(lad, 2, runs, LocalExecutor(1), seed=1, progress=False)  # resume: no-op
    assert len(ladder.collect_games(lad, runs)) == len(first) == 4
    # two games a pair resolve nothing: both pairs grow to 4 games in a second block
    grown = ladder.grow_pairs(lad, 2, 4, runs, LocalExecutor(1), seed=1, progress=False)
    assert grown == [0, 1]
    games = ladder.collect_games(lad, runs)
    assert len(games) == 8 and games.game_id.is_unique
    assert (runs / "lotus" / ladder.folder_name("random", "greedy", 1)).is_dir()
    ladder.report(lad, runs, out, 2)
    table = pd.read_csv(out / "lotus.csv")
    assert set(table.agent) == set(lad.pool) and (out / "lotus.png").stat().st_size > 0
    text = (out / "lotus.md").read_text()
    assert "| agent |" in text and "`random` < `greedy`" in text
    assert len(pd.read_csv(out / "lotus-relations.csv")) == 2


def test_ladder_refuses_bad_options(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        ladder.main(["lotus", "--games", "10", "--grow-to", "10"])
    assert e.value.code == 2
    capsys.readouterr()
    assert ladder.main(["nosuchgame", "--report-only"]) == 2
    assert capsys.readouterr().err.startswith("Error: unknown game")
    # a report before any game: one line, status 2, nothing written
    assert ladder.main(["lotus", "--report-only", "--runs", str(tmp_path / "runs"),
                        "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.startswith("Error: no ladder games")
    assert not (tmp_path / "out").exists()


def test_ladder_writes_beside_its_run_py_by_default():
    args = ladder._parser().parse_args(["lotus"])
    assert args.out == RUN_PY.parent / "results" and args.runs == RUN_PY.parent / "runs"


def test_a_game_repeated_move_for_move_counts_once():
    games = _games([("a", "b", 1), ("a", "b", 1), ("b", "a", 1), ("a", "b", 0)])
    same = (("a", "b"), "start", (("0", "x"), ("1", "y")))
    keys = {"0": same, "1": same,                                        # a copy of game 0
            "2": (("b", "a"), "start", (("0", "x"), ("1", "y"))),        # other seats
            "3": (("a", "b"), "start", (("0", "x"), ("1", "z")))}        # other moves
    kept = ladder.distinct_games(games, keys)
    assert list(kept.game_id) == ["0", "2", "3"]
    assert list(ladder.distinct_games(games, {}).game_id) == ["0", "1", "2", "3"]


def test_deterministic_pair_on_lotus_is_counted_once_per_seat_order(tmp_path):
    from niwa.analysis.arena.executors import LocalExecutor

    lad = ladder.Ladder("lotus", ("alphabeta:depth=1", "alphabeta:depth=2"), ((0, 1),))
    runs = tmp_path / "runs"
    ladder.play_pairs(lad, 4, runs, LocalExecutor(1), seed=1, progress=False)
    games = ladder.collect_games(lad, runs)
    assert len(games) == 2 and games.attrs["repeats"] == 2
