"""Tournament tables from games.csv: standings, head-to-head matrix, results by seat.

Conventions.
- wins/draws/losses count games: a win is the sole best result of the game (in a forfeit,
  every player but the forfeiter wins), a draw a shared best result, anything else a loss.
- score_pct is the share of points over pairwise comparisons (win 1, draw 1/2): in a
  two-player game, the usual match score.
- rating is the Bradley-Terry/Elo fit of niwa.analysis.stats.ratings (mean 0, seat advantage
  fitted) with its 95% interval; los is the likelihood that the agent is stronger than the
  one ranked just below it.
- Games of 3 or more players are judged by their finishing order (games.csv `place_<seat>`;
  logs without it: by result, losers tied): the rating is the Plackett-Luce fit of
  niwa.analysis.stats.placement, the pairwise comparisons (score_pct, pairs.csv, seats.csv)
  compare places, and the standings add avg_place (1 = first) and avg_points (the game's
  placement score, e.g. Bonsai's final points; empty where the game declares none).
  Two-player tables are unchanged.
- pairs.csv is the head-to-head matrix: the cell in row A, column B is "W-D-L" of A
  against B over pairwise comparisons (two-player games: simply A's games against B).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from niwa.analysis.stats.placement import (
    average_places,
    fit_placement_ratings,
    placement_stages,
    places,
)
from niwa.analysis.stats.ratings import Z95, RatingFit, fit_ratings, pairwise_comparisons


@dataclass
class Tables:
    standings: pd.DataFrame
    pairs: pd.DataFrame
    seats: pd.DataFrame
    fit: RatingFit
    labels: list[str]


def read_games(path: str) -> pd.DataFrame:
    # everything as text first: the log is the record, the tables parse what they need
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def compute_tables(games: pd.DataFrame, labels: list[str], n_players: int,
                   prior_draws: float = 1.0) -> Tables:
    games = games.sort_values("game_id", key=lambda c: c.astype(int))
    index = {label: i for i, label in enumerate(labels)}
    agents = np.array([[index[games[f"agent_{s}"].iloc[g]] for s in range(n_players)]
                       for g in range(len(games))], dtype=int).reshape(-1, n_players)
    results = games[[f"result_{s}" for s in range(n_players)]].astype(float).to_numpy()
    results = results.reshape(-1, n_players)
    error_seat = games["error_seat"].map(lambda x: int(x) if x != "" else -1).to_numpy()
    if n_players > 2:
        where = _places(games, results, n_players)
        comps = pairwise_comparisons(agents, -where, error_seat)   # a lower place is better
        fit = fit_placement_ratings(len(labels), n_players,
                                    placement_stages(agents, where, error_seat),
                                    prior_draws=prior_draws)
    else:
        comps = pairwise_comparisons(agents, results, error_seat)
        fit = fit_ratings(len(labels), n_players, comps, prior_draws=prior_draws)
    outcome = _game_outcomes(results, error_seat)   # +1 win, 0 draw, -1 loss per seat
    standings, order, h2h = _standings(labels, agents, comps, fit, outcome)
    if n_players > 2:
        standings = _with_placements(standings, labels, agents, where,
                                     _points(games, n_players))
    ranked = [labels[i] for i in order]
    pairs = pd.DataFrame(
        [[("" if a == b or not h2h[a, b].any() else "-".join(map(str, h2h[a, b])))
          for b in order] for a in order], index=pd.Index(ranked, name="agent"),
        columns=ranked).reset_index()
    seats = _seat_table(labels, order, agents, comps, fit, outcome, n_players)
    return Tables(standings, pairs, seats, fit, labels)


def _standings(labels, agents, comps, fit, outcome):
    """(standings table, agents in rank order, head-to-head W/D/L counts)."""
    n = len(labels)
    points = np.zeros(n)
    count = np.zeros(n)
    h2h = np.zeros((n, n, 3), dtype=int)   # [a, b] -> wins, draws, losses of a against b
    for a, b, s in zip(comps.a, comps.b, comps.score, strict=True):
        points[a] += s
        points[b] += 1 - s
        count[a] += 1
        count[b] += 1
        k = {1.0: 0, 0.5: 1, 0.0: 2}[float(s)]
        h2h[a, b, k] += 1
        h2h[b, a, 2 - k] += 1

    rows = []
    for i, label in enumerate(labels):
        mine = agents == i
        rows.append({
            "agent": label, "games": int(mine.any(axis=1).sum()),
            "wins": int(((outcome == 1) & mine).sum()),
            "draws": int(((outcome == 0) & mine).sum()),
            "losses": int(((outcome == -1) & mine).sum()),
            "score_pct": round(100 * points[i] / count[i], 1) if count[i] else np.nan,
            "rating": _r1(fit.elo[i]),
            "rating_low": _r1(fit.low[i]),
            "rating_high": _r1(fit.high[i]),
            "_i": i,
        })
    standings = pd.DataFrame(rows).sort_values(
        ["rating", "score_pct", "agent"], ascending=[False, False, True], kind="stable")
    order = standings["_i"].tolist()
    standings["los"] = [round(fit.los(order[k], order[k + 1]), 3) if k + 1 < len(order)
                        else np.nan for k in range(len(order))]
    standings = standings.drop(columns="_i").reset_index(drop=True)

    return standings, order, h2h


def _seat_table(labels, order, agents, comps, fit, outcome, n_players) -> pd.DataFrame:
    """Results by seat, over all agents and for each agent."""
    n = len(labels)
    seat_rows = []
    seat_points = np.zeros(n_players)
    seat_count = np.zeros(n_players)
    agent_seat_points = np.zeros((n, n_players))
    agent_seat_count = np.zeros((n, n_players))
    for a, b, sa, sb, s in zip(comps.a, comps.b, comps.seat_a, comps.seat_b, comps.score,
                               strict=True):
        seat_points[sa] += s
        seat_points[sb] += 1 - s
        seat_count[[sa, sb]] += 1
        agent_seat_points[a, sa] += s
        agent_seat_points[b, sb] += 1 - s
        agent_seat_count[a, sa] += 1
        agent_seat_count[b, sb] += 1
    for seat in range(n_players):
        occupied = outcome[:, seat]
        seat_rows.append({
            "seat": seat, "agent": "all", "games": len(agents),
            "wins": int((occupied == 1).sum()), "draws": int((occupied == 0).sum()),
            "losses": int((occupied == -1).sum()),
            "score_pct": _pct(seat_points[seat], seat_count[seat]),
            "advantage_elo": _r1(fit.seat_elo[seat]),
            "advantage_low": _r1(fit.seat_elo[seat] - Z95 * fit.seat_se[seat]),
            "advantage_high": _r1(fit.seat_elo[seat] + Z95 * fit.seat_se[seat]),
        })
        for i in order:
            here = agents[:, seat] == i
            if not here.any():
                continue
            seat_rows.append({
                "seat": seat, "agent": labels[i], "games": int(here.sum()),
                "wins": int((occupied[here] == 1).sum()),
                "draws": int((occupied[here] == 0).sum()),
                "losses": int((occupied[here] == -1).sum()),
                "score_pct": _pct(agent_seat_points[i, seat], agent_seat_count[i, seat]),
                "advantage_elo": np.nan, "advantage_low": np.nan, "advantage_high": np.nan,
            })
    return pd.DataFrame(seat_rows)


def _places(games: pd.DataFrame, results: np.ndarray, n_players: int) -> np.ndarray:
    """Each game's places by seat: as logged, or from the results for rows without them."""
    columns = [f"place_{s}" for s in range(n_players)]
    logged = (games[columns].to_numpy() if set(columns) <= set(games.columns)
              else np.full((len(games), n_players), ""))
    out = np.zeros((len(games), n_players))
    for g in range(len(games)):
        if all(x != "" for x in logged[g]):
            out[g] = logged[g].astype(float)
        else:
            out[g] = places(results[g])
    return out


def _points(games: pd.DataFrame, n_players: int) -> np.ndarray:
    """Placement scores by seat (nan where not logged)."""
    columns = [f"points_{s}" for s in range(n_players)]
    if not set(columns) <= set(games.columns):
        return np.full((len(games), n_players), np.nan)
    return games[columns].replace("", "nan").astype(float).to_numpy().reshape(-1, n_players)


def _with_placements(standings, labels, agents, where, points) -> pd.DataFrame:
    """The standings with avg_place and avg_points after score_pct."""
    index = {label: i for i, label in enumerate(labels)}
    avg_place = average_places(agents, where, len(labels))
    avg_points = np.full(len(labels), np.nan)
    for i in range(len(labels)):
        mine = points[agents == i]
        mine = mine[~np.isnan(mine)]
        if len(mine):
            avg_points[i] = float(mine.mean())
    at = standings.columns.get_loc("score_pct") + 1
    rows = standings["agent"].map(index)
    standings.insert(at, "avg_place", [round(float(avg_place[i]), 2) for i in rows])
    standings.insert(at + 1, "avg_points", [_r1(avg_points[i]) if not np.isnan(avg_points[i])
                                            else np.nan for i in rows])
    return standings


def _r1(x) -> float:
    return round(float(x), 1) + 0.0     # + 0.0: no "-0.0" in the tables


def _pct(points, count):
    return _r1(100 * float(points) / float(count)) if count else np.nan


def _game_outcomes(results: np.ndarray, error_seat: np.ndarray) -> np.ndarray:
    best = results.max(axis=1, keepdims=True)
    at_best = results == best
    shared = at_best.sum(axis=1, keepdims=True) > 1
    out = np.where(at_best, np.where(shared, 0, 1), -1)
    forfeit = error_seat >= 0
    out[forfeit] = 1
    out[forfeit, error_seat[forfeit]] = -1
    return out
