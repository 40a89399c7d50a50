"""Shared test set-up: the suite is hermetic.

Nothing the user has can change a result: before any test runs, HOME and XDG_CACHE_HOME
point at a fresh temporary home (so ~/.cache/niwa, where books, endgame tables and
certificates are kept by default, is empty), NIWA_TABLES, NIWA_BOOKS and NIWA_CERTIFICATES
at empty folders in it, and every other NIWA_* variable of the user's environment is
removed. The settings are made in os.environ, so the `niwa` subprocesses some tests start
inherit them; a test that needs a table or a book points the variable at its own folder with monkeypatch.
"""

import os

import pytest

# every variable the package reads (grep NIWA_ in ext/ solver/ analysis/ cli/ setup.py)
NIWA_FOLDERS = {"NIWA_TABLES": "no-tables", "NIWA_BOOKS": "no-books",
                "NIWA_CERTIFICATES": "no-certificates"}


@pytest.fixture(autouse=True, scope="session")
def _hermetic_environment(tmp_path_factory):
    """A temporary home, cache and NIWA_* folders for the whole session (restored after)."""
    home = tmp_path_factory.mktemp("home")
    wanted = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    for name, folder in NIWA_FOLDERS.items():
        (home / folder).mkdir()
        wanted[name] = str(home / folder)
    saved = dict(os.environ)
    for name in [n for n in os.environ if n.startswith("NIWA_")]:
        del os.environ[name]
    os.environ.update(wanted)
    yield home
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="module")
def engine_agent_registered():
    """The `engine` spec for one test module (installed niwa registers it through the
    niwa.agents entry point), leaving the registry as other tests expect it afterwards."""
    from niwa.solver.agents import REGISTRY
    from niwa.solver.protocol import register_agents

    had = REGISTRY.get("engine")
    register_agents()
    yield
    if had is None:
        REGISTRY.pop("engine", None)
    else:
        REGISTRY["engine"] = had


@pytest.fixture
def forget_new_games():
    """Games a test registers (a house rule's, say) leave the registry after it, so that
    later tests see only the installed games."""
    from niwa.ext.registry import games, unregister_game

    before = set(games())
    yield
    for name in set(games()) - before:
        unregister_game(name)
