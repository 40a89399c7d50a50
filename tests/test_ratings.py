"""Rating and SPRT math against hand-computed values and independent scipy computations."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import norm

from niwa.analysis.stats.ratings import (
    ELO_PER_LOGIT,
    Z95,
    fit_ratings,
    los_from_counts,
    pairwise_comparisons,
)
from niwa.analysis.stats.sprt import (
    PENTANOMIAL,
    TRINOMIAL,
    SprtSpec,
    SprtTracker,
    parse_sprt,
    sprt_llr,
    sprt_llr_approx,
)
from niwa.ext.errors import NiwaError


def two_player_games(records):
    """records: (agent in seat 0, agent in seat 1, result of seat 0, count)."""
    agents, results = [], []
    for a, b, r, count in records:
        agents += [[a, b]] * count
        results += [[r, 1 - r]] * count
    return np.array(agents), np.array(results, dtype=float)


def fit(n_agents, records, prior=0.0, n_seats=2):
    agents, results = two_player_games(records)
    return fit_ratings(n_agents, n_seats, pairwise_comparisons(agents, results), prior)


def test_two_agents_balanced_seats_match_the_logit_of_the_score():
    # A scores 75% in each seat: the rating gap is 400 log10(3); the seat term is zero.
    records = [(0, 1, 1.0, 15), (0, 1, 0.0, 5), (1, 0, 0.0, 15), (1, 0, 1.0, 5)]
    f = fit(2, records)
    gap = 400 * math.log10(3)
    assert f.elo[0] == pytest.approx(gap / 2, abs=1e-6)
    assert f.elo[1] == pytest.approx(-gap / 2, abs=1e-6)
    assert f.seat_elo == pytest.approx([0, 0], abs=1e-6)
    # observed information of the gap (logits): N p (1-p) = 40 * 3/16; A carries half
    se_gap = ELO_PER_LOGIT / math.sqrt(40 * 3 / 16)
    assert f.se[0] == pytest.approx(se_gap / 2, rel=1e-6)
    assert f.high[0] - f.elo[0] == pytest.approx(Z95 * se_gap / 2, rel=1e-6)
    assert f.los(0, 1) == pytest.approx(norm.cdf(gap / se_gap), rel=1e-6)


def test_seat_advantage_is_separated_from_strength():
    # A wins 16/20 from seat 0 but 10/20 from seat 1:
    # logistic(d + a) = 0.8 and logistic(d - a) = 0.5, so d = a = ln(2) / 2... in
    # half-gap terms: gap d = (logit .8 + logit .5) / 2 = ln 2, seat edge a = ln 2 / 2
    records = [(0, 1, 1.0, 16), (0, 1, 0.0, 4), (1, 0, 0.0, 10), (1, 0, 1.0, 10)]
    f = fit(2, records)
    assert f.elo[0] - f.elo[1] == pytest.approx(ELO_PER_LOGIT * math.log(2), abs=1e-5)
    assert f.seat_elo[0] - f.seat_elo[1] == pytest.approx(ELO_PER_LOGIT * math.log(2),
                                                           abs=1e-5)
    assert f.seat_elo[0] == pytest.approx(ELO_PER_LOGIT * math.log(2) / 2, abs=1e-5)


def test_draws_count_half():
    level = fit(2, [(0, 1, 1.0, 5), (0, 1, 0.5, 10), (0, 1, 0.0, 5),
                    (1, 0, 0.0, 5), (1, 0, 0.5, 10), (1, 0, 1.0, 5)])
    assert level.elo == pytest.approx([0, 0], abs=1e-6)
    # 10 wins + 10 draws per seat = 75%: the same gap as 15 wins and 5 losses
    skew = fit(2, [(0, 1, 1.0, 10), (0, 1, 0.5, 10), (1, 0, 0.0, 10), (1, 0, 0.5, 10)])
    assert skew.elo[0] - skew.elo[1] == pytest.approx(400 * math.log10(3), abs=1e-5)


def test_three_agents_transitive_case_is_fitted_exactly():
    # A-B 75%, B-C 75%, A-C 90% = logistic(2 ln 3): the Bradley-Terry model fits exactly
    records = []
    for a, b, wins, losses in ((0, 1, 30, 10), (1, 2, 30, 10), (0, 2, 36, 4)):
        half_w, half_l = wins // 2, losses // 2
        records += [(a, b, 1.0, half_w), (a, b, 0.0, half_l),
                    (b, a, 0.0, half_w), (b, a, 1.0, half_l)]
    f = fit(3, records)
    step = 400 * math.log10(3)
    assert f.elo == pytest.approx([step, 0, -step], abs=1e-5)
    assert sum(f.elo) == pytest.approx(0, abs=1e-9)


def test_multiplayer_fit_matches_an_independent_scipy_likelihood():
    rng = np.random.default_rng(5)
    strength = np.array([1.0, 0.0, -0.5, 0.3])
    seat_edge = np.array([0.4, 0.0, -0.2])
    agents, results, err = [], [], []
    for _ in range(300):
        table = rng.permutation(4)[:3]
        logits = strength[table] + seat_edge + rng.gumbel(size=3)
        res = np.zeros(3)
        res[np.argmax(logits)] = 1.0
        agents.append(table)
        results.append(res)
        err.append(-1)
    agents, results = np.array(agents), np.array(results)
    comps = pairwise_comparisons(agents, results, np.array(err))
    assert len(comps) == 300 * 3
    assert set(comps.weight) == {0.5}
    f = fit_ratings(4, 3, comps, prior_draws=0)

    def nll(theta):
        # straight from the model: every seat pair of every game, weight 1/2
        r = np.concatenate([[0.0], theta[:3]])
        h = np.concatenate([[0.0], theta[3:]])
        total = 0.0
        for i, j in ((0, 1), (0, 2), (1, 2)):
            x = r[agents[:, i]] + h[i] - r[agents[:, j]] - h[j]
            s = np.sign(results[:, i] - results[:, j]) / 2 + 0.5
            total += 0.5 * np.sum(s * np.logaddexp(0, -x) + (1 - s) * np.logaddexp(0, x))
        return total

    ref = minimize(nll, np.zeros(5), method="BFGS", options={"gtol": 1e-8})
    r_ref = np.concatenate([[0.0], ref.x[:3]])
    r_ref = ELO_PER_LOGIT * (r_ref - r_ref.mean())
    assert f.elo == pytest.approx(r_ref, abs=0.05)
    h_ref = np.concatenate([[0.0], ref.x[3:]])
    assert f.seat_elo == pytest.approx(ELO_PER_LOGIT * (h_ref - h_ref.mean()), abs=0.05)
    # intervals: numerical Hessian of the independent likelihood
    eps = 1e-4
    n = len(ref.x)
    H = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * eps, np.eye(n)[j] * eps
            H[i, j] = (nll(ref.x + e_i + e_j) - nll(ref.x + e_i - e_j)
                       - nll(ref.x - e_i + e_j) + nll(ref.x - e_i - e_j)) / (4 * eps**2)
    cov = np.linalg.inv(H)[:3, :3]
    J = np.vstack([np.zeros(3), np.eye(3)])
    C = np.eye(4) - 0.25
    se_ref = ELO_PER_LOGIT * np.sqrt(np.diag(C @ J @ cov @ J.T @ C.T))
    assert f.se == pytest.approx(se_ref, rel=1e-3)


def test_forfeits_only_compare_the_forfeiter_and_self_pairs_are_skipped():
    agents = np.array([[0, 1, 2], [0, 0, 1]])
    results = np.array([[1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    comps = pairwise_comparisons(agents, results, np.array([1, -1]))
    pairs = {(int(a), int(b), float(s)) for a, b, s in zip(comps.a, comps.b, comps.score,
                                                            strict=True)}
    # game 0: seat 1 forfeited: 0 beats 1, 2 beats 1, (0 vs 2) not compared
    # game 1: agent 0 twice: only the pairs with agent 1 (seat 2) count; seat 1 ties it
    assert pairs == {(0, 1, 1.0), (1, 2, 0.0), (0, 1, 1.0), (0, 1, 0.5)}
    assert len(comps) == 4


def test_prior_keeps_a_perfect_score_finite_and_mle_matches_without_prior():
    records = [(0, 1, 1.0, 10), (1, 0, 0.0, 10)]
    f = fit(2, records, prior=1.0)
    assert np.all(np.isfinite(f.elo)) and f.elo[0] > 200
    # with one virtual draw among 20 real wins: P = 20.5 / 21 exactly
    assert f.elo[0] - f.elo[1] == pytest.approx(400 * math.log10(20.5 / 0.5), abs=1e-4)


def test_los_from_counts_is_the_normal_approximation():
    assert los_from_counts(10, 5) == pytest.approx(norm.cdf(5 / math.sqrt(15)), rel=1e-12)
    assert los_from_counts(3, 3) == 0.5
    assert los_from_counts(0, 0) == 0.5


# ---- SPRT ----------------------------------------------------------------------------
def test_sprt_bounds_are_walds():
    spec = SprtSpec(0, 10, 0.05, 0.05)
    assert spec.lower == pytest.approx(-2.944438979, abs=1e-9)
    assert spec.upper == pytest.approx(2.944438979, abs=1e-9)
    assert SprtSpec(0, 5, 0.05, 0.1).lower == pytest.approx(math.log(0.1 / 0.95))


def test_sprt_llr_approximation_hand_computed():
    # W=60 D=20 L=20: mean 0.7, variance 0.65 - 0.49 = 0.16; s0 = 0.5,
    # s1 = 1/(1+10^(-1/40)) = 0.514387184; LLR = 100 (s1-s0)(1.4-s0-s1)/(2*0.16)
    s1 = 1 / (1 + 10 ** (-10 / 400))
    hand = 100 * (s1 - 0.5) * (1.4 - 0.5 - s1) / 0.32
    assert hand == pytest.approx(1.7337133, abs=1e-6)
    assert sprt_llr_approx([20, 20, 60], TRINOMIAL, 0, 10) == pytest.approx(hand, rel=1e-12)


@pytest.mark.parametrize("counts,scores", [
    ([20, 20, 60], TRINOMIAL), ([310, 380, 330], TRINOMIAL),
    ([2, 30, 100, 60, 8], PENTANOMIAL), ([0, 0, 0, 0, 7], PENTANOMIAL)])
def test_sprt_llr_is_the_constrained_multinomial_mle(counts, scores):
    """Independent check: maximise the likelihood under each hypothesis with SLSQP."""
    n = np.where(np.asarray(counts) > 0, counts, 1e-3)    # the same regularisation
    x = np.asarray(scores)

    def best_loglik(mean):
        cons = [{"type": "eq", "fun": lambda p: p.sum() - 1},
                {"type": "eq", "fun": lambda p: p @ x - mean}]
        res = minimize(lambda p: -np.sum(n * np.log(p)), np.full(len(x), 1 / len(x)),
                       constraints=cons, bounds=[(1e-12, 1)] * len(x), method="SLSQP",
                       options={"ftol": 1e-14, "maxiter": 1000})
        return -res.fun

    s0, s1 = 0.5, 1 / (1 + 10 ** (-10 / 400))
    expected = best_loglik(s1) - best_loglik(s0)
    assert sprt_llr(counts, scores, 0, 10) == pytest.approx(expected, abs=1e-4)


def test_sprt_exact_and_approximate_llr_agree_near_the_hypotheses():
    counts = [310, 380, 330]       # mean 0.5098
    exact = sprt_llr(counts, TRINOMIAL, 0, 10)
    approx = sprt_llr_approx(counts, TRINOMIAL, 0, 10)
    assert exact == pytest.approx(approx, rel=0.01)


def test_sprt_tracker_accepts_h1_for_a_clearly_stronger_agent():
    t = SprtTracker(SprtSpec(0, 10, 0.05, 0.05))
    rng = np.random.default_rng(1)
    decision = None
    while decision is None:
        decision = t.add_pair(float(rng.random() < 0.8), float(rng.random() < 0.8))
    assert decision == "H1" and t.pairs < 200 and t.llr >= t.spec.upper


def test_sprt_tracker_accepts_h0_for_equal_agents():
    t = SprtTracker(SprtSpec(0, 10, 0.05, 0.05))
    rng = np.random.default_rng(2)
    decision = None
    while decision is None and t.pairs < 20000:
        decision = t.add_pair(float(rng.random() < 0.45), float(rng.random() < 0.45))
    assert decision == "H0"


def test_parse_sprt():
    assert parse_sprt("elo0=0,elo1=5,alpha=0.05,beta=0.1") == SprtSpec(0, 5, 0.05, 0.1)
    assert parse_sprt("elo1=20") == SprtSpec(0, 20, 0.05, 0.05)
    for bad in ("elo0=10,elo1=5", "gamma=1", "alpha=0.7", "elo1=x"):
        with pytest.raises(NiwaError):
            parse_sprt(bad)
