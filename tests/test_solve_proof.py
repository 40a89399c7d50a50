"""`niwa solve` with the df-pn proof search (Click's runner)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from niwa.cli.common import load_position
from niwa.cli.main import main
from niwa.ext.game import Rng
from niwa.solver.solve import SolveError, proof_refusal, solve_position


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_towers_2_is_a_proven_second_player_win_to_the_end_of_the_game():
    r = run("solve", "lotus towers=2", "--time", "5")
    assert r.exit_code == 0, r.output
    assert "value 0.0000 (proven)" in r.output and "proven loss for player 0" in r.output
    assert "algo   proof" in r.output
    out = json.loads(run("solve", "lotus towers=2", "--json").output)
    assert out["proven"] is True and out["value"] == 0.0
    assert len(out["actions"]) == 4 and all(a["value"] == 0.0 for a in out["actions"])
    state = load_position("lotus towers=2")
    for name in out["pv"]:        # the PV is legal and plays the game out
        state.apply(next(a for a in state.legal_actions()
                         if state.action_to_string(a) == name))
    assert state.is_terminal() and state.returns()[1] == 1.0


def test_a_depth_keeps_alpha_beta():
    assert solve_position(load_position("lotus towers=2"), depth=3).algo == "alphabeta"


def test_proof_is_refused_where_it_cannot_decide():
    four = load_position("lotus players=4")
    assert "two players" in proof_refusal(four)
    try:
        solve_position(four, algo="proof", time_s=1)
    except SolveError as e:
        assert "two players" in str(e)
    else:
        raise AssertionError("a four-player proof was not refused")


def test_a_mid_game_position_is_proven_or_its_estimate_says_why():
    state = load_position("lotus")
    rng = Rng(7)
    for _ in range(30):                  # a seeded random game's middle
        state.apply(rng.choice(state.legal_actions()))
    r = run("solve", state.to_notation(), "--time", "5")
    assert r.exit_code == 0, r.output
    assert "(proven)" in r.output or ("not proven in" in r.output and "estimate" in r.output)


def test_an_unfinished_proof_says_which_move_it_leans_to():
    from niwa.solver.solve import solve_position

    state = load_position("lotus rule=pro")     # open after billions of nodes
    r = solve_position(state, algo="proof", time_s=0.2, tt_mb=16, fresh=True)
    assert not r.proven and "leaning to " in r.status
    leaned = r.status.split("leaning to ")[1].split(";")[0].split(",")[0]
    assert leaned in [state.action_to_string(a) for a in state.legal_actions()]
