"""Interval estimates for rates (published closed forms; the exact test from scipy.stats).

Model: each game is an independent Bernoulli trial with a fixed success rate.
- One proportion: Wilson score interval (Wilson 1927; Newcombe 1998, method 3), which keeps
  its coverage near 95% even for rates close to 0 or 1 and for small samples, where the
  textbook "p +- 1.96 se" interval does not; the exact two-sided binomial test against a
  given rate (scipy). The Wilson interval is its closed form, the same numbers as scipy's
  `binomtest(...).proportion_ci(method="wilson")` (tested), which also runs the test's
  p-value search and so takes about 9 ms against a few microseconds: the verdict property
  test asks for hundreds of thousands.
- Difference of two proportions: Newcombe's hybrid score interval (method 10 of Newcombe
  1998), built from the two Wilson intervals. scipy has no two-sample proportion interval;
  this is the few lines of the published formula.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

from scipy import stats

CONFIDENCE = 0.95


@lru_cache(maxsize=16)
def _z(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (1.95996... for 0.95)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for successes / n; (nan, nan) for n == 0.

    With p = k / n and z the normal quantile, the interval is the two roots in rate r of
    (p - r)^2 = z^2 r (1 - r) / n: centre (p + z^2/2n) / (1 + z^2/n), half-width
    z / (1 + z^2/n) * sqrt(p(1 - p)/n + z^2/4n^2).

    >>> [round(x, 4) for x in wilson_interval(81, 263)]   # Newcombe 1998, Table I
    [0.2553, 0.3662]
    """
    if n <= 0:
        return (math.nan, math.nan)
    k, n = int(successes), int(n)
    if not 0 <= k <= n:
        raise ValueError(f"successes must lie in 0..{n}, not {k}")
    z = _z(confidence)
    p, zz = k / n, z * z / n
    centre = (p + zz / 2) / (1 + zz)
    half = z / (1 + zz) * math.sqrt(p * (1 - p) / n + zz / (4 * n))
    # at k = 0 or k = n one root is exactly 0 or 1; rounding must not leave it outside
    return (0.0 if k == 0 else max(0.0, centre - half),
            1.0 if k == n else min(1.0, centre + half))


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
