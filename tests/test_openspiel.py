"""OpenSpiel interop: niwa games as OpenSpiel games, OpenSpiel bots as niwa agents.

Needs the optional extra (pip install 'niwa[openspiel]'); skipped as a whole without it.
"""

import time

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is not installed (pip install 'niwa[openspiel]')")

from open_spiel.python.algorithms import cfr, evaluate_bots, exploitability, ismcts, mcts  # noqa: E402

from niwa.analysis.arena.games_csv import play_task as play_game  # noqa: E402
from niwa.analysis.arena.schedule import build_schedule  # noqa: E402
from niwa.analysis.arena.tournament import make_config  # noqa: E402
from niwa.analysis.interop import openspiel as nos  # noqa: E402
from niwa.ext.errors import VariantError  # noqa: E402
from niwa.ext.game import Rng  # noqa: E402
from niwa.ext.registry import games as niwa_games  # noqa: E402
from niwa.ext.registry import get_game  # noqa: E402

nos.register_games()

GAMES = ["lotus", "haru", "bonsai"]
# Variants that OpenSpiel's own consistency checker walks (random_sim_test).
VARIANTS = [
    "niwa_lotus", "niwa_lotus(players=3,rule=pro)", "niwa_lotus(players=4,trampoline=mandatory)",
    "niwa_lotus(rule=pro,towers=2)",
    "niwa_haru", "niwa_haru(turn_based=True)", "niwa_haru(view=turn,figures=sum)",
    "niwa_bonsai", "niwa_bonsai(players=1)", "niwa_bonsai(players=4)",
]
# One full game with OpenSpiel's MCTSBot in seat 0 and uniform random bots elsewhere.
# MCTSBot needs sequential turns: Haru is played through the turn-based view.
MCTS_GAMES = [("niwa_lotus", 10), ("niwa_bonsai", 10), ("niwa_bonsai(players=3)", 5),
              ("niwa_haru(turn_based=True,target=2)", 5), ("niwa_haru(view=turn,target=2)", 5)]
TINY_LOTUS = "niwa_lotus(towers=1,lane=1,shared=2,trampoline_at=2)"


def test_every_registry_game_is_registered():
    assert nos.register_games() == sorted(nos.PREFIX + g for g in niwa_games())
    registered = {t.short_name for t in pyspiel.registered_games()}
    assert {nos.PREFIX + g for g in GAMES} <= registered


@pytest.mark.parametrize("name", GAMES)
def test_game_type_matches_what_playouts_show(name):
    """The declared kind (from the rules pages) is what random playouts meet."""
    start = get_game(name).new(**({"target": 2} if name == "haru" else {}))
    declared = nos.traits_of(name, start.variant)
    assert nos.probe_traits(start, playouts=4) == declared
    game = pyspiel.load_game(nos.PREFIX + name)
    gt = game.get_type()
    assert (gt.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS) == declared.simultaneous
    assert (gt.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC) == declared.chance
    assert (gt.information == pyspiel.GameType.Information.PERFECT_INFORMATION) \
        == declared.perfect_information
    assert gt.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert gt.utility == pyspiel.GameType.Utility.CONSTANT_SUM and game.utility_sum() == 1.0


def test_one_player_game_is_general_sum():
    game = pyspiel.load_game("niwa_bonsai(players=1)")
    assert game.num_players() == 1
    assert game.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM


@pytest.mark.parametrize("spec", VARIANTS)
def test_openspiel_consistency_checks(spec):
    """OpenSpiel's own checker: legal actions, chance sums, returns within the declared
    utilities (constant sum), game length within max_game_length, clones, strings."""
    pyspiel.random_sim_test(pyspiel.load_game(spec), num_sims=3, serialize=False, verbose=False)


@pytest.mark.parametrize("spec,sims", MCTS_GAMES)
def test_mctsbot_and_random_bots_play_full_games(spec, sims):
    game = pyspiel.load_game(spec)
    rng = np.random.RandomState(5)
    bots = [mcts.MCTSBot(game, 2.0, sims, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)]
    bots += [pyspiel.make_uniform_random_bot(p, 7 + p) for p in range(1, game.num_players())]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
    assert sorted(returns)[-1] == 1.0 or returns == [0.5, 0.5]
    assert sum(returns) == pytest.approx(1.0)


def test_random_bots_play_simultaneous_haru():
    game = pyspiel.load_game("niwa_haru")
    assert game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
    rng = np.random.RandomState(3)
    for seed in range(3):
        state = game.new_initial_state()
        bots = [pyspiel.make_uniform_random_bot(p, seed * 2 + p) for p in range(2)]
        returns = evaluate_bots.evaluate_bots(state, bots, rng)
        assert sum(returns) == pytest.approx(1.0)
        assert state.niwa.is_terminal()


@pytest.mark.parametrize("name", GAMES)
def test_adapter_mirrors_the_engine_step_by_step(name):
    """Same legal actions, chance distribution, observations and returns as the engine."""
    variant = {"target": 2} if name == "haru" else {}
    game = nos.load_game(name, **variant)
    state = game.new_initial_state()
    engine = get_game(name).new(**variant)
    rng = Rng(11)
    while not engine.is_terminal():
        p = engine.current_player()
        assert state.current_player() == p
        for q in range(engine.num_players):
            assert state.observation_string(q) == engine.information_state(q)
        if p == nos.CHANCE:
            outcomes = engine.chance_outcomes()
            assert state.chance_outcomes() == sorted(outcomes)
            assert sum(prob for _, prob in outcomes) == pytest.approx(1.0)
            action = outcomes[rng.below(len(outcomes))][0]
        elif p == nos.SIMULTANEOUS:
            joint = [rng.choice(engine.legal_actions(q)) for q in range(engine.num_players)]
            for q in range(engine.num_players):
                assert state.legal_actions(q) == sorted(engine.legal_actions(q))
            before = state.clone()
            state.apply_actions(joint)
            engine.apply_joint(joint)
            assert before.niwa.to_notation() != engine.to_notation()   # clones are independent
            continue
        else:
            assert state.legal_actions() == sorted(engine.legal_actions())
            action = rng.choice(engine.legal_actions())
            assert state.action_to_string(p, action) == engine.action_to_string(action)
        state.apply_action(action)
        engine.apply(action)
        assert str(state) == engine.to_notation()
    assert state.is_terminal()
    assert state.returns() == engine.returns()


def test_perfect_information_state_is_the_action_history():
    game = pyspiel.load_game("niwa_lotus")
    a, b = game.new_initial_state(), game.new_initial_state()
    # two orders reaching the same position: same observation, different histories
    for x in (0, 2):
        a.apply_action(a.legal_actions()[x])
    for x in (0, 0):
        b.apply_action(b.legal_actions()[x])
    assert a.information_state_string(0).endswith(" ".join(map(str, a.history())))
    assert a.information_state_string(0) != b.information_state_string(0)


def _haru_at_choice(game, seed=4):
    rng = np.random.RandomState(seed)
    state = game.new_initial_state()
    while state.is_chance_node():
        actions, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(actions, p=probs)))
    return state


def test_turn_based_view_hides_the_pending_pick():
    game = pyspiel.load_game("niwa_haru(turn_based=True)")
    state = _haru_at_choice(game)
    assert state.current_player() == 0 and state.niwa.current_player() == nos.SIMULTANEOUS
    before = state.observation_string(1)
    state.apply_action(state.legal_actions()[0])
    assert state.current_player() == 1
    assert state.observation_string(1) == before            # seat 1 cannot see it
    assert state.information_state_string(0) != state.information_state_string(1)
    state.apply_action(state.legal_actions()[-1])
    assert state.niwa.current_player() != nos.SIMULTANEOUS     # the joint action was applied


def test_turn_based_view_can_start_with_any_seat():
    game = pyspiel.load_game("niwa_haru(turn_based=True)")
    niwa_state = _haru_at_choice(game).niwa
    state = game.state_from_niwa(niwa_state, first=1)
    assert state.current_player() == 1
    state.apply_action(state.legal_actions()[0])
    assert state.current_player() == 0


def test_resampled_states_share_the_information_state():
    game = pyspiel.load_game("niwa_haru(turn_based=True)")
    state = _haru_at_choice(game)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    seen_other_hand = set()
    for _ in range(8):
        other = state.resample_from_infostate(0, sampler)
        assert other.information_state_string(0) == state.information_state_string(0)
        assert other.legal_actions() == state.legal_actions()
        seen_other_hand.add(other.niwa.to_notation())
    assert len(seen_other_hand) > 1      # the hidden hand is really resampled


def test_ismcts_plays_haru():
    """OpenSpiel's Python ISMCTSBot (the C++ one crashes on every Python-implemented game,
    OpenSpiel's own python_kuhn_poker included) on the turn-based view."""
    game = pyspiel.load_game("niwa_haru(turn_based=True,target=1)")
    rng = np.random.RandomState(1)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), 2.0, 10, random_state=rng)
    state = _haru_at_choice(game)
    for _ in range(2):
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)


def test_cfr_on_a_tiny_lotus():
    game = pyspiel.load_game(TINY_LOTUS)
    solver = cfr.CFRSolver(game)
    first = exploitability.nash_conv(game, solver.average_policy())
    for _ in range(30):
        solver.evaluate_and_update_policy()
    last = exploitability.nash_conv(game, solver.average_policy())
    assert last < first and last < 0.05


def test_variant_parameters_map_both_ways():
    game = pyspiel.load_game("niwa_lotus(towers=2,players=3)")
    assert game.new_initial_state().niwa.variant["towers"] == 2
    assert pyspiel.load_game("niwa_lotus(towers=0)").new_initial_state().niwa.variant["towers"] == 4
    state = get_game("lotus").new(players=3, rule="pro", towers=2)
    again = nos.game_for(state).state_from_niwa(state)
    assert again.niwa.variant == state.variant
    with pytest.raises(VariantError, match="players=7"):    # niwa's one-line message
        pyspiel.load_game("niwa_lotus(players=7)")


def test_openspiel_agents_are_niwa_agents():
    from niwa.solver.agents import make_agent

    agent = make_agent("openspiel-mcts:sims=10", seed=1)
    state = get_game("lotus").new()
    assert agent.step(state.clone(), 0) in state.legal_actions()
    config, _ = make_config("lotus", ["openspiel-mcts:sims=5", "openspiel-random"], games=2,
                            seed=3, variant={"towers": 2})
    for task in build_schedule(config):
        row = play_game(task)
        assert row["error"] == "", row["error"]
        assert sorted([row["result_0"], row["result_1"]]) == ["0.0", "1.0"]


@pytest.mark.parametrize("name", ["haru", "bonsai"])
def test_openspiel_agents_play_chance_and_hidden_games(name):
    variant = {"target": 1} if name == "haru" else {}
    config, _ = make_config(name, ["openspiel-mcts:sims=3", "openspiel-random"], games=2,
                            seed=2, variant=variant)
    for task in build_schedule(config):
        row = play_game(task)
        assert row["error"] == "", row["error"]


def test_timed_openspiel_mcts_keeps_to_its_budget():
    from niwa.solver.agents import make_agent

    agent = make_agent("openspiel-mcts:time=0.05", seed=1)
    state = get_game("lotus").new()
    t0 = time.perf_counter()
    assert agent.step(state, 0) in state.legal_actions()
    assert time.perf_counter() - t0 < 0.5
    assert agent.analysis().iterations >= 1


def test_timed_openspiel_mcts_with_a_tiny_budget_still_moves():
    from niwa.solver.agents import make_agent

    agent = make_agent("openspiel-mcts:time=0.000001", seed=2)
    state = get_game("lotus").new()
    assert agent.step(state, 0) in state.legal_actions()
    assert agent.analysis().iterations == 2
