"""The searcher strength matches of issue 5 (see niwa.analysis.bench.searchers).

    python bench/searchers.py                      # every match, 200 games each (hours)
    python bench/searchers.py --only bonsai --workers 2
    python bench/searchers.py --games 20 --out /tmp/searchers   # a quick look
"""

import sys

from niwa.analysis.bench.searchers import main

if __name__ == "__main__":
    sys.exit(main())
