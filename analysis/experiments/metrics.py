"""Per-cell metrics of a rule-variant experiment: one flat row of variants.csv per cell.

Model: a cell's games are independent draws of the same game under one variant and one
lineup; forfeited games are counted apart and left out of every rate.

Metrics (per cell), after Ludii's game-evaluation concepts, with 95% intervals:
- seat win rates: each seat's share of the *decisive* games (games with one sole winner;
  draws and --max-plies caps are counted apart), Wilson intervals;
- first-player advantage: seat 0's share minus the fair share 1/N, with the exact binomial
  test against 1/N; balance: 1 - (best seat's share - worst seat's share), with a test that
  wins are spread evenly over the seats;
- duration: plies (and turns or rounds when the game records them): mean, sd, quartiles;
- games with a running score (stats()["score_history"]): lead changes per game and the
  comeback rate (the winner was behind at some point); final scores (stats()["scores"]):
  per-seat means, the winner's margin; Bonsai goals (stats()["goals_claimed"]): each goal's
  claim rate; solo games: the win rate (the share reaching the configured level) and, where
  stats()["level_reached"] exists, the share reaching each level;
- Lotus (stats()["remaining"]): how far the runner-up still had to go when the game ended.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from niwa.analysis import stats as st

if TYPE_CHECKING:
    from niwa.analysis.experiments.variants import Cell


# ---- per-cell metrics ------------------------------------------------------------------
def _stats(df: pd.DataFrame) -> list[dict]:
    out = []
    for text in df["scores"]:
        try:
            value = json.loads(text) if text else {}
        except ValueError:
            value = {}
        out.append(value if isinstance(value, dict) else {})
    return out


def outcome_counts(results: np.ndarray) -> tuple[np.ndarray, int]:
    """(wins by seat, draws): a win is the sole best result of a game."""
    n_seats = results.shape[1] if results.ndim == 2 else 0
    wins = np.zeros(n_seats, dtype=int)
    draws = 0
    for res in results:
        best = res.max()
        top = np.flatnonzero(res == best)
        if len(top) == 1:
            wins[top[0]] += 1
        else:
            draws += 1
    return wins, draws


def lead_changes(history) -> tuple[int, int | None]:
    """(lead changes, last sole leader) along a running-score history [[s0, s1, ...], ...].

    The sole leader is the player strictly ahead of all others; a tie keeps no leader but
    does not count as a change; a change is a new sole leader different from the last.
    """
    changes, leader = 0, None
    for scores in history:
        scores = list(scores)
        if not scores:
            continue
        best = max(scores)
        if scores.count(best) != 1:
            continue
        now = scores.index(best)
        if leader is not None and now != leader:
            changes += 1
        leader = now
    return changes, leader


def was_behind(history, player: int) -> bool:
    """Whether `player` trailed someone strictly at some point of the history."""
    return any(max(s) > s[player] for s in history if len(s) > player)


def _number(value) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list) and value and all(isinstance(x, int | float) for x in value):
        return float(sum(value))
    return None


def _claims(goals) -> tuple[set, set]:
    """(goals in play, goals claimed) from the shapes a game may record: {goal: player or
    None/-1}, [[goals of seat 0], [goals of seat 1], ...], or [claimed goals]."""
    if isinstance(goals, dict):
        present = {str(g) for g in goals}
        # (careful: seat 0 == False, so no `in (None, -1, False)` here)
        claimed = {str(g) for g, who in goals.items()
                   if who is not None and not isinstance(who, bool) and who not in (-1, "")}
        return present, claimed
    if isinstance(goals, list):
        if all(isinstance(x, list) for x in goals):
            claimed = {str(g) for seat in goals for g in seat}
        else:
            claimed = {str(g) for g in goals}
        return set(), claimed
    return set(), set()


def solo_thresholds(game: str) -> dict | None:
    """{level: points} of a game's solo mode (module constant SOLO_THRESHOLDS), if any."""
    from niwa.ext.registry import get_game

    table = dict(get_game(game).solo_thresholds) or None
    return dict(table) if isinstance(table, dict) else None


def solo_level_reached(stats: dict, thresholds: dict) -> int | None:
    """Highest solo level a finished game reaches (0: none): Bonsai's solo goal is one goal
    tile of each of the 3 colours in play (names 'colour.size') and at least the level's
    points. None when the stats lack the score or the goals."""
    scores, goals = stats.get("scores"), stats.get("goals_claimed")
    if not (isinstance(scores, list) and scores and isinstance(goals, list) and goals):
        return None
    mine = goals[0] if isinstance(goals[0], list) else goals
    if len({str(g).split(".")[0] for g in mine}) < 3:
        return 0
    return max((lv for lv, pts in thresholds.items() if scores[0] >= pts), default=0)


def _interval_cols(prefix: str, k: int, n: int) -> dict:
    lo, hi = st.wilson_interval(k, n)
    return {prefix: k / n if n else math.nan, f"{prefix}_low": lo, f"{prefix}_high": hi}


def cell_metrics(cell: Cell, games: pd.DataFrame, max_players: int | None = None) -> dict:
    """Every metric of one cell as a flat dict (a row of variants.csv)."""
    n = cell.players
    row: dict = {"cell": cell.index, "label": cell.label, "variant": cell.variant_label,
                 "strength": cell.strength or "",
                 **{f"set_{k}": v for k, v in cell.settings.items()},
                 "players": n, "agents": " ".join(cell.config.agents),
                 "games_scheduled": cell.games, "games": len(games)}
    forfeit = games["error_seat"] != ""
    valid = games[~forfeit]
    row["forfeits"] = int(forfeit.sum())
    row["capped"] = int((valid["capped"] == "1").sum())
    g = _Finished(n, valid[[f"result_{s}" for s in range(n)]].astype(float).to_numpy()
                  .reshape(-1, n), _stats(valid), valid["plies"].astype(int).to_numpy())
    _seat_metrics(row, g, max_players or n)
    _duration_metrics(row, g)
    _running_score_metrics(row, g)
    _final_score_metrics(row, g)
    _goal_metrics(row, g)
    _solo_level_metrics(row, g, cell.config.game)
    _remaining_metrics(row, g)
    return row


@dataclass
class _Finished:
    """The games of a cell that ended without a forfeit."""

    n: int                  # players
    results: np.ndarray     # games x seats
    stats_list: list[dict]
    plies: np.ndarray

    @property
    def m(self) -> int:
        return len(self.plies)


def _seat_metrics(row: dict, g: _Finished, max_players: int) -> None:
    """Wins by seat with intervals, first-player advantage, balance (or the solo rate)."""
    n, results, m = g.n, g.results, g.m
    if n == 1:
        wins = int((results[:, 0] >= 1.0).sum())
        row.update({"draws": 0, "decisive": m, **_interval_cols("solo_win", wins, m)})
    else:
        wins_by_seat, draws = outcome_counts(results)
        decisive = int(wins_by_seat.sum())
        row.update({"draws": draws, "decisive": decisive})
        for s in range(max_players):
            if s < n:
                row.update(_interval_cols(f"win_{s}", int(wins_by_seat[s]), decisive))
                row[f"wins_{s}"] = int(wins_by_seat[s])
            else:
                row.update({f"win_{s}": math.nan, f"win_{s}_low": math.nan,
                            f"win_{s}_high": math.nan, f"wins_{s}": math.nan})
        fair = 1.0 / n
        share = wins_by_seat / decisive if decisive else np.full(n, math.nan)
        row.update({
            "fair_share": fair,
            "first_player_advantage": row["win_0"] - fair,
            "fpa_low": row["win_0_low"] - fair, "fpa_high": row["win_0_high"] - fair,
            "fpa_p": st.binomial_p(int(wins_by_seat[0]), decisive, fair),
            "balance": 1.0 - float(share.max() - share.min()) if decisive else math.nan,
            "seat_uniformity_p": st.seat_uniformity_p(wins_by_seat),
        })


def _duration_metrics(row: dict, g: _Finished) -> None:
    plies, stats_list, m = g.plies, g.stats_list, g.m
    for k, v in st.describe(plies).items():
        row[f"plies_{k}"] = v
    for key in ("turns", "rounds"):
        values = [x for x in (_number(s.get(key)) for s in stats_list) if x is not None]
        if values and len(values) == m:
            for k, v in st.describe(values).items():
                row[f"{key}_{k}"] = v


def _running_score_metrics(row: dict, g: _Finished) -> None:
    """Lead changes and comebacks, where the game keeps a running score."""
    n, results, stats_list, m = g.n, g.results, g.stats_list, g.m
    histories = [s.get("score_history") for s in stats_list]
    if m and all(isinstance(h, list) for h in histories):
        changes, comebacks, decided = [], 0, 0
        for h, res in zip(histories, results, strict=True):
            h = [x for x in h if isinstance(x, list) and len(x) == n]
            changes.append(lead_changes(h)[0])
            top = np.flatnonzero(res == res.max())
            if len(top) == 1:
                decided += 1
                comebacks += was_behind(h, int(top[0]))
        row["lead_changes_mean"] = float(np.mean(changes))
        row["lead_changes_sd"] = float(np.std(changes, ddof=1)) if m > 1 else 0.0
        row.update(_interval_cols("lead_change_games", int(sum(c > 0 for c in changes)), m))
        row.update(_interval_cols("comeback", comebacks, decided))


def _final_score_metrics(row: dict, g: _Finished) -> None:
    """Final scores per seat and the winner's margin (or the solo score)."""
    n, stats_list, m = g.n, g.stats_list, g.m
    scores = [s.get("scores") for s in stats_list]
    if m and all(isinstance(x, list) and len(x) == n and all(isinstance(v, int | float)
                                                             for v in x) for x in scores):
        arr = np.asarray(scores, dtype=float)
        for s in range(n):
            row[f"score_{s}_mean"] = float(arr[:, s].mean())
            row[f"score_{s}_sd"] = float(arr[:, s].std(ddof=1)) if m > 1 else 0.0
        if n == 1:
            for k, v in st.describe(arr[:, 0]).items():
                row[f"score_{k}"] = v
        else:
            ordered = np.sort(arr, axis=1)
            for k, v in st.describe(ordered[:, -1]).items():
                row[f"winner_score_{k}"] = v
            for k, v in st.describe(ordered[:, -1] - ordered[:, -2]).items():
                row[f"margin_{k}"] = v


def _goal_metrics(row: dict, g: _Finished) -> None:
    """Claim rate per goal (among the games where it was in play, when known)."""
    stats_list, m = g.stats_list, g.m
    goals = [s.get("goals_claimed") for s in stats_list]
    in_play = [s.get("goals_in_play") for s in stats_list]
    if m and all(g is not None for g in goals):
        present_counts: dict[str, int] = {}
        claim_counts: dict[str, int] = {}
        known_presence = False
        for g, listed in zip(goals, in_play, strict=True):
            present, claimed = _claims(g)
            if listed is not None:      # the game says which goals were dealt
                present = {str(name) for name in listed}
            known_presence |= bool(present)
            for name in present | claimed:
                present_counts[name] = present_counts.get(name, 0) + 1
            for name in claimed:
                claim_counts[name] = claim_counts.get(name, 0) + 1
        for name in sorted(present_counts):
            base = present_counts[name] if known_presence else m
            row.update(_interval_cols(f"goal_claim:{name}", claim_counts.get(name, 0), base))


def _solo_level_metrics(row: dict, g: _Finished, game: str) -> None:
    """Solo levels: recorded by the game, or derived from the score and the goals claimed."""
    n, stats_list, m = g.n, g.stats_list, g.m
    levels = [s.get("level_reached") for s in stats_list]
    thresholds = solo_thresholds(game)
    if n == 1 and thresholds and not all(isinstance(x, int) for x in levels):
        levels = [solo_level_reached(s, thresholds) for s in stats_list]
    if m and n == 1 and all(isinstance(x, int) for x in levels):
        top = max(thresholds) if thresholds else max(max(levels), 0)
        for level in range(1, top + 1):
            row.update(_interval_cols(f"reached_level_{level}",
                                      sum(x >= level for x in levels), m))


def _remaining_metrics(row: dict, g: _Finished) -> None:
    """Lotus: how far the best loser still had to go."""
    n, results, stats_list, m = g.n, g.results, g.stats_list, g.m
    remaining = [s.get("remaining") for s in stats_list]
    if m and n >= 2 and all(isinstance(x, list) and len(x) == n for x in remaining):
        gaps = []
        for rem, res in zip(remaining, results, strict=True):
            losers = [rem[s] for s in range(n) if res[s] < res.max()]
            if losers:
                gaps.append(min(losers))
        for k, v in st.describe(gaps).items():
            row[f"runner_up_remaining_{k}"] = v
