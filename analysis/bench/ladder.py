"""The strength ladder (niwa issue #16, item 3): a fixed pool of agents per game, played
pair by pair through the run engine, rated together with random anchored at 0.

    python bench/ladder.py lotus --games 20 --workers 1
    python bench/ladder.py haru --games 10 --executor dask://10.0.0.5:8786
    python bench/ladder.py lotus --report-only          # tables from the games played so far

The pool, weakest first as expected: random, greedy, mcts at 100 / 1,000 / 10,000
iterations, alpha-beta at two depths, `best` at two time controls and, with `--perfect`
on a two-player perfect-information game, the df-pn `perfect` player. The expected order
is what the schedule leans on: every agent plays its neighbour and the one after it (a
chain that a single surprise cannot cut in two), plus a few long-range pairs (random
against the middle of the pool, the middle against the top), not a round robin.

Every pair is its own `niwa tournament` folder under RUNS/<game>/ (seats swapped, every
game saved as it ends), so an interrupted ladder resumes where it stopped. The ratings
are one maximum-likelihood Elo fit over every game of every pair (niwa.analysis.stats:
the standings' fit with a seat advantage), shifted so that random = 0; each interval is
the 95% interval of the agent's difference from random (its variance from the fit's
covariance). Written to OUT/<game>.csv, OUT/<game>.png and OUT/<game>.md (the table the
README shows), with the pairs' results in OUT/<game>-pairs.csv.

Time budgets of `best` count CPU seconds (`cpu=1`) when the agent it plays takes that
parameter, so the ladder means the same on a loaded machine; every other entry's budget
is a number of iterations or plies.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from niwa.analysis.stats.ratings import Z95

# alpha-beta depths per game (both affordable at ladder sizes); other games: 2 and 4
ALPHABETA_DEPTHS = {"lotus": (2, 6), "haru": (2, 4), "bonsai": (1, 2)}
BEST_TIMES = (0.01, 0.05)      # seconds per move for the two `best` entries
PERFECT_TIME = 0.2


@dataclass(frozen=True)
class Ladder:
    game: str
    pool: tuple[str, ...]               # weakest first, as expected
    pairs: tuple[tuple[int, int], ...]  # indices into pool, weaker first


def best_entry(game: str, seconds: float) -> str:
    """`best:time=...` for `game`, counting CPU seconds when the agent it plays can."""
    from niwa.solver.agents import REGISTRY, best_spec, parse_spec

    name = parse_spec(best_spec(game))[0]
    cpu = ",cpu=1" if "cpu" in REGISTRY[name].params else ""
    return f"best:time={seconds:g}{cpu}"


def pool_for(game: str, perfect: bool = False) -> tuple[str, ...]:
    """The fixed pool of `game`, weakest first as expected."""
    from niwa.ext.registry import get_game

    spec = get_game(game)
    low, high = ALPHABETA_DEPTHS.get(spec.name, (2, 4))
    pool = ["random", "greedy", "mcts:iters=100", f"alphabeta:depth={low}",
            "mcts:iters=1000", f"alphabeta:depth={high}", "mcts:iters=10000",
            *(best_entry(spec.name, t) for t in BEST_TIMES)]
    if perfect:
        state = spec.new(seed=0)
        if state.num_players != 2 or not spec.traits.perfect_information or spec.traits.chance:
            raise ValueError(f"perfect plays two-player perfect-information games without "
                             f"chance; {game} is not one")
        pool.append(f"perfect:time={PERFECT_TIME:g},fallback=mcts:iters=1000")
    return tuple(pool)


def schedule_pairs(n: int) -> tuple[tuple[int, int], ...]:
    """Neighbours (i, i+1) and next-but-one (i, i+2), plus random against the middle and
    the middle against the top: about 2n pairs instead of n(n-1)/2.

    >>> schedule_pairs(5)
    ((0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (1, 3), (2, 4))
    """
    pairs = [(i, i + 1) for i in range(n - 1)] + [(i, i + 2) for i in range(n - 2)]
    mid = n // 2
    for extra in ((0, mid), (mid, n - 1)):
        if extra[1] - extra[0] > 2 and extra not in pairs:
            pairs.append(extra)
    return tuple(pairs)


def make_ladder(game: str, perfect: bool = False) -> Ladder:
    pool = pool_for(game, perfect)
    return Ladder(game, pool, schedule_pairs(len(pool)))


def folder_name(a: str, b: str) -> str:
    slug = f"{a}--vs--{b}"
    return "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in slug)


def play_pairs(ladder: Ladder, games: int, runs: Path, executor, seed: int,
               progress: bool | None = None, skip: tuple[str, ...] = ()) -> list[Path]:
    """Play (or finish) every pair of the ladder, but those with an agent whose spec
    starts with one of `skip`; returns their folders."""
    from niwa.analysis.arena.tournament import make_config, run_tournament

    folders = []
    # the pairs of the weaker agents first: the ladder's foot is rated while the rest runs
    for k, (i, j) in sorted(enumerate(ladder.pairs), key=lambda kp: (kp[1][1], kp[1][0])):
        a, b = ladder.pool[i], ladder.pool[j]
        if any(x.startswith(s) for s in skip for x in (a, b)):
            continue
        folder = runs / ladder.game / folder_name(a, b)
        config, _ = make_config(ladder.game, [a, b], games=games, seed=seed + k,
                                time_margin=30.0)
        print(f"[{k + 1}/{len(ladder.pairs)}] {a} vs {b}", file=sys.stderr, flush=True)
        run_tournament(config, str(folder), executor=executor, resume=True,
                       progress=progress, command=" ".join(sys.argv))
        folders.append(folder)
    return folders


def collect_games(ladder: Ladder, runs: Path) -> pd.DataFrame:
    """Every finished game of the ladder's pairs, game ids renumbered to be unique."""
    frames = []
    for k, (i, j) in enumerate(ladder.pairs):
        path = runs / ladder.game / folder_name(ladder.pool[i], ladder.pool[j]) / "games.csv"
        if path.exists():
            df = pd.read_csv(path, dtype=str, keep_default_na=False)
            if len(df):
                df["game_id"] = (df["game_id"].astype(int) + k * 10**9).astype(str)
                frames.append(df)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def ratings(ladder: Ladder, games: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(ratings table anchored at random = 0, pairs table) from the ladder's games."""
    from niwa.analysis.stats.intervals import wilson_interval
    from niwa.analysis.stats.standings import compute_tables

    labels = list(ladder.pool)
    played = set(games["agent_0"]) | set(games["agent_1"])
    labels = [x for x in labels if x in played]
    tables = compute_tables(games, labels, 2)
    fit = tables.fit
    anchor = labels.index("random") if "random" in labels else 0
    rows = []
    for i, label in enumerate(labels):
        var = fit.cov[i, i] + fit.cov[anchor, anchor] - 2 * fit.cov[i, anchor]
        half = Z95 * math.sqrt(max(var, 0.0))
        elo = fit.elo[i] - fit.elo[anchor]
        mine = games[(games["agent_0"] == label) | (games["agent_1"] == label)]
        points = sum(float(r["result_0"] if r["agent_0"] == label else r["result_1"])
                     for _, r in mine.iterrows())
        rows.append({"agent": label, "expected_rank": ladder.pool.index(label) + 1,
                     "elo": round(elo, 1), "elo_low": round(elo - half, 1),
                     "elo_high": round(elo + half, 1), "games": len(mine),
                     "score_pct": round(100 * points / max(1, len(mine)), 1)})
    table = pd.DataFrame(rows)
    pair_rows = []
    for i, j in ladder.pairs:
        a, b = ladder.pool[i], ladder.pool[j]
        sel = games[((games["agent_0"] == a) & (games["agent_1"] == b))
                    | ((games["agent_0"] == b) & (games["agent_1"] == a))]
        if not len(sel):
            continue
        pts = sum(float(r["result_0"] if r["agent_0"] == b else r["result_1"])
                  for _, r in sel.iterrows())
        low, high = wilson_interval(round(pts), len(sel))
        pair_rows.append({"weaker_expected": a, "stronger_expected": b, "games": len(sel),
                          "stronger_score_pct": round(100 * pts / len(sel), 1),
                          "low": round(100 * low, 1), "high": round(100 * high, 1),
                          "los": round(fit.los(labels.index(b), labels.index(a)), 3)})
    return table, pd.DataFrame(pair_rows)


def inversions(table: pd.DataFrame) -> list[str]:
    """Where the ratings do not rise with the expected order: each adjacent (in expected
    order) pair whose rating falls, with whether the intervals overlap."""
    t = table.sort_values("expected_rank")
    out = []
    for (_, lo), (_, hi) in zip(t.iloc[:-1].iterrows(), t.iloc[1:].iterrows(), strict=True):
        if hi["elo"] <= lo["elo"]:
            sure = hi["elo_high"] < lo["elo_low"]
            out.append(f"{hi['agent']} ({hi['elo']:+.0f}) is not above {lo['agent']} "
                       f"({lo['elo']:+.0f}){' (intervals apart)' if sure else ''}")
    return out


def plot(table: pd.DataFrame, path: Path, title: str) -> None:
    from niwa.analysis.arena.tournament import plot_elo_intervals

    t = table.sort_values("expected_rank")
    plot_elo_intervals(t["agent"], t["elo"], t["elo_low"], t["elo_high"], path,
                       "Elo over random (random = 0), 95% interval", title, color="tab:blue",
                       width=8, row=0.45, pad=1.6)


def markdown(table: pd.DataFrame, games_per_pair: int, n_games: int) -> str:
    t = table.sort_values("elo", ascending=False)
    lines = ["| agent | Elo (random = 0) | 95% interval | games | score |",
             "|---|---:|---|---:|---:|"]
    for _, r in t.iterrows():
        lines.append(f"| `{r['agent']}` | {r['elo']:+.0f} | {r['elo_low']:+.0f} .. "
                     f"{r['elo_high']:+.0f} | {r['games']} | {r['score_pct']:.1f}% |")
    lines.append(f"\n{n_games} games, up to {games_per_pair} per pair.")
    return "\n".join(lines) + "\n"


def report(ladder: Ladder, runs: Path, out: Path, games_per_pair: int) -> list[str]:
    """Write OUT/<game>.csv, .png, .md and -pairs.csv; returns the order's inversions."""
    games = collect_games(ladder, runs)
    if games.empty:
        raise SystemExit(f"no ladder games for {ladder.game} under {runs}")
    table, pairs = ratings(ladder, games)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / f"{ladder.game}.csv", index=False)
    pairs.to_csv(out / f"{ladder.game}-pairs.csv", index=False)
    plot(table, out / f"{ladder.game}.png", f"{ladder.game} ladder: {len(games)} games")
    bad = inversions(table)
    text = markdown(table, games_per_pair, len(games))
    if bad:
        text += "\nNot in the expected order: " + "; ".join(bad) + ".\n"
    (out / f"{ladder.game}.md").write_text(text)
    print(text)
    return bad


def main(argv=None) -> int:
    from niwa.analysis.arena.executors import make_executor

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("game")
    ap.add_argument("--games", type=int, default=20, help="games per pair (default 20)")
    ap.add_argument("--workers", type=int, default=1, help="parallel games (default 1)")
    ap.add_argument("--executor", default="local", help="local or dask://HOST:PORT")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--perfect", action="store_true",
                    help="add the df-pn perfect player (two-player Lotus)")
    ap.add_argument("--runs", type=Path, default=Path("runs/ladder"),
                    help="folder of the pairs' tournament folders (resumable)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2]
                    / "bench" / "ladder", help="where the CSV, PNG and table go")
    ap.add_argument("--report-only", action="store_true", help="no games: tables only")
    ap.add_argument("--skip-agent", action="append", default=[], metavar="PREFIX",
                    help="do not play the pairs of agents whose spec starts with PREFIX "
                         "(e.g. best: while its spec is still being settled); repeatable")
    args = ap.parse_args(argv)
    if args.games < 2 or args.games % 2:
        ap.error("--games must be an even number of at least 2 (seats swapped)")
    from niwa.ext.errors import NiwaError

    try:
        ladder = make_ladder(args.game, args.perfect)
    except (ValueError, NiwaError) as e:   # unknown game, perfect on a game it cannot play
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not args.report_only:
        play_pairs(ladder, args.games, args.runs, make_executor(args.executor, args.workers),
                   args.seed, skip=tuple(args.skip_agent))
    report(ladder, args.runs, args.out, args.games)
    return 0


if __name__ == "__main__":
    sys.exit(main())
