"""Bonsai: the seat advantage by player count, with the goals on and off.

    python bench/bonsai-seats/run.py                 # the published run; rerun to continue it
    python bench/bonsai-seats/run.py --workers 2
    python bench/bonsai-seats/run.py --scale 10 --executor dask://HOST:PORT --workers 64
    python bench/bonsai-seats/run.py --games 2 --rate-games 2 --runs /tmp/q --results /tmp/q/out

One `niwa analyse` strength sweep through niwa's Python API (the function the command
calls): the rule variants, a ladder of self-play strengths, games per variant at the lower
rungs and more at the top rung (the rung the answer is read from), rating games between
neighbouring rungs (their Elo) and the time the proof search gets. The full run (game log
included) goes to runs/ beside this file; its small outputs (CSV tables, PNG plots,
report.md, analysis.json) are copied to results/.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from campaign import Question, answer_main, guarded  # noqa: E402

QUESTION = Question(
    "bonsai", ("players=2,3,4", "goals=on,off"),
    ("mcts:iters=100", "mcts:playout=heuristic,iters=100"),
    games=48, top_games=144, rate_games=40, proof_time=0, rate_under="first",
    question="Bonsai: seat advantage by player count, with goals on and off.")


def main(argv=None) -> int:
    return answer_main(QUESTION, Path(__file__), argv)


if __name__ == "__main__":
    sys.exit(guarded(main))
