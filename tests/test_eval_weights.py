"""Evaluation weights (GameSpec.eval_weights): the defaults are the published evaluation,
a weight moves the evaluation the way it says, clones keep it, each agent searches with its
own (`w_<name>=` parameters), bad names and values are one-line AgentErrors, and `niwa tune`
tunes a weight."""

from __future__ import annotations

import copy
import math
import random

import pytest

from niwa.ext.game import Rng
from niwa.ext.reference import lotus as lotus_oracle
from niwa.ext.registry import get_game
from niwa.solver.agents import AgentError, make_agent

GAMES = ("lotus", "haru", "bonsai")


def random_positions(game: str, count: int, seed: int = 0, max_plies: int = 60):
    """`count` positions reached by seeded random play (chance and simultaneous included)."""
    spec = get_game(game)
    out = []
    for i in range(count):
        rng = random.Random(seed * 1000 + i)
        s = spec.new(seed=i)
        for _ in range(rng.randrange(max_plies)):
            if s.is_terminal():
                break
            if s.is_simultaneous_node():
                s.apply_joint([rng.choice(s.legal_actions(q)) for q in range(s.num_players)])
            else:
                s.apply(rng.choice(s.legal_actions()))
        out.append(s)
    return out


def weighted(state, **given):
    """A clone of `state` evaluating with the game's defaults overridden by `given`."""
    s = state.clone()
    s.set_weights(get_game(state.game_name).weight_values(given))
    return s


@pytest.mark.parametrize("game", GAMES)
def test_every_game_declares_weights_whose_defaults_are_the_default_path(game):
    spec = get_game(game)
    assert 2 <= len(spec.eval_weights) <= 6
    for w in spec.eval_weights:
        assert w.low <= w.default <= w.high and w.low < w.high and w.help
    for s in random_positions(game, 40):
        explicit = weighted(s)
        assert explicit.eval_weights == tuple(w.default for w in spec.eval_weights)
        assert s.eval_weights is None
        for p in range(s.num_players):
            assert explicit.evaluate(p) == s.evaluate(p)     # bit for bit


def lotus_reference_value(orc, player, w):
    """The documented Lotus evaluation with weights `w` (SPEC order), from the oracle."""
    if orc.is_terminal():
        return orc.returns()[player]
    goal = orc.route + 1
    score = [-w["distance"] * sum(orc.start[p]) * goal for p in range(orc.players)]
    for (_, pos), stack in orc.stacks.items():
        for k, p in enumerate(stack):
            score[p] -= w["distance"] * (goal - pos)
            score[p] += w["free"] + w["height"] * len(stack) if k == len(stack) - 1 \
                else -w["covered"]
    others = sum(score[p] for p in range(orc.players) if p != player) / (orc.players - 1)
    return 1.0 / (1.0 + math.exp(-(score[player] - others) / w["scale"]))


@pytest.mark.parametrize("players", [2, 3])
def test_lotus_weights_follow_the_documented_formula(players):
    spec = get_game("lotus")
    rng = random.Random(players)
    defaults = {w.name: w.default for w in spec.eval_weights}
    tried = [defaults] + [{w.name: rng.uniform(w.low, w.high) for w in spec.eval_weights}
                          for _ in range(3)]
    for _ in range(6):
        eng, orc = spec.new(players=players), lotus_oracle.initial(players=players)
        while True:
            for w in tried:
                s = weighted(eng, **w)
                for p in range(players):
                    assert s.evaluate(p) == pytest.approx(lotus_reference_value(orc, p, w),
                                                          rel=1e-12, abs=1e-12)
            if eng.is_terminal():
                break
            a = rng.choice(eng.legal_actions())
            eng.apply(a)
            orc.apply(a)


def test_lotus_weights_move_the_value_the_way_they_say():
    # Black (seat 1) tops a stack of two on space 5; White's (seat 0) stone under it is covered
    s = get_game("lotus").from_notation(
        "lotus players=2 rule=basic trampoline=optional; track 5:WB; "
        "start BBBB BBB BB WWWW WWW WW; goal W:0 B:0; turn B")
    base = s.evaluate(1)
    assert weighted(s, free=10).evaluate(1) > base > weighted(s, free=0).evaluate(1)
    assert weighted(s, height=3).evaluate(1) > base
    assert weighted(s, covered=0).evaluate(0) > s.evaluate(0)    # White's stone is covered
    assert weighted(s, scale=5).evaluate(1) > base               # a lead counts for more


def test_haru_lead_and_near_are_linear_where_nothing_is_clipped():
    checked = 0
    for s in random_positions("haru", 60, seed=2):
        if s.is_terminal():
            continue
        lead = weighted(s, lead=1.0, near=0.0).evaluate(0) - 0.5
        near = weighted(s, lead=0.0, near=1.0).evaluate(0) - 0.5
        if abs(lead) < 0.5 and abs(near) < 0.5 and (lead or near):
            v = weighted(s, lead=0.3, near=0.7).evaluate(0)
            assert v == pytest.approx(0.5 + 0.3 * lead + 0.7 * near, abs=1e-12)
            if lead:        # more weight on the lead: better for the leader, worse otherwise
                assert (weighted(s, lead=0.6).evaluate(0) > s.evaluate(0)) == (lead > 0)
            checked += 1
    assert checked >= 10


def test_haru_policy_weights_reach_the_playout_policy():
    from niwa.ext.haru import policy_action

    changed = 0
    for s in random_positions("haru", 200, seed=3, max_plies=120):
        if s.is_terminal() or s.current_player() < 0:
            continue
        for seed in range(5):
            assert policy_action(weighted(s), seed) == policy_action(s, seed)
            if policy_action(weighted(s, block=0, make_near=20), seed) != policy_action(s, seed):
                changed += 1
    assert changed >= 3


def test_bonsai_cultivate_weight_steers_the_heuristic_playout():
    start = get_game("bonsai").new(seed=4, players=2)

    def tiles(**given):
        total = 0
        for k in range(20):
            s = weighted(start, **given)
            s.heuristic_playout(Rng(k))
            total += sum(sum(t) for t in s.stats()["tiles"])
        return total

    plain = start.clone()
    plain.heuristic_playout(Rng(1))
    same = weighted(start)
    same.heuristic_playout(Rng(1))
    assert plain.to_notation() == same.to_notation()
    assert tiles(cultivate=1.0) > tiles(cultivate=0.0)


def test_bonsai_scale_sharpens_a_lead():
    for s in random_positions("bonsai", 40, seed=5, max_plies=120):
        if not s.is_terminal() and s.evaluate(0) > 0.55:
            assert weighted(s, scale=5).evaluate(0) > s.evaluate(0) \
                > weighted(s, scale=50).evaluate(0)
            return
    pytest.fail("no position with a lead among 40")


@pytest.mark.parametrize("game", GAMES)
def test_clones_and_children_keep_the_weights(game):
    s = random_positions(game, 1, seed=6)[0]
    spec = get_game(game)
    w = spec.weight_values({spec.eval_weights[-1].name: spec.eval_weights[-1].low})
    s.set_weights(w)
    c = s.clone()
    assert c.eval_weights == tuple(w)
    if not s.is_terminal() and s.current_player() >= 0:
        assert s.child(s.legal_actions()[0]).eval_weights == tuple(w)
    assert s.resample_hidden(0, 1).eval_weights == tuple(w)
    s.set_weights(None)
    assert s.eval_weights is None and c.eval_weights == tuple(w)
    with pytest.raises(ValueError, match="takes"):
        s.set_weights(w[:-1])


def _argmax_moves(state, player, **given):
    """Greedy's best actions under the weights `given` (computed here, not by the agent)."""
    vals = {}
    for a in state.legal_actions():
        child = weighted(state, **given).child(a)
        vals[a] = child.returns()[player] if child.is_terminal() else child.evaluate(player)
    top = max(vals.values())
    return {a for a, v in vals.items() if v >= top - 1e-12}


def test_two_greedy_agents_in_one_game_each_use_their_own_weights():
    racer = dict(distance=4.0, free=0.0, height=0.0, covered=0.0)
    stacker = dict(distance=0.0, free=20.0, height=5.0, covered=20.0)
    agents = [make_agent("greedy:" + ",".join(f"w_{k}={v}" for k, v in w.items()), seed=1)
              for w in (racer, stacker)]
    s = get_game("lotus").new()
    differed = 0
    while not s.is_terminal() and differed < 3:
        p = s.current_player()
        mine, theirs = (racer, stacker) if p == 0 else (stacker, racer)
        best, other = _argmax_moves(s, p, **mine), _argmax_moves(s, p, **theirs)
        a = agents[p].step(s, p)
        assert a in best
        differed += not best & other
        s.apply(a)
    assert differed == 3


@pytest.mark.parametrize("spec, message", [
    ("greedy:w_fre=1", "no evaluation weight w_fre; weights: w_distance, w_free"),
    ("mcts:iters=10,w_free=21", "w_free=21 is out of range; expected 0..20"),
    ("alphabeta:depth=1,w_scale=1", "out of range"),
    ("best:iters=10,w_covered=-1", "out of range"),
])
def test_bad_weights_are_one_line_agent_errors(spec, message):
    agent = make_agent(spec, seed=0)
    with pytest.raises(AgentError, match=message) as e:
        agent.step(get_game("lotus").new(), 0)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("spec, message", [
    ("greedy:w_free=x", "should be a number"),
    ("greedy:w_free=inf", "finite"),
    ("random:w_free=1", "no parameter 'w_free'"),
])
def test_bad_weight_values_fail_when_parsed(spec, message):
    with pytest.raises(AgentError, match=message):
        make_agent(spec)


def test_alphabeta_searches_with_its_weights():
    s = random_positions("lotus", 1, seed=7, max_plies=20)[0]
    p = s.current_player()
    for given in ({}, {"scale": 3.0, "free": 0.0}):
        agent = make_agent("alphabeta:depth=1" + "".join(f",w_{k}={v}" for k, v in given.items()))
        agent.step(s, p)
        top = max(weighted(s, **given).child(a).evaluate(p) for a in s.legal_actions())
        assert agent.analysis().value == pytest.approx(top, abs=1e-12)
    assert top != pytest.approx(max(s.child(a).evaluate(p) for a in s.legal_actions()))


@pytest.mark.parametrize("game, spec, given", [
    ("lotus", "mcts:iters=300,cutoff=2", {"scale": 3.0}),
    ("haru", "mcts:iters=300,playout=heuristic", {"block": 0.0, "make_near": 20.0}),
    ("bonsai", "mcts:iters=200,playout=heuristic", {"cultivate": 0.1}),
])
def test_mcts_searches_with_its_weights(game, spec, given):
    """The agent's search equals a search of a position carrying the weights (same seed),
    and differs from the default one: the weights reach cutoff evaluations and the game's
    heuristic playouts."""
    from niwa.solver.mcts import MCTS

    s = next(s for s in random_positions(game, 10, seed=8, max_plies=12)
             if s.current_player() >= 0 and len(s.legal_actions()) > 1)
    p = s.current_player()
    extra = "".join(f",w_{k}={v}" for k, v in given.items())
    runs = {}
    for label, text in (("weighted", spec + extra), ("plain", spec)):
        agent = make_agent(text, seed=5)
        agent.step(s, p)
        runs[label] = [(a.action, a.visits) for a in agent.analysis().actions]
    assert runs["weighted"] != runs["plain"]
    agent = make_agent(spec + extra, seed=5)
    agent.step(s, p)
    again = [(a.action, a.visits) for a in agent.analysis().actions]
    assert again == runs["weighted"]
    assert isinstance(agent.tree, MCTS)


def test_tune_accepts_a_weight(tmp_path):
    from niwa.analysis.arena.executors import LocalExecutor
    from niwa.analysis.experiments import tune
    from niwa.analysis.experiments.tune import TuneError

    config = tune.make_tune_config("lotus", "mcts:iters=3,cutoff=4", ["w_free=0:10"],
                                   iterations=2, seed=1)
    assert config.start == [5.0]        # the declared default
    out = tune.run_tune(config, str(tmp_path / "w"), executor=LocalExecutor(1))
    assert out.finished and ",w_free=" in out.final_spec
    assert 0 <= out.theta[0] <= 10
    with pytest.raises(TuneError, match="no evaluation weight 'w_fre'; weights: w_distance"):
        tune.make_tune_config("lotus", "mcts:iters=3", ["w_fre=0:1"], iterations=2)
    with pytest.raises(TuneError, match="declared in 0..20"):
        tune.make_tune_config("lotus", "mcts:iters=3", ["w_free=0:30"], iterations=2)
    with pytest.raises(AgentError, match="w_nope"):
        tune.make_tune_config("lotus", "mcts:iters=3,w_nope=1", ["c=0.1:2"], iterations=2)
    config = tune.make_tune_config("haru", "best:iters=3", ["w_block=0:40", "c=0.1:2"],
                                   iterations=1)
    assert config.start == [20.0, 1.4]      # best's parameters: those of what it plays


def test_a_python_game_gets_its_weights_as_evaluate_keyword():
    """A plain-Python plugin game declaring eval_weights is asked evaluate(player,
    weights=(...)) once weights are set (clones and searches included); plain otherwise."""
    from example_games import nim_spec

    from niwa.ext.python_game import python_game_spec
    from niwa.ext.registry import register_game, unregister_game
    from niwa.ext.spec import EvalWeight

    base = nim_spec()
    nim_class = type(base.new().game)

    class WeightedNim(nim_class):
        game_name = "wnim"

        def evaluate(self, player, weights=None):
            edge = 0.25 if weights is None else weights[0]
            return 0.5 + (edge if player == self.turn else -edge)

        def clone(self):
            twin = WeightedNim.__new__(WeightedNim)
            twin.__dict__.update(copy.deepcopy(self.__dict__))
            return twin

    spec = python_game_spec(name="wnim", new=WeightedNim, from_notation=None,
                            max_game_length=base.max_game_length,
                            num_distinct_actions=base.num_distinct_actions,
                            options=base.options,
                            eval_weights=(EvalWeight("edge", 0.25, 0.0, 0.5, "mover's edge"),))
    register_game(spec)
    try:
        s = spec.new()
        assert s.evaluate(s.current_player()) == 0.75
        s.set_weights([0.4])
        assert s.evaluate(s.current_player()) == pytest.approx(0.9)
        assert s.clone().evaluate(s.current_player()) == pytest.approx(0.9)
        agent = make_agent("alphabeta:depth=1,w_edge=0.1")
        agent.step(spec.new(), 0)
        assert agent.analysis().value == pytest.approx(0.4)     # the opponent moves next
    finally:
        unregister_game("wnim")


def test_cli_tunes_a_weight_and_rejects_an_unknown_one(tmp_path):
    from click.testing import CliRunner

    from niwa.cli.main import main

    r = CliRunner().invoke(main, ["tune", "lotus", "--agent", "mcts:iters=3,cutoff=4",
                                  "--param", "w_scale=2:60", "--iterations", "2", "-j", "1",
                                  "--out", str(tmp_path / "t")])
    assert r.exit_code == 0, r.output
    assert ",w_scale=" in r.stdout.strip().splitlines()[-1]
    r = CliRunner().invoke(main, ["tune", "lotus", "--agent", "mcts", "--param", "w_towers=0:4"])
    assert r.exit_code == 2 and "no evaluation weight 'w_towers'; weights: w_distance" in r.output
    r = CliRunner().invoke(main, ["agents"])
    assert "lotus w_covered=5 (range 0..20)" in r.output and "haru w_block=20" in r.output
