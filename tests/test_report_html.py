"""report.html: one self-contained page (plots inline, no external asset) with the answer
first; rendered by headless Chromium when it is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest
from test_verdicts import synthetic_summary

from niwa.analysis.experiments import plots, report


class _Structure(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.sources, self.links, self.ids = [], [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "src" in a:
            self.sources.append(a["src"])
        if tag == "link" or ("href" in a and not a["href"].startswith("#")):
            self.links.append(a.get("href"))
        if "id" in a:
            self.ids.append(a["id"])


def _page(tmp_path):
    s = synthetic_summary(np.random.default_rng(5))
    plots.plot_seat_win_rates(s.metrics, str(tmp_path / plots.SEAT_WIN_RATES))
    report.write_report(s, str(tmp_path), plots=[plots.SEAT_WIN_RATES], proof_time=0.0)
    name = report.write_html(str(tmp_path))
    return tmp_path / name


def test_html_is_self_contained_and_answers_first(tmp_path):
    path = _page(tmp_path)
    text = path.read_text(encoding="utf-8")
    page = _Structure()
    page.feed(text)
    assert text.startswith("<!DOCTYPE html>") and "<style>" in text
    assert "table" in page.tags and "img" in page.tags
    assert page.sources and all(s.startswith("data:image/png;base64,") for s in page.sources)
    assert not page.links                                  # nothing fetched from elsewhere
    assert page.ids.index("answer") < page.ids.index("verdicts")
    assert text.index('<section id="answer">') < text.index("<table")


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_html_renders_in_headless_chromium(tmp_path):
    path = _page(tmp_path)
    shot = tmp_path / "shot.png"
    r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        f"--screenshot={shot}", "--window-size=1200,2000",
                        f"file://{path}"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr[-2000:]
    assert shot.exists() and shot.stat().st_size > 20_000    # a page, not a blank
