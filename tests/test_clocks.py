"""Clocks: time controls, the game loop's clocks and loss on time, searchers pacing
themselves on their clock, and `--tc` in tournaments."""

import json
import time

import pandas as pd
import pytest
from click.testing import CliRunner

from niwa.analysis.arena.clock import (
    Clock,
    TimeControl,
    TimeControlError,
    parse_time_control,
    split_time_control,
)
from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.arena.game_loop import Watcher, play
from niwa.analysis.arena.games_csv import GameLog, GameLogError, csv_columns, play_task
from niwa.analysis.arena.schedule import build_schedule
from niwa.analysis.arena.tournament import make_config, run_tournament
from niwa.cli.main import main
from niwa.ext.errors import NiwaError
from niwa.ext.game import Rng
from niwa.ext.registry import get_game
from niwa.solver.agent_spec import AgentSpec
from niwa.solver.agents import Agent, MCTSAgent, make_agent, register_agent
from niwa.solver.budget import ClockReading, move_budget, moves_bound


# ---- test agents (registered in this process; a one-worker pool inherits them) ---------
class SleepyAgent(Agent):
    """Random, but takes `sleep` seconds over every move: it cannot keep to a clock."""

    def step(self, state, player):
        time.sleep(self.params.get("sleep", 0.2))
        return self.rng.choice(state.legal_actions(player))


class ClockSpy(MCTSAgent):
    """An MCTS agent that records every clock it is shown and how long each move took."""

    def __init__(self, seed=None, **params):
        super().__init__(seed, **params)
        self.seen, self.took = [], []

    def step(self, state, player):
        self.seen.append(self.clock)
        t0 = time.perf_counter()
        action = super().step(state, player)
        self.took.append(time.perf_counter() - t0)
        return action


register_agent("t_sleepy", SleepyAgent, {"sleep": (float, 0.2, "seconds per move")}, "test")


# ---- time controls ---------------------------------------------------------------------
@pytest.mark.parametrize("text, base, inc, moves, shown", [
    ("60+0.5", 60.0, 0.5, None, "60+0.5"),
    ("40/60+0.5", 60.0, 0.5, 40, "40/60+0.5"),
    ("2", 2.0, 0.0, None, "2"),
    ("2+0.05", 2.0, 0.05, None, "2+0.05"),
    ("1:30+1", 90.0, 1.0, None, "90+1"),
    (" 0.5+0 ", 0.5, 0.0, None, "0.5"),
])
def test_time_controls_read_cutechess_syntax(text, base, inc, moves, shown):
    tc = TimeControl.parse(text)
    assert (tc.base, tc.increment, tc.moves) == (base, inc, moves)
    assert str(tc) == shown and TimeControl.parse(str(tc)) == tc


@pytest.mark.parametrize("text", ["abc", "-1+0", "nan+1", "1e309+0", "0+1", "1+inf", "",
                                  "40/0+1", "0/60", "60+", "+1", "1+-1", "60+0.5+1"])
def test_bad_time_controls_are_one_line_errors(text):
    with pytest.raises(NiwaError) as err:
        TimeControl.parse(text)
    assert isinstance(err.value, TimeControlError)
    assert "\n" not in str(err.value) and "time control" in str(err.value)


def test_no_time_control_means_no_clock():
    assert parse_time_control(None) is None and parse_time_control(" ") is None


def test_a_spec_s_own_time_control_is_taken_out_of_it():
    assert split_time_control("mcts:tc=2+0.05,iters=50") == ("mcts:iters=50",
                                                             TimeControl(2.0, 0.05))
    assert split_time_control("random:tc=40/60") == ("random", TimeControl(60.0, 0.0, 40))
    assert split_time_control("mcts:iters=5") == ("mcts:iters=5", None)
    with pytest.raises(TimeControlError):
        split_time_control("mcts:tc=fast")


# ---- the clock ---------------------------------------------------------------------------
def test_clock_charges_moves_adds_the_increment_and_falls_below_zero():
    clock = Clock(TimeControl(1.0, 0.25))
    assert clock.punch(0.5) and clock.remaining == pytest.approx(0.75)
    assert clock.punch(0.75) and clock.remaining == pytest.approx(0.25)   # exactly 0 is ok
    assert not clock.punch(0.3)        # the flag falls: no increment is added
    assert clock.remaining == pytest.approx(-0.05)


def test_clock_periods_add_the_base_time_after_the_last_move_of_a_period():
    clock = Clock(TimeControl(10.0, 0.0, moves=2))
    assert clock.moves_to_go == 2
    clock.punch(4.0)
    assert clock.moves_to_go == 1 and clock.remaining == pytest.approx(6.0)
    clock.punch(4.0)
    assert clock.moves_to_go == 2 and clock.remaining == pytest.approx(12.0)
    reading = clock.reading(plies_played=7)
    assert reading == ClockReading(pytest.approx(12.0), 0.0, 2, 7)


# ---- the budget rule ---------------------------------------------------------------------
def test_budget_is_a_share_of_the_clock_plus_the_increment():
    assert move_budget(ClockReading(30.0, 0.5)) == pytest.approx(30 / 30 + 0.5)
    # fewer moves possible than 30: the game's bound, but never above a tenth of the clock
    assert move_budget(ClockReading(30.0), bound=15) == pytest.approx(2.0)
    assert move_budget(ClockReading(30.0), bound=3) == pytest.approx(3.0)
    # a period: the time is spread over the moves left in it, keeping half in reserve
    assert move_budget(ClockReading(30.0, 0.0, moves_to_go=5)) == pytest.approx(6.0)
    assert move_budget(ClockReading(30.0, 0.0, moves_to_go=1)) == pytest.approx(15.0)
    # an increment larger than the clock is not spent before it is earned
    assert move_budget(ClockReading(0.1, 1.0)) == pytest.approx(0.05)
    assert move_budget(ClockReading(-1.0, 1.0)) == 0.0
    # less time left, shorter moves
    budgets = [move_budget(ClockReading(t, 0.05)) for t in (2.0, 1.0, 0.5)]
    assert budgets == sorted(budgets, reverse=True) and budgets[0] > budgets[-1]


def test_the_games_max_length_bounds_the_moves_left():
    lotus = get_game("lotus").new(players=2)
    longest = get_game("lotus").max_game_length(dict(lotus.variant))
    assert moves_bound(lotus, 0) == -(-longest // 2)
    assert moves_bound(lotus, longest - 1) == 1


# ---- clocks in the game loop -------------------------------------------------------------
def test_agents_are_told_their_clock_and_pace_themselves_on_it():
    state = get_game("lotus").new(players=2)
    spy = ClockSpy(seed=1)
    result = play(state, [spy, make_agent("random", 2)], chance_rng=Rng(1),
                  clocks=[TimeControl(1.0), None], max_plies=40)
    assert result.termination in ("normal", "capped") and not result.forfeited
    remaining = [r.remaining for r in spy.seen]
    assert remaining == sorted(remaining, reverse=True) and remaining[0] == 1.0
    assert [r.plies_played for r in spy.seen] == list(range(0, 2 * len(spy.seen), 2))
    # sudden death: each move takes about 1/30 of what is left, so moves get shorter
    assert spy.took[0] == pytest.approx(1.0 / 30, rel=0.5)
    assert spy.took[-1] < 0.8 * spy.took[0]
    assert make_agent("random").clock is None      # without clocks nothing is set


def test_alphabeta_paces_itself_on_its_clock():
    state = get_game("lotus").new(players=2)
    agent = make_agent("alphabeta", 1)
    for remaining, low, high in ((1.5, 0.02, 0.2), (0.15, 0.0, 0.03)):
        agent.clock = ClockReading(remaining)
        t0 = time.perf_counter()
        agent.step(state.clone(), 0)
        assert low <= time.perf_counter() - t0 <= high


def test_explicit_budgets_win_over_the_clock():
    state = get_game("lotus").new(players=2)
    agent = make_agent("mcts:iters=30", 1)
    agent.clock = ClockReading(100.0)           # would allow 3 s
    t0 = time.perf_counter()
    agent.step(state.clone(), 0)
    assert time.perf_counter() - t0 < 1.0


def test_a_flag_that_falls_loses_on_time():
    state = get_game("lotus").new(players=2)
    result = play(state, [make_agent("random", 1), make_agent("t_sleepy:sleep=0.15", 2)],
                  chance_rng=Rng(1), clocks=[None, TimeControl(0.4, 0.0)],
                  labels=["random", "sleepy"])
    assert result.termination == "time" and result.error_seat == 1
    assert result.results == [1.0, 0.0]
    assert "seat 1 (sleepy) lost on time" in result.error and "0.4" in result.error
    assert result.plies == 5      # 3 moves of 0.15 s do not fit in 0.4 s


class Limits(Watcher):
    def __init__(self):
        self.limits = []

    def move_started(self, seat, limit):
        self.limits.append((seat, limit))


def test_a_watchdog_is_told_how_long_each_move_may_take():
    watcher = Limits()
    play(get_game("lotus").new(players=2),
         [make_agent("t_sleepy:sleep=0.01", 1), make_agent("random", 2)], chance_rng=Rng(1),
         clocks=[TimeControl(1.0), None], time_limits=[0.5, 0.2], watcher=watcher, max_plies=6)
    assert [s for s, _ in watcher.limits] == [0, 1] * 3
    first = [limit for s, limit in watcher.limits if s == 0]
    assert first == [0.5, 0.5, 0.5]           # the per-move limit is less than the clock
    assert {limit for s, limit in watcher.limits if s == 1} == {0.2}
    watcher = Limits()
    play(get_game("lotus").new(players=2),
         [make_agent("t_sleepy:sleep=0.01", 1), make_agent("random", 2)], chance_rng=Rng(1),
         clocks=[TimeControl(0.1), None], watcher=watcher, max_plies=6)
    first = [limit for s, limit in watcher.limits if s == 0]
    assert first[0] == 0.1 and first[1] == pytest.approx(0.09, abs=0.005) and first[2] < first[1]
    assert {limit for s, limit in watcher.limits if s == 1} == {None}


def test_a_game_without_forfeit_ends_normally():
    state = get_game("lotus").new(players=2)
    result = play(state, [make_agent("random", 1), make_agent("random", 2)], chance_rng=Rng(1))
    assert result.termination == "normal"
    capped = play(get_game("lotus").new(players=2),
                  [make_agent("random", 1), make_agent("random", 2)], chance_rng=Rng(1),
                  max_plies=4)
    assert capped.termination == "capped"


# ---- tournaments ---------------------------------------------------------------------------
def test_tc_gives_every_agent_a_clock_and_a_spec_s_own_tc_overrides_it():
    config, _ = make_config("lotus", ["random", "mcts:tc=3+0.1,iters=20"], games=2,
                            time_control="1+0.05")
    task = build_schedule(config)[0]
    # the agents never see tc=, and get their spec parsed once, as a value
    assert task.specs == (AgentSpec.parse("random"), AgentSpec.parse("mcts:iters=20"))
    assert task.labels == ("random", "mcts:tc=3+0.1,iters=20")
    assert task.time_controls == (TimeControl(1.0, 0.05), TimeControl(3.0, 0.1))
    assert task.time_limits == (None, None)   # the clock is the limit (see move_limit)
    plain, _ = make_config("lotus", ["random", "random"], games=2)
    assert build_schedule(plain)[0].time_controls == ()
    with pytest.raises(NiwaError, match="bad time control"):
        make_config("lotus", ["random", "random"], games=2, time_control="abc")
    with pytest.raises(NiwaError, match="bad time control"):
        make_config("lotus", ["random", "random:tc=-1"], games=2)


def test_the_slow_agent_loses_on_time_in_a_tournament(tmp_path):
    config, _ = make_config("lotus", ["random", "t_sleepy:sleep=0.12"], games=2,
                            time_control="0.3+0")
    outcome = run_tournament(config, str(tmp_path), LocalExecutor(1), progress=False)
    games = pd.read_csv(tmp_path / "games.csv", dtype=str, keep_default_na=False)
    assert list(games["termination"]) == ["time", "time"]
    for _, row in games.iterrows():
        slow = [s for s in (0, 1) if row[f"agent_{s}"].startswith("t_sleepy")][0]
        assert row["error_seat"] == str(slow) and "lost on time" in row["error"]
        assert row[f"result_{slow}"] == "0.0" and row[f"place_{slow}"] == "2.0"
    meta = json.loads((tmp_path / "tournament.json").read_text())
    assert meta["config"]["time_control"] == "0.3" and meta["lost_on_time"] == 2
    assert meta["time_controls"] == {"random": "0.3", "t_sleepy:sleep=0.12": "0.3"}
    assert outcome.tables.standings["agent"].iloc[0] == "random"


def test_cli_tournament_with_tc_runs_and_resume_keeps_the_time_control(tmp_path):
    out = str(tmp_path / "t")
    runner = CliRunner()
    r = runner.invoke(main, ["tournament", "lotus", "--agents", "random", "mcts",
                             "--tc", "2+0.05", "--games", "2", "--workers", "1",
                             "--out", out, "--no-progress"])
    assert r.exit_code == 0, r.output
    games = pd.read_csv(f"{out}/games.csv", dtype=str, keep_default_na=False)
    assert set(games["termination"]) == {"normal"}
    # mcts paces itself: a game lasts about its 2 s + 0.05 s a move, never longer
    for _, row in games.iterrows():
        most = 2 + 0.05 * (int(row["plies"]) // 2 + 1)   # all its clock could ever hold
        assert 0.5 * most < float(row["duration_s"]) < most + 0.5
    meta = json.loads(open(f"{out}/tournament.json").read())
    assert meta["time_controls"] == {"random": "2+0.05", "mcts": "2+0.05"}
    r = runner.invoke(main, ["tournament", "--resume", "--out", out, "--tc", "1+0"])
    assert r.exit_code != 0 and "time_control" in r.output and "\n" not in r.output.strip()
    r = runner.invoke(main, ["tournament", "lotus", "-a", "random", "-a", "random",
                             "--tc", "nan+1", "--out", str(tmp_path / "u")])
    assert r.exit_code != 0 and "bad time control 'nan+1'" in r.output


def test_logs_written_before_the_new_columns_still_resume(tmp_path):
    config, _ = make_config("lotus", ["random", "random"], games=4)
    old = [c for c in csv_columns(2) if c != "termination" and not c.startswith(("place_",
                                                                               "points_"))]
    row = {k: v for k, v in play_task(build_schedule(config)[0]).items() if k in old}
    path = tmp_path / "games.csv"
    pd.DataFrame([row], columns=old).to_csv(path, index=False)
    log = GameLog(str(path), csv_columns(2))
    log.close()
    upgraded = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert list(upgraded.columns) == [*csv_columns(2), "check"] and upgraded["termination"].iloc[0] == ""
    # a log of some other shape is still refused
    pd.DataFrame([row], columns=old).drop(columns="plies").to_csv(path, index=False)
    with pytest.raises(GameLogError, match="columns are not those of this run"):
        GameLog(str(path), csv_columns(2))
