"""PNG plots of a rule-variant experiment (matplotlib, Agg backend: no display needed).

- seat_win_rates.png: each seat's share of the decisive games per variant, with 95% Wilson
  interval bars and the fair share 1/N as a dashed line (solo games: the win rate);
- game_length.png: the distribution of game length in plies per variant (step histograms
  and box plots);
- advantage_vs_strength.png: the first-player advantage (seat 0's share minus 1/N, 95% CI)
  against agent strength, one line per variant (only with --strengths);
- scores.png: final scores by seat per variant (games that keep a score).
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from niwa.ext.errors import NiwaError
from niwa.solver.agent_spec import AgentSpec

SEAT_WIN_RATES = "seat_win_rates.png"
GAME_LENGTH = "game_length.png"
ADVANTAGE_VS_STRENGTH = "advantage_vs_strength.png"
SCORES = "scores.png"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _short(label: str, width: int = 24) -> str:
    """Wrap a cell label over lines at its spaces (the strength on a line of its own)."""
    out = []
    parts = label.split(" (", 1)
    parts = [parts[0], "(" + parts[1]] if len(parts) == 2 else parts
    for part in parts:
        lines, line = [], ""
        for w in part.split(" "):
            if line and len(line) + len(w) + 1 > width:
                lines.append(line)
                line = w
            else:
                line = f"{line} {w}".strip()
        out += [*lines, line]
    return "\n".join(out)


def plot_seat_win_rates(metrics: list[dict], path: str, title: str = "") -> None:
    """Points with 95% interval bars (not bars from 0, so the axis may zoom in honestly)."""
    plt = _pyplot()
    k = len(metrics)
    max_seats = max(m["players"] for m in metrics)
    width = 0.8 / max_seats
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 + k * max(1.7, 0.5 + 0.35 * max_seats)), 4.8))
    colours = plt.get_cmap("tab10").colors
    lows, highs = [], []
    for i, m in enumerate(metrics):
        n = m["players"]
        if n == 1:
            keys = ["solo_win"]
        else:
            keys = [f"win_{s}" for s in range(n)]
            ax.hlines(m["fair_share"], i - 0.45, i + 0.45, colors="grey", linestyles="--", lw=1)
            lows.append(m["fair_share"])
            highs.append(m["fair_share"])
        for s, key in enumerate(keys):
            x = i - 0.4 + width * (s + 0.5)
            y, lo, hi = m[key], m[f"{key}_low"], m[f"{key}_high"]
            if y is None or math.isnan(y):
                continue
            lows.append(lo)
            highs.append(hi)
            ax.errorbar(x, y, yerr=[[y - lo], [hi - y]], fmt="o", color=colours[s % 10],
                        capsize=4, lw=1.5, ms=6,
                        label=(f"seat {s}" if n > 1 else "solo win") if i == _first_with(metrics, s)
                        else None)
            ax.annotate(f"{100 * y:.1f}%", (x, hi), textcoords="offset points", xytext=(0, 4),
                        ha="center", fontsize=7)
    if lows:
        # zoom in on the data, but never below a 10-point window: a 0.5-point difference
        # must not look like a landslide
        lo, hi = min(lows), max(highs)
        pad = max(0.15 * (hi - lo) + 0.01, (0.10 - (hi - lo)) / 2)
        ax.set_ylim(max(0.0, lo - pad), min(1.0, hi + pad))
    from matplotlib.ticker import PercentFormatter

    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xticks(range(k), [_short(m["label"]) for m in metrics], fontsize=8)
    ax.set_xlim(-0.6, k - 0.4)
    ax.set_ylabel("share of decisive games won (95% CI)")
    ax.legend(fontsize=8, loc="best")
    ax.set_title(title or "Win rate by seat (dashed: fair share)")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _first_with(metrics, seat) -> int:
    for i, m in enumerate(metrics):
        if m["players"] > seat or (seat == 0 and m["players"] == 1):
            return i
    return -1


def plot_game_lengths(lengths: dict[str, np.ndarray], path: str, title: str = "") -> None:
    """lengths: label -> plies of every game of that variant."""
    plt = _pyplot()
    labels = list(lengths)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5),
                                      gridspec_kw={"width_ratios": [3, 2]})
    allv = np.concatenate([np.asarray(v, dtype=float) for v in lengths.values()] or [[]])
    if not allv.size:       # no finished game has a length (every game forfeited): no bins
        allv = np.zeros(1)
    # integer lengths: bin edges on half-integers, so no bin gets an extra value by aliasing
    lo, hi = float(allv.min()), float(allv.max())
    step = max(1, math.ceil((hi - lo + 1) / 60))
    bins = np.arange(lo - 0.5, hi + step + 0.5, step)
    for label in labels:
        v = np.asarray(lengths[label], dtype=float)
        if len(v):
            left.hist(v, bins=bins, histtype="step", density=True, lw=1.5,
                      label=f"{label} (n={len(v)})")
    left.set_xlabel("plies per game")
    left.set_ylabel("density")
    left.legend(fontsize=7)
    right.boxplot([np.asarray(lengths[lb], dtype=float) for lb in labels],
                  showfliers=False, showmeans=True, orientation="horizontal")
    right.set_yticks(range(1, len(labels) + 1), [_short(lb, 22) for lb in labels], fontsize=7)
    right.set_xlabel("plies (box: quartiles, whiskers 1.5 IQR, triangle: mean)")
    fig.suptitle(title or "Game length")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def strength_axis(specs: list[str]) -> tuple[list[float] | None, str]:
    """Numeric x values when the specs differ by one numeric parameter, else None."""
    found = []
    for text in specs:
        try:
            spec = AgentSpec.parse(text)
        except NiwaError:       # not a spec of this installation: no numeric axis
            return None, "agent"
        found.append((spec.name, spec.params))
    names = {f[0] for f in found}
    keys = set().union(*[set(f[1]) for f in found])
    varying = [k for k in keys if len({f[1].get(k) for f in found}) > 1]
    if len(names) != 1 or len(varying) != 1:
        return None, "agent"
    xs = [f[1].get(varying[0]) for f in found]
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in xs):
        return None, "agent"
    xs = [float(x) for x in xs]
    return xs, f"{names.pop()} {varying[0]}"


def plot_advantage_vs_strength(metrics: list[dict], path: str, title: str = "",
                               elo: dict[str, float] | None = None,
                               proven: dict[str, float | None] | None = None,
                               margin: float | None = None) -> bool:
    """One line per variant: first-player advantage with 95% CI against strength (the
    strengths' measured Elo when `elo` gives it, per strength or per (variant, strength),
    else their one varying parameter; the strength names mark the first variant's Elo); the
    perfect-play result of a variant the proof search decided is marked at the right edge
    (an arrow: it is +-50 points, off the scale of self-play), and the margin shaded."""
    sweep = [m for m in metrics if m["strength"] and m["players"] >= 2]
    if len({m["strength"] for m in sweep}) < 2:
        return False
    plt = _pyplot()
    strengths = list(dict.fromkeys(m["strength"] for m in sweep))
    variants = list(dict.fromkeys(m["variant"] for m in sweep))
    # Elo per strength, or per (variant, strength) when each variant was rated apart
    if elo and all(isinstance(k, tuple) for k in elo):
        at = {(v, s): elo.get((v, s), math.nan) for v in variants for s in strengths}
    else:
        at = {(v, s): (elo or {}).get(s, math.nan) for v in variants for s in strengths}
    if elo and all(np.isfinite(x) for x in at.values()):
        xs, xlabel = [at[variants[0], s] for s in strengths], "Elo (weakest strength = 0)"
        if any(at[v, s] != at[variants[0], s] for v in variants for s in strengths):
            xlabel = (f"Elo under each variant (weakest strength = 0; names at "
                      f"{_short(variants[0], 18)}'s)")
    else:
        xs, xlabel = strength_axis(strengths)
        elo = None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for j, v in enumerate(variants):
        rows = [m for m in sweep if m["variant"] == v]
        # nudge the lines apart a little so the interval bars do not hide each other
        nudge = (j - (len(variants) - 1) / 2) * (0.03 if xs else 0.06)
        x = np.array([at[v, m["strength"]] if elo else
                      (xs[strengths.index(m["strength"])] if xs
                       else strengths.index(m["strength"])) for m in rows], dtype=float)
        x = x * (1 + nudge) if xs and not elo else x + nudge * (10 if elo else 1)
        y = np.array([m["first_player_advantage"] for m in rows])
        err = np.array([[m["first_player_advantage"] - m["fpa_low"] for m in rows],
                        [m["fpa_high"] - m["first_player_advantage"] for m in rows]])
        value = (proven or {}).get(v)
        label = v if value is None else \
            f"{v} (perfect play: seat {0 if value == 1.0 else 1} wins)"
        line = ax.errorbar(x, 100 * y, yerr=100 * err, fmt="o-", capsize=4, label=label)
        if value is not None:
            up = value == 1.0
            fair = 1.0 / rows[0]["players"]
            ax.annotate(f"{v}, perfect play: {100 * (value - fair):+.0f} points (off scale)",
                        xy=(0.5, 1.0 if up else 0.0), xycoords="axes fraction",
                        xytext=(0, -30 if up else 30),
                        textcoords="offset points", ha="center", fontsize=8,
                        color=line[0].get_color(),
                        arrowprops={"arrowstyle": "->", "color": line[0].get_color()})
    ax.axhline(0, color="grey", lw=0.8, ls="--")
    if margin:
        ax.axhspan(-100 * margin, 100 * margin, color="grey", alpha=0.12, lw=0,
                   label=f"margin +-{100 * margin:g} points")
    if xs and elo:
        ax.set_xlabel(xlabel)
        for s, x in zip(strengths, xs, strict=True):
            ax.annotate(_short(s, 18), (x, ax.get_ylim()[0]), fontsize=7, rotation=30,
                        xytext=(0, 4), textcoords="offset points")
    elif xs:
        if max(xs) / max(min(xs), 1e-9) >= 10:
            from matplotlib.ticker import NullFormatter

            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(xs, [f"{x:g}" for x in xs])
        ax.set_xlabel(xlabel)
    else:
        ax.set_xticks(range(len(strengths)), [_short(s, 18) for s in strengths], fontsize=8)
        ax.set_xlabel("agent (self-play), weakest to strongest as given")
    ax.set_ylabel("first-player advantage, points (95% CI)")
    ax.legend(fontsize=8)
    ax.set_title(title or "First-player advantage against agent strength")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_scores(scores: dict[str, np.ndarray], path: str, title: str = "") -> None:
    """scores: label -> games x seats array of final scores."""
    plt = _pyplot()
    labels = list(scores)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.5 + 1.3 * len(labels)), 4.5))
    colours = plt.get_cmap("tab10").colors
    max_seats = max(a.shape[1] for a in scores.values())
    width = 0.8 / max_seats
    for i, label in enumerate(labels):
        arr = scores[label]
        for s in range(arr.shape[1]):
            bp = ax.boxplot(arr[:, s], positions=[i - 0.4 + width * (s + 0.5)],
                            widths=width * 0.8, showfliers=False, patch_artist=True,
                            medianprops={"color": "black"})
            for box in bp["boxes"]:
                box.set_facecolor(colours[s % 10])
    ax.set_xticks(range(len(labels)), [_short(lb) for lb in labels], fontsize=8)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[s % 10]) for s in range(max_seats)]
    ax.legend(handles, [f"seat {s}" for s in range(max_seats)], fontsize=8)
    ax.set_ylabel("final score")
    ax.set_title(title or "Final scores by seat")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_plots(summary, out_dir: str) -> list[str]:
    """Every plot that applies to this experiment; returns the file names written."""
    exp, metrics, games = summary.experiment, summary.metrics, summary.games
    written = []
    plot_seat_win_rates(metrics, os.path.join(out_dir, SEAT_WIN_RATES),
                        f"{exp.game}: win rate by seat (dashed: fair share)")
    written.append(SEAT_WIN_RATES)
    valid = games[games["error_seat"] == ""]
    lengths = {c.label: valid.loc[valid["cell"] == c.index, "plies"].astype(int).to_numpy()
               for c in summary.cells}
    plot_game_lengths(lengths, os.path.join(out_dir, GAME_LENGTH), f"{exp.game}: game length")
    written.append(GAME_LENGTH)
    elo = {(r["variant"], r["strength"]): r["elo"] for r in summary.ladder}
    proven = {r["variant"]: r["proven_seat0"] for r in summary.ladder}
    if plot_advantage_vs_strength(metrics, os.path.join(out_dir, ADVANTAGE_VS_STRENGTH),
                                  f"{exp.game}: first-player advantage vs strength", elo,
                                  proven, summary.margin):
        written.append(ADVANTAGE_VS_STRENGTH)
    if all("score_0_mean" in m for m in metrics):
        scores = {}
        for c in summary.cells:
            rows = valid.loc[valid["cell"] == c.index, "scores"]
            scores[c.label] = np.array([json.loads(t)["scores"] for t in rows], dtype=float) \
                .reshape(-1, c.players)
        plot_scores(scores, os.path.join(out_dir, SCORES), f"{exp.game}: final scores")
        written.append(SCORES)
    return written
