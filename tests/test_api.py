"""The public API (`import niwa`): one place for the main objects, loaded lazily."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import pytest

import niwa


def _loaded_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "; import sys; print(' '.join("
                          "m for m in sys.modules if m.startswith('niwa')))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_every_public_name_resolves_and_is_listed():
    for name in niwa.__all__:
        assert getattr(niwa, name) is not None, name
    assert set(niwa.__all__) <= set(dir(niwa))
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        niwa.nosuch   # noqa: B018


def test_the_names_are_the_objects_the_layers_define():
    from niwa.ext.registry import get_game
    from niwa.solver.agent_spec import AgentSpec, make_agent
    from niwa.solver.solve import solve_position

    assert niwa.AgentSpec is AgentSpec and niwa.make_agent is make_agent
    assert niwa.load_game is get_game and niwa.solve is solve_position


def test_importing_niwa_or_an_engine_stays_light():
    assert _loaded_after("import niwa") == {"niwa"}
    engine = _loaded_after("import niwa.ext.lotus")
    assert not any(m.startswith(("niwa.solver", "niwa.analysis", "niwa.cli")) for m in engine)
    spec = _loaded_after("import niwa; niwa.AgentSpec")
    assert "niwa.solver.agent_spec" in spec and "niwa.solver.agents" not in spec
    assert not any(m.startswith("niwa.analysis") for m in spec)


@pytest.mark.parametrize("module", ["niwa", "niwa.solver.agent_spec", "niwa.solver.agent_params",
                                    "niwa.solver.agent_registry", "niwa.solver.agent_base",
                                    "niwa.solver.time_control"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


def test_a_tournament_from_python_returns_its_standings(tmp_path):
    out = niwa.tournament("lotus", ["random", niwa.AgentSpec.parse("greedy")], games=2,
                          variant={"towers": 1}, out_dir=str(tmp_path), workers=1)
    assert out.finished and out.played_now == 2
    assert sorted(out.tables.standings["agent"]) == ["greedy", "random"]
    assert (tmp_path / "games.csv").exists()
    with pytest.raises(niwa.NiwaError, match="unknown agent 'nosuch'"):
        niwa.tournament("lotus", ["random", "nosuch"], games=2, out_dir=str(tmp_path / "x"))


def test_an_analysis_from_python_returns_its_summary(tmp_path):
    out = niwa.analyse("lotus", vary=["towers=1,2"], games=2, out_dir=str(tmp_path), workers=1)
    assert [m["variant"] for m in out.summary.metrics] == ["towers=1", "towers=2"]
    assert "report.md" in out.files


def test_an_analysis_from_python_rates_its_strengths_under_each_variant_or_the_first(tmp_path):
    common = dict(vary=["towers=1,2"], strengths=["mcts:iters=4,8"], games=2, rate_games=2,
                  workers=1)
    each = niwa.analyse("lotus", **common, out_dir=str(tmp_path / "each"))
    assert each.summary.ratings["under"] == "each"
    assert [v for _, v, _, _ in each.summary.ratings["pairs"]] == ["towers=1", "towers=2"]
    first = niwa.analyse("lotus", **common, rate_under="first", out_dir=str(tmp_path / "first"))
    assert [v for _, v, _, _ in first.summary.ratings["pairs"]] == ["towers=1"]
    with pytest.raises(niwa.NiwaError, match="rate_under must be one of each, first"):
        niwa.analyse("lotus", **common, rate_under="all", out_dir=str(tmp_path / "x"))
    with pytest.raises(niwa.NiwaError, match="rate_under applies to the rungs of strengths"):
        niwa.analyse("lotus", vary=["towers=1,2"], games=2, rate_under="first",
                     out_dir=str(tmp_path / "y"))


def test_an_analysis_resumed_from_python_starts_saved_engines_only_if_trusted(tmp_path):
    """The saved lineup of an experiment names a program: a resume refuses to start it
    unless `trust_engines` (then it starts, and fails its handshake in one line)."""
    import json

    from niwa.analysis.arena.schedule import identity_digest
    from niwa.analysis.experiments.variants import Experiment

    out, marker = tmp_path / "run", tmp_path / "ran"
    niwa.analyse("lotus", vary=["towers=1,2"], games=2, out_dir=str(out), workers=1)
    meta = json.loads((out / "analysis.json").read_text())
    spec = f"engine:cmd=touch {marker}"
    meta["experiment"]["agents"] = ["random", spec]
    meta["identity_digest"] = identity_digest(Experiment(**meta["experiment"]).identity())
    (out / "analysis.json").write_text(json.dumps(meta))
    (out / "games.csv").write_text((out / "games.csv").read_text().splitlines()[0] + "\n")
    (out / "games.jsonl").write_text("")
    with pytest.raises(niwa.NiwaError, match="starts a program.*--trust-engines"):
        niwa.analyse(None, out_dir=str(out), resume=True, workers=1)
    assert not marker.exists()
    with pytest.raises(niwa.NiwaError, match="did not start"):
        niwa.analyse(None, out_dir=str(out), resume=True, trust_engines=True, workers=1)
    assert marker.exists()


# ---- the options niwa.tournament() and niwa.analyse() share with their commands --------
def _records(out) -> list[dict]:
    import json

    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def test_a_tournament_from_python_plays_the_openings_given(tmp_path):
    out = niwa.tournament("lotus", ["random", "greedy"], games=4, variant={"towers": 1},
                          openings="random:plies=2", out_dir=str(tmp_path), workers=1)
    assert out.config.openings == {"source": "random", "plies": 2, "count": None,
                                   "order": "sequential"}
    recs = _records(tmp_path)
    assert [r["opening"] for r in recs] == [{"id": k // 2 + 1, "plies": 2} for k in range(4)]
    assert recs[0]["moves"][:2] == recs[1]["moves"][:2]          # one opening, seats swapped
    with pytest.raises(niwa.NiwaError, match="openings"):
        niwa.tournament("lotus", ["random", "greedy"], games=2, openings="random:plies=x",
                        out_dir=str(tmp_path / "bad"))
    assert not (tmp_path / "bad").exists()


def test_a_tournament_from_python_records_its_time_margin(tmp_path):
    import json

    niwa.tournament("lotus", ["random", "greedy"], games=2, variant={"towers": 1},
                    time_margin=2.5, out_dir=str(tmp_path / "run"), workers=1)
    meta = json.loads((tmp_path / "run" / "tournament.json").read_text())
    assert meta["config"]["time_margin"] == 2.5
    niwa.tournament("lotus", ["random", "greedy"], games=2, variant={"towers": 1},
                    out_dir=str(tmp_path / "default"), workers=1)
    meta = json.loads((tmp_path / "default" / "tournament.json").read_text())
    assert meta["config"]["time_margin"] == 0.5                  # the command's default
    with pytest.raises(niwa.NiwaError, match="^time_margin must be between 0 and") as e:
        niwa.tournament("lotus", ["random", "greedy"], games=2, time_margin=-1,
                        out_dir=str(tmp_path / "bad"))
    assert "\n" not in str(e.value) and not (tmp_path / "bad").exists()


def test_a_tournament_resumed_from_python_starts_saved_engines_only_if_trusted(tmp_path):
    """A resume that does not give the agents again takes them from tournament.json; one
    that starts a program is refused unless `trust_engines` (then it starts, and fails its
    handshake in one line)."""
    import json

    from niwa.analysis.arena.schedule import TournamentConfig, identity_digest

    out, marker = tmp_path / "run", tmp_path / "ran"
    niwa.tournament("lotus", ["random", "greedy"], games=2, variant={"towers": 1},
                    out_dir=str(out), workers=1)
    meta = json.loads((out / "tournament.json").read_text())
    meta["config"]["agents"] = ["random", f"engine:cmd=touch {marker}"]
    meta["identity_digest"] = identity_digest(TournamentConfig(**meta["config"]).identity())
    (out / "tournament.json").write_text(json.dumps(meta))
    (out / "games.csv").write_text((out / "games.csv").read_text().splitlines()[0] + "\n")
    (out / "games.jsonl").write_text("")
    with pytest.raises(niwa.NiwaError, match="starts a program.*--trust-engines"):
        niwa.tournament(None, out_dir=str(out), resume=True, workers=1)
    assert not marker.exists()
    with pytest.raises(niwa.NiwaError, match="did not start"):
        niwa.tournament(None, out_dir=str(out), resume=True, trust_engines=True, workers=1)
    assert marker.exists()
    with pytest.raises(niwa.NiwaError, match="resume needs out_dir"):
        niwa.tournament(None, resume=True)


def test_an_analysis_from_python_plays_a_house_rule_beside_the_engine(tmp_path,
                                                                     forget_new_games):
    """A house rule in which seat 0 wins every game it would not have lost to a draw:
    its cell's seat 0 wins them all, the engine's does not."""
    rules = tmp_path / "seat_zero.py"
    rules.write_text("from niwa.ext.reference.lotus import LotusOracle\n\n\n"
                     "class SeatZeroWins(LotusOracle):\n"
                     "    def winner(self):\n"
                     "        return None if super().winner() is None else 0\n")
    out = niwa.analyse("lotus", vary=["towers=1"], house=[f"{rules}:SeatZeroWins"], games=6,
                       out_dir=str(tmp_path / "run"), workers=1)
    engine, house = out.summary.metrics
    assert (engine["set_rules"], house["set_rules"]) == ("engine", "SeatZeroWins")
    assert house["wins_0"] == house["decisive"] == 6 and engine["wins_0"] < 6
    with pytest.raises(niwa.NiwaError, match="nope.py"):
        niwa.analyse("lotus", house=[f"{tmp_path}/nope.py:X"], games=2,
                     out_dir=str(tmp_path / "bad"))


def test_an_analysis_from_python_plays_the_openings_given(tmp_path):
    import json

    out = niwa.analyse("lotus", vary=["towers=1,2"], games=2, openings="random:plies=2",
                       out_dir=str(tmp_path), workers=1)
    assert [m["games"] for m in out.summary.metrics] == [2, 2]
    assert json.loads((tmp_path / "analysis.json").read_text())["experiment"]["openings"]
    assert [r["opening"] for r in _records(tmp_path)] == [{"id": 1, "plies": 2}] * 4


def test_an_analysis_from_python_judges_against_its_margin(tmp_path):
    """Seat 0's share in a small sample: outside a margin of 0.1 points (different), inside
    one of 50 (equivalent); the verdict field changes with the margin alone."""
    kinds = {}
    for margin in (0.1, 50):
        out = niwa.analyse("lotus", vary=["towers=1"], games=20, margin=margin,
                           out_dir=str(tmp_path / str(margin)), workers=1)
        assert out.summary.margin == margin / 100
        kinds[margin] = out.summary.metrics[0]["verdict_kind"]
    assert kinds == {0.1: "different", 50: "equivalent"}
    with pytest.raises(niwa.NiwaError, match="margin must be between 0.1 and 50 points"):
        niwa.analyse("lotus", games=2, margin=0, out_dir=str(tmp_path / "bad"))


def test_an_analysis_from_python_gives_its_proof_time_to_the_summary(tmp_path):
    common = dict(vary=["towers=1"], strengths=["mcts:iters=4,8"], games=2, rate_games=2,
                  workers=1)
    out = niwa.analyse("lotus", **common, proof_time=0, out_dir=str(tmp_path / "none"))
    assert out.summary.ratings["proof_time"] == 0
    out = niwa.analyse("lotus", **common, proof_time=1.5, out_dir=str(tmp_path / "some"))
    assert out.summary.ratings["proof_time"] == 1.5
    with pytest.raises(niwa.NiwaError, match="proof_time must be between 0 and 3600"):
        niwa.analyse("lotus", **common, proof_time=-1, out_dir=str(tmp_path / "bad"))


def test_an_analysis_from_python_refuses_an_unknown_executor_in_one_line(tmp_path):
    with pytest.raises(niwa.NiwaError, match="unknown executor 'ftp://x'") as e:
        niwa.analyse("lotus", games=2, executor="ftp://x", out_dir=str(tmp_path))
    assert "\n" not in str(e.value) and not (tmp_path / "games.csv").exists()


@pytest.mark.parametrize("run", [
    lambda: niwa.analyse("lotus", games=2, executor="ftp://x"),
    lambda: niwa.tournament("lotus", ["random", "random"], games=2, executor="ftp://x"),
], ids=["analyse", "tournament"])
def test_a_refused_executor_leaves_no_temporary_folder(run, tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(niwa.NiwaError, match="unknown executor 'ftp://x'"):
        run()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("run, said", [
    (lambda: niwa.tournament("lotus", ["random", "random"], games=0), "games must be"),
    (lambda: niwa.tournament("lotus", ["random", "random"], fmt="swiss"), "unknown fmt"),
    (lambda: niwa.tournament("lotus", ["random", "random"], games=2, rounds=2),
     "give games or rounds"),
    (lambda: niwa.analyse("lotus", vary=["bogus=1"], games=2), "vary bogus:"),
    (lambda: niwa.analyse("lotus", strengths=["mcts:iters=1,2,c=1,2"], games=2),
     "strengths 'mcts"),
    (lambda: niwa.analyse("lotus", games=0), "games must be"),
], ids=["games", "fmt", "games-rounds", "vary", "strengths", "analyse-games"])
def test_the_api_names_its_own_parameters_in_errors_not_the_commands_flags(run, said):
    with pytest.raises(niwa.NiwaError) as e:
        run()
    assert str(e.value).startswith(said) or said in str(e.value), str(e.value)
    assert "--" not in str(e.value), str(e.value)
