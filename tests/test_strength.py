"""experiments.strength: Elo of the rungs, convergence at the top, the trend's slope."""

import numpy as np
import pandas as pd
import pytest

from niwa.analysis.experiments import strength


def test_trend_recovers_a_known_slope_and_its_interval_narrows_with_games():
    x = [0.0, 100.0, 200.0]
    small = strength.trend(x, [40, 50, 60], [100, 100, 100])
    large = strength.trend(x, [4000, 5000, 6000], [10000, 10000, 10000])
    assert small[0] == pytest.approx(0.001) and large[0] == pytest.approx(0.001)
    assert small[1] < large[1] < large[0] < large[2] < small[2]


def test_convergence_says_settled_moving_or_undecided():
    flat = [{"strength": s, "wins_0": 2500, "decisive": 5000, "x": x}
            for s, x in (("a", 0), ("b", 100), ("c", 200))]
    assert strength.convergence(flat)["converged"]          # +-2 points inside +-5
    moving = [dict(r, wins_0=w) for r, w in zip(flat, (2500, 1500, 250), strict=True)]
    c = strength.convergence(moving)
    assert not c["converged"] and c["top_change_high"] < 0 and c["trend_high"] < 0
    assert c["verdict"].kind == "different"
    # equal rates at 100 games: not a change, but not "converged" either (the interval,
    # +-14 points, reaches far past the margin)
    few = [dict(r, wins_0=50, decisive=100) for r in flat]
    c = strength.convergence(few)
    assert not c["converged"] and c["verdict"].kind == "undecided" and c["verdict"].needed > 100


def _games(pairs):
    rows = []
    for a0, a1, r0 in pairs:
        rows.append({"agent_0": a0, "agent_1": a1, "result_0": r0, "result_1": 1 - r0,
                     "error_seat": ""})
    return pd.DataFrame(rows).astype(str)


def test_rate_rungs_orders_and_anchors_at_the_weakest():
    rng = np.random.default_rng(1)
    pairs = []
    for weak, strong, p in (("w", "m", 0.75), ("m", "s", 0.75)):
        for i in range(400):
            win = int(rng.random() < p)      # the stronger one wins with probability p
            pairs.append((weak, strong, 1 - win) if i % 2 else (strong, weak, win))
    r = strength.rate_rungs(["w", "m", "s"], _games(pairs))
    assert r["elo"].tolist()[0] == 0
    assert 0 < r["elo"][1] < r["elo"][2]
    # 75% is +191 Elo per step
    assert r["elo_low"][1] < 191 < r["elo_high"][1]
    assert r["elo_low"][2] < 382 < r["elo_high"][2]
    assert r["rating_games"].tolist() == [400, 800, 400]


def test_rate_rungs_without_rating_games_is_none():
    assert strength.rate_rungs(["a", "b"], _games([("a", "a", 1)])) is None


def test_book_value_reads_the_proven_winner_of_a_shipped_book():
    """Full Lotus (basic rule) is a proven second-player win, too big to prove in a run:
    its shipped opening book carries the result; the pro rule has no book (not proven)."""
    from niwa.ext.registry import get_game

    lotus = get_game("lotus")
    assert strength.book_value("lotus", lotus.new(seed=0, rule="basic")) == 0.0
    assert strength.book_value("lotus", lotus.new(seed=0, rule="pro")) is None
    assert strength.book_value("lotus", lotus.new(seed=0, towers=2)) is None


def test_ladder_covers_every_player_count():
    """A three-player variant gets its rows and its convergence verdict like a two-player
    one (no proven value: the proof search is two-player only)."""
    from types import SimpleNamespace

    cells, metrics = [], []
    for rank, spec in enumerate(("weak", "mid", "strong")):
        for label, players, wins in (("players=2", 2, (50, 50, 50)),
                                     ("players=3", 3, (33, 50, 80))):
            cells.append(SimpleNamespace(index=len(cells), strength=spec, players=players,
                                         variant_label=label))
            metrics.append({"games": 4000, "decisive": 4000, "wins_0": 40 * wins[rank]})
    rows, verdicts = strength.ladder(metrics, cells, None, {"players=2": None})
    assert [r["players"] for r in rows if r["variant"] == "players=3"] == [3, 3, 3]
    assert len(verdicts) == 2
    assert verdicts[0][0].kind == "equivalent" and verdicts[1][0].kind == "different"
    assert "players=2: at the top rungs (mid -> strong), seat 0's win rate is converged " \
           "within +-5 points" in verdicts[0][1]
    assert "players=3: at the top rungs (mid -> strong), seat 0's win rate is still " \
           "moving" in verdicts[1][1]
