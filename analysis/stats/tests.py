"""Tests between samples of games (thin wrappers over scipy.stats).

Model: games are independent; outcomes are counted per seat, lengths are compared as
samples with no assumed distribution.
- Seat outcome differences between two variants: Fisher's exact test on a 2x2 table (with the
  odds ratio and its interval: conditional MLE for small tables, Woolf's for large ones;
  and phi), chi-square on larger tables (with
  Cramer's V). Game lengths: Mann-Whitney U with the rank-biserial correlation.
- Wins spread evenly over the seats: exact binomial (2 seats) or chi-square goodness of fit.
- Several comparisons at once: Holm's step-down adjustment (family-wise error).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.stats.contingency import association

from niwa.analysis.stats.intervals import CONFIDENCE, binomial_p


def seat_uniformity_p(wins_by_seat) -> float:
    """Are wins spread evenly over the seats? Exact binomial for 2 seats, else chi-square."""
    wins = np.asarray(wins_by_seat, dtype=int)
    total = int(wins.sum())
    if total == 0:
        return math.nan
    if len(wins) == 2:
        return binomial_p(int(wins[0]), total, 0.5)
    return float(stats.chisquare(wins).pvalue)


@dataclass
class TableTest:
    """A test of independence between rows (variants) and columns (outcomes) of a table."""

    test: str               # "Fisher exact" or "chi-square"
    statistic: float        # the odds ratio for Fisher, chi-square otherwise
    p: float
    effect: float           # phi (2x2) or Cramer's V (larger tables), 0..1
    effect_name: str
    odds_ratio: float = math.nan
    odds_ratio_low: float = math.nan
    odds_ratio_high: float = math.nan
    note: str = ""


def compare_tables(table, confidence: float = CONFIDENCE) -> TableTest:
    """Rows = variants, columns = outcome counts (e.g. wins by seat, or seat-0 win / not).

    A 2x2 table gets Fisher's exact test (valid at every sample size; no continuity
    correction to argue about). Larger tables get Pearson's chi-square, with a note when
    expected counts are small. Empty rows and columns are dropped first.
    """
    t = np.asarray(table, dtype=np.int64)
    t = t[t.sum(axis=1) > 0][:, t.sum(axis=0) > 0] if t.size else t
    if t.ndim != 2 or t.shape[0] < 2 or t.shape[1] < 2:
        return TableTest("none", math.nan, math.nan, math.nan, "",
                         note="nothing to compare (a row or column is empty)")
    if t.shape == (2, 2):
        res = stats.fisher_exact(t)
        # the conditional MLE and its exact interval for small tables; the sample odds
        # ratio and its log-normal (Woolf) interval for large ones, where the exact one is
        # the same to 3 digits and takes minutes
        kind = "conditional" if t.sum() <= 5000 or t.min() == 0 else "sample"
        odds = stats.contingency.odds_ratio(t, kind=kind)
        ci = odds.confidence_interval(confidence)
        return TableTest("Fisher exact", float(res.statistic), float(res.pvalue),
                         float(association(t, method="cramer")), "phi",
                         float(odds.statistic), float(ci.low), float(ci.high))
    res = stats.chi2_contingency(t, correction=False)
    small = float(np.mean(res.expected_freq < 5))
    note = "approximate: over 20% of expected counts are below 5" if small > 0.2 else ""
    return TableTest("chi-square", float(res.statistic), float(res.pvalue),
                     float(association(t, method="cramer")), "Cramer's V", note=note)


@dataclass
class LengthTest:
    p: float
    rank_biserial: float    # P(a > b) - P(a < b), -1..1: positive when a runs longer
    u: float


def compare_lengths(a, b) -> LengthTest:
    """Mann-Whitney U test (two-sided) of two length samples, with the rank-biserial r."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) == 0 or len(b) == 0:
        return LengthTest(math.nan, math.nan, math.nan)
    if np.all(a == a[0]) and np.all(b == a[0]):
        return LengthTest(1.0, 0.0, len(a) * len(b) / 2)
    res = stats.mannwhitneyu(a, b, alternative="two-sided")
    return LengthTest(float(res.pvalue), 2.0 * float(res.statistic) / (len(a) * len(b)) - 1.0,
                      float(res.statistic))


def describe(values) -> dict:
    """mean, sd (sample), min, quartiles, max of a sample; nans when it is empty."""
    v = np.asarray(values, dtype=float)
    keys = ("mean", "sd", "min", "q1", "median", "q3", "max")
    if v.size == 0:
        return dict.fromkeys(keys, math.nan)
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0,
            "min": float(v.min()), "q1": float(q1), "median": float(med), "q3": float(q3),
            "max": float(v.max())}


def holm(pvalues) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given; nans pass through)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    if ok.size == 0:
        return out.tolist()
    order = ok[np.argsort(p[ok], kind="stable")]
    m = len(order)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out.tolist()
