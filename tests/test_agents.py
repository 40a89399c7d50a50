"""The agents registry: specs, errors that list what exists, and every agent playing
legal moves in perfect-information, simultaneous and hidden-information games."""

from __future__ import annotations

import pytest

from niwa.analysis.arena.game_loop import play
from niwa.ext.errors import IllegalActionError, NiwaError
from niwa.ext.lotus import LotusState
from niwa.ext.registry import get_game
from niwa.ext.toys import KuhnState, MatrixGameState
from niwa.solver.agents import (
    AgentError,
    HumanAgent,
    RandomAgent,
    agent_settings,
    make_agent,
    mcts_settings,
    parse_spec,
)

BOTS = ["random", "greedy", "mcts:iters=300", "ismcts:iters=300", "alphabeta:depth=3",
        "alphabeta:time=0.05s", "mcts:time=0.05s,sim=rm", "mcts:iters=200,playout=heuristic,cutoff=5"]


def test_spec_parsing_converts_types():
    assert parse_spec("mcts:iters=2000,c=1.4") == ("mcts", {"iters": 2000, "c": 1.4})
    assert parse_spec("alphabeta:time=1s") == ("alphabeta", {"time": 1.0})
    assert parse_spec("mcts:solver=off")[1] == {"solver": False}


def test_a_game_tunes_its_own_mcts_defaults_and_a_spec_overrides_them():
    lotus, bonsai = get_game("lotus").new(), get_game("bonsai").new(seed=1)
    tuned = get_game("bonsai").mcts_defaults
    assert tuned and tuned["c"] != 1.4
    assert mcts_settings(lotus, {})["c"] == 1.4
    assert mcts_settings(bonsai, {})["c"] == tuned["c"]
    assert mcts_settings(bonsai, {"c": 2.0})["c"] == 2.0
    agent = make_agent("mcts:iters=50", seed=1)
    agent.step(bonsai, bonsai.current_player())
    assert agent.tree.c == tuned["c"]
    # what a run records: every setting, the game's own defaults included
    assert agent_settings("mcts:iters=5", "bonsai")["c"] == tuned["c"]
    assert agent_settings("mcts:iters=5", "lotus") == {**agent_settings("mcts", "lotus"), "iters": 5}
    assert agent_settings("alphabeta:time=1s", "lotus")["depth"] == 8


@pytest.mark.parametrize("spec, words", [
    ("nobody", ["unknown agent", "alphabeta", "greedy", "human", "ismcts", "mcts", "random"]),
    ("mcts:depth=3", ["no parameter 'depth'", "iters", "time"]),
    ("alphabeta:depth=deep", ["should be int"]),
    ("mcts:sim=magic", ["ucb", "rm", "exp3"]),
    ("mcts:iters=0", ["positive"]),
    ("mcts:iters", ["key=value"]),
])
def test_bad_specs_say_what_exists(spec, words):
    with pytest.raises(AgentError) as err:
        make_agent(spec)
    assert isinstance(err.value, NiwaError)
    for w in words:
        assert w in str(err.value)


@pytest.mark.parametrize("spec", BOTS)
def test_every_bot_plays_legal_moves_in_every_kind_of_game(spec):
    agent = make_agent(spec, seed=1)
    lotus = LotusState()
    assert agent.step(lotus, 0) in lotus.legal_actions()
    agent.reset()
    matrix = MatrixGameState()
    for p in range(2):
        assert agent.step(matrix, p) in matrix.legal_actions(p)
    agent.reset()
    kuhn = KuhnState(deal=(0, 2))
    assert agent.step(kuhn, 0) in kuhn.legal_actions()


def test_greedy_takes_an_immediate_win():
    s = LotusState.from_notation(
        "lotus players=2 rule=basic trampoline=optional lane=1 shared=3 trampoline_at=3 towers=2; "
        "track a1:BW; start BB; goal W:2 B:0; turn W")
    win = [a for a in s.legal_actions() if s.child(a).is_terminal()]
    assert win and make_agent("greedy", 1).step(s, 0) in win


def test_search_agents_report_their_reasoning():
    for spec in ("mcts:iters=500", "alphabeta:depth=4"):
        agent = make_agent(spec, seed=2)
        agent.step(LotusState(), 0)
        info = agent.analysis()
        assert 0 <= info.value <= 1 and info.pv


def test_agents_are_reproducible_from_their_seed():
    s = LotusState()
    for spec in ("random", "mcts:iters=400", "ismcts:iters=400"):
        assert make_agent(spec, 5).step(s, 0) == make_agent(spec, 5).step(s, 0)


def test_ismcts_agent_ignores_the_opponents_hidden_card():
    picks = {make_agent("ismcts:iters=2000", 3).step(KuhnState(deal=(1, other)), 0)
             for other in (0, 2)}
    assert len(picks) == 1


def test_mcts_beats_random_on_a_small_lotus():
    wins = 0
    for game in range(6):
        s = LotusState(towers=2, lane=2, shared=4, trampoline_at=4)
        seats = [make_agent("mcts:iters=300", game), make_agent("random", game)]
        if game % 2:
            seats.reverse()
        result = play(s, seats, chance_rng=None, forfeits=False)
        mcts_seat = 0 if game % 2 == 0 else 1
        wins += result.results[mcts_seat] == 1.0
    assert wins >= 5


def test_human_agent_reads_names_or_ids_and_rejects_illegal_moves():
    typed = iter(["nonsense", "W4-4"])
    said = []
    agent = HumanAgent(prompt=lambda _: next(typed), echo=said.append)
    s = LotusState()
    assert s.action_to_string(agent.step(s, 0)) == "W4-4"
    assert "legal" in said[0]
    agent = HumanAgent(prompt=lambda _: "0", echo=said.append)
    assert agent.step(s, 0) == 0
    from niwa.solver.agents import parse_human_action
    with pytest.raises(IllegalActionError):
        parse_human_action(s, 0, "999")


def test_agent_plugins_load_on_first_lookup_and_unimportable_ones_are_skipped(monkeypatch):
    import niwa.solver.agent_registry as agents

    class FakeEntryPoint:
        def __init__(self, target):
            self.target = target

        def load(self):
            if isinstance(self.target, Exception):
                raise self.target
            return self.target

    def register():
        agents.register_agent("plugged", RandomAgent, {}, "from a plugin")

    plugins = [FakeEntryPoint(ImportError("No module named 'pyspiel'")), FakeEntryPoint(register)]
    monkeypatch.setattr(agents, "_plugins_loaded", False)
    monkeypatch.setattr(agents, "entry_points",
                        lambda group: plugins if group == agents.PLUGIN_GROUP else [])
    try:
        assert "plugged" not in agents.REGISTRY       # nothing is loaded before a lookup
        assert parse_spec("plugged") == ("plugged", {})
        assert "plugged" in [name for name, _, _ in agents.describe_agents()]
    finally:
        agents.REGISTRY.pop("plugged", None)


def test_the_solver_layer_does_not_import_analysis():
    import subprocess
    import sys

    # (a lookup may load plugins from higher layers: that is the plugins' choice)
    code = ("import sys, niwa.solver.agents, niwa.solver.solve, niwa.solver.protocol; "
            "print(sorted(m for m in sys.modules if m.startswith('niwa.analysis')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
