"""report.md: the experiment's findings for a game designer, with its tables and plots.

The report is written from the same numbers as variants.csv / comparisons.csv, leads with
the verdicts, and says how the numbers were obtained so that nobody has to open the CSVs.

Exact (perfect-play) results are included when they exist: from `exact.csv` in the output
folder (any table the solver wrote, e.g. `niwa solve ... > DIR/exact.csv`), or computed by
the solver for small Lotus set-ups when niwa.solver offers an exact solver (see
`exact_results`).
"""

from __future__ import annotations

import base64
import html
import math
import os
import re
from dataclasses import dataclass, field

import pandas as pd

REPORT_MD = "report.md"
REPORT_HTML = "report.html"
EXACT_CSV = "exact.csv"


# ---- formatting ------------------------------------------------------------------------
def md_table(header: list[str], rows: list[list]) -> str:
    def cell(x):
        return str(x).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(x) for x in r) + " |" for r in rows]
    return "\n".join(lines)


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x, digits: int = 1) -> str:
    return "n/a" if _nan(x) else f"{100 * x:.{digits}f}%"


def ci(m: dict, key: str) -> str:
    """'55.2% [53.1, 57.3]' for a rate with its Wilson interval."""
    if _nan(m.get(key)):
        return "n/a"
    return f"{pct(m[key])} [{100 * m[key + '_low']:.1f}, {100 * m[key + '_high']:.1f}]"


def pts(x) -> str:
    return "n/a" if _nan(x) else f"{round(100 * x, 1) + 0.0:+.1f}"      # + 0.0: no "-0.0"


def pval(p) -> str:
    if _nan(p):
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def num(x, digits: int = 1) -> str:
    return "n/a" if _nan(x) else f"{x:.{digits}f}"


# ---- exact results ---------------------------------------------------------------------
# Lotus set-ups the df-pn proof search decides in seconds: (board, geometry, towers). The
# full standard game (towers 4..1) takes minutes and gigabytes: bench/perfect-play/run.py.
LOTUS_EXACT_SETUPS = [
    ("lane 1, shared 4, trampoline 3", {"lane": 1, "shared": 4, "trampoline_at": 3}, 1),
    ("lane 1, shared 4, trampoline 3", {"lane": 1, "shared": 4, "trampoline_at": 3}, 2),
    ("lane 2, shared 6, trampoline 5", {"lane": 2, "shared": 6, "trampoline_at": 5}, 1),
    ("lane 2, shared 6, trampoline 5", {"lane": 2, "shared": 6, "trampoline_at": 5}, 2),
    ("standard (lane 3, shared 11, trampoline 8)", {}, 1),
    ("standard (lane 3, shared 11, trampoline 8)", {}, 2),
    ("standard (lane 3, shared 11, trampoline 8)", {}, 3),
]
EXACT_TT_MB = 512.0
EXACT_TIME_S = 15.0         # per position
EXACT_BUDGET_S = 90.0       # for the whole table


def exact_results(exp, out_dir: str, cells=None,
                  proof_time: float = EXACT_TIME_S) -> pd.DataFrame | None:
    """Perfect-play results to show beside the statistics, or None.

    1. out_dir/exact.csv if present: a table written by `niwa solve --batch ... --out`, by
       hand, or by an earlier run of this function (it caches its table there);
    2. for two-player Lotus, the df-pn proof search (niwa.solver.proof) on the small
       set-ups of LOTUS_EXACT_SETUPS, for every variant of the experiment: the first
       player's game-theoretic result, when the search proves it within `proof_time`
       seconds per position (niwa analyse --proof-time; 0: not searched).
    """
    path = os.path.join(out_dir, EXACT_CSV)
    if os.path.exists(path):
        try:
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        except (ValueError, OSError):
            return None
    if exp.game != "lotus" or not cells or not proof_time:
        return None
    import time

    from niwa.ext.registry import get_game
    from niwa.solver.proof import ProofSearch

    variants = {}
    for c in cells:
        if c.players == 2:
            variants.setdefault(c.variant_label, c.variant)
    geometry = ("lane", "shared", "trampoline_at", "towers")
    rows, spent = [], 0.0
    for board, geo, towers in LOTUS_EXACT_SETUPS:
        row = {"board": board, "towers": f"{towers}..1"}
        for label, variant in variants.items():
            setting = {k: v for k, v in variant.items() if k not in geometry}
            setting.update(geo, towers=towers)
            if spent > EXACT_BUDGET_S:
                row[label] = "not attempted (time budget)"
                continue
            start = time.perf_counter()
            try:
                state = get_game("lotus").new(**setting)
                r = ProofSearch(tt_mb=EXACT_TT_MB).solve(state, time_limit=proof_time,
                                                         root_values=False, pv=False)
            except Exception as e:      # a bonus section: never lose a report over it
                row[label] = f"solver failed: {type(e).__name__}"
                continue
            finally:
                spent += time.perf_counter() - start
            if r.proven and r.value is not None:
                v = float(r.value) if state.current_player() == 0 else 1.0 - float(r.value)
                row[label] = ("first player wins" if v > 0.5 else "second player wins"
                              if v < 0.5 else "draw")
            else:
                row[label] = f"not proven in {proof_time:g} s"
        rows.append(row)
    if not rows:
        return None
    table = pd.DataFrame(rows)
    table.to_csv(path, index=False)     # cached: --resume reuses it
    return table


# ---- the report ------------------------------------------------------------------------
def top_games_text(exp, cells) -> str:
    """', N at the strongest rung' when --top-games gave the top rung its own count."""
    top = [c.games for c in cells if exp.top_games and c.strength == exp.strengths[-1]]
    return f", {top[0]} at the strongest rung (`{exp.strengths[-1]}`)" if top else ""


@dataclass
class GameCounts:
    """Games per purpose, from the schedule and from games.csv, so that they add up.

    `rows`: (purpose, what, scheduled, recorded); `file_rows`: the rows of games.csv, which
    may also hold games a larger earlier run scheduled (kept, not analysed);
    `rating_under`: rating games recorded per variant they were played under;
    `first_only`: those of the first variant stand for every variant (--rate-under first)."""

    rows: list[tuple[str, str, int, int]]
    file_rows: int
    rating_under: dict[str, int] = field(default_factory=dict)
    first_only: bool = False
    from_tables: bool = False       # rebuilt without games.csv (not shipped)

    @property
    def recorded(self) -> int:
        return sum(r[3] for r in self.rows)

    @property
    def beyond_schedule(self) -> int:
        return self.file_rows - self.recorded

    @classmethod
    def of_cells(cls, all_cells, recorded, file_rows: int, first_only: bool) -> GameCounts:
        """The counts of every cell, `recorded(cell)` giving its games recorded."""
        rows, under = [], {}
        for c in all_cells:
            n = recorded(c)
            if c.rating:
                rows.append(("rating", f"{' vs '.join(c.config.agents)} (seats swapped), "
                             f"under {c.variant_label}", c.games, n))
                under[c.variant_label] = under.get(c.variant_label, 0) + n
            else:
                rows.append(("self-play", c.label, c.games, n))
        variants = {c.variant_label for c in all_cells if not c.rating}
        return cls(rows, file_rows, under, first_only and len(variants) > 1)

    @classmethod
    def of_run(cls, summary, all_cells, out_dir: str) -> GameCounts:
        path = os.path.join(out_dir, "games.csv")
        log = pd.read_csv(path, dtype=str, keep_default_na=False, usecols=["game_id", "cell"])
        cell_of = log["cell"].astype(int)
        in_cell = log["game_id"].astype(int) % 1_000_000
        return cls.of_cells(all_cells,
                            lambda c: int(((cell_of == c.index) & (in_cell < c.games)).sum()),
                            len(log), summary.experiment.rate_under == "first")

    def table(self) -> str:
        body = [[p, w, s, r] for p, w, s, r in self.rows]
        body.append(["all", "", sum(r[2] for r in self.rows), self.recorded])
        return md_table(["purpose", "cell", "scheduled", "recorded (analysed)"], body)

    def rating_text(self) -> str:
        """Where the rating games were played, e.g. 'under each variant: 40 under
        rule=basic, 40 under rule=pro'."""
        if self.first_only:
            return (f"under {next(iter(self.rating_under))} only, whose Elo stands for "
                    "every variant")
        if len(self.rating_under) == 1:
            return f"under {next(iter(self.rating_under))}"
        return "under each variant: " + ", ".join(f"{n} under {label}"
                                                  for label, n in self.rating_under.items())

    def sentence(self) -> str:
        selfplay = sum(r[3] for r in self.rows if r[0] == "self-play")
        rating = sum(r[3] for r in self.rows if r[0] == "rating")
        log = ("The run recorded" if self.from_tables else "games.csv holds")
        text = (f"{log} {self.file_rows} games: {selfplay} self-play games "
                f"analysed for the verdicts")
        if rating:
            text += (f", {rating} rating games between neighbouring strengths (played "
                     f"{self.rating_text()}; they place the rungs on the Elo scale and are "
                     "not part of any win rate)")
        if self.beyond_schedule:
            text += (f", and {self.beyond_schedule} games an earlier, larger schedule played "
                     "(kept in the log, not analysed)")
        if self.from_tables:
            text += (". This report was rebuilt from the run's tables (variants.csv and "
                     "analysis.json); its games.csv is not shipped")
        return text + "."


def _setup(summary, counts: GameCounts | None, proof_time: float | None) -> list[str]:
    exp, cells, metrics = summary.experiment, summary.cells, summary.metrics
    varied = ", ".join(f"`{k}` = {', '.join(v)}" for k, v in exp.compared) \
        or "nothing (one variant)"
    first = cells[0]
    fixed = {k: v for k, v in first.variant.items() if k not in dict(exp.compared)}
    if exp.strengths:
        who = "self-play at each strength: " + ", ".join(f"`{s}`" for s in exp.strengths)
    elif len(exp.agents) == 1:
        who = f"self-play, `{exp.agents[0]}` in every seat"
    else:
        who = "the lineup " + ", ".join(f"`{a}`" for a in exp.agents) + \
              " (every table in every seat order)"
    partial = any(m["games"] < m["games_scheduled"] for m in metrics)
    forfeits = sum(m["forfeits"] for m in metrics)
    lines = ["## Set-up", "",
             f"- Varied: {varied}.",
             f"- Other settings: {', '.join(f'{k}={v}' for k, v in fixed.items()) or 'none'}.",
             f"- Players: {who}.",
             f"- Games per variant: {first.games}{top_games_text(exp, cells)}"
             f"{' scheduled (not all recorded yet: see the tables)' if partial else ''}"
             f"; seed {exp.seed}. Every seat order is played equally often.",
             f"- Margin: differences within +-{100 * summary.margin:g} points count as no "
             "difference (`--margin`).",
             ]
    if counts is not None:
        lines.append(f"- Games: {counts.sentence()} Per cell: see [Games](#games).")
    if proof_time is not None and exp.strengths:
        lines.append("- Proof search: " + (f"{proof_time:g} s per variant and per exact "
                                           "set-up (`--proof-time`)" if proof_time else
                                           "not run (`--proof-time 0`)") + ".")
    for text in exp.house:
        lines.append(f"- House rules: `rules={text.rpartition(':')[2]}` is the class `{text}`, "
                     "a subclass of the game's plain-Python reference rules, played by the "
                     "same agents (`rules=engine` is the compiled game; see "
                     "docs/house-rules.md). The reference rules record none of the engine's "
                     "game statistics, and where the game hides information the house "
                     "variant's searching agents see all of it.")
    if forfeits:
        lines.append(f"- Forfeits (an agent crashed or overran its time): {forfeits} games, left "
                     "out of every rate.")
    return lines + [""]


def _seat_table(metrics) -> str:
    maxp = max(m["players"] for m in metrics)
    header = ["variant", "games"] + [f"seat {s} wins" for s in range(maxp)] + \
        ["first-player advantage (points)", "p vs fair", "p (Holm)", "balance"]
    rows = []
    for m in metrics:
        if m["players"] == 1:
            rows.append([m["label"], m["games"], ci(m, "solo_win") + " (solo win)"]
                        + [""] * (maxp - 1) + ["", "", "", ""])
            continue
        seats = [ci(m, f"win_{s}") if s < m["players"] else "" for s in range(maxp)]
        adv = f"{pts(m['first_player_advantage'])} [{pts(m['fpa_low'])}, {pts(m['fpa_high'])}]"
        rows.append([m["label"], m["games"], *seats, adv, pval(m["fpa_p"]),
                     pval(m.get("fpa_p_adjusted")), num(m["balance"], 3)])
    return md_table(header, rows)


def _comparison_table(comparisons) -> str:
    header = ["variant vs baseline", "seat 0 wins (variant / baseline)",
              "difference, points [95% CI]", "test", "p", "p (Holm)", "effect size",
              "plies mean (variant / baseline)", "length p"]
    rows = []
    for c in comparisons:
        effect = "n/a" if _nan(c.get("effect")) else f"{c['effect_name']} {c['effect']:.3f}"
        if not _nan(c.get("odds_ratio")):
            effect += (f"; odds ratio {c['odds_ratio']:.2f} [{c['odds_ratio_low']:.2f}, "
                       f"{c['odds_ratio_high']:.2f}]")
        rows.append([
            f"{c['variant']} vs {c['baseline']}",
            f"{pct(c.get('seat0_variant'))} / {pct(c.get('seat0_baseline'))}",
            f"{pts(c.get('diff'))} [{pts(c.get('diff_low'))}, {pts(c.get('diff_high'))}]",
            c.get("test", "n/a"), pval(c.get("p")), pval(c.get("p_adjusted")), effect,
            f"{num(c.get('plies_mean_variant'))} / {num(c.get('plies_mean_baseline'))}",
            pval(c.get("length_p"))])
    return md_table(header, rows)


def _length_table(metrics) -> str:
    extra = [k for k in ("turns", "rounds") if all(f"{k}_mean" in m for m in metrics)]
    header = ["variant", "plies mean ± sd", "median [quartiles]", "min-max"] + \
        [f"{k} mean ± sd" for k in extra] + ["draws", "capped"]
    rows = []
    for m in metrics:
        rows.append([m["label"], f"{num(m['plies_mean'])} ± {num(m['plies_sd'])}",
                     f"{num(m['plies_median'], 0)} [{num(m['plies_q1'], 0)}, "
                     f"{num(m['plies_q3'], 0)}]",
                     f"{num(m['plies_min'], 0)}-{num(m['plies_max'], 0)}"]
                    + [f"{num(m[k + '_mean'])} ± {num(m[k + '_sd'])}" for k in extra]
                    + [m["draws"], m["capped"]])
    return md_table(header, rows)


def _game_specific(metrics) -> list[str]:
    out = []
    if all("lead_changes_mean" in m for m in metrics):
        out += ["## Running score: lead changes and comebacks", "",
                "A lead change is a new sole leader of the running score; a comeback is a "
                "game whose winner was behind at some point.", "",
                md_table(["variant", "lead changes per game (mean ± sd)",
                          "games with a lead change", "comebacks"],
                         [[m["label"], f"{num(m['lead_changes_mean'], 2)} ± "
                           f"{num(m['lead_changes_sd'], 2)}", ci(m, "lead_change_games"),
                           ci(m, "comeback")] for m in metrics]), ""]
    if all("score_0_mean" in m for m in metrics):
        maxp = max(m["players"] for m in metrics)
        rows = []
        for m in metrics:
            seats = [f"{num(m.get(f'score_{s}_mean'))} ± {num(m.get(f'score_{s}_sd'))}"
                     if s < m["players"] else "" for s in range(maxp)]
            margin = (f"{num(m['margin_mean'])} (median {num(m['margin_median'], 0)})"
                      if "margin_mean" in m else "")
            rows.append([m["label"], *seats, margin])
        out += ["## Final scores", "", "![final scores](scores.png)", "",
                md_table(["variant"] + [f"seat {s} score (mean ± sd)" for s in range(maxp)]
                         + ["winner's margin"], rows), ""]
    goal_keys = sorted({k[len("goal_claim:"):] for m in metrics for k in m
                        if k.startswith("goal_claim:") and not k.endswith(("_low", "_high"))})
    if goal_keys:
        out += ["## Goal claim rates", "",
                "Share of games (where the goal was in play, when the game records that) in "
                "which someone claimed the goal, 95% CI.", "",
                md_table(["goal"] + [m["label"] for m in metrics],
                         [[g] + [ci(m, f"goal_claim:{g}") for m in metrics] for g in goal_keys]),
                ""]
    level_keys = sorted({k for m in metrics for k in m if k.startswith("reached_level_")
                         and not k.endswith(("_low", "_high"))})
    if level_keys:
        out += ["## Solo: share of games reaching each level", "",
                md_table(["level"] + [m["label"] for m in metrics],
                         [[k.rsplit("_", 1)[1]] + [ci(m, k) for m in metrics]
                          for k in level_keys]), ""]
    if all("runner_up_remaining_mean" in m for m in metrics):
        out += ["## How close were the games?", "",
                "Distance the runner-up still had to cover when the winner finished (the sum "
                "over its stones of the spaces left to the goal; lower = closer).", "",
                md_table(["variant", "mean ± sd", "median [quartiles]"],
                         [[m["label"], f"{num(m['runner_up_remaining_mean'])} ± "
                           f"{num(m['runner_up_remaining_sd'])}",
                           f"{num(m['runner_up_remaining_median'], 0)} "
                           f"[{num(m['runner_up_remaining_q1'], 0)}, "
                           f"{num(m['runner_up_remaining_q3'], 0)}]"] for m in metrics]), ""]
    return out


METHOD = """## Method
- Win rates are each seat's share of the decisive games (one sole winner); draws and games
  stopped by a cap are counted apart. Intervals are 95% Wilson score intervals.
- First-player advantage = seat 0's share minus the fair share 1/N; its p-value is the
  exact binomial test against 1/N, Holm-adjusted over the variants of the run (tables
  only). Balance = 1 - (best seat's share - worst seat's share)
  (1 = perfectly even), after Ludii's balance concept.
- Between variants (one setting at a time: each value against that setting's first value,
  the other settings and the agent strength held fixed): Fisher's
  exact test on wins by seat (2 seats; effect size phi and the odds ratio with its
  interval) or Pearson's chi-square (more seats; Cramer's V); the difference in seat 0's
  share with Newcombe's hybrid score interval; game lengths by Mann-Whitney U. p-values are
  Holm-adjusted over all comparisons of the run (tables only).
- Agent strength: the weakest against the strongest agent by Fisher's exact test on seat
  0's wins (Holm-adjusted over the variants), and a chi-square test over all strengths.
- Verdicts (niwa.analysis.stats.verdicts, one rule for every sentence): a 95% interval
  inside the margin (+-M points, `--margin`) is *equivalent* (*fair* for a seat against its
  fair share, *converged* for the top two rungs of a ladder): the two one-sided tests
  (TOST) reject a difference of M or more. An interval that excludes 0 but not the margin
  is *different* (*still moving*). Anything else is *undecided*, with the games that
  would decide it if the estimate held (the interval narrows as 1/sqrt(games)). A
  difference that is not significant is never read as no difference, and no verdict
  rests on a p-value; the intervals are not adjusted for the number of comparisons.
  Where a *different* does not survive Holm's correction of its p-value (the p (Holm)
  columns), its sentence says so: such a difference may be chance.
- Every variant has its own seed, so the samples are independent. In games with a deal,
  each round plays one deal in every seat order (luck of the deal cancels between seats);
  games of one round are then not fully independent, so the intervals are slightly
  optimistic for those games. Lotus has no deal.
- Games are played by the tournament runner: reproducible from the seed, parallel, and
  resumable (`--resume`)."""


def _ladder_section(ladder: list[dict], ratings: dict | None = None) -> list[str]:
    """Seat 0's rate at each rung with the rung's Elo and the proven result (if any)."""
    if not ladder:
        return []
    ratings = ratings or {}
    rated = ratings.get("variants") or []
    labels = list(dict.fromkeys(r["variant"] for r in ladder))
    if ratings.get("under") == "first" and rated and len(labels) > 1:
        where = (f" The rating games were played under {rated[0]} only (`--rate-under "
                 "first`), so every variant shows that variant's Elo for a rung.")
    elif len(rated) > 1:
        where = (" Each variant's rungs are rated by rating games played under that "
                 "variant.")
    else:
        where = ""
    unrated = [label for label in labels if label not in rated]
    if rated and unrated and ratings.get("under") != "first":
        where += f" Not rated (not two-player): {', '.join(unrated)}."
    elo = lambda r: ("" if r["elo"] != r["elo"]  # noqa: E731  (NaN: not rated)
                     else f"{r['elo']:+.0f} [{r['elo_low']:+.0f}, {r['elo_high']:+.0f}]")
    proven = lambda r: ("" if r["proven_seat0"] is None  # noqa: E731
                        else f"{100 * r['proven_seat0']:.0f}% ({pts(r['gap_to_proven'])})")
    return ["## Seat balance along the strength ladder", "",
            "Elo from the rating games between neighbouring strengths (weakest = 0, 95% "
            "interval); seat 0's share of the decisive self-play games (Wilson 95%); the "
            "proven result of perfect play where the proof search decides the variant, "
            "with the gap to it in points." + where, "",
            md_table(["variant", "strength", "Elo", "games", "seat 0 wins [95% CI]",
                      "perfect play: seat 0 (gap)"],
                     [[r["variant"], r["strength"], elo(r), r["games"],
                       f"{100 * r['seat0_rate']:.1f}% [{100 * r['seat0_low']:.1f}, "
                       f"{100 * r['seat0_high']:.1f}]", proven(r)] for r in ladder]), ""]


def _verdict_sections(summary) -> list[str]:
    lines = []
    # with two rungs, weakest -> strongest is the ladder's top-two change: say it once
    trends = [] if len(summary.experiment.strengths) == 2 and summary.ladder_verdicts \
        else [t["verdict"] for t in summary.trends]
    judged = [c["verdict"] for c in summary.comparisons if c.get("verdict_kind")]
    # pairs that cannot be compared on one rate (different player counts): said once
    notes = list(dict.fromkeys(c.get("note") or "not comparable" for c in summary.comparisons
                               if not c.get("verdict_kind")))
    skipped = sum(not c.get("verdict_kind") for c in summary.comparisons)
    judged += [f"{skipped} pairs of variants not compared on seat 0's win rate: {n}."
               for n in notes]
    groups = [("Between variants", judged),
              ("Seat balance of each variant", summary.advantage_verdicts),
              ("With strength", trends + summary.ladder_verdicts)]
    for title, items in groups:
        if items:
            lines += [f"### {title}", ""] + [f"- {v}" for v in items] + [""]
    return lines


def write_report(summary, out_dir: str, plots: list[str], notes: list[str] | None = None,
                 command: str = "", exact: pd.DataFrame | None = None,
                 counts: GameCounts | None = None, history: list[str] = (),
                 proof_time: float | None = None) -> str:
    """Write out_dir/report.md and return its path: the question and its answer first
    (experiments.headline), then the verdicts by section, the tables, and the run's
    history in an appendix."""
    from niwa.analysis.experiments.headline import headlines

    metrics = summary.metrics
    heads = headlines(summary, proof_time or 0.0)
    title = heads[0].question if len(heads) == 1 else f"{summary.experiment.game}"
    lines = [f"# Rule-variant analysis: {summary.experiment.game}", ""]
    if len(heads) == 1:
        lines[0] = f"# {summary.experiment.game}: {title}"
    lines += ["## Answer", ""]
    for h in heads:
        lines += ([f"**{h.question}**", ""] if len(heads) > 1 else []) + [h.answer, ""]
    lines += _setup(summary, counts, proof_time)
    lines += ["## Verdicts", "",
              f"Each verdict reads one 95% interval against the margin (+-"
              f"{100 * summary.margin:g} points): *equivalent* / *fair* / *converged* only "
              "when the whole interval lies inside it, *different* / *still moving* when it "
              "excludes 0, *undecided* otherwise, with the games needed. p-values are in the "
              "tables; no verdict rests on one.", ""]
    lines += _verdict_sections(summary)
    lines += ["## Win rate by seat", "", "![win rate by seat](seat_win_rates.png)", "",
              "Each seat's share of the decisive games, with 95% intervals.", "",
              _seat_table(metrics), ""]
    if summary.comparisons:
        lines += ["## Between variants", "", _comparison_table(summary.comparisons), ""]
        notes_c = [c["note"] for c in summary.comparisons if c.get("note")]
        lines += [f"Note: {n}." for n in dict.fromkeys(notes_c)]
        lines += [""] if notes_c else []
    if summary.trends:
        lines += ["## First-player advantage against agent strength", ""]
        if "advantage_vs_strength.png" in plots:
            lines += ["![advantage vs strength](advantage_vs_strength.png)", ""]
        lines += [md_table(
            ["variant", "weakest", "strongest", "advantage weakest -> strongest (points)",
             "change [95% CI]", "p (ends)", "p (ends, Holm)", "p (all strengths)"],
            [[t["variant"], t["weakest"], t["strongest"],
              f"{pts(t['fpa_weakest'])} -> {pts(t['fpa_strongest'])}",
              f"{pts(t['diff'])} [{pts(t['diff_low'])}, {pts(t['diff_high'])}]",
              pval(t["p_ends"]), pval(t.get("p_ends_adjusted")), pval(t.get("p_all"))]
             for t in summary.trends]), ""]
    lines += _ladder_section(summary.ladder, summary.ratings)
    lines += ["## Game length", "", "![game length](game_length.png)", "",
              _length_table(metrics), ""]
    lines += _game_specific(metrics)
    lines += ["## Exact results (perfect play)", ""]
    if exact is not None and len(exact):
        lines += ["Game-theoretic results from the exact solver, beside the statistics above: "
                  "self-play statistics measure how imperfect agents fare, these say who wins "
                  "when both sides play perfectly."]
        if "board" in exact.columns and "towers" in exact.columns:
            lines += ["These are set-ups the proof search decides in seconds (start towers "
                      "t..1, on shorter tracks and the standard one), each with the other "
                      "settings of the variant in the column, proven by df-pn "
                      "(`niwa.solver.proof`: every line played to the end, no evaluation). "
                      "The full two-player game (towers 4..1) takes minutes: see "
                      "`docs/lotus-perfect-play.csv`. Check one with e.g. `niwa solve "
                      "\"lotus towers=2 lane=2 shared=6 trampoline_at=5 rule=pro\"`."]
        lines += ["", md_table(list(exact.columns), exact.astype(str).values.tolist()), "",
                  f"(Cached in `{EXACT_CSV}`; delete it to recompute.)", ""]
    else:
        lines += [f"No exact results for this experiment. Put a solver table in `{EXACT_CSV}` "
                  "in this folder (any columns) and rerun with `--resume` to include it.", ""]
    if counts is not None:
        lines += ["## Games", "", counts.sentence(), "", counts.table(), ""]
    lines += [METHOD, "",
              "Files: `games.csv` (one row per game), `variants.csv` (one row per variant, "
              "every metric and interval), " + ("`comparisons.csv`, " if summary.comparisons
                                                else "")
              + ("`strengths.csv`, " if summary.trends else "") + "`analysis.json` (the "
              "experiment, for `--resume`), `report.html` (this report with its plots, in "
              "one file).", ""]
    lines += ["## Appendix: run history", ""]
    if command:
        lines += ["Started with:", "", "```", command, "```", ""]
    lines += [f"- Continued with `{c}`." for c in history]
    lines += [f"- {n}" for n in notes or []]
    lines += [""]
    path = os.path.join(out_dir, REPORT_MD)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return path


HTML_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1100px;
       margin: 2em auto; padding: 0 1em; line-height: 1.45; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 1.8em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; display: block;
        overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; } tr:nth-child(even) td { background: #fafafa; }
img { max-width: 100%; height: auto; }
pre, code { background: #f5f5f5; font-size: 0.9em; } pre { padding: 0.6em; overflow-x: auto; }
#answer { background: #eef5ff; border-left: 4px solid #3572b0; padding: 0.2em 1em; }
"""


def md_to_html(text: str, images_from: str | None = None, title: str = "") -> str:
    """A self-contained HTML page of a report: Python-Markdown with tables, its images
    inlined as base64 PNG (no external asset), the answer section highlighted."""
    import markdown

    body = markdown.markdown(text, extensions=["tables", "fenced_code", "toc"])

    def inline(m):
        alt, src = html.unescape(m.group(1)), html.unescape(m.group(2))
        path = os.path.join(images_from or "", src)
        if images_from is None or "/" in src or not os.path.exists(path):
            # never a link to a file the page does not carry
            return f"<em>({html.escape(alt)}: not drawn for this run)</em>"
        with open(path, "rb") as f:
            data = base64.b64encode(f.read()).decode("ascii")
        return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'

    body = re.sub(r'<img alt="([^"]*)" src="([^"]+)"\s*/?>', inline, body)
    body = body.replace('<h2 id="answer">Answer</h2>',
                        '<section id="answer"><h2>Answer</h2>', 1)
    if '<section id="answer">' in body:
        at = body.find("<h2", body.find('<section id="answer">') + 30)
        body = body[:at] + "</section>\n" + body[at:] if at >= 0 else body + "</section>"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{HTML_STYLE}</style>\n</head>\n"
            f"<body>\n{body}\n</body>\n</html>\n")


def write_html(out_dir: str) -> str:
    """out_dir/report.html from out_dir/report.md and its plots; returns its file name."""
    with open(os.path.join(out_dir, REPORT_MD), encoding="utf-8") as f:
        text = f.read()
    title = text.splitlines()[0].lstrip("# ").strip() if text else "report"
    with open(os.path.join(out_dir, REPORT_HTML), "w", encoding="utf-8") as f:
        f.write(md_to_html(text, out_dir, title))
    return REPORT_HTML
