"""`niwa solve` at the edges: chance nodes (the expectation over the outcomes), records of
any game, the whole time used, and every move's value whatever the searcher."""

import json

import pytest
from click.testing import CliRunner

from niwa.cli.main import main
from niwa.ext.game import PLAYER_CHANCE, PLAYER_TERMINAL
from niwa.ext.lotus import LotusState
from niwa.ext.toys import ChanceNimState
from niwa.solver import solve as solve_mod
from niwa.solver.solve import chance_expectation, solve_position


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def expectimax(state, pov):
    """Plain expectimax over the contract (the test's oracle)."""
    kind = state.current_player()
    if kind == PLAYER_TERMINAL:
        return state.returns()[pov]
    if kind == PLAYER_CHANCE:
        return sum(p * expectimax(state.child(o), pov) for o, p in state.chance_outcomes())
    values = [expectimax(state.child(a), pov) for a in state.legal_actions()]
    return max(values) if kind == pov else min(values)


@pytest.mark.parametrize("pile", [3, 6, 9])
def test_a_chance_root_gets_the_exact_expectation(pile):
    s = ChanceNimState(pile=pile)
    s.apply(1)                              # seat 0 took one: the extra-stone chance is next
    assert s.current_player() == PLAYER_CHANCE
    r = solve_position(s, time_s=5)
    assert r.algo == "chance" and r.proven
    assert r.value == pytest.approx(expectimax(s, r.player))
    assert len(r.actions) == 2 and all(a.proven for a in r.actions)
    assert sum(p * a.value for (_, p), a in zip(s.chance_outcomes(), r.actions,
                                               strict=True)) == pytest.approx(r.value)
    assert "chance node: expectation over 2 outcomes (exact" in r.status


def test_an_estimate_names_its_method(monkeypatch):
    s = ChanceNimState(pile=60, max_take=3)
    s.apply(1)
    r = chance_expectation(s, algo="mcts", time_s=0.2)
    assert "by mcts" in r.status and 0 <= r.value <= 1
    assert r.proven == all(a.proven for a in r.actions)
    assert ("(exact;" in r.status) == r.proven


def test_solve_says_chance_moves_next_at_a_bonsai_draw():
    from niwa.ext.registry import get_game

    s = get_game("bonsai").new(seed=1)
    while s.current_player() != PLAYER_CHANCE:
        s.apply(s.legal_actions()[0])
    r = run("solve", s.to_notation(), "--time", 1)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("chance moves next: value ") and "expectation over" in r.output
    r = run("solve", s.to_notation(), "--time", 1, "--json")
    out = json.loads(r.output)
    assert out["chance"] is True and len(out["actions"]) == len(s.chance_outcomes())
    assert all(a["value"] is not None for a in out["actions"])


def test_time_is_the_whole_time_and_an_unfinished_proof_still_values_every_move(monkeypatch):
    """A proof that does not finish hands over to alpha-beta (or MCTS): the report gives
    every root move a value and the time the whole call took."""
    s = LotusState(towers=3)
    r = solve_position(s, time_s=0.5, tables=None)
    assert not r.proven and r.algo.startswith("proof+")
    assert len(r.actions) == len(s.legal_actions())
    assert all(a.value is not None for a in r.actions)
    assert 0.45 <= r.time_s < 5


def test_solve_json_of_an_unfinished_proof_has_the_moves_and_the_whole_time():
    r = run("solve", "lotus towers=3", "--time", 0.5, "--json", "--no-tables")
    out = json.loads(r.output)
    assert out["proven"] is False and out["time_s"] >= 0.45
    assert len(out["actions"]) == len(LotusState(towers=3).legal_actions())


def test_record_of_any_game_gives_the_position(tmp_path):
    out = tmp_path / "t"
    r = run("tournament", "lotus", "-v", "towers=1", "--agents", "random", "random",
            "--games", 2, "--workers", 1, "--out", out)
    assert r.exit_code == 0, r.output
    r = run("solve", "--record", out / "games.jsonl", "--game", 1, "--ply", 2, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["proven"] is True
    r = run("solve", "--record", out / "games.jsonl", "--game", 1, "--ply", 10**5)
    assert r.exit_code == 2 and "out of range" in r.output
    r = run("solve", "lotus", "--record", out / "games.jsonl", "--game", 1)
    assert r.exit_code == 2 and "leave POSITION" in r.output


def test_chance_expectation_is_reached_from_solve_position(monkeypatch):
    seen = {}
    real = solve_mod.chance_expectation

    def spy(state, *args, **kw):
        seen["called"] = True
        return real(state, *args, **kw)

    monkeypatch.setattr(solve_mod, "chance_expectation", spy)
    s = ChanceNimState(pile=4)
    s.apply(1)
    solve_position(s, time_s=1)
    assert seen["called"]
