"""The benchmark suite (niwa bench --suite): it measures every figure and tabulates it.

The suite itself is long; these tests run it on one game with tiny budgets.
"""

import math

import pandas as pd
import pytest

from niwa.analysis.bench import suite as bench_suite
from niwa.analysis.bench.suite import COLUMNS, format_table, run_suite
from niwa.ext.registry import get_game
from niwa.solver.agents import make_agent

MEASURES = {
    "random playouts/s", "MCTS simulations/s vs random playouts/s",
    "niwa MCTS vs OpenSpiel MCTSBot sims/s", "alpha-beta nodes/s vs perft leaves/s",
    "alpha-beta nodes/s vs perft positions played/s",
    "throughput, 2 workers vs 1", "bytes per MCTS node",
}


def tiny_suite(tmp_path, **kw):
    return run_suite(str(tmp_path / "bench.csv"), seconds_budget=10, games=["lotus"],
                     strength_games=2, move_time=0.002, workers=1, memory_nodes=20_000,
                     throughput_games=2, speed_seconds=0.2, **kw)


def test_tiny_suite_measures_every_figure(tmp_path):
    pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (pip install 'niwa[openspiel]')")
    df = tiny_suite(tmp_path)
    assert list(df.columns) == COLUMNS
    assert MEASURES <= set(df["measure"])
    strength = df[df["section"] == "strength"].iloc[0]
    assert strength["reference"] == 2 and 0.0 <= strength["niwa"] <= 1.0
    assert "95% CI" in strength["note"]
    speed = df[df["measure"] == "niwa MCTS vs OpenSpiel MCTSBot sims/s"].iloc[0]
    assert speed["niwa"] > 0 and speed["reference"] > 0
    assert speed["ratio"] == pytest.approx(speed["niwa"] / speed["reference"])
    assert speed["met"] in ("yes", "no")
    memory = df[df["measure"] == "bytes per MCTS node"].iloc[0]
    assert 8 < memory["niwa"] < 10_000
    saved = pd.read_csv(tmp_path / "bench.csv")
    assert len(saved) == len(df) and list(saved.columns) == COLUMNS
    text = format_table(df)
    assert "niwa MCTS vs OpenSpiel MCTSBot" in text and "notes:" in text


def test_suite_says_what_is_missing_without_openspiel(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_suite, "_openspiel", lambda: (None, "OpenSpiel is not installed"))
    df = tiny_suite(tmp_path)
    for measure in ("niwa MCTS vs OpenSpiel MCTSBot sims/s",):
        row = df[df["measure"] == measure].iloc[0]
        assert row["met"] == "n/a" and "not installed" in row["note"]
    strength = df[df["section"] == "strength"].iloc[0]
    assert strength["met"] == "n/a" and math.isnan(strength["niwa"])


def test_format_table_aligns_and_keeps_notes():
    df = pd.DataFrame([
        bench_suite._row("engine vs oracle", "lotus", "random playouts/s", 70000.0, 500.0,
                         unit="games/s", note="engine 10,000,000 actions/s"),
        bench_suite._row("strength", "lotus", "win rate", 0.9, 200, 0.9, "win rate", ">= 0.75",
                         "yes", "200 games"),
    ], columns=COLUMNS)
    lines = format_table(df).splitlines()
    assert lines[0].split()[:3] == ["game", "measure", "niwa"]
    assert "140.0x" in lines[2] and "70,000" in lines[2]
    assert "0.900" in lines[3] and "200 games" in lines[3] and lines[3].rstrip().endswith("yes")
    assert "- lotus random playouts/s: engine 10,000,000 actions/s" in lines


def test_niwa_mcts_spec_is_a_working_agent():
    agent = make_agent(bench_suite.niwa_mcts_spec(0.002), seed=1)
    state = get_game("lotus").new()
    assert agent.step(state.clone(), 0) in state.legal_actions()
