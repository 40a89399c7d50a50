"""Multiplayer results by finishing order: places, the Plackett-Luce fit, the tables, and
two-player ratings left exactly as they were."""

import itertools

import numpy as np
import pandas as pd
import pytest

from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.arena.finish import finish
from niwa.analysis.arena.game_loop import GameResult, play
from niwa.analysis.arena.games_csv import play_task
from niwa.analysis.arena.schedule import build_schedule
from niwa.analysis.arena.tournament import make_config, run_tournament
from niwa.analysis.stats.placement import (
    average_places,
    fit_placement_ratings,
    orderings,
    placement_stages,
    places,
)
from niwa.analysis.stats.ratings import fit_ratings, pairwise_comparisons
from niwa.analysis.stats.standings import compute_tables
from niwa.ext.game import Rng
from niwa.ext.registry import get_game
from niwa.solver.agents import make_agent


# ---- places ----------------------------------------------------------------------------
def test_places_put_the_winner_first_then_the_placement_score_and_share_ties():
    assert places([0.0, 1.0, 0.0], [44.0, 30.0, 12.0]) == [2.0, 1.0, 3.0]
    assert places([1.0, 0.0, 0.0, 0.0], [1.0, 9.0, 9.0, 2.0]) == [1.0, 2.5, 2.5, 4.0]
    assert places([0.0, 0.0, 1.0]) == [2.5, 2.5, 1.0]          # no score: losers tie
    assert places([0.5, 0.5]) == [1.5, 1.5]


def test_tied_places_are_averaged_over_their_orders():
    assert orderings([1.0, 2.0, 3.0]) == [((0, 1, 2), 1.0)]
    orders = orderings([2.5, 1.0, 2.5])
    assert sorted(orders) == [((1, 0, 2), 0.5), ((1, 2, 0), 0.5)]
    assert sum(w for _, w in orderings([2.5] * 4)) == pytest.approx(1.0)


def test_forfeits_and_capped_games_place_as_their_results_say():
    state = get_game("bonsai").new(seed=3, players=3)
    spec = get_game("bonsai")
    forfeit = GameResult([1.0, 0.0, 1.0], 4, error_seat=1, error="x", state=state)
    assert finish(forfeit, spec) == ([1.5, 3.0, 1.5], None)
    capped = GameResult([1 / 3] * 3, 9, capped=True, state=state)
    assert finish(capped, spec)[0] == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("game, players", [("bonsai", 3), ("bonsai", 4), ("lotus", 3),
                                            ("lotus", 4)])
def test_finished_games_are_placed_by_the_game_s_own_score(game, players):
    spec = get_game(game)
    for seed in range(4):
        state = spec.new(seed=seed, players=players)
        agents = [make_agent("random", seed * 10 + s) for s in range(players)]
        result = play(state, agents, chance_rng=Rng(seed))
        where, scores = finish(result, spec)
        winner = result.results.index(max(result.results))
        assert where[winner] == 1.0 and sorted(where)[0] == 1.0
        stats = result.state.stats()
        for a, b in itertools.permutations(range(players), 2):
            if a != winner and b != winner:
                if game == "bonsai":
                    assert (stats["scores"][a] > stats["scores"][b]) == (where[a] < where[b])
                elif stats["goal"][a] != stats["goal"][b]:
                    assert (stats["goal"][a] > stats["goal"][b]) == (where[a] < where[b])
                else:   # same stones home: less distance left places higher
                    left_a, left_b = stats["remaining"][a], stats["remaining"][b]
                    assert (left_a < left_b) == (where[a] < where[b])
                    assert (left_a == left_b) == (where[a] == where[b])
        if game == "bonsai":
            assert scores == [float(x) for x in stats["scores"]]
        else:
            assert [int(x) for x in scores] == stats["goal"]


def test_games_csv_records_places_and_points():
    config, _ = make_config("bonsai", ["random", "greedy", "random"], players=3, games=6)
    row = play_task(build_schedule(config)[0])
    assert sorted(float(row[f"place_{s}"]) for s in range(3)) in ([1, 2, 3], [1, 2.5, 2.5])
    assert all(row[f"points_{s}"] != "" for s in range(3)) and row["termination"] == "normal"


# ---- the Plackett-Luce fit ---------------------------------------------------------------
def _simulate(strength, seat_bonus, rounds, seed):
    """Balanced 3-seat games drawn from the Plackett-Luce model itself."""
    rng = np.random.default_rng(seed)
    agents, where = [], []
    for _ in range(rounds):
        for seating in itertools.permutations(range(len(seat_bonus))):
            u = np.array([strength[a] + seat_bonus[s] for s, a in enumerate(seating)])
            left, order = list(range(len(u))), []
            while left:
                p = np.exp(u[left]) / np.exp(u[left]).sum()
                order.append(left.pop(rng.choice(len(left), p=p)))
            place = [0.0] * len(u)
            for k, s in enumerate(order):
                place[s] = k + 1.0
            agents.append(seating)
            where.append(place)
    return np.array(agents), np.array(where)


def test_plackett_luce_recovers_strengths_and_seat_advantages():
    logit = 400 / np.log(10)
    agents, where = _simulate([0.0, 0.6, 1.2], [0.5, 0.0, 0.0], rounds=80, seed=2)
    fit = fit_placement_ratings(3, 3, placement_stages(agents, where))
    assert fit.converged
    truth = logit * (np.array([0.0, 0.6, 1.2]) - 0.6)
    assert np.all(np.abs(fit.elo - truth) < 2.5 * fit.se)
    assert list(np.argsort(fit.elo)) == [0, 1, 2] and fit.high[0] < fit.low[2]
    seat_truth = logit * (np.array([0.5, 0.0, 0.0]) - 0.5 / 3)
    assert np.all(np.abs(fit.seat_elo - seat_truth) < 2.5 * fit.seat_se)


def test_with_two_players_plackett_luce_is_the_pairwise_elo_fit():
    rng = np.random.default_rng(5)
    agents = np.array([rng.permutation(3)[:2] for _ in range(300)])
    results = rng.choice([0.0, 0.5, 1.0], size=(300, 1), p=[0.4, 0.2, 0.4])
    results = np.hstack([results, 1 - results])
    errors = np.where(rng.random(300) < 0.05, rng.integers(0, 2, 300), -1)
    results[errors == 0] = [0.0, 1.0]
    results[errors == 1] = [1.0, 0.0]
    pairwise = fit_ratings(3, 2, pairwise_comparisons(agents, results, errors))
    where = np.array([places(r) for r in results])
    plackett = fit_placement_ratings(3, 2, placement_stages(agents, where, errors))
    assert plackett.elo == pytest.approx(pairwise.elo, abs=1e-6)
    assert plackett.cov == pytest.approx(pairwise.cov, abs=1e-6)
    assert plackett.seat_elo == pytest.approx(pairwise.seat_elo, abs=1e-6)


def test_a_forfeit_only_says_the_forfeiter_lost():
    # agent 2 forfeits every game: agents 0 and 1 are never compared with each other
    agents = np.array(list(itertools.permutations(range(3))) * 5)
    where = np.array([[3.0 if a == 2 else 1.5 for a in seating] for seating in agents])
    errors = np.array([list(seating).index(2) for seating in agents])
    stages = placement_stages(agents, where, errors)
    assert all(2 in {a for a, _ in rest} and len(rest) == 2 for _, rest in stages)
    fit = fit_placement_ratings(3, 3, stages)
    assert fit.elo[0] == pytest.approx(fit.elo[1], abs=1e-6) and fit.elo[2] < fit.elo[0] - 100


def test_average_places():
    agents = np.array([[0, 1, 2], [2, 1, 0]])
    where = np.array([[1.0, 2.0, 3.0], [1.0, 2.5, 2.5]])
    assert list(average_places(agents, where, 4)[:3]) == [1.75, 2.25, 2.0]
    assert np.isnan(average_places(agents, where, 4)[3])


# ---- tables ------------------------------------------------------------------------------
def _games_frame(agents, results, labels, extra=None):
    n = len(agents[0])
    rows = []
    for g, (seating, res) in enumerate(zip(agents, results, strict=True)):
        row = {"game_id": str(g), "error_seat": "", "error": ""}
        row.update({f"agent_{s}": labels[seating[s]] for s in range(n)})
        row.update({f"result_{s}": repr(float(res[s])) for s in range(n)})
        if extra is not None:
            row.update({k: str(v) for k, v in extra[g].items()})
        rows.append(row)
    return pd.DataFrame(rows)


def test_two_player_tables_are_unchanged():
    rng = np.random.default_rng(7)
    labels = ["a", "b", "c"]
    agents = [tuple(rng.permutation(3)[:2]) for _ in range(60)]
    results = [(1.0, 0.0) if rng.random() < 0.6 else (0.5, 0.5) for _ in agents]
    tables = compute_tables(_games_frame(agents, results, labels), labels, 2)
    fit = fit_ratings(3, 2, pairwise_comparisons(np.array(agents), np.array(results)))
    assert list(tables.standings.columns) == ["agent", "games", "wins", "draws", "losses",
                                              "score_pct", "rating", "rating_low",
                                              "rating_high", "los"]
    assert tables.fit.elo == pytest.approx(fit.elo) and "model" not in tables.fit.extra
    # places written by newer logs change nothing in a two-player table
    extra = [{f"place_{s}": places(r)[s] for s in range(2)} for r in results]
    again = compute_tables(_games_frame(agents, results, labels, extra), labels, 2)
    assert again.standings.equals(tables.standings) and again.pairs.equals(tables.pairs)


def test_multiplayer_losers_are_told_apart_by_place():
    labels = ["random", "greedy", "mcts"]
    seatings = list(itertools.permutations(range(3))) * 4
    results = [[1.0 if a == 2 else 0.0 for a in s] for s in seatings]
    order = {2: 1.0, 1: 2.0, 0: 3.0}
    extra = [{**{f"place_{k}": order[a] for k, a in enumerate(s)},
              **{f"points_{k}": 10.0 * (3 - order[a]) for k, a in enumerate(s)}}
             for s in seatings]
    tables = compute_tables(_games_frame(seatings, results, labels, extra), labels, 3)
    st = tables.standings.set_index("agent")
    assert list(tables.standings["agent"]) == ["mcts", "greedy", "random"]
    assert st.loc["greedy", "rating"] > st.loc["random", "rating"]
    assert list(st["avg_place"]) == [1.0, 2.0, 3.0]
    assert list(st["avg_points"]) == [20.0, 10.0, 0.0]
    pairs = tables.pairs.set_index("agent")
    assert pairs.loc["greedy", "random"] == "24-0-0"
    # an old log (no place columns): losers tie, as before
    old = compute_tables(_games_frame(seatings, results, labels), labels, 3)
    st = old.standings.set_index("agent")
    assert st.loc["greedy", "rating"] == pytest.approx(st.loc["random", "rating"])
    assert old.pairs.set_index("agent").loc["greedy", "random"] == "0-24-0"
    assert np.isnan(st.loc["greedy", "avg_points"]) and st.loc["greedy", "avg_place"] == 2.5


# ---- the acceptance run ------------------------------------------------------------------
def _bonsai_ranking(tmp_path, rounds, iters):
    config, _ = make_config("bonsai", ["random", "greedy", f"mcts:iters={iters}"], players=3,
                            rounds=rounds, seed=1)
    outcome = run_tournament(config, str(tmp_path), LocalExecutor(1), progress=False)
    st = outcome.tables.standings
    assert list(st["agent"]) == [f"mcts:iters={iters}", "greedy", "random"]
    assert st["rating_low"].iloc[0] > st["rating_high"].iloc[1]
    assert st["rating_low"].iloc[1] > st["rating_high"].iloc[2]
    assert list(st["avg_place"]) == sorted(st["avg_place"])
    return st


def test_three_player_bonsai_ranks_random_greedy_mcts(tmp_path):
    _bonsai_ranking(tmp_path, rounds=10, iters=50)


@pytest.mark.slow
def test_three_player_bonsai_ranks_random_greedy_mcts_over_60_rounds(tmp_path):
    _bonsai_ranking(tmp_path, rounds=60, iters=100)
