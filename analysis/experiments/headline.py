"""The question a run answers, and its answer in one paragraph, first in every report.

The question comes from --vary: for each varied setting, "Does KEY=V change seat 0's win
rate, compared with KEY=V0?" (V0 the first value given); with nothing varied, or when the
variants cannot be compared on one rate (different player counts, solo games), "Is
VARIANT fair between the seats?". The answer is read at the strongest rung of a strength
sweep (the only lineup otherwise) and reuses the verdicts of the sections below
(stats.verdicts via experiments.findings and experiments.strength): the same Verdict
objects, so the headline cannot disagree with them. It adds how strong the players were
(their Elo on the run's ladder, under each variant the answer is about), whether each
variant has converged with strength, and perfect play's result where the proof search
decided it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import nan

from niwa.analysis.stats import verdicts as vd


@dataclass
class Headline:
    question: str
    answer: str
    claims: list = field(default_factory=list)     # the Verdicts the answer quotes


def _pct(x) -> str:
    return "n/a" if x is None or x != x else f"{100 * x:.1f}%"


def _top(summary) -> str | None:
    exp = summary.experiment
    return exp.strengths[-1] if exp.strengths else None


def _elo_text(r: dict) -> str:
    return f"{r['elo']:+.0f} Elo (95% CI {r['elo_low']:+.0f} to {r['elo_high']:+.0f})"


def _players_text(summary, labels: list[str] | None = None) -> str:
    """How strong the players at the answer's rung were: their Elo under each variant of
    the answer (`labels`; all when None) that was rated."""
    exp = summary.experiment
    top = _top(summary)
    if top is None:
        if len(exp.agents) == 1:
            return f"The players: `{exp.agents[0]}` in every seat (no strength ladder)."
        return ("The players: the lineup " + ", ".join(f"`{a}`" for a in exp.agents)
                + " in every seat order (no strength ladder).")
    rows = [r for r in summary.ladder if r["strength"] == top
            and (labels is None or r["variant"] in labels) and r["elo"] == r["elo"]]
    rated = summary.ratings or {}
    weakest = f"above the weakest rung (`{exp.strengths[0]}`)"
    if not rows:
        return (f"The players at that rung are `{top}`, the strongest of "
                f"{len(exp.strengths)} rungs (not rated: no rating games).")
    if rated.get("under") == "first" or len(rows) == 1:
        under = (rated.get("variants") or [rows[0]["variant"]])[0]
        return (f"The players at that rung (`{top}`) are rated {_elo_text(rows[0])} "
                f"{weakest}, from {rated.get('games', 0)} rating games played under "
                f"{under}{' only' if rated.get('under') == 'first' else ''}.")
    games = {}
    for _, label, _, recorded in rated.get("pairs", []):
        games[label] = games.get(label, 0) + recorded
    each = " and ".join(f"{_elo_text(r)} under {r['variant']}" for r in rows)
    played = ", ".join(f"{games[r['variant']]} under {r['variant']}" for r in rows
                       if r["variant"] in games)
    return (f"The players at that rung (`{top}`) are rated, {weakest}, {each}, each "
            f"variant from its own rating games{f' ({played})' if played else ''}.")


def _ladder_text(summary, labels: list[str]) -> tuple[str, list]:
    by_label = {}
    for v, _ in summary.claims:
        for label in labels:
            if v.subject.startswith(f"{label}: seat 0's win rate, ") and \
                    v.subject.endswith(f"-> {_top(summary)}") and v is not None:
                by_label.setdefault(label, [])
                by_label[label].append(v)
    # the ladder verdict is the last claim with the top two rungs (the trend claim,
    # weakest -> strongest, is the same quantity when there are only two rungs)
    exp = summary.experiment
    if len(exp.strengths) < 2:
        return "", []
    nxt = exp.strengths[-2]
    parts, used = [], []
    for label in labels:
        vs = [v for v in by_label.get(label, []) if f", {nxt} -> " in v.subject]
        if vs:
            parts.append(f"under {label} it is {vd.words(vs[-1], vd.LADDER)}")
            used.append(vs[-1])
    if not parts:
        return "", []
    return (f"With strength, from `{nxt}` to `{_top(summary)}`, seat 0's win rate: "
            + "; ".join(parts) + ".", used)


def _proof_text(summary, labels: list[str], proof_time: float) -> str:
    exp = summary.experiment
    if not exp.strengths:
        return ""
    if not proof_time:
        return "Perfect play: not searched (--proof-time 0)."
    proven = {r["variant"]: r["proven_seat0"] for r in summary.ladder}
    decided = [f"{label}: seat {0 if proven[label] == 1.0 else 1} wins" for label in labels
               if proven.get(label) is not None]
    open_ = [label for label in labels if proven.get(label) is None]
    refused = {label: why for label in open_
               if (why := _refusal(summary, label)) is not None}
    tried = [label for label in open_ if label not in refused]
    if tried:
        decided.append(f"{', '.join(tried)}: not proven in {proof_time:g} s")
    decided += [f"{label}: not searched ({why})" for label, why in refused.items()]
    return "Perfect play: " + "; ".join(decided) + "."


def _refusal(summary, label: str) -> str | None:
    """Why the proof search does not try this variant's start (None: it tries)."""
    from niwa.ext.registry import get_game
    from niwa.solver.solve import proof_refusal

    cell = next(c for c in summary.cells if c.variant_label == label)
    if cell.players != 2:
        return f"the proof search is for two players; this variant has {cell.players}"
    return proof_refusal(get_game(cell.config.game).new(seed=0, **cell.variant))


def _balance(summary, cells, at: str, proof_time: float) -> tuple[list[str], list]:
    """Seat 0 against its fair share, per cell, at the answer's rung."""
    sentences, used, labels = [], [], []
    for c in cells:
        m = summary.metrics[c.index]
        v = next((v for v, text in summary.claims if text == m.get("verdict")), None)
        if v is None:
            sentences.append(m["verdict"])
            continue
        sentences.append(f"{c.variant_label}: seat 0 wins {_pct(m['win_0'])} of "
                         f"{m['decisive']} decisive games (fair share "
                         f"{_pct(m['fair_share'])}): {vd.words(v, vd.BALANCE)}"
                         f"{vd.holm_note(v, m.get('fpa_p_adjusted', nan), m.get('fpa_tests', 0))}.")
        used.append(v)
        labels.append(c.variant_label)
    if used:
        sentences.insert(0, f"{at.capitalize()}:")
    return sentences, used


def headlines(summary, proof_time: float = 0.0) -> list[Headline]:
    """One Headline per question of the run (see the module docstring)."""
    exp = summary.experiment
    top = _top(summary)
    at = f"at the strongest rung (`{top}`)" if top else "with these players"
    out = []
    for key, values in exp.compared:
        if len(values) < 2:     # a fixed setting given through --vary: no question
            continue
        rows = [c for c in summary.comparisons if c.get("key") == key and c.get("verdict_kind")
                and summary.cells[c["variant_cell"]].strength == top]
        if not rows:        # not comparable on one rate (player counts, solo): balance
            cells = [c for c in summary.cells if c.strength == top]
            sentences, used = _balance(summary, cells, at, proof_time)
            labels = [c.variant_label for c in cells]
            ladder, ladder_used = _ladder_text(summary, labels)
            question = (f"Is the game fair between the seats at each of "
                        f"{', '.join(f'{key}={v}' for v in values)}?")
            out.append(Headline(question, " ".join(filter(None, [
                *sentences, _players_text(summary, labels), ladder,
                _proof_text(summary, labels, proof_time)])), used + ladder_used))
            continue
        for value in values[1:]:
            mine = [c for c in rows
                    if summary.cells[c["variant_cell"]].settings[key] == value]
            if not mine:
                continue
            solo = summary.metrics[mine[0]["variant_cell"]]["players"] == 1
            rate = "the solo win rate" if solo else "seat 0's win rate"
            question = (f"Does {key}={value} change {rate}, compared with "
                        f"{key}={values[0]}?")
            sentences, used = [], []
            for c in mine:
                v = next(v for v, text in summary.claims if text == c["verdict"])
                base, var = summary.metrics[c["baseline_cell"]], summary.metrics[c["variant_cell"]]
                others = {k: x for k, x in summary.cells[c["variant_cell"]].settings.items()
                          if k != key}
                where = (" (with " + " ".join(f"{k}={x}" for k, x in others.items()) + ")"
                         if others else "")
                if solo:
                    counts = (f"the solo game is won in {_pct(var.get('solo_win'))} of "
                              f"{var['games']} games under {key}={value} and "
                              f"{_pct(base.get('solo_win'))} of {base['games']} under "
                              f"{key}={values[0]}")
                else:
                    counts = (f"seat 0 wins {_pct(var.get('win_0'))} of {var['decisive']} "
                              f"decisive games under {key}={value} and "
                              f"{_pct(base.get('win_0'))} of {base['decisive']} under "
                              f"{key}={values[0]}")
                sentences.append(f"{at.capitalize()}{where}, {counts}: the change is "
                                 f"{vd.words(v)}"
                                 f"{vd.holm_note(v, c.get('p_adjusted', nan), c.get('tests_in_run', 0))}.")
                used.append(v)
            labels = list(dict.fromkeys([summary.cells[c["baseline_cell"]].variant_label
                                         for c in mine]
                                        + [summary.cells[c["variant_cell"]].variant_label
                                           for c in mine]))
            ladder, ladder_used = _ladder_text(summary, labels)
            text = " ".join(filter(None, [*sentences, _players_text(summary, labels), ladder,
                                          _proof_text(summary, labels, proof_time)]))
            out.append(Headline(question, text, used + ladder_used))
    if out:
        return out
    # nothing varied: the seat balance of the one variant
    cells = [c for c in summary.cells if c.strength == top]
    m = summary.metrics[cells[0].index]
    if m["players"] == 1:
        return [Headline(f"How often is {cells[0].variant_label} won solo?", m["verdict"])]
    sentences, used = _balance(summary, cells, at, proof_time)
    labels = [c.variant_label for c in cells]
    ladder, ladder_used = _ladder_text(summary, labels)
    label = cells[0].variant_label
    name = exp.game if label == "default" else f"{exp.game} with {label}"
    question = (f"Is {name} fair between the seats (seat 0's win rate against the fair "
                f"share {_pct(m.get('fair_share'))})?")
    return [Headline(question, " ".join(filter(None, [
        *sentences, _players_text(summary, labels), ladder,
        _proof_text(summary, labels, proof_time)])), used + ladder_used)]
