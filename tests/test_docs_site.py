"""The documentation site (mkdocs.yml, docs/) builds without a warning, and every file the
code and the README point readers to exists."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CODE_FOLDERS = ("ext", "solver", "analysis", "cli")
CODE_SUFFIXES = {".py", ".pyx", ".pxd"}


def _code_files():
    for folder in CODE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in CODE_SUFFIXES and "__pycache__" not in path.parts:
                yield path


def _cited(pattern):
    """(file, line number, cited path) for every match of pattern in the shipped code."""
    regex = re.compile(pattern)
    for path in _code_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in regex.finditer(line):
                yield path.relative_to(ROOT), number, match.group(0)


def test_mkdocs_build_strict(tmp_path):
    """`mkdocs build --strict`: a broken link, a missing page, a nav entry without a file or
    an API page that does not render is a warning, and --strict turns it into a failure."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.fail("mkdocs is not installed: install the docs extra, pip install -e '.[docs]'")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NIWA_")}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    # the Cython contract is documented through dynamic inspection, with its methods
    assert "niwa.ext.game" in api and "legal_actions" in api


def test_rules_paths_cited_in_code_exist():
    cited = list(_cited(r"[\w./-]*rules/[\w.-]+\.md"))
    assert cited, "the engines and reference rules cite their rules pages"
    wrong = [c for c in cited if not c[2].startswith("docs/rules/") or not (ROOT / c[2]).is_file()]
    assert not wrong, f"rules pages cited but missing (they live in docs/rules/): {wrong}"


def test_docs_paths_cited_in_code_exist():
    missing = [c for c in _cited(r"\bdocs/[\w./-]+\.(?:md|py|sh|csv)") if not (ROOT / c[2]).exists()]
    assert not missing, f"docs files cited by the code but missing: {missing}"


def test_readme_links_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if "://" not in link]
    assert local, "the README links into the documentation"
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README links to missing files: {missing}"


def test_readme_keeps_the_ci_command():
    """.ci/run runs the line after the test-command marker's code fence: it must install
    the docs extra, or the site test above cannot run in CI."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    marker = lines.index("<!-- test-command -->")
    assert lines[marker + 1].startswith("```")
    command = lines[marker + 2]
    assert "pip install -e '.[test,dist,openspiel,docs]'" in command and "pytest" in command
    assert "<!-- main-command -->" in lines
