"""Ratings from finishing orders of multiplayer games: Plackett-Luce by maximum likelihood.

Model (Plackett 1975, Luce 1959; the multiplayer generalisation of Bradley-Terry/Elo): the
player in seat s, agent a, has strength u = r_a + h_s (a rating per agent, an advantage
per seat, in logits), and a finishing order is drawn place by place, first to last, each
place going to one of the players still unplaced with probability proportional to
exp(u):

    P(order p_1, ..., p_N) = prod_k  exp(u_{p_k}) / sum_{j >= k} exp(u_{p_j})

For two players this is exactly the logistic Elo model of niwa.analysis.stats.ratings,
so the ratings are in the same Elo units (400 / ln 10 per logit): a rating difference D
means the stronger finishes ahead of the weaker, head to head, with probability
1 / (1 + 10^(-D/400)).

Ties (shared places): the tied players' internal order is unknown; each of its t!
possible orders counts with weight 1/t! (for two players: a draw is half a win and half a
loss, Ordo's convention, as in the pairwise model). Forfeits: the order of the players
who did not forfeit says nothing, so a forfeited game contributes only the forfeiter's
defeats, one two-player comparison against each other player with weight 1/(N-1), as the
pairwise model counts it.

Prior and intervals as in the pairwise model: `prior_draws` virtual two-player draws
between every two agents that met and between every two seats keep every estimate finite;
ratings are centred on a mean of 0 (seat advantages too), and 95% intervals come from the
inverse of the observed information (the Hessian of the negative log-posterior).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from niwa.analysis.stats.ratings import ELO_PER_LOGIT, RatingFit


def places(results: Sequence[float], scores: Sequence[float] | None = None) -> list[float]:
    """Shared-rank places by (result, score), best first."""
    n = len(results)
    keys = [(float(results[s]), float(scores[s]) if scores is not None else 0.0)
            for s in range(n)]
    out = []
    for s in range(n):
        better = sum(k > keys[s] for k in keys)
        tied = sum(k == keys[s] for k in keys)
        out.append(better + (tied + 1) / 2)
    return out


def orderings(places) -> list[tuple[tuple[int, ...], float]]:
    """The seat orders (best first) consistent with `places` (1 = first, ties share a
    place), each with its weight (1 / the number of orders: ties are averaged over)."""
    seats = sorted(range(len(places)), key=lambda s: places[s])
    groups = [list(g) for _, g in itertools.groupby(seats, key=lambda s: places[s])]
    per_group = [list(itertools.permutations(g)) for g in groups]
    total = math.prod(len(p) for p in per_group)
    return [(tuple(s for part in combo for s in part), 1.0 / total)
            for combo in itertools.product(*per_group)]


def placement_stages(agents, places, error_seat=None) -> dict[tuple, float]:
    """The choices the likelihood is made of: (chosen (agent, seat), frozenset of the
    (agent, seat) still unplaced) -> total weight, over all games.

    agents[g][s] is the agent index in seat s of game g, places[g][s] its place;
    error_seat[g] the seat that forfeited game g (or -1).
    """
    agents = np.asarray(agents, dtype=int)
    places = np.asarray(places, dtype=float)
    n_games = len(agents)
    errors = np.full(n_games, -1) if error_seat is None else np.asarray(error_seat, dtype=int)
    stages: dict[tuple, float] = {}

    def add(order, weight, seat_of):
        for k in range(len(order) - 1):
            rest = frozenset((order[j], seat_of[j]) for j in range(k, len(order)))
            key = ((order[k], seat_of[k]), rest)
            stages[key] = stages.get(key, 0.0) + weight

    for g in range(n_games):
        n = agents.shape[1]
        if errors[g] >= 0:
            bad = int(errors[g])
            for s in range(n):
                if s != bad and agents[g, s] != agents[g, bad]:
                    add((agents[g, s], agents[g, bad]), 1.0 / (n - 1), (s, bad))
            continue
        for order, weight in orderings(places[g]):
            add(tuple(int(agents[g, s]) for s in order), weight, order)
    return stages


def fit_placement_ratings(n_agents: int, n_seats: int, stages: dict[tuple, float],
                          prior_draws: float = 1.0, seat_advantage: bool = True) -> RatingFit:
    """Maximum a posteriori Plackett-Luce ratings (Elo, mean 0) with seat advantages."""
    stages = dict(stages)
    games = sum(w for (_, rest), w in stages.items() if len(rest) == 2)   # one per game
    if prior_draws > 0:
        _add_prior(stages, n_seats if seat_advantage else 1, prior_draws)
    n_h = (n_seats - 1) if seat_advantage and n_seats > 1 else 0
    n_free = (n_agents - 1) + n_h
    items = sorted({item for chosen, rest in stages for item in rest})
    index = {item: i for i, item in enumerate(items)}
    X = np.zeros((len(items), n_free))
    for i, (a, s) in enumerate(items):
        if a > 0:
            X[i, a - 1] = 1.0
        if n_h and s > 0:
            X[i, n_agents - 1 + s - 1] = 1.0
    width = max((len(rest) for _, rest in stages), default=2)
    keys = list(stages)
    members = np.zeros((len(keys), width), dtype=int)
    mask = np.zeros((len(keys), width), dtype=bool)
    for k, (chosen, rest) in enumerate(keys):
        row = [index[chosen]] + [index[x] for x in sorted(rest) if x != chosen]
        members[k, :len(row)] = row
        mask[k, :len(row)] = True
    weight = np.array([stages[k] for k in keys])
    Xs = X[members] * mask[..., None]          # [stage, member, parameter]

    def strengths(theta):
        return np.where(mask, (X @ theta)[members], -np.inf)

    def nll(theta):
        u = strengths(theta)
        return float(np.sum(weight * (logsumexp(u, axis=1) - u[:, 0])))

    def grad(theta):
        p = softmax(strengths(theta), axis=1)
        mean = np.einsum("kn,knf->kf", p, Xs)
        return weight @ (mean - Xs[:, 0, :])

    def hess(theta):
        p = softmax(strengths(theta), axis=1)
        mean = np.einsum("kn,knf->kf", p, Xs)
        second = np.einsum("k,kn,knf,kng->fg", weight, p, Xs, Xs)
        return second - np.einsum("k,kf,kg->fg", weight, mean, mean)

    converged = True
    if n_free and keys:
        res = minimize(nll, np.zeros(n_free), jac=grad, hess=hess, method="trust-exact",
                       options={"gtol": 1e-10, "maxiter": 500})
        theta = res.x
        # trust-exact may stop "failing" at the optimum itself when no step can improve
        # on rounding: a vanishing gradient is convergence too
        converged = bool(res.success) or float(np.max(np.abs(grad(theta)))) < 1e-7
        cov_theta = np.linalg.pinv(hess(theta))
    else:
        theta = np.zeros(n_free)
        cov_theta = np.full((n_free, n_free), np.nan)

    M_r = _centring(n_agents, 0, n_free)
    elo = ELO_PER_LOGIT * (M_r @ theta)
    cov = ELO_PER_LOGIT**2 * (M_r @ cov_theta @ M_r.T)
    if n_h:
        M_h = _centring(n_seats, n_agents - 1, n_free)
        seat_elo = ELO_PER_LOGIT * (M_h @ theta)
        seat_cov = ELO_PER_LOGIT**2 * (M_h @ cov_theta @ M_h.T)
    else:
        seat_elo = np.zeros(max(n_seats, 1))
        seat_cov = np.zeros((len(seat_elo), len(seat_elo)))
    return RatingFit(elo, cov, seat_elo, seat_cov, converged, float(games),
                     extra={"model": "plackett-luce"})


def _add_prior(stages: dict, n_seats: int, prior_draws: float) -> None:
    """Virtual two-player draws: between every two agents that met (in seat 0, so that
    they say nothing about seats) and, when seats are fitted, between every two seats
    (agent 0 against itself)."""
    met = {tuple(sorted((x[0], y[0]))) for _, rest in stages for x in rest for y in rest
           if x[0] != y[0]}
    pairs = [((a, 0), (b, 0)) for a, b in met]
    if n_seats > 1:
        pairs += [((0, i), (0, j)) for i, j in itertools.combinations(range(n_seats), 2)]
    for x, y in pairs:
        rest = frozenset((x, y))
        for chosen in (x, y):
            stages[(chosen, rest)] = stages.get((chosen, rest), 0.0) + prior_draws / 2


def _centring(n: int, offset: int, n_free: int) -> np.ndarray:
    """Maps the free parameters to n values with the first fixed at 0, centred on 0."""
    J = np.zeros((n, n_free))
    for i in range(1, n):
        J[i, offset + i - 1] = 1.0
    return (np.eye(n) - 1.0 / n) @ J


def average_places(agents, places, n_agents: int) -> np.ndarray:
    """Each agent's mean place over its games (nan if it played none)."""
    agents = np.asarray(agents, dtype=int)
    places = np.asarray(places, dtype=float)
    out = np.full(n_agents, np.nan)
    for a in range(n_agents):
        here = agents == a
        if here.any():
            out[a] = float(places[here].mean())
    return out
