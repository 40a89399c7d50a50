"""Sequential probability ratio test (SPRT) for "is agent A stronger than agent B?".

Model: the generalised SPRT of fishtest / fastchess on the logistic Elo model
(score = 1 / (1 + 10^(-elo / 400))), with the log-likelihood ratio computed by maximum
likelihood (constrained multinomial MLE) on trinomial game scores or pentanomial
game-pair scores, and Wald's bounds ln(beta / (1 - alpha)) and ln((1 - beta) / alpha).
H0: Elo = elo0, H1: Elo = elo1; game pairs are assumed independent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from niwa.analysis.stats.ratings import elo_to_score
from niwa.ext.errors import NiwaError

TRINOMIAL = (0.0, 0.5, 1.0)
PENTANOMIAL = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class SprtSpec:
    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def as_dict(self) -> dict:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}


def parse_sprt(text: str) -> SprtSpec:
    """'elo0=0,elo1=10,alpha=0.05,beta=0.05' (any subset) -> SprtSpec."""
    values = SprtSpec().as_dict()
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in values:
            raise NiwaError(f"--sprt part {item!r} should be one of elo0=, elo1=, alpha=, beta=")
        try:
            values[key] = float(value)
        except ValueError:
            raise NiwaError(f"--sprt {key}={value!r} should be a number") from None
    spec = SprtSpec(**values)
    if not spec.elo1 > spec.elo0:
        raise NiwaError(f"--sprt needs elo1 > elo0, got elo0={spec.elo0:g} elo1={spec.elo1:g}")
    if not (0 < spec.alpha < 0.5 and 0 < spec.beta < 0.5):
        raise NiwaError("--sprt alpha and beta must lie in (0, 0.5)")
    return spec


def _regularize(counts) -> np.ndarray:
    # fishtest's trick: empty categories get a tiny count so a hypothesis's mean stays
    # reachable (an all-wins sample must still admit some probability of a loss)
    counts = np.asarray(counts, dtype=float)
    return np.where(counts > 0, counts, 1e-3)


def _mle_under_mean(freqs: np.ndarray, scores: np.ndarray, mean: float) -> np.ndarray:
    """The multinomial closest (max likelihood) to `freqs` whose expected score is `mean`.

    Lagrange: p_i = f_i / (1 + lam (x_i - mean)), lam the root of sum p_i (x_i - mean) = 0.
    """
    d = scores - mean
    lo, hi = -1.0 / d.max(), -1.0 / d.min()   # keep every denominator positive
    eps = 1e-12 * (hi - lo)
    lam = brentq(lambda t: float(np.sum(freqs * d / (1 + t * d))), lo + eps, hi - eps,
                 xtol=1e-15, maxiter=500)
    return freqs / (1 + lam * d)


def sprt_llr(counts, scores=TRINOMIAL, elo0: float = 0.0, elo1: float = 10.0) -> float:
    """Generalised log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0).

    counts[k] is how often the outcome with score scores[k] occurred (trinomial: games as
    L/D/W; pentanomial: game pairs scoring 0, 1/4, 1/2, 3/4, 1).
    """
    counts = _regularize(counts)
    scores = np.asarray(scores, dtype=float)
    freqs = counts / counts.sum()
    p0 = _mle_under_mean(freqs, scores, elo_to_score(elo0))
    p1 = _mle_under_mean(freqs, scores, elo_to_score(elo1))
    return float(np.sum(counts * np.log(p1 / p0)))


def sprt_llr_approx(counts, scores=TRINOMIAL, elo0: float = 0.0, elo1: float = 10.0) -> float:
    """The usual closed-form approximation N (s1-s0)(2 m - s0 - s1) / (2 var)."""
    counts = np.asarray(counts, dtype=float)
    scores = np.asarray(scores, dtype=float)
    n = counts.sum()
    mean = float(np.sum(counts * scores) / n)
    var = float(np.sum(counts * scores**2) / n) - mean**2
    s0, s1 = elo_to_score(elo0), elo_to_score(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


class SprtTracker:
    """Feeds game pairs (in schedule order) into a pentanomial SPRT."""

    def __init__(self, spec: SprtSpec):
        self.spec = spec
        self.counts = [0] * 5
        self.llr = 0.0
        self.decision: str | None = None   # "H0" (not stronger by elo1) / "H1"

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def add_pair(self, score_first: float, score_second: float) -> str | None:
        """Add one game pair (the tested agent's two scores); returns the decision if any."""
        self.counts[int(round((score_first + score_second) * 2))] += 1
        self.llr = sprt_llr(self.counts, PENTANOMIAL, self.spec.elo0, self.spec.elo1)
        if self.llr >= self.spec.upper:
            self.decision = "H1"
        elif self.llr <= self.spec.lower:
            self.decision = "H0"
        return self.decision

    def summary(self) -> dict:
        return {**self.spec.as_dict(), "model": "logistic, pentanomial (game pairs)",
                "llr": round(self.llr, 4), "lower": round(self.spec.lower, 4),
                "upper": round(self.spec.upper, 4), "pairs": self.pairs,
                "pentanomial": list(self.counts), "decision": self.decision}
