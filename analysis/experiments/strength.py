"""Seat balance against playing strength: each rung's Elo, convergence, the proven value.

A strength sweep (`niwa analyse --strengths`) plays self-play games at each rung of a
ladder of agents, weakest first. This module turns those cells into a *ladder*:

- **Elo of each rung.** Rating games between neighbouring rungs (`rate_games` per pair
  and per variant, seats swapped; two-player variants only) are fitted by the
  Bradley-Terry model of `niwa.analysis.stats.ratings` (a rating per agent, an advantage
  per seat), one fit per variant: a rule change can change how far apart two agents
  are. Elo is anchored at the weakest rung = 0; the interval of rung i is that of
  r_i - r_0. With `--rate-under first` only the first variant is rated and its Elo
  stands for the rung in every variant.
- **Convergence.** For every variant, any number of players (seat 0's fair share is
  1/n). Model: each rung's self-play games are independent Bernoulli trials of
  "seat 0 wins" (decisive games only), with the rung's own probability p_i. The change
  p_top - p_next (95% Newcombe interval) is judged by stats.verdicts against the run's
  margin: *converged* only when the interval lies inside the margin, *still moving* when
  it excludes 0, *undecided* otherwise (with the games per rung needed). The trend is
  the weighted least-squares slope of p against Elo (per 100 Elo; per rung if not rated)
  over the top three rungs, weights 1/Var(p_i), with its 95% normal interval.
- **Proven value.** Where the variant itself is decided by the df-pn proof search
  (two players, deterministic, perfect information, proven within `niwa analyse --proof-time`), perfect
  play's seat-0 result (1 or 0) is shown beside every rung: the gap says how far
  self-play at that strength is from the truth. A start too big to prove in that time
  (full Lotus, basic rule: ~9 minutes and 6 GB) is taken from its opening book
  (solver.book) when one is installed: a book is written only after its start was
  proven, it records the winner, and its checksum is verified on loading.

Pure functions of the games table and the cells, except `proven_values`, which searches.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from niwa.analysis.stats import intervals as iv
from niwa.analysis.stats import verdicts as vd
from niwa.analysis.stats.ratings import Z95, fit_ratings, pairwise_comparisons

PROOF_TT_MB = 512.0


def rating_pairs(strengths: list[str]) -> list[tuple[str, str]]:
    """The rating matches: each rung against the next one up."""
    return list(zip(strengths, strengths[1:], strict=False))


# ---- Elo of each rung ------------------------------------------------------------------
def rate_rungs(strengths: list[str], games: pd.DataFrame) -> pd.DataFrame | None:
    """Elo (weakest rung = 0) with 95% intervals from the rating games (two-player rows of
    `games` whose agents are two different rungs). None when there are none."""
    index = {s: i for i, s in enumerate(strengths)}
    if games.empty or "agent_1" not in games.columns:
        return None
    rated = games[(games["agent_0"] != games["agent_1"]) & games["agent_0"].isin(index)
                  & games["agent_1"].isin(index) & (games["error_seat"] == "")]
    if rated.empty:
        return None
    agents = np.array([[index[a], index[b]] for a, b in zip(rated["agent_0"], rated["agent_1"],
                                                               strict=True)])
    results = rated[["result_0", "result_1"]].astype(float).to_numpy()
    fit = fit_ratings(len(strengths), 2, pairwise_comparisons(agents, results))
    elo = fit.elo - fit.elo[0]
    var = np.diag(fit.cov) + fit.cov[0, 0] - 2 * fit.cov[:, 0]
    half = Z95 * np.sqrt(np.clip(var, 0, None))
    played = {s: int(((rated["agent_0"] == s) | (rated["agent_1"] == s)).sum()) for s in strengths}
    return pd.DataFrame({"strength": strengths, "elo": elo, "elo_low": elo - half,
                         "elo_high": elo + half, "rating_games": [played[s] for s in strengths]})


# ---- convergence -----------------------------------------------------------------------
def trend(x, k, n) -> tuple[float, float, float]:
    """Weighted least-squares slope of k/n on x (per unit of x), with its 95% interval."""
    x, k, n = (np.asarray(a, dtype=float) for a in (x, k, n))
    p = (k + 0.5) / (n + 1.0)               # keeps the weight finite at 0% and 100%
    w = n / (p * (1 - p))
    xm = np.sum(w * x) / np.sum(w)
    sxx = np.sum(w * (x - xm) ** 2)
    if sxx <= 0:
        return math.nan, math.nan, math.nan
    slope = np.sum(w * (x - xm) * (k / n)) / sxx
    se = math.sqrt(1.0 / sxx)
    return slope, slope - Z95 * se, slope + Z95 * se


def convergence(rungs: list[dict], margin: float = vd.DEFAULT_MARGIN) -> dict:
    """Has the seat-0 rate settled at the top of this ladder? `rungs` are dicts with
    strength, wins_0, decisive and x (Elo, or the rung's index), weakest first."""
    top, nxt = rungs[-1], rungs[-2]
    d, lo, hi = iv.newcombe_interval(top["wins_0"], top["decisive"],
                                     nxt["wins_0"], nxt["decisive"])
    tail = rungs[-3:]
    slope, s_lo, s_hi = trend([r["x"] for r in tail], [r["wins_0"] for r in tail],
                                          [r["decisive"] for r in tail])
    v = vd.judge(f"{top.get('variant', '')}: seat 0's win rate, {nxt['strength']} -> "
                 f"{top['strength']}", d, lo, hi, min(top["decisive"], nxt["decisive"]),
                 margin)
    return {"top": top["strength"], "next": nxt["strength"], "top_change": d,
            "top_change_low": lo, "top_change_high": hi,
            "converged": v.kind == vd.EQUIVALENT, "verdict": v,
            "trend": slope, "trend_low": s_lo, "trend_high": s_hi}


def ladder(metrics: list[dict], cells, ratings: dict[str, pd.DataFrame | None] | None,
           proven: dict[str, float | None], margin: float = vd.DEFAULT_MARGIN,
           ) -> tuple[list[dict], list[tuple[vd.Verdict, str]]]:
    """One row per (variant, rung) and one (verdict, sentence) per variant. `ratings`
    maps a variant label to its rungs' Elo (rate_rungs; None or missing: not rated)."""
    groups: dict[str, list[int]] = {}
    for c in cells:
        if c.strength and c.players >= 2:
            groups.setdefault(c.variant_label, []).append(c.index)
    rows, verdicts = [], []
    for label, idx in groups.items():
        table = (ratings or {}).get(label)
        elo = {} if table is None else dict(zip(table["strength"], table.to_dict("records"),
                                                strict=True))
        rungs = []
        for rank, i in enumerate(idx):
            m, r = metrics[i], elo.get(cells[i].strength, {})
            lo, hi = iv.wilson_interval(m["wins_0"], m["decisive"]) if m["decisive"] else (0, 1)
            row = {"variant": label, "players": cells[i].players, "rung": rank,
                   "strength": cells[i].strength,
                   "elo": r.get("elo", math.nan), "elo_low": r.get("elo_low", math.nan),
                   "elo_high": r.get("elo_high", math.nan), "games": m["games"],
                   "decisive": m["decisive"], "wins_0": m["wins_0"],
                   "seat0_rate": m["wins_0"] / m["decisive"] if m["decisive"] else math.nan,
                   "seat0_low": lo, "seat0_high": hi, "proven_seat0": proven.get(label)}
            row["gap_to_proven"] = (row["seat0_rate"] - row["proven_seat0"]
                                    if row["proven_seat0"] is not None else math.nan)
            rows.append(row)
            rungs.append({**row, "x": row["elo"] if elo else rank})
        if len(rungs) >= 2 and all(r["decisive"] for r in rungs[-2:]):
            c = convergence(rungs, margin)
            verdicts.append((c["verdict"], _verdict(label, c, bool(elo), proven.get(label),
                                                    rungs[-1])))
    return rows, verdicts


def _verdict(label: str, c: dict, has_elo: bool, proven: float | None, top: dict) -> str:
    # (the slope over the top three rungs stays in strength_ladder.csv: a second interval
    # on a different quantity in the same sentence would read as a second verdict)
    text = (f"{label}: at the top rungs ({c['next']} -> {c['top']}), seat 0's win rate is "
            f"{vd.words(c['verdict'], vd.LADDER)}")
    if proven is not None:
        who = "seat 0 wins" if proven == 1.0 else "seat 1 wins"
        text += (f"; proven with perfect play: {who}, so the top rung's "
                 f"{100 * top['seat0_rate']:.1f}% for seat 0 is {abs(100 * top['gap_to_proven']):.1f}"
                 " points from the truth")
    return text + "."


# ---- the proven value of each variant --------------------------------------------------
def proven_values(game: str, cells, time_limit: float) -> dict[str, float | None]:
    """Seat 0's result under perfect play for each two-player variant of a strength sweep
    that the df-pn proof search decides within `time_limit` (None: not decided)."""
    from niwa.ext.registry import get_game
    from niwa.solver.solve import proof_refusal

    out: dict[str, float | None] = {}
    for c in cells:
        if not c.strength or c.players != 2 or c.variant_label in out:
            continue
        out[c.variant_label] = None
        state = get_game(game).new(seed=0, **c.variant)
        if proof_refusal(state) is not None:
            continue
        booked = book_value(game, state)
        if booked is not None:
            out[c.variant_label] = booked
            continue
        from niwa.ext.errors import NiwaError
        from niwa.solver.proof import ProofSearch

        try:
            r = ProofSearch(tt_mb=PROOF_TT_MB).solve(state, time_limit=time_limit,
                                                     root_values=False, pv=False)
        except NiwaError:   # a game the proof cannot decide (e.g. returns other than
            continue        # win/draw/loss): the report says "not decided", it is not lost
        if r.proven and r.value is not None:
            out[c.variant_label] = r.value if state.current_player() == 0 else 1.0 - r.value
    return out


def book_value(game: str, state) -> float | None:
    """Seat 0's proven result at the start `state` from the variant's opening book (the
    book of a proven start names its winner), or None when there is no trusted book."""
    from niwa.solver.book import BookError, find_book, load_book

    path = find_book(game, dict(state.variant))
    if path is None:
        return None
    try:
        book = load_book(path)
    except BookError:
        return None
    if not book.matches(state) or book.winner not in (0, 1):
        return None
    return 1.0 if book.winner == 0 else 0.0
