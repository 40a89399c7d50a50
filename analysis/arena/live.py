"""Live reports of a running tournament, as fastchess prints them: one line per finished
game and, every N games, a status block with the standings so far.

Written to any stream (stdout: a log file or CI sees them too; the progress bar stays on
stderr). The status block uses the run's own statistics: the standings of
niwa.analysis.stats.standings (one Elo figure per agent, the field's mean 0, with its 95%
interval, and LOS against the next agent; Plackett-Luce ratings and average places for
3-4 players), the draw ratio, the pentanomial counts of the game pairs of two agents (the
two seat orders of one round) and the SPRT's LLR with its bounds.

>>> result_text(["1.0", "0.0"]), result_text(["0.5", "0.5"]), result_text(["1", "0", "0"])
('1-0', '1/2-1/2', '1-0-0')
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ENDINGS = {"normal": "end of game", "capped": "ply cap, scored a draw", "time": "on time",
           "forfeit": "forfeit", "quit": "left unfinished", "start": "failed to start",
           "crash": "crashed", "illegal": "illegal move", "error": "error reply"}
KEPT = ("game_id", "round", "error_seat", "termination")


def result_text(results) -> str:
    """Each seat's share of the win, as a PGN-style score: the sole best result 1, a
    shared best 1/k, anything else 0 (the scores games.csv keeps are the game's own)."""
    values = [float(r) for r in results]
    best = max(values)
    ties = values.count(best)
    win = "1" if ties == 1 else f"1/{ties}"
    return "-".join(win if v == best else "0" for v in values)


def game_line(row: dict, done: int, total: int, n_players: int) -> str:
    """'game 12/60: mcts:iters=200 vs greedy 1-0 (end of game) 143 plies, opening 6'.

    >>> row = {"game_id": 4, "agent_0": "mcts", "agent_1": "random", "result_0": 0.0,
    ...        "result_1": 1.0, "plies": 7, "termination": "time", "error_seat": 0}
    >>> game_line(row, 5, 10, 2)
    'game 5/10: mcts vs random 0-1 (on time: seat 0 (mcts) lost) 7 plies  [5 done]'
    """
    row = {k: "" if v is None else str(v) for k, v in row.items()}   # as the log reads it
    agents = " vs ".join(row[f"agent_{s}"] for s in range(n_players))
    result = result_text([row[f"result_{s}"] for s in range(n_players)])
    ending = ENDINGS.get(row.get("termination") or "normal", row.get("termination"))
    if row.get("error_seat") not in (None, ""):
        ending = f"{ending}: seat {row['error_seat']} ({row['agent_' + row['error_seat']]}) lost"
    opening = f", opening {row['opening']}" if row.get("opening") else ""
    return (f"game {int(row['game_id']) + 1}/{total}: {agents} {result} ({ending}) "
            f"{row['plies']} plies{opening}  [{done} done]")


def pentanomial(rows: list[dict], tested: str) -> list[int]:
    """Counts of the tested agent's score over each complete game pair (the two seat
    orders of one round of a two-agent, two-player run): 0, 1/2, 1, 3/2, 2 points."""
    by_round: dict[str, list[float]] = {}
    for row in rows:
        seat = 0 if row["agent_0"] == tested else 1
        mine, theirs = float(row[f"result_{seat}"]), float(row[f"result_{1 - seat}"])
        score = 1.0 if mine > theirs else 0.0 if mine < theirs else 0.5
        by_round.setdefault(row["round"], []).append(score)
    counts = [0] * 5
    for scores in by_round.values():
        if len(scores) == 2:
            counts[int(round(2 * sum(scores)))] += 1
    return counts


class LiveReport:
    """Told every game of the log (`add`) and each game as it finishes (`played`); writes
    a game line per finished game and a status block every `every` games (and at the last
    one) through `echo`. `sprt` is the run's SprtStop (its LLR is shown), if any."""

    def __init__(self, labels: list[str], n_players: int, total: int, every: int,
                 echo: Callable[[str], None], sprt=None, game_lines: bool = True):
        self.labels, self.n, self.total, self.every = labels, n_players, total, every
        self.echo, self.sprt, self.game_lines = echo, sprt, game_lines
        self.rows: list[dict] = []      # the columns the tables need, of every game so far
        self.columns = (*KEPT, *(f"{k}_{s}" for k in ("agent", "result", "place", "points")
                                 for s in range(n_players)))

    def add(self, row: dict) -> None:
        # as text, as the log holds it: fresh rows (ints) and logged ones (text) alike
        self.rows.append({c: str(row.get(c, "")) for c in self.columns})

    def played(self, row: dict) -> None:
        self.add(row)
        done = len(self.rows)
        if self.game_lines:
            self.echo(game_line(row, done, self.total, self.n))
        if self.every and (done % self.every == 0 or done == self.total):
            self.echo(self.status())

    def status(self) -> str:
        import pandas as pd

        from niwa.analysis.stats.standings import compute_tables

        done = len(self.rows)
        tables = compute_tables(pd.DataFrame(self.rows), self.labels, self.n)
        pl = self.n > 2
        lines = [f"--- status after {done} of {self.total} games (one "
                 f"{'Plackett-Luce ' if pl else ''}Elo per agent from "
                 f"{'the finishing order of ' if pl else ''}the games so far, the field's "
                 "mean 0, ± its 95% interval) ---"]
        for rank, st in enumerate(tables.standings.to_dict("records"), 1):
            elo, low, high = st["rating"], st["rating_low"], st["rating_high"]
            margin = ((high - low) / 2 if np.isfinite(low) and np.isfinite(high)
                      else float("inf"))
            los = "" if st["los"] != st["los"] else f", LOS {100 * st['los']:.1f}% vs next"
            place = (f", avg place {st['avg_place']:.2f}" if pl and "avg_place" in st
                     and st["avg_place"] == st["avg_place"] else "")
            lines.append(
                f"{rank}. {st['agent']}: {st['games']} games, W-D-L {st['wins']}-"
                f"{st['draws']}-{st['losses']}, score {st['score_pct']}%, "
                f"Elo {elo:+.1f} ± {margin:.1f}{los}{place}")
        draws = sum(1 for r in self.rows if r["error_seat"] == ""
                    and len({r[f"result_{s}"] for s in range(self.n)}) == 1)
        lines.append(f"draw ratio {100 * draws / done:.1f}% ({draws} of {done} games)")
        # one rating per agent: the final summary's match line derives its difference
        # from these (and labels fastchess's score-alone figure as such)
        if len(self.labels) == 2 and self.n == 2:
            counts = pentanomial(self.rows, self.labels[0])
            lines.append(f"pentanomial ({self.labels[0]}'s points per game pair "
                         f"0, 1/2, 1, 3/2, 2): {counts}")
        if self.sprt is not None:
            t = self.sprt.tracker
            lines.append(f"SPRT: llr {t.llr:.2f} ({t.spec.lower:.2f}, {t.spec.upper:.2f}) "
                         f"after {t.pairs} game pairs"
                         + (f": {t.decision} accepted" if t.decision else ""))
        return "\n".join(lines)
