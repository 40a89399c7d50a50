"""Calibration: does self-play at rising strength approach the proven result? Two-player
Lotus with towers 2..1 (proven: the second player wins), from mcts at 10 iterations up to
the df-pn `perfect` player.

    python bench/calibration/run.py                 # the published run; rerun to continue it
    python bench/calibration/run.py --games 2 --rate-games 2 --runs /tmp/c --results /tmp/c/out

One `niwa analyse` strength sweep through niwa's Python API (the function the command
calls): the same small set-up at every rung, so the top rungs can be read against the
proof search's verdict, which the report prints beside them. The full run (game log
included) goes to runs/ beside this file; its small outputs go to results/.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from campaign import Question, answer_main, guarded  # noqa: E402

QUESTION = Question(
    "lotus", ("towers=2",),
    ("mcts:iters=10,30,100,300,1000,3000", "perfect:time=0.5"),
    games=200, top_games=0, rate_games=100, proof_time=30,
    question="Does self-play at rising strength approach the proven result of Lotus with "
             "towers 2..1?")


def main(argv=None) -> int:
    return answer_main(QUESTION, Path(__file__), argv)


if __name__ == "__main__":
    sys.exit(guarded(main))
