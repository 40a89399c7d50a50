"""Shared test set-up."""

import pytest


@pytest.fixture(autouse=True)
def _no_user_tables(tmp_path_factory, monkeypatch):
    """Tests never read the user's endgame tables (~/.cache/niwa/tables): `niwa solve`
    and the searchers look in an empty folder unless a test points them elsewhere."""
    monkeypatch.setenv("NIWA_TABLES", str(tmp_path_factory.getbasetemp() / "no-tables"))
