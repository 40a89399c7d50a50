"""Experiment planning, per-variant metrics on hand-computed samples, comparisons, verdicts."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from niwa.analysis import stats as st
from niwa.analysis.experiments import findings as vf
from niwa.analysis.experiments import metrics as vm
from niwa.analysis.experiments import variants as va
from niwa.ext.errors import NiwaError
from niwa.solver.agents import REGISTRY, RandomAgent, register_agent


@pytest.fixture(scope="module", autouse=True)
def test_agent():
    """A random agent with a dummy strength parameter, to test sweeps without search."""
    register_agent("testrandom", RandomAgent, {"iters": (int, 1, "ignored")}, "test only")
    yield
    REGISTRY.pop("testrandom", None)


# ---- parsing and planning --------------------------------------------------------------
def test_parse_vary():
    assert va.parse_vary(["rule=basic,pro", "players=2, 3"], "lotus") == [
        ["rule", ["basic", "pro"]], ["players", ["2", "3"]]]
    for bad, words in [("rule", "KEY=V1,V2"), ("rule=", "KEY=V1,V2"), ("colour=red", "no setting"),
                       ("rule=basic,basic", "repeats")]:
        with pytest.raises(NiwaError, match=words):
            va.parse_vary([bad], "lotus")
    with pytest.raises(NiwaError, match="twice"):
        va.parse_vary(["rule=basic", "rule=pro"], "lotus")


def test_parse_strengths():
    assert va.parse_strengths(["testrandom:iters=1,10,100"]) == [
        "testrandom:iters=1", "testrandom:iters=10", "testrandom:iters=100"]
    assert va.parse_strengths(["random", "testrandom:iters=5"]) == ["random", "testrandom:iters=5"]
    with pytest.raises(NiwaError, match="unknown agent"):
        va.parse_strengths(["nosuch:iters=1,2"])
    with pytest.raises(NiwaError, match="twice"):
        va.parse_strengths(["testrandom:iters=1,1"])


def test_plan_cells_grid_seeds_and_rounding():
    exp = va.Experiment("lotus", vary=[["rule", ["basic", "pro"]], ["players", ["2", "3"]]],
                        games=10)
    cells, notes = va.plan_cells(exp)
    assert [c.label for c in cells] == ["rule=basic players=2", "rule=basic players=3",
                                        "rule=pro players=2", "rule=pro players=3"]
    assert [c.players for c in cells] == [2, 3, 2, 3]
    assert [c.games for c in cells] == [10, 12, 10, 12]       # 3 players: rounds of 3! = 6
    assert any("rounded up to 12" in n for n in notes)
    assert len({c.config.seed for c in cells}) == 4             # independent samples
    assert cells[3].variant["rule"] == "pro" and cells[3].config.agents == ["random"] * 3
    ids = [t.game_id for t in va.cell_schedule(cells[3])]
    assert ids == list(range(3 * va.STRIDE, 3 * va.STRIDE + 12))
    # the same experiment plans the same games
    again, _ = va.plan_cells(exp)
    assert [c.config for c in again] == [c.config for c in cells]


def test_plan_cells_rejects_bad_input():
    with pytest.raises(NiwaError, match="out of range"):
        va.plan_cells(va.Experiment("lotus", vary=[["rule", ["basic", "ultra"]]]))
    with pytest.raises(NiwaError, match="not both"):
        va.plan_cells(va.Experiment("lotus", vary=[["players", ["2", "3"]]], players=2))
    with pytest.raises(NiwaError, match="unknown agent"):
        va.plan_cells(va.Experiment("lotus", agents=["nosuch"]))
    with pytest.raises(NiwaError, match="at least 1"):
        va.plan_cells(va.Experiment("lotus", games=0))
    with pytest.raises(NiwaError, match="unknown game"):
        va.plan_cells(va.Experiment("chess"))


# ---- metrics on hand-made samples ------------------------------------------------------
def _games(cell, rows):
    """A games table for `cell` from (results, plies, stats[, error_seat]) tuples."""
    out = []
    for i, r in enumerate(rows):
        results, plies, stats = r[:3]
        error_seat = r[3] if len(r) > 3 else ""
        row = dict.fromkeys(va.game_columns([cell]), "")
        row.update({"game_id": str(cell.index * va.STRIDE + i), "plies": str(plies),
                    "capped": "0", "error_seat": str(error_seat),
                    "scores": json.dumps(stats), "cell": str(cell.index)})
        for s, x in enumerate(results):
            row[f"result_{s}"] = str(float(x))
        out.append(row)
    return pd.DataFrame(out)


def _cell(players=2, **settings):
    vary = [[k, [str(v)]] for k, v in settings.items()]
    exp = va.Experiment("lotus", vary=vary, players=players, games=2)
    return va.plan_cells(exp)[0][0]


def test_two_player_metrics_by_hand():
    cell = _cell()
    rows = ([([1, 0], 100, {"remaining": [0, 4]})] * 6      # seat 0 wins 6
            + [([0, 1], 120, {"remaining": [2, 0]})] * 2    # seat 1 wins 2
            + [([0.5, 0.5], 140, {"remaining": [1, 1]})]     # a draw (not decisive)
            + [([0, 1], 10, {}, 0)])                         # a forfeit: left out
    m = vm.cell_metrics(cell, _games(cell, rows))
    assert (m["games"], m["forfeits"], m["draws"], m["decisive"]) == (10, 1, 1, 8)
    assert m["wins_0"] == 6 and m["win_0"] == pytest.approx(0.75)
    assert (m["win_0_low"], m["win_0_high"]) == pytest.approx(st.wilson_interval(6, 8))
    assert m["first_player_advantage"] == pytest.approx(0.25)
    assert m["fpa_low"] == pytest.approx(st.wilson_interval(6, 8)[0] - 0.5)
    assert m["fpa_p"] == pytest.approx(2 * (1 + 8 + 28) / 256)    # exact binomial, 6 of 8
    assert m["balance"] == pytest.approx(1 - (0.75 - 0.25))
    plies = [100] * 6 + [120] * 2 + [140]
    assert m["plies_mean"] == pytest.approx(np.mean(plies))
    assert m["plies_median"] == 100 and m["plies_q3"] == 120 and m["plies_max"] == 140
    # runner-up's distance left: 4 (x6), 2 (x2); the draw has no loser
    assert m["runner_up_remaining_mean"] == pytest.approx((6 * 4 + 2 * 2) / 8)
    assert "lead_changes_mean" not in m and "score_0_mean" not in m


def test_running_score_metrics_by_hand():
    cell = _cell()
    rows = [
        # seat 0 leads, falls behind, wins: 2 lead changes, a comeback
        ([1, 0], 50, {"score_history": [[0, 0], [1, 0], [1, 2], [3, 2], [3, 3], [5, 3]],
                      "scores": [5, 3], "rounds": 5}),
        # seat 1 leads throughout: no lead change, no comeback
        ([0, 1], 30, {"score_history": [[0, 1], [0, 3], [2, 5]], "scores": [2, 5],
                      "rounds": 3}),
        # ties then seat 1: one leader only; seat 1 was never behind
        ([0, 1], 40, {"score_history": [[0, 0], [2, 2], [2, 5]], "scores": [2, 5],
                      "rounds": 3}),
        # seat 1 leads, then seat 0 leads and wins: 1 change, a comeback
        ([1, 0], 60, {"score_history": [[0, 2], [3, 2], [5, 2]], "scores": [5, 2],
                      "rounds": 3}),
    ]
    m = vm.cell_metrics(cell, _games(cell, rows))
    assert m["lead_changes_mean"] == pytest.approx((2 + 0 + 0 + 1) / 4)
    assert m["lead_change_games"] == pytest.approx(2 / 4)
    assert m["comeback"] == pytest.approx(2 / 4)
    assert m["score_0_mean"] == pytest.approx(14 / 4) and m["score_1_mean"] == pytest.approx(3.75)
    assert m["margin_mean"] == pytest.approx((2 + 3 + 3 + 3) / 4)
    assert m["winner_score_mean"] == pytest.approx(5.0)
    assert m["rounds_mean"] == pytest.approx(3.5)


def test_lead_changes_and_was_behind():
    assert vm.lead_changes([[0, 0], [1, 0], [1, 2], [3, 2], [3, 3], [4, 3]]) == (2, 0)
    assert vm.lead_changes([[0, 0], [2, 0], [2, 2], [2, 3]]) == (1, 1)
    assert vm.lead_changes([]) == (0, None)
    assert vm.lead_changes([[1, 1, 0], [1, 2, 2], [3, 2, 2]]) == (0, 0)
    assert vm.was_behind([[0, 0], [0, 1], [2, 1]], 0)
    assert not vm.was_behind([[0, 0], [1, 0], [1, 1]], 0)


def test_outcome_counts():
    wins, draws = vm.outcome_counts(np.array([[1, 0], [0, 1], [0.5, 0.5], [1, 0]]))
    assert wins.tolist() == [2, 1] and draws == 1
    wins, draws = vm.outcome_counts(np.array([[0, 0, 1], [0, 1, 0], [1 / 3] * 3]))
    assert wins.tolist() == [0, 1, 1] and draws == 1


def test_goal_claim_rates_by_hand():
    cell = _cell()
    # dict shape: goal -> claimer (-1 open); brown-s in play 3 times, claimed twice
    rows = [([1, 0], 10, {"goals_claimed": {"brown-s": 0, "green-m": -1}}),
            ([0, 1], 10, {"goals_claimed": {"brown-s": 1, "pink-l": 1}}),
            ([0, 1], 10, {"goals_claimed": {"brown-s": -1, "green-m": None}})]
    m = vm.cell_metrics(cell, _games(cell, rows))
    assert m["goal_claim:brown-s"] == pytest.approx(2 / 3)
    assert m["goal_claim:green-m"] == 0.0 and m["goal_claim:pink-l"] == 1.0
    # list-per-seat shape: presence unknown, so the rate is over all games
    rows = [([1, 0], 10, {"goals_claimed": [["a"], []]}),
            ([0, 1], 10, {"goals_claimed": [[], ["a", "b"]]})]
    m = vm.cell_metrics(cell, _games(cell, rows))
    assert m["goal_claim:a"] == 1.0 and m["goal_claim:b"] == 0.5
    # Bonsai's shape: claims per seat plus the goals dealt; a goal counts where it was dealt
    rows = [([1, 0], 10, {"goals_claimed": [["a"], []], "goals_in_play": ["a", "c"]}),
            ([0, 1], 10, {"goals_claimed": [[], []], "goals_in_play": ["a", "b"]}),
            ([0, 1], 10, {"goals_claimed": [[], ["b"]], "goals_in_play": ["b", "c"]})]
    m = vm.cell_metrics(cell, _games(cell, rows))
    assert m["goal_claim:a"] == 0.5 and m["goal_claim:b"] == 0.5 and m["goal_claim:c"] == 0.0


def test_three_player_metrics_by_hand():
    cell = _cell(players=3)
    rows = ([([1, 0, 0], 90, {})] * 5 + [([0, 1, 0], 90, {})] * 3 + [([0, 0, 1], 90, {})] * 2)
    m = vm.cell_metrics(cell, _games(cell, rows))
    assert m["fair_share"] == pytest.approx(1 / 3)
    assert m["first_player_advantage"] == pytest.approx(0.5 - 1 / 3)
    assert m["balance"] == pytest.approx(1 - (0.5 - 0.2))
    assert m["seat_uniformity_p"] == pytest.approx(st.seat_uniformity_p([5, 3, 2]))


# ---- comparisons and verdicts ----------------------------------------------------------
def _metric(label, wins0, wins1, plies=100):
    d = wins0 + wins1
    lo, hi = st.wilson_interval(wins0, d)
    return {"label": label, "players": 2, "games": d, "decisive": d, "wins_0": wins0,
            "wins_1": wins1, "win_0": wins0 / d, "win_0_low": lo, "win_0_high": hi,
            "first_player_advantage": wins0 / d - 0.5, "fpa_low": lo - 0.5, "fpa_high": hi - 0.5,
            "fpa_p": st.binomial_p(wins0, d, 0.5), "plies_mean": plies, "fair_share": 0.5}


def _compare(ma, mb):
    a, b = _cell(rule="basic"), _cell(rule="pro")
    ga = _games(a, [([1, 0], 100, {})] * 3)
    gb = _games(b, [([1, 0], 110, {})] * 3)
    c = vf.compare_cells(a, b, ga, gb, ma, mb)
    c["p_adjusted"] = c["p"]
    return c, vf.comparison_verdict(c, ma, mb)


def test_verdict_on_a_large_change_is_different():
    base, var = _metric("rule=basic", 600, 400), _metric("rule=pro", 505, 495)
    c, (v, verdict) = _compare(base, var)
    assert c["test"] == "Fisher exact" and c["p"] < 0.001
    assert c["diff"] == pytest.approx(-0.095)
    assert v.kind == "different"
    assert verdict.startswith("rule=pro vs rule=basic: seat 0's win rate is different "
                              "(-9.5 points, 95% CI")


def test_verdict_equivalent_only_inside_the_margin():
    _, (v, verdict) = _compare(_metric("rule=basic", 5000, 5000),
                               _metric("rule=pro", 5050, 4950))
    assert v.kind == "equivalent" and "equivalent within +-5 points" in verdict
    # a non-significant change on few games is not "no change": undecided, with the
    # games needed
    c, (v, verdict) = _compare(_metric("rule=basic", 52, 48), _metric("rule=pro", 50, 50))
    assert c["p"] > 0.05
    assert v.kind == "undecided" and "more games needed, about" in verdict
    assert v.needed > 100


def test_advantage_verdicts_do_not_overstate():
    v, text = vf.advantage_verdict(_metric("x", 600, 400))
    assert v.kind == "different" and "seat 0 has an advantage" in text
    v, text = vf.advantage_verdict(_metric("x", 51, 49))
    assert v.kind == "undecided" and "undecided: more games needed" in text
    v, text = vf.advantage_verdict(_metric("x", 25, 75))
    assert v.kind == "different" and "seat 0 has a disadvantage" in text


def test_comparisons_hold_the_other_settings_fixed():
    exp = va.Experiment("lotus", vary=[["rule", ["basic", "pro"]], ["trampoline",
                                                                      ["optional", "mandatory"]]],
                        games=2)
    cells, _ = va.plan_cells(exp)
    rows = []
    for c in cells:
        rows.append(_games(c, [([1, 0], 100, {}), ([0, 1], 100, {})]))
    summary = vf.summarise(exp, cells, pd.concat(rows, ignore_index=True))
    pairs = [(c["variant"], c["baseline"]) for c in summary.comparisons]
    assert pairs == [
        ("rule=pro trampoline=optional", "rule=basic trampoline=optional"),
        ("rule=pro trampoline=mandatory", "rule=basic trampoline=mandatory"),
        ("rule=basic trampoline=mandatory", "rule=basic trampoline=optional"),
        ("rule=pro trampoline=mandatory", "rule=pro trampoline=optional")]
    assert all(c["tests_in_run"] == 4 and c["p_adjusted"] >= min(c["p"], 1.0) - 1e-12
               for c in summary.comparisons)
    assert not math.isnan(summary.metrics[0]["win_0"])


def test_solo_levels_by_hand():
    thresholds = {1: 80, 2: 100, 3: 120, 4: 140}
    three = ["brown.s", "green.m", "pink.l"]
    assert vm.solo_level_reached({"scores": [105], "goals_claimed": [three]}, thresholds) == 2
    assert vm.solo_level_reached({"scores": [150], "goals_claimed": [three]}, thresholds) == 4
    assert vm.solo_level_reached({"scores": [79], "goals_claimed": [three]}, thresholds) == 0
    # two colours only (two goal tiles of one colour do not count twice)
    assert vm.solo_level_reached({"scores": [150], "goals_claimed": [["brown.s", "brown.m",
                                                                      "pink.l"]]},
                                 thresholds) == 0
    assert vm.solo_level_reached({"scores": [150]}, thresholds) is None


def test_first_player_tests_are_holm_adjusted_over_the_variants():
    exp = va.Experiment("lotus", vary=[["rule", ["basic", "pro"]]], games=100)
    cells, _ = va.plan_cells(exp)
    games = pd.concat([
        _games(cells[0], [([1, 0], 100, {})] * 61 + [([0, 1], 100, {})] * 39),
        _games(cells[1], [([1, 0], 100, {})] * 50 + [([0, 1], 100, {})] * 50)],
        ignore_index=True)
    summary = vf.summarise(exp, cells, games)
    m = summary.metrics[0]
    assert m["fpa_p"] == pytest.approx(st.binomial_p(61, 100, 0.5)) and m["fpa_p"] < 0.05
    assert m["fpa_p_adjusted"] == pytest.approx(2 * m["fpa_p"]) and m["fpa_p_adjusted"] > 0.05
    # the adjusted p-value goes to the table; the verdict reads the printed interval,
    # which excludes 0, and says so with the interval it rests on
    assert m["verdict_kind"] == "different" and m["fpa_low"] > 0
    assert "seat 0 has an advantage (+11.0 points, 95% CI +1.2 to +20.0" in m["verdict"]
