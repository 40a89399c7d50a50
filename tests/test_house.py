"""House rules (niwa.analysis.experiments.house): an unchanged subclass of each game's
reference rules plays move for move like the compiled engine; a changed one is analysed
beside it; docs/house-rules.md runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from niwa.analysis.experiments.house import (
    HouseRuleError,
    check_plays_like,
    house_spec,
    load_class,
)
from niwa.ext.reference.bonsai import Bonsai
from niwa.ext.reference.haru import HaruOracle
from niwa.ext.reference.lotus import LotusOracle
from niwa.ext.registry import get_game

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class SameLotus(LotusOracle):
    pass


class SameHaru(HaruOracle):
    pass


class SameBonsai(Bonsai):
    pass


@pytest.mark.parametrize("game, cls, variants", [
    ("lotus", SameLotus, [{}, {"rule": "pro"}, {"players": 3}, {"trampoline": "mandatory"}]),
    ("haru", SameHaru, [{}, {"figures": "sum"}, {"new_round": "reset"}, {"view": "turn"}]),
    ("bonsai", SameBonsai, [{}, {"players": 3}, {"players": 1}]),
])
def test_unchanged_house_rule_plays_like_the_engine(game, cls, variants):
    spec, base = house_spec(game, cls), get_game(game)
    plies = [check_plays_like(spec, base, base.parse_variant(v), seed)
             for v in variants for seed in range(3)]
    assert min(plies) > 0


def test_lockstep_catches_a_changed_rule():
    class NineStonesHome(LotusOracle):
        def winner(self):
            for p in range(self.players):
                if self.goal[p] >= self.stones_each - 1:
                    return p
            return None

    with pytest.raises(AssertionError, match="differ"):
        for seed in range(20):
            check_plays_like(house_spec("lotus", NineStonesHome), get_game("lotus"), {}, seed)


def test_house_rule_must_subclass_the_games_rules():
    with pytest.raises(HouseRuleError, match="must subclass"):
        house_spec("lotus", SameHaru)


@pytest.mark.parametrize("text, message", [
    ("nocolon", "MODULE:CLASS"),
    ("no_such_module_xyz:Foo", "cannot import"),
    ("os:NoSuchClass", "has no class"),
    ("missing_file.py:Foo", "no file"),
])
def test_bad_house_names_fail_in_one_line(text, message):
    with pytest.raises(HouseRuleError, match=message):
        load_class(text)


def test_analyse_house_rule_from_the_command_line(tmp_path):
    rules = tmp_path / "my_rules.py"
    rules.write_text("from niwa.ext.reference.lotus import LotusOracle\n\n"
                     "class NineStonesHome(LotusOracle):\n"
                     "    def winner(self):\n"
                     "        for p in range(self.players):\n"
                     "            if self.goal[p] >= self.stones_each - 1:\n"
                     "                return p\n"
                     "        return None\n")
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "niwa.cli.main", "analyse", "lotus", "--house",
                        f"{rules}:NineStonesHome", "--games", "10", "--workers", "1",
                        "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Does rules=NineStonesHome change seat 0's win rate, compared with " \
           "rules=engine?" in r.stdout
    report = (out / "report.md").read_text()
    assert "rules=NineStonesHome" in report and "House rules:" in report
    bad = subprocess.run([sys.executable, "-m", "niwa.cli.main", "analyse", "lotus",
                          "--house", f"{tmp_path}/nope.py:X", "--games", "2",
                          "--out", str(tmp_path / "bad")], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("Error: ") \
        and "Traceback" not in bad.stderr


def test_the_house_rules_page_runs(tmp_path, monkeypatch):
    """Every python block of docs/house-rules.md, in order, in one namespace."""
    monkeypatch.chdir(tmp_path)
    text = open(os.path.join(ROOT, "docs", "house-rules.md"), encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 4
    namespace: dict = {"__name__": "house_rules_page"}
    path = list(sys.path)
    try:
        for block in blocks:
            exec(compile(block, "docs/house-rules.md", "exec"), namespace)
    finally:
        sys.path[:] = path
        sys.modules.pop("my_rules", None)
        from niwa.ext.registry import games, unregister_game

        for name in games():        # the page's analysis registered its house game here
            if "-" in name:
                unregister_game(name)


@pytest.mark.slow
def test_the_house_rules_page_command_runs_as_written(tmp_path):
    """The page's `niwa analyse --house` command, as written, in a folder holding the
    page's my_rules.py (about 75 s of CPU, nearly all of it in the house games)."""
    import shlex

    text = open(os.path.join(ROOT, "docs", "house-rules.md"), encoding="utf-8").read()
    rules = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    (tmp_path / "my_rules.py").write_text(rules)
    [command] = re.findall(r"```bash\n(niwa analyse .*?)\n```", text, re.S)
    args = shlex.split(command)
    r = subprocess.run([sys.executable, "-m", "niwa.cli.main", *args[1:]], cwd=tmp_path,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Does rules=NineStonesHome change seat 0's win rate" in r.stdout
    out = tmp_path / args[args.index("--out") + 1]
    assert (out / "report.md").read_text().startswith("# lotus: Does rules=NineStonesHome")
