"""Interval estimates for rates (thin wrappers over scipy.stats).

Model: each game is an independent Bernoulli trial with a fixed success rate.
- One proportion: Wilson score interval (scipy's `binomtest(...).proportion_ci`), which keeps
  its coverage near 95% even for rates close to 0 or 1 and for small samples, where the
  textbook "p +- 1.96 se" interval does not; the exact two-sided binomial test against a
  given rate.
- Difference of two proportions: Newcombe's hybrid score interval (method 10 of Newcombe
  1998), built from the two Wilson intervals. scipy has no two-sample proportion interval;
  this is the few lines of the published formula.
"""

from __future__ import annotations

import math

from scipy import stats

CONFIDENCE = 0.95


def wilson_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for successes / n; (nan, nan) for n == 0."""
    if n <= 0:
        return (math.nan, math.nan)
    ci = stats.binomtest(int(successes), int(n)).proportion_ci(confidence, method="wilson")
    return (float(ci.low), float(ci.high))


def binomial_p(successes: int, n: int, p: float) -> float:
    """Two-sided exact binomial test of successes / n against rate p (nan for n == 0)."""
    if n <= 0:
        return math.nan
    return float(stats.binomtest(int(successes), int(n), p).pvalue)


def newcombe_interval(k1: int, n1: int, k2: int, n2: int,
                      confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(p1 - p2, low, high): Newcombe's hybrid score interval for a difference of rates."""
    if n1 <= 0 or n2 <= 0:
        return (math.nan, math.nan, math.nan)
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson_interval(k1, n1, confidence)
    l2, u2 = wilson_interval(k2, n2, confidence)
    d = p1 - p2
    return (d, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))
