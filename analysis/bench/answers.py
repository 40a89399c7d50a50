"""The README's variant questions answered at strong play (issue #16), as reruns.

Each question is one `niwa analyse` strength sweep: the rule variants, a ladder of
self-play strengths (weakest first), games per variant at the lower rungs and at the top
rung (the rung the answer is read from), rating games between neighbouring rungs (their
Elo) and the time the proof search gets. `python bench/answers.py QUESTION` runs it into
runs/answers/QUESTION (resumable: the same command continues an interrupted run) and
copies the small outputs (CSV tables, PNG plots, report.md, the record) into
bench/results/answers/QUESTION/.

`--scale K` multiplies every games count (lower rungs, top rung, rating games) and runs
into QUESTION-xK, so a cluster user reruns an answer at ten times the games with
`--scale 10 --executor dask://HOST:PORT`.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SMALL_OUTPUTS = (".csv", ".png", ".md", ".json")
SKIPPED_OUTPUTS = {"games.csv"}      # the game log: large, and rebuilt by rerunning


@dataclass(frozen=True)
class Question:
    game: str
    vary: tuple[str, ...]             # --vary KEY=V1,V2 items
    strengths: tuple[str, ...]        # --strengths items, weakest first
    games: int                        # per variant at every rung but the top
    top_games: int                    # per variant at the top rung
    rate_games: int                   # between neighbouring rungs
    proof_time: float
    question: str


QUESTIONS = {
    "lotus-pro": Question(
        "lotus", ("rule=basic,pro",),
        ("mcts:iters=100,1000", "mcts:cutoff=10,iters=1000,4000"),
        games=300, top_games=1070, rate_games=150, proof_time=30,
        question="Does Lotus's pro rule remove the first-player advantage (2 players)?"),
    "haru-figures": Question(
        "haru", ("figures=best,sum",),
        ("mcts:iters=100", "mcts:playout=heuristic,iters=100,200"),
        games=100, top_games=400, rate_games=60, proof_time=0,
        question="Does Haru Ichiban's figures=sum scoring change the first-player advantage?"),
    "bonsai-seats": Question(
        "bonsai", ("players=2,3,4", "goals=on,off"),
        ("mcts:iters=100", "mcts:playout=heuristic,iters=100"),
        games=48, top_games=144, rate_games=40, proof_time=0,
        question="Bonsai: seat advantage by player count, with goals on and off."),
}


def out_name(name: str, scale: int) -> str:
    return name if scale == 1 else f"{name}-x{scale}"


def analyse_args(name: str, run_dir: Path, scale: int = 1, executor: str = "local",
                 workers: int = 1, seed: int = 1) -> list[str]:
    """The `niwa analyse` arguments of a question (starts it, or resumes it in run_dir)."""
    if name not in QUESTIONS:
        raise ValueError(f"unknown question {name!r}; questions: {', '.join(QUESTIONS)}")
    if scale < 1:
        raise ValueError(f"--scale must be at least 1, got {scale}")
    q = QUESTIONS[name]
    args = ["analyse", q.game]
    for v in q.vary:
        args += ["--vary", v]
    for s in q.strengths:
        args += ["--strengths", s]
    args += ["--games", str(q.games * scale), "--top-games", str(q.top_games * scale),
             "--rate-games", str(q.rate_games * scale), "--proof-time", f"{q.proof_time:g}",
             "--seed", str(seed), "--workers", str(workers), "--executor", executor,
             "--out", str(run_dir), "--resume"]
    return args


def copy_outputs(run_dir: Path, results_dir: Path) -> list[str]:
    """Copy the small outputs of a finished analysis (not the game log) to results_dir."""
    results_dir.mkdir(parents=True, exist_ok=True)
    copied = []
    for f in sorted(run_dir.iterdir()):
        if f.is_file() and f.suffix in SMALL_OUTPUTS and f.name not in SKIPPED_OUTPUTS:
            shutil.copy2(f, results_dir / f.name)
            copied.append(f.name)
    return copied


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("question", choices=sorted(QUESTIONS))
    ap.add_argument("--scale", type=int, default=1,
                    help="multiply every games count by K (runs into QUESTION-xK)")
    ap.add_argument("--executor", default="local", help="local or dask://HOST:PORT")
    ap.add_argument("--workers", type=int, default=1, help="parallel games (default 1)")
    ap.add_argument("--runs", type=Path, default=Path("runs/answers"),
                    help="folder of the analyses (default runs/answers)")
    ap.add_argument("--results", type=Path, default=REPO / "bench" / "results" / "answers",
                    help="where the small outputs are copied")
    ap.add_argument("--dry-run", action="store_true", help="print the command only")
    args = ap.parse_args(argv)
    if args.scale < 1:
        ap.error("--scale must be at least 1")
    name = out_name(args.question, args.scale)
    run_dir = args.runs / name
    cmd = [sys.executable, "-m", "niwa.cli.main",
           *analyse_args(args.question, run_dir, args.scale, args.executor, args.workers)]
    print("niwa " + shlex.join(cmd[3:]), file=sys.stderr)
    if args.dry_run:
        return 0
    rc = subprocess.call(cmd)
    if rc != 0:
        return rc
    copied = copy_outputs(run_dir, args.results / name)
    print(f"copied {' '.join(copied)} to {args.results / name}", file=sys.stderr)
    return 0
