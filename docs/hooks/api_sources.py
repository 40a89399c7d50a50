"""MkDocs hook: lets mkdocstrings find niwa's modules from this checkout.

niwa is mapped from top-level folders (api/ is the package `niwa` itself, ext/ is niwa.ext,
solver/ is niwa.solver, ...), and an editable install reaches them through an import hook
that griffe (mkdocstrings' loader) cannot follow. So, for the build only, a temporary
folder holds `niwa/__init__.py` and `niwa/<sub>` as symlinks to those files and folders
and goes first on sys.path: griffe then reads
the sources (and imports the compiled Cython modules, such as the game contract, from the
same files the build made in place).
"""

import atexit
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SUBPACKAGES = ("ext", "solver", "analysis", "cli", "openspiel")


def on_startup(command, dirty):
    source_root = Path(tempfile.mkdtemp(prefix="niwa-docs-src-"))
    atexit.register(shutil.rmtree, source_root, ignore_errors=True)
    (source_root / "niwa").mkdir()
    (source_root / "niwa" / "__init__.py").symlink_to(ROOT / "api" / "__init__.py")
    for sub in SUBPACKAGES:
        (source_root / "niwa" / sub).symlink_to(ROOT / sub, target_is_directory=True)
    sys.path.insert(0, str(source_root))
