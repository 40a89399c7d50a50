"""Ratings and sequential tests for bot-vs-bot results.

Bradley-Terry / Elo by maximum likelihood (the model of Ordo and BayesElo):

    P(a beats b | a in seat i, b in seat j) = 1 / (1 + exp(-(r_a + h_i - r_b - h_j)))

with one rating r per agent and one advantage h per seat (the first-move advantage in a
two-player game). A draw counts as half a win and half a loss (Ordo's convention). Ratings
are reported in Elo (400 / ln 10 per logit) centred on a mean of 0, seat terms centred on a
mean of 0; 95% intervals come from the inverse observed information (the Hessian), the way
BayesElo reports them.

A multiplayer game is split into its N(N-1)/2 seat pairs ("pairwise decomposition"); each
pair gets weight 1/(N-1), so every player carries the weight of one game per game, and the
intervals are not made narrower by counting one game many times over.

A weak prior keeps every estimate finite when an agent wins or loses everything:
`prior_draws` virtual draws between every two agents that met and between every two seats
(BayesElo uses 2 by default; we use 1). Pass prior_draws=0 for the plain MLE.

SPRT: the generalised SPRT of fishtest / fastchess on the logistic Elo model, with the
log-likelihood ratio computed by maximum likelihood (constrained multinomial MLE) on
trinomial game scores or pentanomial game-pair scores, and Wald's bounds
ln(beta / (1 - alpha)) and ln((1 - beta) / alpha).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq, minimize
from scipy.special import expit
from scipy.stats import norm

from niwa.ext.errors import NiwaError

ELO_PER_LOGIT = 400.0 / math.log(10.0)
Z95 = float(norm.ppf(0.975))


# ---- pairwise decomposition ----------------------------------------------------------
@dataclass
class Comparisons:
    """One row per pairwise comparison: agent a in seat_a against agent b in seat_b."""

    a: np.ndarray
    b: np.ndarray
    seat_a: np.ndarray
    seat_b: np.ndarray
    score: np.ndarray       # a's score: 1 win, 0.5 draw, 0 loss
    weight: np.ndarray

    def __len__(self):
        return len(self.a)


def pairwise_comparisons(agents, results, error_seat=None) -> Comparisons:
    """Split games into seat pairs.

    agents[g][s] is the agent index in seat s of game g, results[g][s] its result;
    error_seat[g] is the seat that forfeited game g (or -1): a forfeit says nothing about
    the other players against each other, so only the pairs involving the forfeiter count.
    Pairs where one agent meets itself are skipped.
    """
    agents = np.asarray(agents, dtype=int)
    results = np.asarray(results, dtype=float)
    n_games, n_seats = agents.shape if agents.size else (0, 2)
    if error_seat is None:
        error_seat = np.full(n_games, -1)
    error_seat = np.asarray(error_seat, dtype=int)
    cols = {k: [] for k in ("a", "b", "seat_a", "seat_b", "score", "weight")}
    weight = 1.0 / max(n_seats - 1, 1)
    for i in range(n_seats):
        for j in range(i + 1, n_seats):
            keep = (agents[:, i] != agents[:, j]) & (
                (error_seat < 0) | (error_seat == i) | (error_seat == j))
            diff = results[keep, i] - results[keep, j]
            cols["a"].append(agents[keep, i])
            cols["b"].append(agents[keep, j])
            cols["seat_a"].append(np.full(keep.sum(), i))
            cols["seat_b"].append(np.full(keep.sum(), j))
            cols["score"].append(np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, 0.5)))
            cols["weight"].append(np.full(keep.sum(), weight))
    if not cols["a"]:
        return Comparisons(*(np.zeros(0) for _ in range(6)))
    return Comparisons(*(np.concatenate(cols[k]) for k in cols))


# ---- maximum-likelihood fit ------------------------------------------------------------
@dataclass
class RatingFit:
    """Elo ratings (mean 0) and seat advantages (mean 0) with their covariance."""

    elo: np.ndarray
    cov: np.ndarray                 # covariance of `elo` (Elo^2)
    seat_elo: np.ndarray
    seat_cov: np.ndarray
    converged: bool = True
    n_comparisons: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def se(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.cov), 0, None))

    @property
    def low(self) -> np.ndarray:
        return self.elo - Z95 * self.se

    @property
    def high(self) -> np.ndarray:
        return self.elo + Z95 * self.se

    @property
    def seat_se(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.seat_cov), 0, None))

    def los(self, i: int, j: int) -> float:
        """Likelihood of superiority: P(agent i is stronger than agent j) under the fit."""
        var = self.cov[i, i] + self.cov[j, j] - 2 * self.cov[i, j]
        diff = self.elo[i] - self.elo[j]
        if not var > 0:
            return 0.5 if diff == 0 else float(diff > 0)
        return float(norm.cdf(diff / math.sqrt(var)))


def fit_ratings(n_agents: int, n_seats: int, comps: Comparisons, prior_draws: float = 1.0,
                seat_advantage: bool = True) -> RatingFit:
    """Maximum-likelihood (maximum a posteriori with `prior_draws` > 0) Bradley-Terry fit."""
    n_h = (n_seats - 1) if seat_advantage and n_seats > 1 else 0
    n_free = (n_agents - 1) + n_h

    # Aggregate identical comparisons: the fit then costs O(distinct pairings), not O(games).
    table: dict[tuple, list] = {}
    for a, b, sa, sb, s, w in zip(comps.a, comps.b, comps.seat_a, comps.seat_b,
                                  comps.score, comps.weight, strict=True):
        key = (int(a), int(b), int(sa) if n_h else 0, int(sb) if n_h else 0)
        acc = table.setdefault(key, [0.0, 0.0])
        acc[0] += w * s
        acc[1] += w
    if prior_draws > 0:
        met = {tuple(sorted(k[:2])) for k in table}
        for a, b in met:
            acc = table.setdefault((a, b, 0, 0), [0.0, 0.0])
            acc[0] += prior_draws * 0.5
            acc[1] += prior_draws
        if n_h:
            seats_met = {tuple(sorted(k[2:])) for k in table if k[2] != k[3]}
            for i, j in seats_met:
                # a virtual draw between two seats: the same agent on both sides
                acc = table.setdefault((0, 0, i, j), [0.0, 0.0])
                acc[0] += prior_draws * 0.5
                acc[1] += prior_draws

    rows = list(table)
    X = np.zeros((len(rows), n_free))
    for k, (a, b, sa, sb) in enumerate(rows):
        # parameters: r_1..r_{n-1} (r_0 = 0), then h_1..h_{S-1} (h_0 = 0)
        if a > 0:
            X[k, a - 1] += 1
        if b > 0:
            X[k, b - 1] -= 1
        if n_h:
            if sa > 0:
                X[k, n_agents - 1 + sa - 1] += 1
            if sb > 0:
                X[k, n_agents - 1 + sb - 1] -= 1
    won = np.array([table[r][0] for r in rows])
    weight = np.array([table[r][1] for r in rows])

    def nll(theta):
        x = X @ theta
        return float(np.sum(weight * np.logaddexp(0.0, x) - won * x))

    def grad(theta):
        return X.T @ (weight * expit(X @ theta) - won)

    def hess(theta):
        p = expit(X @ theta)
        return (X.T * (weight * p * (1 - p))) @ X

    converged = True
    if n_free and len(rows):
        res = minimize(nll, np.zeros(n_free), jac=grad, hess=hess, method="trust-exact",
                       options={"gtol": 1e-10, "maxiter": 500})
        theta, converged = res.x, bool(res.success)
        cov_theta = np.linalg.pinv(hess(theta))
    else:
        theta = np.zeros(n_free)
        cov_theta = np.full((n_free, n_free), np.nan)

    # full = J theta (insert the fixed zeros), centred = C full
    def centring(n, offset):
        J = np.zeros((n, n_free))
        for i in range(1, n):
            J[i, offset + i - 1] = 1
        C = np.eye(n) - 1.0 / n
        return C @ J

    M_r = centring(n_agents, 0)
    elo = ELO_PER_LOGIT * (M_r @ theta)
    cov = ELO_PER_LOGIT**2 * (M_r @ cov_theta @ M_r.T)
    if n_h:
        M_h = centring(n_seats, n_agents - 1)
        seat_elo = ELO_PER_LOGIT * (M_h @ theta)
        seat_cov = ELO_PER_LOGIT**2 * (M_h @ cov_theta @ M_h.T)
    else:
        seat_elo = np.zeros(max(n_seats, 1))
        seat_cov = np.zeros((len(seat_elo), len(seat_elo)))
    return RatingFit(elo, cov, seat_elo, seat_cov, converged, float(np.sum(comps.weight)))


# ---- simple match statistics -----------------------------------------------------------
def los_from_counts(wins: float, losses: float) -> float:
    """cutechess-cli's likelihood of superiority from a head-to-head (draws cancel)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * (wins + losses))))


def elo_to_score(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def score_to_elo(score: float) -> float:
    score = min(max(score, 1e-9), 1 - 1e-9)
    return -400.0 * math.log10(1.0 / score - 1.0)


# ---- SPRT ------------------------------------------------------------------------------
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
