"""What an experiment found: comparisons between cells, strength trends, and the verdict
sentences, from the per-cell metrics (experiments.metrics).

Model: cells are independent samples (each has its own seed).
Between cells, one setting at a time (each value against the setting's first value, the
other settings and the strength held fixed): Fisher's exact test (2 seats)
or chi-square (more) of wins by seat, the difference of seat 0's share with Newcombe's
interval, Mann-Whitney on lengths, Holm-adjusted over all the comparisons of the run (the
p-values go to the tables). Every verdict sentence is one stats.verdicts judgement of one
95% interval against the run's margin: "equivalent" only when the interval lies inside the
margin, "different" when it excludes 0, otherwise "undecided" with the games needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from niwa.analysis import stats as st
from niwa.analysis.experiments.metrics import cell_metrics
from niwa.analysis.stats import verdicts as vd

if TYPE_CHECKING:
    from niwa.analysis.experiments.variants import Cell, Experiment

ALPHA = 0.05


# ---- comparisons -----------------------------------------------------------------------
def _pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def _pts(x: float) -> str:
    return f"{round(100 * x, 1) + 0.0:+.1f}"      # + 0.0: no "-0.0"


def _p(p: float) -> str:
    if p is None or math.isnan(p):
        return "n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def advantage_verdict(m: dict, margin: float = vd.DEFAULT_MARGIN) -> tuple[vd.Verdict | None, str]:
    """A cell's seat balance: seat 0's share of the decisive games against the fair share
    1/N, judged by its interval (stats.verdicts), or the solo win rate."""
    if m["players"] == 1:
        return None, (f"{m['label']}: the solo game is won in {_pct(m['solo_win'])} of "
                      f"{m['games']} games (95% CI {_pct(m['solo_win_low'])} to "
                      f"{_pct(m['solo_win_high'])}).")
    d = m["decisive"]
    if d == 0:
        return None, f"{m['label']}: no decisive game, nothing to measure."
    v = vd.judge(f"{m['label']}: seat 0 vs fair share", m["first_player_advantage"],
                 m["fpa_low"], m["fpa_high"], d, margin)
    note = vd.holm_note(v, m.get("fpa_p_adjusted", math.nan), m.get("fpa_tests", 0))
    return v, (f"{m['label']}: {vd.words(v, vd.BALANCE)}{note}; seat 0 wins "
               f"{_pct(m['win_0'])} of {d} decisive games, fair share "
               f"{_pct(m['fair_share'])}.")


def _fpa_p(m: dict) -> float:
    """The first-player test's p-value, Holm-adjusted over the run's variants when known."""
    return m.get("fpa_p_adjusted", m.get("fpa_p", math.nan))


def compare_cells(a: Cell, b: Cell, ga: pd.DataFrame, gb: pd.DataFrame,
                  ma: dict, mb: dict) -> dict:
    """Cell b against baseline a: seat outcomes and lengths (p-values not yet adjusted)."""
    row = {"baseline": a.label, "variant": b.label, "baseline_cell": a.index,
           "variant_cell": b.index, "players": b.players,
           "games_baseline": ma["games"], "games_variant": mb["games"]}
    if a.players != b.players or a.players < 2:
        row["note"] = ("different player counts: compare the first-player advantages instead"
                       if a.players != b.players else "solo games: compare the win rates")
        if a.players == b.players == 1:
            ka, kb = round(ma["solo_win"] * ma["games"]), round(mb["solo_win"] * mb["games"])
            t = st.compare_tables([[kb, mb["games"] - kb], [ka, ma["games"] - ka]])
            d, lo, hi = st.newcombe_interval(kb, mb["games"], ka, ma["games"])
            row.update({"test": t.test, "p": t.p, "effect": t.effect,
                        "effect_name": t.effect_name, "diff": d, "diff_low": lo, "diff_high": hi})
        lt = st.compare_lengths(gb["plies"].astype(int), ga["plies"].astype(int))
        row.update({"length_p": lt.p, "length_rank_biserial": lt.rank_biserial})
        return row
    n = a.players
    wa = [ma[f"wins_{s}"] for s in range(n)]
    wb = [mb[f"wins_{s}"] for s in range(n)]
    t = st.compare_tables([wb, wa])
    d, lo, hi = st.newcombe_interval(wb[0], mb["decisive"], wa[0], ma["decisive"])
    row.update({"seat0_baseline": ma["win_0"], "seat0_variant": mb["win_0"],
                "diff": d, "diff_low": lo, "diff_high": hi,
                "test": t.test, "p": t.p, "effect": t.effect, "effect_name": t.effect_name,
                "odds_ratio": t.odds_ratio, "odds_ratio_low": t.odds_ratio_low,
                "odds_ratio_high": t.odds_ratio_high, "note": t.note})
    lt = st.compare_lengths(gb["plies"].astype(int), ga["plies"].astype(int))
    row.update({"plies_mean_baseline": ma["plies_mean"], "plies_mean_variant": mb["plies_mean"],
                "length_p": lt.p, "length_rank_biserial": lt.rank_biserial})
    return row


def comparison_verdict(c: dict, ma: dict, mb: dict,
                       margin: float = vd.DEFAULT_MARGIN) -> tuple[vd.Verdict | None, str]:
    """Variant against baseline: the change in seat 0's share (or the solo win rate),
    judged by its interval against the margin (stats.verdicts), never by a p-value."""
    who = f"{c['variant']} vs {c['baseline']}"
    if "diff" not in c or _nan(c.get("diff_low")):
        if mb["players"] == 1 and ma["players"] == 1:
            return None, (f"{who}: no comparison possible (solo wins {_pct(mb['solo_win'])} "
                          f"and {_pct(ma['solo_win'])} of {mb['games']} and {ma['games']} "
                          "games).")
        return None, f"{who}: {c.get('note', 'not comparable')}."
    solo = mb["players"] == 1
    what = "the solo win rate" if solo else "seat 0's win rate"
    n = min(mb["games"], ma["games"]) if solo else min(mb["decisive"], ma["decisive"])
    v = vd.judge(f"{who}: {what}", c["diff"], c["diff_low"], c["diff_high"], n, margin)
    rates = (f"solo wins {_pct(mb['solo_win'])} vs {_pct(ma['solo_win'])}" if solo else
             f"seat 0 wins {_pct(mb['win_0'])} vs {_pct(ma['win_0'])} of {mb['decisive']} and "
             f"{ma['decisive']} decisive games")
    note = vd.holm_note(v, c.get("p_adjusted", math.nan), c.get("tests_in_run", 0))
    return v, f"{who}: {what} is {vd.words(v)}{note}; {rates}."


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


# ---- strength sweeps -------------------------------------------------------------------
def strength_trends(cells: list[Cell], metrics: list[dict],
                    margin: float = vd.DEFAULT_MARGIN) -> list[dict]:
    """Per variant: the first-player advantage from the weakest to the strongest agent."""
    out = []
    groups: dict[str, list[int]] = {}
    for c in cells:
        if c.strength:
            groups.setdefault(c.variant_label, []).append(c.index)
    for label, idx in groups.items():
        if len(idx) < 2 or metrics[idx[0]]["players"] < 2:
            continue
        n = metrics[idx[0]]["players"]
        table = [[metrics[i][f"wins_{s}"] for s in range(n)] for i in idx]
        t = st.compare_tables(table)
        weak, strong = metrics[idx[0]], metrics[idx[-1]]
        d, lo, hi = st.newcombe_interval(strong["wins_0"], strong["decisive"],
                                         weak["wins_0"], weak["decisive"])
        end = st.compare_tables([[strong["wins_0"], strong["decisive"] - strong["wins_0"]],
                                 [weak["wins_0"], weak["decisive"] - weak["wins_0"]]])
        row = {"variant": label, "weakest": cells[idx[0]].strength,
               "strongest": cells[idx[-1]].strength,
               "fpa_weakest": weak["first_player_advantage"],
               "fpa_strongest": strong["first_player_advantage"],
               "diff": d, "diff_low": lo, "diff_high": hi, "p_ends": end.p,
               "p_all": t.p, "test_all": t.test}
        row["_rates"] = (weak["win_0"], strong["win_0"])
        row["_n"] = (weak["decisive"], strong["decisive"])
        out.append(row)
    adjusted = st.holm([r["p_ends"] for r in out])
    for row, p in zip(out, adjusted, strict=True):
        row["p_ends_adjusted"] = p
        weak_rate, strong_rate = row.pop("_rates")
        v = vd.judge(f"{row['variant']}: seat 0's win rate, {row['weakest']} -> "
                     f"{row['strongest']}", row["diff"], row["diff_low"], row["diff_high"],
                     min(row.pop("_n")), margin)
        row["verdict_kind"], row["games_needed"] = v.kind, v.needed
        row["claim"] = v
        row["verdict"] = (f"{row['variant']}: from the weakest to the strongest players, "
                          f"seat 0's win rate ({_pct(weak_rate)} with {row['weakest']} -> "
                          f"{_pct(strong_rate)} with {row['strongest']}) is "
                          f"{vd.words(v, vd.RUNG_CHANGE)}"
                          f"{vd.holm_note(v, p, sum(not math.isnan(q) for q in adjusted))}.")
    return out


@dataclass
class Summary:
    experiment: Experiment
    cells: list[Cell]
    metrics: list[dict]
    comparisons: list[dict]
    trends: list[dict]
    advantage_verdicts: list[str]
    games: pd.DataFrame
    ladder: list[dict] = field(default_factory=list)     # experiments.strength rows
    ladder_verdicts: list[str] = field(default_factory=list)
    margin: float = vd.DEFAULT_MARGIN
    # every judged claim with its sentence, for the report and the consistency checks
    claims: list[tuple[vd.Verdict, str]] = field(default_factory=list)
    ratings: dict = field(default_factory=dict)     # how the rungs were rated (provenance)


def summarise(exp: Experiment, cells: list[Cell], games: pd.DataFrame,
              margin: float = vd.DEFAULT_MARGIN) -> Summary:
    """Metrics per cell from the games, then the comparisons and verdicts (`conclude`)."""
    maxp = max(c.players for c in cells)
    games = games.assign(cell=games["cell"].astype(int))
    per_cell = {c.index: games[games["cell"] == c.index] for c in cells}
    metrics = [cell_metrics(c, per_cell[c.index], maxp) for c in cells]
    return conclude(exp, cells, metrics, games, margin, per_cell)


def conclude(exp: Experiment, cells: list[Cell], metrics: list[dict], games: pd.DataFrame,
             margin: float = vd.DEFAULT_MARGIN, per_cell: dict | None = None,
             lengths: dict | None = None) -> Summary:
    """Comparisons, strength trends and every verdict from the per-cell metrics (counts
    only: the games are needed for the length tests alone, `lengths` stands in for them
    when rebuilding a report from its tables)."""
    fpa = st.holm([m.get("fpa_p", math.nan) for m in metrics])
    tested = sum(not math.isnan(p) for p in fpa)
    for m, p in zip(metrics, fpa, strict=True):
        if "fpa_p" in m:
            m["fpa_p_adjusted"], m["fpa_tests"] = p, tested
    comparisons = []
    # one setting at a time: each value against the key's first value, everything else
    # (the other settings, the strength) held fixed
    first = {k: vals[0] for k, vals in exp.compared}
    index = {(tuple(c.settings.items()), c.strength): c for c in cells}
    empty = pd.DataFrame({"plies": []})
    for key, _ in exp.compared:
        for b in cells:
            if b.settings[key] == first[key]:
                continue
            base_settings = tuple((k, first[key] if k == key else v)
                                  for k, v in b.settings.items())
            a = index[(base_settings, b.strength)]
            ga = per_cell[a.index] if per_cell else empty
            gb = per_cell[b.index] if per_cell else empty
            row = compare_cells(a, b, ga, gb, metrics[a.index], metrics[b.index])
            if lengths:
                row.update(lengths.get((a.label, b.label), {}))
            row["key"] = key
            comparisons.append(row)
    adjusted = st.holm([c.get("p", math.nan) for c in comparisons])
    tested = sum(not math.isnan(p) for p in adjusted)
    claims = []
    for c, p in zip(comparisons, adjusted, strict=True):
        c["p_adjusted"] = p
        c["tests_in_run"] = tested
        v, c["verdict"] = comparison_verdict(c, metrics[c["baseline_cell"]],
                                             metrics[c["variant_cell"]], margin)
        c["verdict_kind"] = v.kind if v else ""
        c["games_needed"] = v.needed if v else 0
        if v:
            claims.append((v, c["verdict"]))
    advantage = []
    for m in metrics:
        v, m["verdict"] = advantage_verdict(m, margin)
        m["verdict_kind"] = v.kind if v else ""
        m["games_needed"] = v.needed if v else 0
        advantage.append(m["verdict"])
        if v:
            claims.append((v, m["verdict"]))
    trends = strength_trends(cells, metrics, margin)
    claims += [(t.pop("claim"), t["verdict"]) for t in trends]
    return Summary(exp, cells, metrics, comparisons, trends, advantage, games,
                   margin=margin, claims=claims)
