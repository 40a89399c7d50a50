"""Shared test set-up."""

import pytest


@pytest.fixture(autouse=True)
def _no_user_tables(tmp_path_factory, monkeypatch):
    """Tests never read the user's endgame tables (~/.cache/niwa/tables): `niwa solve`
    and the searchers look in an empty folder unless a test points them elsewhere."""
    monkeypatch.setenv("NIWA_TABLES", str(tmp_path_factory.getbasetemp() / "no-tables"))


@pytest.fixture(autouse=True)
def _no_user_certificates(tmp_path_factory, monkeypatch):
    """Nor the user's proof certificates (~/.cache/niwa/certificates), which `niwa solve`
    would answer known results from."""
    monkeypatch.setenv("NIWA_CERTIFICATES", str(tmp_path_factory.getbasetemp() / "no-certs"))
