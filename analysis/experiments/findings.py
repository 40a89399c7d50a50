"""What an experiment found: comparisons between cells, strength trends, and the verdict
sentences, from the per-cell metrics (experiments.metrics).

Model: cells are independent samples (each has its own seed).
Between cells, one setting at a time (each value against the setting's first value, the
other settings and the strength held fixed): Fisher's exact test (2 seats)
or chi-square (more) of wins by seat, the difference of seat 0's share with Newcombe's
interval, Mann-Whitney on lengths, Holm-adjusted over all the comparisons of the run, and a
verdict sentence that says what the data support and no more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from niwa.analysis import stats as st
from niwa.analysis.experiments.metrics import cell_metrics

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


def advantage_verdict(m: dict) -> str:
    """One sentence on a cell's first-player advantage (or solo result)."""
    if m["players"] == 1:
        return (f"{m['label']}: the solo game is won in {_pct(m['solo_win'])} of {m['games']} "
                f"games (95% CI {_pct(m['solo_win_low'])} to {_pct(m['solo_win_high'])}).")
    n, d = m["players"], m["decisive"]
    if d == 0:
        return f"{m['label']}: no decisive game, nothing to measure."
    fair = _pct(m["fair_share"])
    what = (f"seat 0 wins {_pct(m['win_0'])} of {d} decisive games (95% CI "
            f"{_pct(m['win_0_low'])} to {_pct(m['win_0_high'])}; fair share {fair})")
    p = _fpa_p(m)
    test = _p(p) + (f", Holm-adjusted over {m['fpa_tests']} variants"
                    if m.get("fpa_tests", 1) > 1 else "")
    if p < ALPHA:
        sign = "advantage" if m["first_player_advantage"] > 0 else "disadvantage"
        return f"{m['label']}: the first player has a significant {sign}: {what}, {test}."
    if m["fpa_p"] < ALPHA:      # significant alone, not among all the variants tested
        return (f"{m['label']}: a possible first-player advantage, not significant once "
                f"adjusted for the {m['fpa_tests']} variants tested: {what}, {test} "
                f"(unadjusted {_p(m['fpa_p'])}).")
    return (f"{m['label']}: no significant first-player advantage: {what}, {test}; "
            f"the true advantage{'' if n == 2 else ' of seat 0'} lies between "
            f"{_pts(m['fpa_low'])} and {_pts(m['fpa_high'])} points (95% CI).")


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


def comparison_verdict(c: dict, ma: dict, mb: dict) -> str:
    """A plain sentence that says what the (Holm-adjusted) test supports and no more."""
    p = c.get("p_adjusted", c.get("p", math.nan))
    if mb["players"] == 1 and ma["players"] == 1 and (p is None or math.isnan(p)):
        return (f"{c['variant']} vs {c['baseline']}: no test possible, every game has the "
                f"same outcome (solo wins {_pct(mb['solo_win'])} and {_pct(ma['solo_win'])} "
                f"of {mb['games']} and {ma['games']} games).")
    if "diff" not in c or p is None or math.isnan(p):
        return f"{c['variant']} vs {c['baseline']}: {c.get('note', 'not comparable')}."
    interval = f"{_pts(c['diff'])} points, 95% CI {_pts(c['diff_low'])} to {_pts(c['diff_high'])}"
    if mb["players"] == 1:
        if p < ALPHA:
            return (f"{c['variant']} changes the solo win rate against {c['baseline']}: "
                    f"{interval} ({c['test']}, {_p(p)}).")
        return (f"No significant difference in the solo win rate between {c['variant']} and "
                f"{c['baseline']} at {mb['games']} and {ma['games']} games ({_p(p)}; {interval}).")
    who = f"{c['variant']} vs {c['baseline']}"
    test = f"{c['test']} {_p(p)}" + (f", Holm-adjusted over {c['tests_in_run']} comparisons"
                                     if c.get("tests_in_run", 1) > 1 else "")
    if p >= ALPHA > c["p"]:
        test += f"; unadjusted {_p(c['p'])}"
    rates = f"seat 0 wins {_pct(mb['win_0'])} vs {_pct(ma['win_0'])}"
    if p >= ALPHA:
        return (f"{who}: no significant difference in seat balance at {mb['decisive']} and "
                f"{ma['decisive']} decisive games ({rates}; {test}); the "
                f"difference in seat 0's win rate is {interval}: the data cannot rule out "
                "a change anywhere in that range.")
    base_adv = _fpa_p(ma) < ALPHA and ma["first_player_advantage"] > 0
    var_adv = _fpa_p(mb) < ALPHA and mb["first_player_advantage"] > 0
    var_dis = _fpa_p(mb) < ALPHA and mb["first_player_advantage"] < 0
    smaller = abs(mb["first_player_advantage"]) < abs(ma["first_player_advantage"])
    if base_adv and not var_adv and not var_dis:
        head = (f"{c['variant']} removes the measurable first-player advantage of "
                f"{c['baseline']}")
        tail = (f"; what remains is within {_pts(mb['fpa_low'])} to {_pts(mb['fpa_high'])} "
                "points of the fair share")
    elif base_adv and var_adv and smaller:
        head, tail = f"{c['variant']} reduces but does not remove the first-player advantage", ""
    elif base_adv and var_dis:
        head, tail = f"{c['variant']} reverses the first-player advantage", ""
    elif smaller:
        head, tail = f"{c['variant']} moves the seats closer to balance than {c['baseline']}", ""
    else:
        slightly = " slightly" if abs(c["diff"]) < 0.02 else ""
        head, tail = (f"{c['variant']} shifts the seat balance{slightly} compared with "
                      f"{c['baseline']}"), ""
    return f"{head}: {rates} ({interval}; {test}){tail}."


# ---- strength sweeps -------------------------------------------------------------------
def strength_trends(cells: list[Cell], metrics: list[dict]) -> list[dict]:
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
        out.append(row)
    adjusted = st.holm([r["p_ends"] for r in out])
    for row, p in zip(out, adjusted, strict=True):
        row["p_ends_adjusted"] = p
        d = row["diff"]
        if p < ALPHA and d > 0:
            verdict = "grows with stronger play"
        elif p < ALPHA and d < 0:
            verdict = "shrinks with stronger play"
        else:
            verdict = "shows no significant change with strength"
        weak_rate, strong_rate = row.pop("_rates")
        held = f", Holm-adjusted over {len(out)} variants" if len(out) > 1 else ""
        if p >= ALPHA > row["p_ends"]:
            held += f"; unadjusted {_p(row['p_ends'])}"
        row["verdict"] = (f"{row['variant']}: the first-player advantage {verdict} (seat 0: "
                          f"{_pct(weak_rate)} with {row['weakest']} -> {_pct(strong_rate)} "
                          f"with {row['strongest']}; change {_pts(d)} points, 95% CI "
                          f"{_pts(row['diff_low'])} to {_pts(row['diff_high'])}, "
                          f"{_p(p)}{held}; all strengths {row['test_all']} {_p(row['p_all'])}).")
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


def summarise(exp: Experiment, cells: list[Cell], games: pd.DataFrame) -> Summary:
    maxp = max(c.players for c in cells)
    games = games.assign(cell=games["cell"].astype(int))
    per_cell = {c.index: games[games["cell"] == c.index] for c in cells}
    metrics = [cell_metrics(c, per_cell[c.index], maxp) for c in cells]
    fpa = st.holm([m.get("fpa_p", math.nan) for m in metrics])
    tested = sum(not math.isnan(p) for p in fpa)
    for m, p in zip(metrics, fpa, strict=True):
        if "fpa_p" in m:
            m["fpa_p_adjusted"], m["fpa_tests"] = p, tested
    comparisons = []
    # one setting at a time: each value against the key's first value, everything else
    # (the other settings, the strength) held fixed
    first = {k: vals[0] for k, vals in exp.vary}
    index = {(tuple(c.settings.items()), c.strength): c for c in cells}
    for key, _ in exp.vary:
        for b in cells:
            if b.settings[key] == first[key]:
                continue
            base_settings = tuple((k, first[key] if k == key else v)
                                  for k, v in b.settings.items())
            a = index[(base_settings, b.strength)]
            comparisons.append(compare_cells(a, b, per_cell[a.index], per_cell[b.index],
                                             metrics[a.index], metrics[b.index]))
    adjusted = st.holm([c.get("p", math.nan) for c in comparisons])
    tested = sum(not math.isnan(p) for p in adjusted)
    for c, p in zip(comparisons, adjusted, strict=True):
        c["p_adjusted"] = p
        c["tests_in_run"] = tested
        c["verdict"] = comparison_verdict(c, metrics[c["baseline_cell"]],
                                          metrics[c["variant_cell"]])
    for m in metrics:
        m["verdict"] = advantage_verdict(m)
    return Summary(exp, cells, metrics, comparisons, strength_trends(cells, metrics),
                   [m["verdict"] for m in metrics], games)
