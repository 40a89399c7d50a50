"""Interval and test math of niwa.analysis.stats against published values and scipy."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from niwa.analysis import stats as st


# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I,
# method 3 (Wilson score interval without continuity correction).
@pytest.mark.parametrize("k, n, low, high", [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_interval_matches_published_values(k, n, low, high):
    lo, hi = st.wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=6e-5) and hi == pytest.approx(high, abs=6e-5)


def test_wilson_interval_is_the_closed_form_score_interval():
    z = sps.norm.ppf(0.975)
    for k, n in [(3, 10), (50, 100), (999, 1000), (7, 7)]:
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        lo, hi = st.wilson_interval(k, n)
        assert lo == pytest.approx(max(0.0, centre - half), abs=1e-12)
        assert hi == pytest.approx(min(1.0, centre + half), abs=1e-12)
    assert all(math.isnan(x) for x in st.wilson_interval(0, 0))


def test_wilson_interval_agrees_with_scipy_binomtest():
    """The closed form gives scipy's numbers at every count, size and confidence tried."""
    for n in (1, 2, 5, 17, 100, 2001):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for confidence in (0.8, 0.95, 0.99):
                ci = sps.binomtest(k, n).proportion_ci(confidence, method="wilson")
                assert st.wilson_interval(k, n, confidence) == pytest.approx(
                    (ci.low, ci.high), abs=1e-12), (k, n, confidence)
    with pytest.raises(ValueError, match="successes"):
        st.wilson_interval(11, 10)
    with pytest.raises(ValueError, match="confidence"):
        st.wilson_interval(1, 10, confidence=1.0)


# Newcombe (1998), "Interval estimation for the difference between independent
# proportions", Table II, method 10 (hybrid score interval without continuity correction).
@pytest.mark.parametrize("k1, n1, k2, n2, low, high", [
    (56, 70, 48, 80, 0.0524, 0.3339),
    (9, 10, 3, 10, 0.1705, 0.8090),
    (6, 7, 2, 7, 0.0582, 0.8062),
    (5, 56, 0, 29, -0.0381, 0.1926),
])
def test_newcombe_interval_matches_published_values(k1, n1, k2, n2, low, high):
    d, lo, hi = st.newcombe_interval(k1, n1, k2, n2)
    assert d == pytest.approx(k1 / n1 - k2 / n2)
    assert lo == pytest.approx(low, abs=6e-5) and hi == pytest.approx(high, abs=6e-5)


def test_binomial_p_is_the_exact_two_sided_test():
    # P(X <= 3) + P(X >= 7) for X ~ Bin(10, 1/2) = 2 * 176 / 1024
    assert st.binomial_p(7, 10, 0.5) == pytest.approx(352 / 1024)
    assert st.binomial_p(5, 10, 0.5) == pytest.approx(1.0)
    assert math.isnan(st.binomial_p(0, 0, 0.5))


def test_fisher_on_a_2x2_table_with_phi_and_odds_ratio():
    # Fisher's tea-tasting table: two-sided p = 34/70
    t = st.compare_tables([[3, 1], [1, 3]])
    assert t.test == "Fisher exact" and t.p == pytest.approx(34 / 70)
    assert t.statistic == pytest.approx(9.0)          # sample odds ratio 3*3 / (1*1)
    t = st.compare_tables([[10, 20], [20, 10]])
    assert t.effect == pytest.approx(1 / 3) and t.effect_name == "phi"   # |ad-bc|/sqrt(...)
    assert t.p == pytest.approx(sps.fisher_exact([[10, 20], [20, 10]]).pvalue)
    assert t.odds_ratio_low < t.odds_ratio < t.odds_ratio_high < 1


def test_chi_square_on_a_larger_table_with_cramers_v():
    # expected counts 15, 15, 5 in both rows: chi2 = 2 * (25/15 + 25/15) = 20/3
    t = st.compare_tables([[10, 20, 5], [20, 10, 5]])
    assert t.test == "chi-square" and t.statistic == pytest.approx(20 / 3)
    assert t.p == pytest.approx(sps.chi2.sf(20 / 3, 2))
    assert t.effect == pytest.approx(math.sqrt(20 / 3 / 70))
    assert "approximate" in st.compare_tables([[1, 2, 1], [2, 1, 0]]).note


def test_empty_rows_or_columns_are_not_tested():
    assert st.compare_tables([[0, 0], [3, 4]]).test == "none"
    t = st.compare_tables([[5, 0, 3], [2, 0, 6]])     # the empty seat column is dropped
    assert t.test == "Fisher exact"


def test_seat_uniformity():
    assert st.seat_uniformity_p([7, 3]) == pytest.approx(st.binomial_p(7, 10, 0.5))
    assert st.seat_uniformity_p([10, 10, 10]) == pytest.approx(1.0)
    assert st.seat_uniformity_p([30, 10, 20]) == pytest.approx(sps.chi2.sf(10.0, 2))


def test_lengths_mann_whitney_and_rank_biserial():
    t = st.compare_lengths([1, 2, 3], [4, 5, 6])
    assert t.u == 0 and t.rank_biserial == -1.0 and t.p == pytest.approx(0.1)  # 2 / C(6,3)
    t = st.compare_lengths([4, 5, 6], [1, 2, 3])
    assert t.rank_biserial == 1.0
    assert st.compare_lengths([5, 5], [5, 5]).p == 1.0


def test_describe():
    d = st.describe([1, 2, 3, 4, 5, 6, 7, 8])
    assert d["mean"] == 4.5 and d["median"] == 4.5 and d["min"] == 1 and d["max"] == 8
    assert d["q1"] == pytest.approx(2.75) and d["q3"] == pytest.approx(6.25)
    assert d["sd"] == pytest.approx(np.std(np.arange(1, 9), ddof=1))
    assert math.isnan(st.describe([])["mean"])


def test_holm():
    # sorted 0.01, 0.03, 0.04 -> 3*0.01, max(.., 2*0.03), max(.., 1*0.04)
    assert st.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    adjusted = st.holm([0.5, math.nan, 0.9])
    assert adjusted[0] == pytest.approx(1.0) and math.isnan(adjusted[1])
    assert st.holm([]) == []


def test_large_tables_use_the_woolf_odds_ratio_interval():
    import time

    start = time.perf_counter()
    t = st.compare_tables([[50000, 50000], [51000, 49000]])
    assert time.perf_counter() - start < 2
    se = math.sqrt(1 / 50000 + 1 / 50000 + 1 / 51000 + 1 / 49000)
    odds = 50000 * 49000 / (50000 * 51000)
    z = sps.norm.ppf(0.975)
    assert t.odds_ratio == pytest.approx(odds)
    assert t.odds_ratio_low == pytest.approx(odds * math.exp(-z * se))
    assert t.odds_ratio_high == pytest.approx(odds * math.exp(z * se))
