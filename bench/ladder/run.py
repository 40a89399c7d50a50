"""The strength ladder: a fixed pool of agents per game, played pair by pair through
niwa's tournament engine, rated together with random anchored at 0.

    python bench/ladder/run.py lotus --games 20 --workers 1
    python bench/ladder/run.py haru --games 10 --executor dask://10.0.0.5:8786
    python bench/ladder/run.py lotus --report-only          # tables from the games so far
    python bench/ladder/run.py haru --games 10 --grow-to 30 # more games where the order is open

The pool, weakest first as expected: random, greedy, mcts at 100 / 1,000 / 10,000
iterations, alpha-beta at two depths, `best` at two time controls and, with `--perfect`
on a two-player perfect-information game, the df-pn `perfect` player. The expected order
is what the schedule leans on: every agent plays its neighbour and the one after it (a
chain that a single surprise cannot cut in two), plus a few long-range pairs (random
against the middle of the pool, the middle against the top), not a round robin.

Every pair is its own tournament folder under RUNS/<game>/ (RUNS: runs/ beside this file;
seats swapped, every game saved as it ends), so an interrupted ladder resumes where it
stopped. The ratings
are one maximum-likelihood Elo fit over every game of every pair (niwa.analysis.stats:
the standings' fit with a seat advantage), shifted so that random = 0; each interval is
the 95% interval of the agent's difference from random (its variance from the fit's
covariance). Written to OUT/<game>.csv, OUT/<game>.png and OUT/<game>.md (OUT: results/
beside this file), with the pairs' results in OUT/<game>-pairs.csv.

The expected order is checked as a list of relations, each one that a reader can defend
in any game (`expected_relations`): random < greedy < mcts:100 < mcts:1,000 <
mcts:10,000; alpha-beta shallow < deep; `best` at the short time < at the long one; the
strongest MCTS entry < `best` at the long time (< `perfect` when it plays). Alpha-beta
is not placed against MCTS or greedy: which wins depends on the game's evaluation. Each
relation is judged on the fit (the stronger's Elo minus the weaker's, its 95% interval
from the fit's covariance, and the likelihood of superiority): `holds` when the interval
is above 0, `violated` when it is below 0, `not resolved` when it straddles 0. Written to
OUT/<game>-relations.csv and the table under the ratings in OUT/<game>.md.

`--grow-to N` plays more games (blocks of --games, each its own tournament folder, so
resumable too) for every pair that carries a relation not resolved by the games so far,
until the pair has N games. Growing only the open pairs is a mild form of optional
stopping (a pair stops growing once it resolves), which the cap N bounds.

Time budgets of `best` count CPU seconds (`cpu=1`) when the agent it plays takes that
parameter, so the ladder means the same on a loaded machine; every other entry's budget
is a number of iterations or plies.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from niwa.analysis.stats.ratings import Z95

HERE = Path(__file__).resolve().parent

# alpha-beta depths per game (both affordable at ladder sizes); other games: 2 and 4
ALPHABETA_DEPTHS = {"lotus": (2, 6), "haru": (2, 4), "bonsai": (1, 2)}
BEST_TIMES = (0.01, 0.05)      # seconds per move for the two `best` entries
PERFECT_TIME = 0.2


@dataclass(frozen=True)
class Ladder:
    game: str
    pool: tuple[str, ...]               # weakest first, as expected
    pairs: tuple[tuple[int, int], ...]  # indices into pool, weaker first


@dataclass(frozen=True)
class Relation:
    weaker: str
    stronger: str
    why: str


def _number(spec: str, key: str) -> float:
    return float(spec.split(f"{key}=")[1].split(",")[0])


def expected_relations(pool: tuple[str, ...]) -> tuple[Relation, ...]:
    """The relations of the pool's order that hold in any game, weaker first.

    >>> [(r.weaker, r.stronger) for r in expected_relations(
    ...     ("random", "greedy", "mcts:iters=100", "alphabeta:depth=2", "mcts:iters=1000"))]
    [('random', 'greedy'), ('greedy', 'mcts:iters=100'), ('mcts:iters=100', 'mcts:iters=1000')]
    """
    def chain(prefix, key):
        return sorted((p for p in pool if p.startswith(prefix)), key=lambda p: _number(p, key))

    def steps(entries, why):
        return [Relation(a, b, why) for a, b in zip(entries, entries[1:], strict=False)]

    mcts, ab = chain("mcts:iters=", "iters"), chain("alphabeta:depth=", "depth")
    best, perfect = chain("best:time=", "time"), [p for p in pool if p.startswith("perfect")]
    out = []
    if "random" in pool and "greedy" in pool:
        out.append(Relation("random", "greedy", "one ply of the evaluation over none"))
    if "greedy" in pool and mcts:
        out.append(Relation("greedy", mcts[0], "search over one ply"))
    out += steps(mcts, "more iterations") + steps(ab, "deeper search, same evaluation")
    out += steps(best, "more time")
    if mcts and best:
        out.append(Relation(mcts[-1], best[-1], "best is the strongest agent"))
    if best and perfect:
        out.append(Relation(best[-1], perfect[0], "perfect play where it proves"))
    return tuple(out)


def relation_status(low: float, high: float) -> str:
    """The verdict on 'stronger beats weaker' from the 95% interval of the Elo difference."""
    if low > 0:
        return "holds"
    if high < 0:
        return "violated"
    return "not resolved"


def check_relations(relations, labels: list[str], fit) -> pd.DataFrame:
    """One row per relation whose agents were both rated: the Elo difference (stronger
    minus weaker) with its 95% interval from the fit's covariance, the likelihood of
    superiority and the verdict."""
    rows = []
    for rel in relations:
        if rel.weaker not in labels or rel.stronger not in labels:
            continue
        i, j = labels.index(rel.stronger), labels.index(rel.weaker)
        var = fit.cov[i, i] + fit.cov[j, j] - 2 * fit.cov[i, j]
        diff, half = fit.elo[i] - fit.elo[j], Z95 * math.sqrt(max(var, 0.0))
        rows.append({"weaker": rel.weaker, "stronger": rel.stronger, "why": rel.why,
                     "elo_diff": round(diff, 1), "low": round(diff - half, 1),
                     "high": round(diff + half, 1), "los": round(fit.los(i, j), 3),
                     "status": relation_status(diff - half, diff + half)})
    return pd.DataFrame(rows, columns=["weaker", "stronger", "why", "elo_diff", "low",
                                       "high", "los", "status"])


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


def folder_name(a: str, b: str, block: int = 0) -> str:
    """The pair's tournament folder; block k > 0 (games added by --grow-to) gets '--k'."""
    slug = f"{a}--vs--{b}" + (f"--{block}" if block else "")
    return "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in slug)


def play_block(ladder: Ladder, k: int, block: int, games: int, runs: Path, executor,
               seed: int, progress: bool | None = None) -> Path:
    """Play (or finish) block `block` of pair k: `games` games, seats swapped, in its own
    resumable folder (the seed differs per pair and per block)."""
    from niwa.analysis.arena.tournament import make_config, run_tournament

    i, j = ladder.pairs[k]
    a, b = ladder.pool[i], ladder.pool[j]
    folder = runs / ladder.game / folder_name(a, b, block)
    config, _ = make_config(ladder.game, [a, b], games=games, seed=seed + k + 1000 * block,
                            time_margin=30.0)
    print(f"[{k + 1}/{len(ladder.pairs)}{f' block {block}' if block else ''}] {a} vs {b}",
          file=sys.stderr, flush=True)
    run_tournament(config, str(folder), executor=executor, resume=True,
                   progress=progress, command=" ".join(sys.argv))
    return folder


def _skipped(ladder: Ladder, k: int, skip: tuple[str, ...]) -> bool:
    i, j = ladder.pairs[k]
    return any(x.startswith(s) for s in skip for x in (ladder.pool[i], ladder.pool[j]))


def play_pairs(ladder: Ladder, games: int, runs: Path, executor, seed: int,
               progress: bool | None = None, skip: tuple[str, ...] = ()) -> list[Path]:
    """Play (or finish) every pair of the ladder, but those with an agent whose spec
    starts with one of `skip`; returns their folders."""
    # the pairs of the weaker agents first: the ladder's foot is rated while the rest runs
    order = sorted(range(len(ladder.pairs)), key=lambda k: ladder.pairs[k][::-1])
    return [play_block(ladder, k, 0, games, runs, executor, seed, progress)
            for k in order if not _skipped(ladder, k, skip)]


def open_pairs(ladder: Ladder, relations: pd.DataFrame) -> list[int]:
    """Indices of the scheduled pairs that carry a relation not resolved yet."""
    index = {(ladder.pool[i], ladder.pool[j]): k for k, (i, j) in enumerate(ladder.pairs)}
    open_rows = relations[relations["status"] == "not resolved"]
    wanted = zip(open_rows["weaker"], open_rows["stronger"], strict=True)
    return sorted(index[pair] for pair in wanted if pair in index)


def grow_pairs(ladder: Ladder, games: int, grow_to: int, runs: Path, executor, seed: int,
               progress: bool | None = None, skip: tuple[str, ...] = ()) -> list[int]:
    """Blocks of `games` more games for every pair with an unresolved relation (judged
    once, on the games played before), up to `grow_to` games a pair; returns the pairs."""
    played = collect_games(ladder, runs)
    if played.empty:
        return []
    _, _, relations = ratings(ladder, played)
    grown = [k for k in open_pairs(ladder, relations) if not _skipped(ladder, k, skip)]
    for k in grown:
        for block in range(1, -(-grow_to // games)):
            play_block(ladder, k, block, games, runs, executor, seed, progress)
    return grown


def _game_keys(jsonl: Path) -> dict[str, tuple]:
    """game_id -> what makes the game itself: its seats' agents, start and moves."""
    keys = {}
    with open(jsonl, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                moves = tuple((m.get("by"), str(m.get("move"))) for m in d.get("moves", []))
                agents = tuple(seat.get("agent") for seat in d.get("seats", []))
                keys[str(d.get("event", {}).get("game_id"))] = (agents, d.get("start"), moves)
    return keys


def distinct_games(games: pd.DataFrame, keys: dict[str, tuple]) -> pd.DataFrame:
    """The games that are not a move-for-move copy of an earlier one (same agents in the
    same seats, same start): two deterministic agents on a game without chance play the
    same game every time, and a copy adds no evidence. Games without a key are kept."""
    seen, keep = set(), []
    for gid in games["game_id"]:
        key = keys.get(gid)
        keep.append(key is None or key not in seen)
        if key is not None:
            seen.add(key)
    return games[keep]


def collect_games(ladder: Ladder, runs: Path) -> pd.DataFrame:
    """Every finished game of the ladder's pairs (all their blocks), a game repeated move
    for move counted once (`distinct_games`), game ids renumbered to be unique; the
    number of repeats dropped is in .attrs["repeats"]."""
    frames, repeats = [], 0
    for k, (i, j) in enumerate(ladder.pairs):
        pair_frames, keys, block = [], {}, 0
        while (folder := runs / ladder.game
               / folder_name(ladder.pool[i], ladder.pool[j], block)).exists():
            path = folder / "games.csv"
            df = (pd.read_csv(path, dtype=str, keep_default_na=False) if path.exists()
                  else pd.DataFrame())
            if len(df):
                df["game_id"] = (df["game_id"].astype(int) + k * 10**9
                                 + block * 10**6).astype(str)
                if (folder / "games.jsonl").exists():
                    offset = k * 10**9 + block * 10**6
                    keys.update({str(int(g) + offset): key for g, key
                                 in _game_keys(folder / "games.jsonl").items() if g != "None"})
                pair_frames.append(df)
            block += 1
        if pair_frames:
            pair = pd.concat(pair_frames, ignore_index=True)
            kept = distinct_games(pair, keys)
            repeats += len(pair) - len(kept)
            frames.append(kept)
    if not frames:
        return pd.DataFrame()
    out = pd.concat(frames, ignore_index=True)
    out.attrs["repeats"] = repeats
    return out


def _agent_rows(ladder: Ladder, games: pd.DataFrame, labels: list[str], fit) -> list[dict]:
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
    return rows


def _pair_rows(ladder: Ladder, games: pd.DataFrame, labels: list[str], fit) -> list[dict]:
    from niwa.analysis.stats.intervals import wilson_interval

    rows = []
    for i, j in ladder.pairs:
        a, b = ladder.pool[i], ladder.pool[j]
        sel = games[((games["agent_0"] == a) & (games["agent_1"] == b))
                    | ((games["agent_0"] == b) & (games["agent_1"] == a))]
        if not len(sel):
            continue
        pts = sum(float(r["result_0"] if r["agent_0"] == b else r["result_1"])
                  for _, r in sel.iterrows())
        low, high = wilson_interval(round(pts), len(sel))
        rows.append({"weaker_expected": a, "stronger_expected": b, "games": len(sel),
                     "stronger_score_pct": round(100 * pts / len(sel), 1),
                     "low": round(100 * low, 1), "high": round(100 * high, 1),
                     "los": round(fit.los(labels.index(b), labels.index(a)), 3)})
    return rows


def ratings(ladder: Ladder, games: pd.DataFrame) \
        -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(ratings table anchored at random = 0, pairs table, relations table) from the
    ladder's games."""
    from niwa.analysis.stats.standings import compute_tables

    played = set(games["agent_0"]) | set(games["agent_1"])
    labels = [x for x in ladder.pool if x in played]
    fit = compute_tables(games, labels, 2).fit
    return (pd.DataFrame(_agent_rows(ladder, games, labels, fit)),
            pd.DataFrame(_pair_rows(ladder, games, labels, fit)),
            check_relations(expected_relations(ladder.pool), labels, fit))


def plot(table: pd.DataFrame, path: Path, title: str) -> None:
    from niwa.analysis.arena.tournament import plot_elo_intervals

    t = table.sort_values("expected_rank")
    plot_elo_intervals(t["agent"], t["elo"], t["elo_low"], t["elo_high"], path,
                       "Elo over random (random = 0), 95% interval", title, color="tab:blue",
                       width=8, row=0.45, pad=1.6)


def markdown(table: pd.DataFrame, games_per_pair: int, n_games: int, repeats: int = 0) -> str:
    t = table.sort_values("elo", ascending=False)
    lines = ["| agent | Elo (random = 0) | 95% interval | games | score |",
             "|---|---:|---|---:|---:|"]
    for _, r in t.iterrows():
        lines.append(f"| `{r['agent']}` | {r['elo']:+.0f} | {r['elo_low']:+.0f} .. "
                     f"{r['elo_high']:+.0f} | {r['games']} | {r['score_pct']:.1f}% |")
    lines.append(f"\n{n_games} games, {games_per_pair} per pair (more where --grow-to "
                 "added them).")
    if repeats:
        lines.append(f"{repeats} more games were move-for-move copies of one already counted "
                     "(deterministic agents, no chance) and count once.")
    return "\n".join(lines) + "\n"


def relations_markdown(relations: pd.DataFrame, pairs: pd.DataFrame) -> str:
    """The expected relations with their verdicts, and the direct games of each pair."""
    direct = {(r["weaker_expected"], r["stronger_expected"]): r for _, r in pairs.iterrows()}
    lines = ["| expected | why | Elo difference | 95% interval | LOS | head to head | "
             "verdict |", "|---|---|---:|---|---:|---|---|"]
    for _, r in relations.iterrows():
        d = direct.get((r["weaker"], r["stronger"]))
        h2h = (f"{d['stronger_score_pct']:.0f}% of {d['games']}" if d is not None else "-")
        lines.append(f"| `{r['weaker']}` < `{r['stronger']}` | {r['why']} | "
                     f"{r['elo_diff']:+.0f} | {r['low']:+.0f} .. {r['high']:+.0f} | "
                     f"{100 * r['los']:.1f}% | {h2h} | {r['status']} |")
    counts = relations["status"].value_counts()
    summary = ", ".join(f"{counts.get(k, 0)} {k}" for k in ("holds", "not resolved",
                                                            "violated"))
    return "\n".join(lines) + f"\n\nExpected relations: {summary}.\n"


def report(ladder: Ladder, runs: Path, out: Path, games_per_pair: int) -> pd.DataFrame:
    """Write OUT/<game>.csv, .png, .md, -pairs.csv and -relations.csv; returns the
    relations table."""
    games = collect_games(ladder, runs)
    if games.empty:
        raise ValueError(f"no ladder games for {ladder.game} under {runs}")
    table, pairs, relations = ratings(ladder, games)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / f"{ladder.game}.csv", index=False)
    pairs.to_csv(out / f"{ladder.game}-pairs.csv", index=False)
    relations.to_csv(out / f"{ladder.game}-relations.csv", index=False)
    plot(table, out / f"{ladder.game}.png", f"{ladder.game} ladder: {len(games)} games")
    text = (markdown(table, games_per_pair, len(games), games.attrs.get("repeats", 0)) + "\n"
            + relations_markdown(relations, pairs))
    (out / f"{ladder.game}.md").write_text(text)
    print(text)
    return relations


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("game")
    ap.add_argument("--games", type=int, default=20,
                    help="games per pair, and per added block (default 20)")
    ap.add_argument("--grow-to", type=int, default=0, metavar="N",
                    help="then play the pairs of relations not resolved yet up to N games "
                         "each, in blocks of --games")
    ap.add_argument("--workers", type=int, default=1, help="parallel games (default 1)")
    ap.add_argument("--executor", default="local", help="local or dask://HOST:PORT")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--perfect", action="store_true",
                    help="add the df-pn perfect player (two-player Lotus)")
    ap.add_argument("--runs", type=Path, default=HERE / "runs",
                    help="folder of the pairs' tournament folders (resumable; default: "
                         "runs/ beside this file)")
    ap.add_argument("--out", type=Path, default=HERE / "results",
                    help="where the CSV, PNG and table go (default: results/ beside this "
                         "file)")
    ap.add_argument("--report-only", action="store_true", help="no games: tables only")
    ap.add_argument("--skip-agent", action="append", default=[], metavar="PREFIX",
                    help="do not play the pairs of agents whose spec starts with PREFIX "
                         "(e.g. best: while its spec is still being settled); repeatable")
    return ap


def main(argv=None) -> int:
    from niwa.analysis.arena.executors import make_executor
    from niwa.ext.errors import NiwaError

    ap = _parser()
    args = ap.parse_args(argv)
    if args.games < 2 or args.games % 2:
        ap.error("--games must be an even number of at least 2 (seats swapped)")
    if args.grow_to and args.grow_to <= args.games:
        ap.error("--grow-to must be more than --games")
    try:
        ladder = make_ladder(args.game, args.perfect)
    except (ValueError, NiwaError) as e:   # unknown game, perfect on a game it cannot play
        print(f"Error: {e}", file=sys.stderr)
        return 2
    if not args.report_only:
        executor, skip = make_executor(args.executor, args.workers), tuple(args.skip_agent)
        play_pairs(ladder, args.games, args.runs, executor, args.seed, skip=skip)
        if args.grow_to:
            grow_pairs(ladder, args.games, args.grow_to, args.runs, executor, args.seed,
                       skip=skip)
    try:
        report(ladder, args.runs, args.out, args.games)
    except ValueError as e:        # --report-only before any game
        print(f"Error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
