"""What the campaign folders share (campaign code, not part of the niwa package).

Each `bench/<question>/run.py` puts this folder on sys.path and imports it, so a campaign
runs from a plain checkout with niwa installed (`pip install -e .` or `pip install .`):
nothing here finds files through niwa's install path, and nothing shells out to `niwa`.

- `play_match`: a resumable match through niwa's tournament engine (the function
  `niwa tournament` calls), seats swapped every game.
- `answer_variants`: one of the README's variant questions, as the resumable strength
  sweep `niwa analyse` runs (analysis.experiments.variants).
- `match_score`, `append_row`: a candidate's score over a match's games (normal 95%
  interval on the observed per-game variance), recorded as one CSV row.
- `copy_small_outputs`: the CSV, PNG, Markdown and JSON outputs of a run into results/.
- `guarded`: runs a main() and turns niwa's errors into one `Error: ...` line, status 2.
- `job_range`: an argparse type for a FROM:TO range of a proof log's job numbers.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SMALL_OUTPUTS = (".csv", ".png", ".md", ".json", ".html")
SKIPPED_OUTPUTS = frozenset({"games.csv"})      # game logs: large, rebuilt by rerunning


def guarded(main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    """main(argv), with a bad agent spec, variant or folder reported as one line."""
    from niwa.ext.errors import NiwaError

    try:
        return main(argv)
    except NiwaError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2


def job_range(text: str) -> tuple[int, int | None]:
    """FROM:TO (either end may be left out; TO excluded) as (first, last or None): an
    argparse type, so a bad range is argparse's one-line error and status 2.

    >>> job_range("27022:"), job_range(":100"), job_range(":")
    ((27022, None), (0, 100), (0, None))
    """
    low, colon, high = text.partition(":")
    try:
        first, last = int(low or 0), int(high) if high else None
    except ValueError:
        first = last = -1
    if not colon or first < 0 or (last is not None and last < first):
        raise argparse.ArgumentTypeError(f"{text!r} is not a range of job numbers FROM:TO "
                                         f"(e.g. 27022: or 100:200)")
    return first, last


def command_line(script: str | Path, argv: list[str] | None) -> str:
    """The command as a user would type it, for the run's record."""
    args = sys.argv[1:] if argv is None else argv
    return shlex.join(["python", str(script), *args])


def play_match(game: str, agents: list[str], out: Path, *, games: int, seed: int = 1,
               variant: dict | None = None, workers: int | None = 1, executor: str = "local",
               time_margin: float = 0.5, progress: bool | None = None,
               command: str = "") -> Path:
    """Play (or finish) `games` games of `agents` into the tournament folder `out`, seats
    swapped every game; the same call continues an interrupted match."""
    from niwa.analysis.arena.executors import make_executor
    from niwa.analysis.arena.tournament import make_config, run_tournament

    config, _ = make_config(game, agents, variant=variant, games=games, seed=seed,
                            time_margin=time_margin)
    run_tournament(config, str(out), executor=make_executor(executor, workers), resume=True,
                   progress=progress, command=command)
    return Path(out)


def copy_small_outputs(run_dir: Path, results_dir: Path) -> list[str]:
    """Copy the small outputs of a finished run (not its game log) to results_dir."""
    results_dir.mkdir(parents=True, exist_ok=True)
    copied = []
    for f in sorted(Path(run_dir).iterdir()):
        if f.is_file() and f.suffix in SMALL_OUTPUTS and f.name not in SKIPPED_OUTPUTS:
            shutil.copy2(f, results_dir / f.name)
            copied.append(f.name)
    return copied


def match_score(games_csvs, candidate: str) -> dict:
    """The candidate's W-D-L and mean points (win 1, draw 1/2) over the games of one or
    more games.csv files, with the normal-approximation 95% interval of the mean (observed
    per-game variance) and the Elo difference with its margin (analysis.stats.match)."""
    import pandas as pd

    from niwa.analysis.stats.match import match_summary
    from niwa.analysis.stats.ratings import Z95

    if isinstance(games_csvs, (str, Path)):
        games_csvs = [games_csvs]
    df = pd.concat([pd.read_csv(p) for p in games_csvs], ignore_index=True)
    if not len(df):
        raise ValueError(f"no games in {', '.join(map(str, games_csvs))}")
    pts = [float(row[f"result_{0 if row['agent_0'] == candidate else 1}"])
           for _, row in df.iterrows()]
    n = len(pts)
    wins = sum(p == 1.0 for p in pts)
    losses = sum(p == 0.0 for p in pts)
    draws = n - wins - losses
    score = sum(pts) / n
    half = Z95 * math.sqrt(sum((p - score) ** 2 for p in pts) / n / n)
    m = match_summary(wins, draws, losses)
    return {"games": n, "wins": wins, "draws": draws, "losses": losses,
            "score": round(score, 4), "score_low": round(score - half, 4),
            "score_high": round(score + half, 4), "elo": round(m.elo, 1),
            "elo_margin": round(m.margin, 1)}


def append_row(path: Path, row: dict, fields: list[str]) -> None:
    """One row at the end of a results CSV (the header with the first row). A file written
    before the campaign gained columns is rewritten once with the new header, its old rows
    left empty in the new columns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    if not new:
        with path.open(newline="") as f:
            header = next(csv.reader(f), None)
        if header != fields:
            if header is None or not set(header) <= set(fields):
                raise SystemExit(f"error: {path} has columns this campaign does not write "
                                 f"({header}); move it aside")
            with path.open(newline="") as f:
                old = list(csv.DictReader(f))
            with path.open("w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=fields)
                w.writeheader()
                w.writerows(old)
    with path.open("a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        if new:
            w.writeheader()
        w.writerow(row)


def append_text(out: Path, lines: list[str], base: Path) -> Path:
    """Append a printout to a results text file (a relative path is taken under `base`,
    the campaign's folder), a blank line after it; the file's path."""
    out = out if out.is_absolute() else base / out
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n\n")
    return out


# ---- the variant questions ---------------------------------------------------------------
@dataclass(frozen=True)
class Question:
    """A rule-variant question answered at strong play: one `niwa analyse` strength sweep."""

    game: str
    vary: tuple[str, ...]             # KEY=V1,V2 items
    strengths: tuple[str, ...]        # NAME:KEY=V1,V2 items, weakest first
    games: int                        # per variant at every rung but the top
    top_games: int                    # per variant at the top rung (0: as the others)
    rate_games: int                   # between neighbouring rungs (their Elo)
    proof_time: float                 # seconds the proof search gets per variant
    question: str
    # the variants the rating games are played under: "each" two-player variant (niwa
    # analyse's default) or the "first" only (the published runs that predate per-variant
    # rating say so, so that their command reproduces them)
    rate_under: str = "each"

    def scaled(self, scale: int) -> Question:
        """The same sweep with every games count multiplied by `scale` (a bigger rerun)."""
        if scale < 1:
            raise ValueError(f"--scale must be at least 1, got {scale}")
        return dataclasses.replace(self, games=self.games * scale,
                                   top_games=self.top_games * scale,
                                   rate_games=self.rate_games * scale)


def answer_parser(question: Question) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description=f"{question.question} A resumable `niwa analyse` strength sweep "
                    f"({question.game}, {' x '.join(question.vary)}); rerun the same "
                    "command to continue it. The defaults reproduce the published result.")
    ap.add_argument("--scale", type=int, default=1,
                    help="multiply every games count by K (its own run folder, and results "
                         "in results/xK)")
    ap.add_argument("--games", type=int, default=None,
                    help="a quick look: this many games per variant at every rung, the top "
                         "one included (results copied only with --results)")
    ap.add_argument("--rate-games", type=int, default=None,
                    help="a quick look: rating games between neighbouring rungs")
    ap.add_argument("--proof-time", type=float, default=None,
                    help="a quick look: seconds the proof search gets per variant")
    ap.add_argument("--rate-under", choices=("each", "first"), default=question.rate_under,
                    help="play the rating games under each two-player variant or the first "
                         "only (default: %(default)s, as the published run); a run rated "
                         "under first grows into each without replaying anything")
    ap.add_argument("--executor", default="local", help="local or dask://HOST:PORT")
    ap.add_argument("--workers", type=int, default=1, help="parallel games (default 1)")
    ap.add_argument("--runs", type=Path, default=None,
                    help="folder of the full runs, game logs included (default: runs/ "
                         "beside run.py; git ignores it)")
    ap.add_argument("--results", type=Path, default=None,
                    help="where the small outputs are copied (default: results/ beside "
                         "run.py, results/xK with --scale K)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan only")
    return ap


def answer_variants(question: Question, run_dir: Path, *, executor: str = "local",
                    workers: int = 1, seed: int = 1, command: str = ""):
    """Start or continue the question's sweep in run_dir; returns analyse's outcome."""
    from niwa.analysis.arena.executors import make_executor
    from niwa.analysis.experiments.variants import (
        analyse,
        check_out_dir,
        experiment_from_options,
        plan_cells,
    )

    exp = experiment_from_options(
        question.game, vary=list(question.vary), lineup=[], strengths=list(question.strengths),
        games=question.games, players=None, seed=seed, given={"games", "seed"},
        out_dir=str(run_dir), resume=True, rate_games=question.rate_games,
        top_games=question.top_games, rate_under=question.rate_under)
    plan = plan_cells(exp)
    check_out_dir(exp, str(run_dir), resume=True)
    return analyse(exp, str(run_dir), executor=make_executor(executor, workers), resume=True,
                   command=command, plan=plan, proof_time=question.proof_time)


def answer_main(question: Question, script: Path, argv: list[str] | None = None) -> int:
    """The command line of a variant question's bench/<question>/run.py."""
    here = Path(script).resolve().parent
    ap = answer_parser(question)
    args = ap.parse_args(argv)
    if args.scale < 1:
        ap.error("--scale must be at least 1")
    if args.games is not None and args.games < 2:
        ap.error("--games must be at least 2")
    if args.rate_games is not None and args.rate_games < 0:
        ap.error("--rate-games must be at least 0")
    if args.proof_time is not None and not 0 <= args.proof_time <= 3600:
        ap.error("--proof-time must be between 0 and 3600 seconds")
    q = dataclasses.replace(question.scaled(args.scale), rate_under=args.rate_under)
    quick = args.games is not None or args.rate_games is not None or args.proof_time is not None
    if quick:
        games = q.games if args.games is None else args.games
        q = dataclasses.replace(
            q, games=games, top_games=q.top_games if args.games is None else games,
            rate_games=q.rate_games if args.rate_games is None else args.rate_games,
            proof_time=q.proof_time if args.proof_time is None else args.proof_time)
    name = (f"quick-{q.games}-{q.rate_games}-{q.proof_time:g}" if quick
            else "published" if args.scale == 1 else f"x{args.scale}")
    run_dir = (args.runs or here / "runs") / name
    results = args.results or (None if quick else here / "results" if args.scale == 1
                               else here / "results" / f"x{args.scale}")
    print(f"{q.game}: {' x '.join(q.vary)}; strengths {' '.join(q.strengths)}; "
          f"{q.games} games per variant ({q.top_games or q.games} at the top rung), "
          f"{q.rate_games} rating games per pair of rungs (under {q.rate_under} "
          f"variant), proof {q.proof_time:g} s -> {run_dir}",
          file=sys.stderr)
    if args.dry_run:
        return 0
    outcome = answer_variants(q, run_dir, executor=args.executor, workers=args.workers,
                              command=command_line(script, argv))
    summary = outcome.summary
    if summary is not None:
        for line in ([c["verdict"] for c in summary.comparisons]
                     + summary.advantage_verdicts + summary.ladder_verdicts):
            print(f"- {line}")
    if results is not None:
        copied = copy_small_outputs(run_dir, results)
        print(f"copied {' '.join(copied)} to {results}", file=sys.stderr)
    return 0
