"""Declares the Cython extensions; everything else lives in pyproject.toml.

Cython resolves `cimport niwa.ext.game` by looking for `niwa/ext/game.pxd` on disk, which
this layout (ext/ mapped to niwa.ext) does not have, so before cythonizing we build an
include folder holding `niwa/ext` and `niwa/solver` as symlinks to the real folders.

Set NIWA_ONLY=lotus,game to build a subset (handy while one engine is being edited).

The build uses every core: cythonize translates the .pyx files in parallel and build_ext
compiles the C files in parallel (its `parallel` option, default os.cpu_count() here).
pip shows a build's output only with -v; there each module prints one line when compiled.
"""

import itertools
import os
import sys
import time
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

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


# -falign-loops=32: the hot loops (Haru's near_figures, inlined into c_evaluate, ~78 bytes)
# then span two 64-byte fetch lines wherever the linker puts the function, not three. When
# a refactor grew haru.c, c_evaluate's identical machine code moved from 0x12c20 to
# 0x18630, its inner loop started 8 bytes before a line end, and c_evaluate
# took 40% more cycles: Haru alpha-beta depth 6 (7,673,939 nodes) 0.78-0.83 s against
# 0.72-0.77 s for 1768b21; with this flag 0.71-0.73 s (measured alternating, one run).
#
# -g0 drops the debug information Python's own CFLAGS ask for (-g): GCC's code is the same
# without it, and the compile takes 20-28% less CPU (haru.c 26.1 -> 21.0 s, lotus_tables.c
# 13.1 -> 9.4 s). -O2 instead of -O3 on the big modules off the hot path (lotus_tables,
# python_state, toys) would save only 3.5 s of CPU (26.9 -> 23.4 s) for a risk not worth it.
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
                    extra_compile_args=["-O3", "-falign-loops=32", "-g0", "-Wno-unused-function",
                                        "-Wno-unreachable-code"],
                )
            )
    return exts


def _biggest_first(exts: list[Extension]) -> list[Extension]:
    """The generated C files by size, largest first (bonsai.c and haru.c take twice as long
    as any other), so the parallel compile does not end with one big module alone."""
    return sorted(exts, key=lambda e: -(ROOT / e.sources[0]).stat().st_size)


class ParallelBuildExt(build_ext):
    """build_ext that compiles the extensions on every core and says when each is done."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        self._finished = itertools.count(1)     # next() is atomic: the workers are threads
        super().build_extensions()

    def build_extension(self, ext):
        start = time.perf_counter()
        super().build_extension(ext)
        print(f"niwa: {ext.name} ready ({next(self._finished)}/{len(self.extensions)}, "
              f"{time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)


setup(
    cmdclass={"build_ext": ParallelBuildExt},
    ext_modules=_biggest_first(cythonize(
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
        nthreads=os.cpu_count() or 1,
    )),
)
