"""report.html: one self-contained page (plots inline, no external asset) with the answer
first; rendered by headless Chromium (or Chrome) when one is on PATH, skipped saying so
when none is."""

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


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
BROWSER = next((path for name in BROWSERS if (path := shutil.which(name))), None)


@pytest.mark.skipif(BROWSER is None, reason="no Chromium or Chrome browser on this machine "
                    f"(looked for {', '.join(BROWSERS)} on PATH): report.html not rendered")
def test_html_renders_in_headless_chromium(tmp_path):
    from PIL import Image

    path = _page(tmp_path)
    shot = tmp_path / "shot.png"
    r = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu",
                        f"--screenshot={shot}", "--window-size=1200,2000",
                        f"file://{path}"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 2000)
    # a drawn page, not a blank or an error page: the answer's blue box (#eef5ff) and
    # its border (#3572b0) at the top, dark text, and many colours from the inlined plot
    colours = {c for _, c in image.getcolors(maxcolors=1 << 20)}
    assert (0xEE, 0xF5, 0xFF) in colours and (0x35, 0x72, 0xB0) in colours
    assert any(sum(c) < 150 for c in colours) and len(colours) > 200
