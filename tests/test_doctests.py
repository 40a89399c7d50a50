"""Every `>>>` example in the installed package runs here, Cython modules included.

The modules are found by walking the package (pkgutil.walk_packages), not listed by hand,
so a new module's examples run without anyone adding it here. A Cython module's examples
are found in its docstrings and its `__test__` dict (Cython's autotestdict), which holds
the same docstrings again: each distinct docstring of a module runs once. The counts below
are floors measured when this test was written: examples that silently stop being found
(a module no longer importable, docstrings stripped) fail the test instead of passing it.
A module is skipped only when an optional dependency it needs is missing, and the test
says which.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

PACKAGES = ("niwa.ext", "niwa.solver", "niwa.analysis", "niwa.cli", "niwa.openspiel")

# top-level import name -> the extra that installs it (pyproject.toml)
OPTIONAL = {"pyspiel": "openspiel", "open_spiel": "openspiel", "dask": "dist",
            "distributed": "dist"}

# the only modules that may be skipped (their extra not installed), with their examples
OPTIONAL_EXAMPLES = {"niwa.openspiel": 0, "niwa.analysis.interop.openspiel": 6}

# measured: 91 examples in 24 modules, plus 6 in niwa.analysis.interop.openspiel (93 in 25
# while analysis/bench/ladder.py, which moved out to bench/, was still in the package)
MIN_MODULES = 24        # modules with at least one example, the optional ones aside
MIN_EXAMPLES = 91       # examples in them


def _module_names() -> list[str]:
    """Every module and package under PACKAGES; a package that fails to import is listed
    without its submodules (_import then says why, or the test fails on it)."""
    names = []
    for package in PACKAGES:
        names.append(package)
        module, _ = _import(package)
        path = module.__path__ if module is not None else []
        names.extend(info.name for info in pkgutil.walk_packages(path, package + ".",
                                                                  onerror=lambda _: None))
    return sorted(set(names))


def _import(name: str):
    """The module, or the name of the extra it needs but is not installed."""
    try:
        return importlib.import_module(name), None
    except ModuleNotFoundError as e:
        top = (e.name or "").split(".")[0]
        if top in OPTIONAL:
            return None, f"{name} needs {top} (pip install niwa[{OPTIONAL[top]}])"
        raise


def _tests(module) -> list[doctest.DocTest]:
    seen, tests = set(), []
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, module.__name__):
        if test.examples and test.docstring not in seen:
            seen.add(test.docstring)
            tests.append(test)
    return tests


def _collect():
    found, skipped = {}, []
    for name in _module_names():
        module, missing = _import(name)
        if module is None:
            skipped.append(missing)
            continue
        tests = _tests(module)
        if tests:
            found[name] = tests
    return found, skipped


def test_every_doctest_in_the_package_runs_and_passes(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("NIWA_BOOKS", str(tmp_path / "no-books"))   # never the user's books
    found, skipped = _collect()
    runner = doctest.DocTestRunner(verbose=False)   # not pytest's -v: report failures only
    failures = []
    for tests in found.values():
        for test in tests:
            report = []
            if runner.run(test, out=report.append).failed:
                failures.extend(report)
    n_examples = sum(len(t.examples) for tests in found.values() for t in tests)
    optional = {m: n for m, n in OPTIONAL_EXAMPLES.items() if m in found and n}
    with capsys.disabled():
        print(f"\ndoctests: {n_examples} examples in {len(found)} modules"
              + "".join(f"; skipped {s}" for s in skipped))
    assert not failures, "".join(failures)
    assert len(found) - len(optional) >= MIN_MODULES
    assert n_examples - sum(optional.values()) >= MIN_EXAMPLES
    for name, n in optional.items():
        assert sum(len(t.examples) for t in found[name]) >= n, name
    for s in skipped:
        assert s.split()[0] in OPTIONAL_EXAMPLES, f"only optional modules may be skipped: {s}"

