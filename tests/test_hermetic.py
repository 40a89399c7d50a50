"""The suite runs in its own home: what the user has built or set cannot change a result."""

import os
from pathlib import Path

from niwa.solver.book import books_dir
from niwa.solver.tables import default_dir


def test_caches_and_niwa_variables_point_into_the_sessions_home():
    home = Path(os.environ["HOME"])
    assert "pytest-of-" in str(home)        # pytest's temporary folders, not the user's
    assert default_dir().is_relative_to(home) and books_dir().is_relative_to(home)
    assert not any(default_dir().iterdir()) and not any(books_dir().iterdir())
    assert {n for n in os.environ if n.startswith("NIWA_")} == {"NIWA_TABLES", "NIWA_BOOKS",
                                                                 "NIWA_CERTIFICATES"}
    assert Path(os.environ["XDG_CACHE_HOME"]).is_relative_to(home)
