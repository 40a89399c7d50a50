"""Run niwa's benchmark suite and print its table (the same as `niwa bench --suite`).

    python bench/suite.py                      # writes bench.csv, about 5-9 minutes
    python bench/suite.py --games lotus --strength-games 20 --out /tmp/bench.csv
"""

import argparse
import sys

from niwa.analysis.bench.suite import format_table, run_suite


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench.csv", help="CSV file to write (default bench.csv)")
    parser.add_argument("--budget", type=float, default=540.0,
                        help="seconds that scale the timed speed measurements")
    parser.add_argument("--games", nargs="*", help="games to measure (default: all)")
    parser.add_argument("--strength-games", type=int, default=200,
                        help="games per game in the strength match (default 200)")
    parser.add_argument("--move-time", type=float, default=0.005,
                        help="seconds per move in the strength match (default 0.005)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    df = run_suite(args.out, seconds_budget=args.budget, games=args.games,
                   strength_games=args.strength_games, move_time=args.move_time,
                   workers=args.workers, progress=lambda text: print(text, file=sys.stderr))
    print(format_table(df))
    return 0


if __name__ == "__main__":
    sys.exit(main())
