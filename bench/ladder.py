"""The strength ladder of issue #16 (see niwa.analysis.bench.ladder).

    python bench/ladder.py lotus --games 20 --workers 1
    python bench/ladder.py haru --games 10 --executor dask://HOST:PORT
    python bench/ladder.py haru --games 10 --grow-to 30   # more games where the order is open
    python bench/ladder.py lotus --report-only
"""

import sys

from niwa.analysis.bench.ladder import main

if __name__ == "__main__":
    sys.exit(main())
