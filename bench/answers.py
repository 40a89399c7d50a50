"""The README's variant questions at strong play (see niwa.analysis.bench.answers).

    python bench/answers.py lotus-pro                  # resumable: rerun to continue
    python bench/answers.py haru-figures --workers 2
    python bench/answers.py bonsai-seats --scale 10 --executor dask://HOST:PORT
"""

import sys

from niwa.analysis.bench.answers import main

if __name__ == "__main__":
    sys.exit(main())
