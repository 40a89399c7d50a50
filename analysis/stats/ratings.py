"""Ratings for bot-vs-bot results: maximum-likelihood Elo with a seat advantage, and LOS.

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import norm

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

    def difference(self, i: int, j: int) -> tuple[float, float]:
        """Agent i's rating minus agent j's, and half its 95% interval (from the fit's
        covariance: the two ratings are not independent).

        >>> fit = RatingFit(np.array([50.0, -50.0]), np.array([[400.0, -400.0],
        ...                 [-400.0, 400.0]]), np.zeros(2), np.zeros((2, 2)))
        >>> diff, half = fit.difference(0, 1)
        >>> diff, round(half, 1)        # sd 40: 1.96 x 40
        (100.0, 78.4)
        """
        var = self.cov[i, i] + self.cov[j, j] - 2 * self.cov[i, j]
        half = Z95 * math.sqrt(var) if var > 0 else (0.0 if var == 0 else math.nan)
        return float(self.elo[i] - self.elo[j]), float(half)

    def los(self, i: int, j: int) -> float:
        """Likelihood of superiority: P(agent i is stronger than agent j) under the fit."""
        var = self.cov[i, i] + self.cov[j, j] - 2 * self.cov[i, j]
        diff = self.elo[i] - self.elo[j]
        if not var > 0:
            return 0.5 if diff == 0 else float(diff > 0)
        return float(norm.cdf(diff / math.sqrt(var)))


def _aggregate(comps: Comparisons, n_h: int, prior_draws: float) -> dict[tuple, list]:
    """(agent a, agent b, seat a, seat b) -> [weighted points of a, weight], with the
    prior's virtual draws added."""
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

    return table


def fit_ratings(n_agents: int, n_seats: int, comps: Comparisons, prior_draws: float = 1.0,
                seat_advantage: bool = True) -> RatingFit:
    """Maximum-likelihood (maximum a posteriori with `prior_draws` > 0) Bradley-Terry fit."""
    n_h = (n_seats - 1) if seat_advantage and n_seats > 1 else 0
    n_free = (n_agents - 1) + n_h

    table = _aggregate(comps, n_h, prior_draws)
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
