"""One verdict logic (niwa.analysis.stats.verdicts): its rules, and a property check over
synthetic result sets that no report can hold two verdicts that contradict each other,
nor a sentence whose words disagree with the interval it prints."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from scipy.stats import fisher_exact

from niwa.analysis.experiments import findings, headline, strength
from niwa.analysis.experiments.variants import Cell, Experiment
from niwa.analysis.stats import verdicts as vd
from niwa.analysis.stats.intervals import wilson_interval
from niwa.analysis.stats.tests import TableTest


# ---- the rules -------------------------------------------------------------------------
def test_no_difference_only_from_an_interval_inside_the_margin():
    # the bug reports: a non-significant change read as no change, and "converged" on an
    # interval reaching past the margin
    assert vd.classify(-0.125, 0.221) == vd.UNDECIDED
    assert vd.classify(-0.029, 0.096) == vd.UNDECIDED
    assert vd.classify(0.038, 0.377) == vd.DIFFERENT       # "no significant change" before
    assert vd.classify(-0.50, -0.01) == vd.DIFFERENT       # "no significant advantage" before
    assert vd.classify(-0.04, 0.049) == vd.EQUIVALENT
    assert vd.classify(-0.04, 0.05) == vd.UNDECIDED         # touching the margin is not inside


def test_margin_is_checked():
    with pytest.raises(ValueError):
        vd.classify(-0.01, 0.01, margin=0)


def test_games_needed_decides_at_the_estimate():
    v = vd.judge("x", 0.0, -0.10, 0.10, 100)
    assert v.kind == vd.UNDECIDED and v.needed == 400
    # with 400 games the half-width is about 5 points: inside +-5 only just not; the
    # estimate predicts the interval it would then have
    assert vd.judge("x", 0.0, -0.049, 0.049, 400).kind == vd.EQUIVALENT


def test_claims_in_catches_a_contradicting_sentence():
    bad = "rule=pro: seat 0's win rate is equivalent within +-5 points (+21.7 points, 95% CI +3.8 to +37.7)."
    assert vd.claims_in(bad) == [(vd.EQUIVALENT, vd.DIFFERENT)]
    assert vd.claims_in("x: converged (+1.0 points, 95% CI -1.0 to +3.0), +-4 points") \
        [-1][0] == "margin"


# ---- property: synthetic result sets ------------------------------------------------------
def _cell(index, variant, strength):
    return Cell(index, {"rule": variant}, {"rule": variant}, 2, strength, None, 0)


def _metrics(cell, wins0, decisive):
    """A variants.csv row of a two-player cell with these counts (the seat columns only,
    as experiments.metrics computes them)."""
    lo, hi = wilson_interval(wins0, decisive)
    z = (wins0 - decisive / 2) / math.sqrt(decisive / 4)
    return {"cell": cell.index, "label": cell.label, "variant": cell.variant_label,
            "strength": cell.strength or "", "players": 2, "games_scheduled": decisive,
            "games": decisive, "forfeits": 0, "capped": 0, "draws": 0, "decisive": decisive,
            "wins_0": wins0, "wins_1": decisive - wins0, "win_0": wins0 / decisive,
            "win_0_low": lo, "win_0_high": hi, "win_1": 1 - wins0 / decisive,
            "win_1_low": 1 - hi, "win_1_high": 1 - lo, "balance": math.nan,
            "fair_share": 0.5, "first_player_advantage": wins0 / decisive - 0.5,
            "fpa_low": lo - 0.5, "fpa_high": hi - 0.5,
            "fpa_p": math.erfc(abs(z) / math.sqrt(2)),
            **{f"plies_{k}": 60.0 for k in ("mean", "sd", "min", "q1", "median", "q3", "max")}}


def _fast_tables(table, confidence=0.95):
    """Fisher's p alone: the tables' odds-ratio intervals take seconds and no verdict
    reads them (the p-values only go to the report's tables)."""
    t = np.asarray(table)
    if t.shape == (2, 2) and (t.sum(axis=0) > 0).all() and (t.sum(axis=1) > 0).all():
        return TableTest("Fisher exact", math.nan, float(fisher_exact(t).pvalue), math.nan,
                         "phi")
    return TableTest("none", math.nan, math.nan, math.nan, "")


def synthetic_summary(rng: np.random.Generator):
    """A random two-variant experiment with 1 to 3 rungs: true rates, sample sizes from
    1 to 2,000 per cell (some cells far larger than others), and a random margin."""
    rungs = int(rng.integers(1, 4))
    strengths = [f"mcts:iters={10 ** (i + 1)}" for i in range(rungs)] if rungs > 1 else []
    margin = float(rng.choice([0.02, 0.05, 0.1]))
    exp = Experiment(game="lotus", vary=[["rule", ["basic", "pro"]]], strengths=strengths)
    cells, metrics = [], []
    for s in strengths or [None]:
        for variant in ("basic", "pro"):
            c = _cell(len(cells), variant, s)
            n = int(rng.choice([rng.integers(1, 30), rng.integers(30, 400),
                                rng.integers(400, 2000)]))
            p = float(rng.choice([0.5, rng.uniform(0.3, 0.7), rng.uniform(0, 1)]))
            cells.append(c)
            metrics.append(_metrics(c, int(rng.binomial(n, p)), n))
    summary = findings.conclude(exp, cells, metrics, None, margin)
    if strengths:
        summary.ladder, judged = strength.ladder(metrics, cells, None, {}, margin)
        summary.ladder_verdicts = [t for _, t in judged]
        summary.claims += judged
    return summary


def contradictions(summary) -> list[str]:
    """Every way the summary's sentences disagree with their intervals or each other."""
    found = []
    kinds, intervals = {}, {}
    heads = headline.headlines(summary)
    claims = list(summary.claims) + [(v, h.answer) for h in heads for v in h.claims]
    for v, sentence in claims:
        said = vd.claims_in(sentence, summary.margin)
        if not said:
            found.append(f"no interval in: {sentence}")
        found += [f"{a} claimed, {b} shown: {sentence}" for a, b in said if a != b]
        if kinds.setdefault(v.subject, v.kind) != v.kind:
            found.append(f"{v.subject}: {kinds[v.subject]} and {v.kind}")
        shown = (vd.fmt_points(v.low), vd.fmt_points(v.high))
        if intervals.setdefault(v.subject, shown) != shown:
            found.append(f"{v.subject}: two intervals {intervals[v.subject]} and {shown}")
    for h in heads:       # the answer quotes nothing the sections do not say
        found += [f"headline: {a} claimed, {b} shown" for a, b in
                  vd.claims_in(h.answer, summary.margin) if a != b]
    return found


def run_property(sets: int, seed: int, monkeypatch) -> tuple[int, int]:
    monkeypatch.setattr(findings.st, "compare_tables", _fast_tables)
    rng = np.random.default_rng(seed)
    bad, sentences = [], 0
    for _ in range(sets):
        s = synthetic_summary(rng)
        sentences += len(s.claims)
        bad += contradictions(s)
    print(f"\n{sets} synthetic result sets, {sentences} verdict sentences: "
          f"{len(bad)} contradictions")
    assert not bad, bad[:5]
    return sets, sentences


def test_verdicts_never_contradict_4000(monkeypatch):
    """Four thousand synthetic result sets in every run (about 50 s on one core here; half
    of it is scipy's Fisher test, 4 ms a table)."""
    run_property(4_000, seed=2026, monkeypatch=monkeypatch)


@pytest.mark.slow
def test_verdicts_never_contradict_40000(monkeypatch):
    """Forty thousand more, on other seeds (about 8 minutes), with -m slow."""
    run_property(40_000, seed=2027, monkeypatch=monkeypatch)


def test_report_lines_agree_with_their_intervals(tmp_path):
    """Every line of a written report.md with an interval says what the interval shows."""
    from niwa.analysis.experiments import report

    rng = np.random.default_rng(11)
    for i in range(5):
        s = synthetic_summary(rng)
        out = tmp_path / str(i)
        os.makedirs(out)
        path = report.write_report(s, str(out), plots=[], proof_time=0.0)
        for line in open(path, encoding="utf-8"):
            for said, shown in vd.claims_in(line, s.margin):
                assert said == shown, line
        assert open(path, encoding="utf-8").read().index("## Answer") < 80 + \
            len(open(path, encoding="utf-8").readline())
        assert not math.isnan(s.margin)


def test_docstring_examples_run():
    import doctest

    result = doctest.testmod(vd)
    assert result.failed == 0 and result.attempted > 10


def test_shipped_reports_open_with_the_answer_and_every_verdict_fits_its_interval():
    """bench/*/results/report.md: the title, then the answer paragraph; no sentence calls
    anything "converged" (or equivalent, or fair) whose printed interval leaves the margin."""
    import glob

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    reports = [p for p in glob.glob(os.path.join(root, "bench", "*", "results", "report.md"))
               if os.path.exists(os.path.join(os.path.dirname(p), "analysis.json"))]
    assert len(reports) >= 3
    for path in reports:
        lines = open(path, encoding="utf-8").read().splitlines()
        assert lines[0].startswith("# ") and lines[2] == "## Answer", path
        assert lines[4].startswith(("At the strongest rung", "**")), path
        checked = 0
        for line in lines:
            for said, shown in vd.claims_in(line):
                assert said == shown, (path, line)
                checked += 1
        assert checked > 10, path
