"""The `best` agent and the evaluation-guided MCTS options it builds on (the ladder:
test_ladder.py)."""


import pytest

from niwa.ext.lotus import LotusState
from niwa.ext.registry import games, get_game
from niwa.solver.agents import AgentError, BestAgent, agent_settings, best_spec, make_agent
from niwa.solver.mcts import MCTS


def _midgame(plies=20, seed=3):
    s = LotusState()
    r = make_agent("random", seed=seed)
    for _ in range(plies):
        s.apply(r.step(s, s.current_player()))
    return s


# ---- MCTS guided by the evaluation ----------------------------------------------------
def test_implicit_minimax_root_holds_the_max_n_of_its_children():
    s = _midgame()
    m = MCTS(2, seed=1, minimax=0.4)
    m.search(s, iterations=400)
    mover = s.current_player()
    root = m._node(0)
    kids = [m._node(c) for c in m._children(0)]
    seen = [(k["exact"] if k["proven"] else k["heur"]) for k in kids
            if k["visits"] > 0 or k["proven"]]
    best = max(seen, key=lambda v: v[mover])
    assert root["heur"] == pytest.approx(best, abs=1e-6)
    assert 0.0 <= root["heur"][mover] <= 1.0


def test_evaluation_never_set_without_guidance():
    m = MCTS(2, seed=1)
    m.search(_midgame(), iterations=200)
    assert all(m._node(c)["heur"] == [0.0, 0.0] for c in m._children(0))


@pytest.mark.parametrize("kw", [dict(playout="greedy"), dict(playout="greedy", cutoff=6),
                                dict(cutoff=0, minimax=1.0), dict(bias=2.0)])
def test_guided_searches_pick_legal_moves(kw):
    s = _midgame()
    r = MCTS(2, seed=2, **kw).search(s, iterations=300)
    assert r.best in s.legal_actions() and r.iterations == 300


@pytest.mark.parametrize("bad", [dict(minimax=1.5), dict(eps=-0.1), dict(bias=-1.0),
                                 dict(playout="smart")])
def test_guided_options_are_checked(bad):
    with pytest.raises(ValueError):
        MCTS(2, **bad)


def test_cpu_time_budget_counts_this_threads_cpu():
    import time

    m = MCTS(2, seed=1)
    t0 = time.thread_time()
    r = m.search(LotusState(), time_limit=0.03, cpu_time=True)
    used = time.thread_time() - t0
    assert r.time_s >= 0.03 and used >= 0.03 and r.iterations > 0


# ---- the best agent --------------------------------------------------------------------
def test_every_game_publishes_a_best_spec_that_parses():
    for g in games():
        spec = get_game(g).best_agent
        assert make_agent(spec) is not None
        assert best_spec(g).split(":")[0] == spec.split(":")[0]


def test_best_resolves_on_its_first_step_with_overrides():
    a = make_agent("best:iters=60,c=0.9", seed=1)
    assert isinstance(a, BestAgent) and a.inner is None
    s = _midgame()
    assert a.step(s, s.current_player()) in s.legal_actions()
    assert a.resolved.startswith(get_game("lotus").best_agent.split(":")[0])
    assert a.inner.params["iters"] == 60 and a.inner.params["c"] == 0.9
    assert a.analysis() is not None and a.analysis().iterations == 60


def test_best_plays_a_whole_game_with_its_tree_kept():
    from niwa.analysis.arena.game_loop import play
    from niwa.ext.game import Rng

    best = make_agent("best:iters=30", seed=1)
    result = play(LotusState(), [best, make_agent("random", seed=2)], chance_rng=Rng(1))
    assert result.error_seat is None and result.state.is_terminal()
    assert best.inner.tree is not None and best.inner.tree.root_visits > 0


def test_best_settings_record_what_it_resolves_to():
    settings = agent_settings("best:time=0.05", "lotus")
    assert settings["agent"] == "best"
    assert settings["resolves_to"] == best_spec("lotus", {"time": 0.05})
    assert settings["time"] == 0.05 and "c" in settings


@pytest.mark.parametrize("spec, message", [
    ("best:foo=1", "no parameter 'foo'"),
    ("best:time=-1", "time=-1"),
])
def test_bad_best_specs_fail_when_parsed(spec, message):
    with pytest.raises(AgentError, match=message):
        make_agent(spec)


def test_an_override_the_resolved_agent_lacks_fails_before_the_run():
    # accepted by best's parser, refused once resolved: depth is alpha-beta's alone, iters
    # MCTS's (whichever Lotus publishes, the other one is foreign to it)
    name = get_game("lotus").best_agent.split(":")[0]
    override = "iters=3" if name == "alphabeta" else "depth=3"
    with pytest.raises(AgentError, match="best on lotus plays"):
        agent_settings(f"best:{override}", "lotus")


