"""Declares the Cython extensions; everything else lives in pyproject.toml.

Cython resolves `cimport niwa.ext.game` by looking for `niwa/ext/game.pxd` on disk, which
this layout (ext/ mapped to niwa.ext) does not have, so before cythonizing we build an
include folder holding `niwa/ext` and `niwa/solver` as symlinks to the real folders.

Set NIWA_ONLY=lotus,game to build a subset (handy while one engine is being edited).
"""

import os
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).resolve().parent
INCLUDE = ROOT / ".build-include"


def _include_path() -> str:
    pkg = INCLUDE / "niwa"
    pkg.mkdir(parents=True, exist_ok=True)
    for sub in ("ext", "solver"):
        link = pkg / sub
        if not link.is_symlink():
            if link.exists():
                link.unlink()
            link.symlink_to(ROOT / sub, target_is_directory=True)
    return str(INCLUDE)


def _extensions() -> list[Extension]:
    only = {s for s in os.environ.get("NIWA_ONLY", "").split(",") if s}
    exts = []
    for folder, package in (("ext", "niwa.ext"), ("solver", "niwa.solver")):
        for pyx in sorted((ROOT / folder).glob("*.pyx")):
            if only and pyx.stem not in only:
                continue
            exts.append(
                Extension(
                    f"{package}.{pyx.stem}",
                    [f"{folder}/{pyx.name}"],
                    extra_compile_args=["-O3", "-Wno-unused-function", "-Wno-unreachable-code"],
                )
            )
    return exts


setup(
    ext_modules=cythonize(
        _extensions(),
        include_path=[_include_path()],
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
        quiet=True,
    ),
)
