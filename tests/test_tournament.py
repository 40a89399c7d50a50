"""Tournaments: fair seating, seeds, worker-count invariance, forfeits, caps, SPRT, resume."""

import collections
import csv
import hashlib
import itertools
import os
import time

import pandas as pd
import pytest

from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.arena.game_record import RECORD_FIELD
from niwa.analysis.arena.games_csv import GameLog, csv_columns
from niwa.analysis.arena.games_csv import play_task as play_game
from niwa.analysis.arena.schedule import TournamentError, build_schedule, derive_seed
from niwa.analysis.arena.tournament import make_config, run_tournament
from niwa.ext.errors import NiwaError
from niwa.ext.registry import games
from niwa.solver.agents import REGISTRY, Agent, register_agent

# ---- test agents (registered in this process; forked pool workers inherit them) --------


class CrashAgent(Agent):
    """Plays randomly, then raises on its `at`-th move."""

    def step(self, state, player):
        self.moves = getattr(self, "moves", 0) + 1
        if self.moves >= self.params.get("at", 3):
            raise RuntimeError("boom\nsecond line is not recorded")
        return self.rng.choice(state.legal_actions(player))


class SlowAgent(Agent):
    def step(self, state, player):
        time.sleep(self.params.get("sleep", 0.05))
        return self.rng.choice(state.legal_actions(player))


class IllegalAgent(Agent):
    def step(self, state, player):
        return 10_000


class FlakyAgent(Agent):
    """Random, but crashes at its first move in most games: clearly weaker than random."""

    def step(self, state, player):
        if not hasattr(self, "fate"):
            self.fate = self.rng.random() < 0.7
        if self.fate:
            raise RuntimeError("flaky")
        return self.rng.choice(state.legal_actions(player))


register_agent("t_crash", CrashAgent, {"at": (int, 3, "move that crashes")}, "test")
register_agent("t_slow", SlowAgent, {"sleep": (float, 0.05, "seconds per move"),
                                     "time": (float, 0.0, "own budget")}, "test")
register_agent("t_illegal", IllegalAgent, {}, "test")
register_agent("t_flaky", FlakyAgent, {}, "test")

# a cheap real searcher when the solver offers one, else random (the API is the same)
SEARCHER = "mcts:iters=50" if "mcts" in REGISTRY else "random"


def strip_durations(path):
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    return df.drop(columns="duration_s")


def read_tables(out):
    return {name: open(os.path.join(out, name)).read()
            for name in ("standings.csv", "pairs.csv", "seats.csv")}


# ---- schedule ------------------------------------------------------------------------
def test_two_player_round_robin_swaps_seats_on_every_deal():
    config, notes = make_config("lotus", ["random", "random", "random"], games=4, seed=9)
    tasks = build_schedule(config)
    assert len(tasks) == 3 * 4 and config.rounds == 2
    assert [t.game_id for t in tasks] == list(range(12))
    by_pair = collections.Counter(t.seats for t in tasks)
    assert by_pair == {s: 2 for s in itertools.permutations(range(3), 2)}
    for first, second in zip(tasks[::2], tasks[1::2], strict=True):
        # consecutive games: the same deal, seats swapped
        assert first.deal_seed == second.deal_seed and first.seats == second.seats[::-1]
    # one deal per round, shared by every table of the round
    assert len({t.deal_seed for t in tasks if t.round == 0}) == 1
    assert tasks[0].deal_seed != tasks[-1].deal_seed
    assert len({s for t in tasks for s in t.agent_seeds}) == 24
    assert tasks[0].labels == ("random", "random#2")


def test_gauntlet_pairs_the_first_agent_with_each_other():
    config, _ = make_config("lotus", ["random"] * 4, fmt="gauntlet", games=2)
    tables = {frozenset(t.seats) for t in build_schedule(config)}
    assert tables == {frozenset({0, 1}), frozenset({0, 2}), frozenset({0, 3})}


@pytest.mark.parametrize("players", [3, 4])
def test_multiplayer_seating_is_balanced(players):
    config, notes = make_config("lotus", ["random"] * players, players=players, games=1)
    tasks = build_schedule(config)
    assert len(tasks) == {3: 6, 4: 24}[players]        # every permutation once
    assert "rounded up" in notes[0]
    seat_counts = collections.Counter((t.seats[s], s) for t in tasks for s in range(players))
    assert set(seat_counts.values()) == {len(tasks) // players}
    # each agent is followed in turn order by each other agent equally often
    follows = collections.Counter((t.seats[s], t.seats[(s + 1) % players])
                                  for t in tasks for s in range(players))
    assert len(follows) == players * (players - 1) and len(set(follows.values())) == 1


def test_seeds_are_pinned_and_independent_of_anything_but_seed_and_index():
    assert derive_seed(1, "deal", 0) == derive_seed(1, "deal", 0)
    assert derive_seed(1, "deal", 0) != derive_seed(2, "deal", 0)
    a, _ = make_config("lotus", ["random", "random"], games=6, seed=4)
    b, _ = make_config("lotus", ["random", "random"], games=6, seed=4)
    assert build_schedule(a) == build_schedule(b)


def test_derive_seed_value_is_stable():
    # BLAKE2b of "7:agent:3:1", first 8 bytes little-endian, shifted to 63 bits
    raw = int.from_bytes(hashlib.blake2b(b"7:agent:3:1", digest_size=8).digest(), "little")
    assert derive_seed(7, "agent", 3, 1) == raw >> 1


# ---- one game ------------------------------------------------------------------------
def test_play_game_is_deterministic_and_records_everything():
    config, _ = make_config("lotus", [SEARCHER, "random"], games=2, seed=3)
    task = build_schedule(config)[0]
    row = play_game(task)
    again = play_game(task)
    # (the game's record rides along for games.jsonl; its times and date vary)
    same = {k: v for k, v in row.items() if k not in ("duration_s", RECORD_FIELD)}
    assert same == {k: v for k, v in again.items() if k not in ("duration_s", RECORD_FIELD)}
    assert set(row) == set(csv_columns(2)) | {RECORD_FIELD}
    assert sorted([row["result_0"], row["result_1"]]) == ["0.0", "1.0"]
    assert row["plies"] > 0 and row["error"] == "" and row["capped"] == 0
    assert '"goal"' in row["scores"]          # the game's stats() per seat


def test_max_plies_cap_is_a_recorded_draw():
    config, _ = make_config("lotus", ["random", "random"], games=2, max_plies=7)
    row = play_game(build_schedule(config)[0])
    assert row["capped"] == 1 and row["plies"] == 7
    assert row["result_0"] == row["result_1"] == "0.5"


@pytest.mark.parametrize("spec,reason", [
    ("t_crash:at=2", "crashed: RuntimeError: boom"),
    ("t_illegal", "played an illegal action"),
])
def test_agent_failure_loses_the_game_with_the_reason(spec, reason):
    config, _ = make_config("lotus", ["random", spec], games=2)
    for task in build_schedule(config):
        row = play_game(task)
        bad = task.labels.index(spec)       # (task.specs holds the parsed values)
        assert row["error_seat"] == bad
        assert reason in row["error"] and "second line" not in row["error"]
        assert row[f"result_{bad}"] == "0.0" and row[f"result_{1 - bad}"] == "1.0"


def test_time_budget_overrun_forfeits():
    config, _ = make_config("lotus", ["random", "t_slow:sleep=0.05"], games=2, move_time=0.01)
    row = play_game(build_schedule(config)[0])
    assert "exceeded its time budget" in row["error"] and row["error_seat"] == 1
    # an agent's own time= budget plus the margin is its limit when --move-time is absent
    config, _ = make_config("lotus", ["random", "t_slow:sleep=0.03,time=0.01"], games=2,
                            time_margin=0.001)
    assert build_schedule(config)[0].time_limits == (None, pytest.approx(0.011))
    assert "exceeded" in play_game(build_schedule(config)[0])["error"]


# ---- whole tournaments -----------------------------------------------------------------
def test_results_do_not_depend_on_worker_count(tmp_path):
    config, _ = make_config("lotus", [SEARCHER, "random", "random"], games=6, seed=11)
    one = run_tournament(config, str(tmp_path / "one"), LocalExecutor(1), progress=False)
    two = run_tournament(config, str(tmp_path / "two"), LocalExecutor(2), progress=False)
    assert one.finished and two.finished and one.total == 18
    assert strip_durations(tmp_path / "one" / "games.csv").equals(
        strip_durations(tmp_path / "two" / "games.csv"))
    assert read_tables(tmp_path / "one") == read_tables(tmp_path / "two")
    for name in ("games.csv", "standings.csv", "pairs.csv", "seats.csv", "tournament.json",
                 "ratings.png"):
        assert (tmp_path / "two" / name).stat().st_size > 0


def test_tables_are_consistent_with_the_games(tmp_path):
    config, _ = make_config("lotus", ["random", "random", "t_crash:at=5"], games=4, seed=2)
    out = run_tournament(config, str(tmp_path), LocalExecutor(1), progress=False)
    st = out.tables.standings.set_index("agent")
    assert list(out.tables.standings.columns) == [
        "agent", "games", "wins", "draws", "losses", "score_pct", "rating", "rating_low",
        "rating_high", "los"]
    assert (st["games"] == 8).all()
    assert (st["wins"] + st["draws"] + st["losses"] == st["games"]).all()
    crash = st.loc["t_crash:at=5"]
    assert crash["losses"] == 8 and crash["score_pct"] == 0.0
    assert out.tables.standings["agent"].iloc[-1] == "t_crash:at=5"
    assert (st["rating_low"] < st["rating"]).all() and (st["rating"] < st["rating_high"]).all()
    assert out.meta["forfeits"] == 8 and "boom" in out.meta["forfeit_examples"][0]
    pairs = out.tables.pairs.set_index("agent")
    assert pairs.loc["random", "t_crash:at=5"] == "4-0-0"
    assert pairs.loc["t_crash:at=5", "random#2"] == "0-0-4"
    seats = out.tables.seats
    assert set(seats["seat"]) == {0, 1}
    assert (seats[seats.agent == "all"]["games"] == 12).all()
    games = pd.read_csv(tmp_path / "games.csv")
    assert list(games["game_id"]) == list(range(12))
    assert games["error"].notna().sum() == 8


def test_multiplayer_tournament(tmp_path):
    config, _ = make_config("lotus", ["random", "random", "random", "random"], players=3,
                            games=6)
    out = run_tournament(config, str(tmp_path), LocalExecutor(2), progress=False)
    assert out.total == 4 * 6
    games = pd.read_csv(tmp_path / "games.csv")
    assert {"agent_2", "result_2"} <= set(games.columns)
    assert (games[["result_0", "result_1", "result_2"]].sum(axis=1) == 1).all()
    assert len(out.tables.fit.seat_elo) == 3
    assert (out.tables.standings["games"] == 18).all()


def test_sprt_stops_early_on_a_clearly_stronger_agent(tmp_path):
    config, _ = make_config("lotus", ["random", "t_flaky"], games=400, seed=5,
                            sprt="elo0=0,elo1=50,alpha=0.05,beta=0.05")
    one = run_tournament(config, str(tmp_path / "a"), LocalExecutor(1), progress=False)
    assert one.sprt["decision"] == "H1" and one.sprt["llr"] >= one.sprt["upper"]
    n = one.meta["games_recorded"]
    assert n < 400 and n % 2 == 0 and n == 2 * one.sprt["pairs"]
    assert len(pd.read_csv(tmp_path / "a" / "games.csv")) == n
    # the stopping point (and so every table) does not depend on the worker count
    two = run_tournament(config, str(tmp_path / "b"), LocalExecutor(2), progress=False)
    assert two.meta["games_recorded"] == n
    assert read_tables(tmp_path / "a") == read_tables(tmp_path / "b")


def test_resume_finishes_a_partial_log_to_the_same_tables(tmp_path):
    config, _ = make_config("lotus", ["random", "random", "random"], games=10, seed=8)
    full = tmp_path / "full"
    run_tournament(config, str(full), LocalExecutor(1), progress=False)
    part = tmp_path / "part"
    part.mkdir()
    lines = (full / "games.csv").read_text().splitlines(keepends=True)
    # an interrupted log: a shuffled subset of games, then a half-written line
    kept = [lines[0]] + lines[1:][::3] + [lines[5][:17]]
    (part / "games.csv").write_text("".join(kept))
    (part / "tournament.json").write_text((full / "tournament.json").read_text())
    out = run_tournament(config, str(part), LocalExecutor(2), resume=True, progress=False)
    assert out.played_now == 30 - len(lines[1:][::3])
    assert strip_durations(part / "games.csv").equals(strip_durations(full / "games.csv"))
    assert read_tables(part) == read_tables(full)
    assert len(out.meta["runs"]) == 2


def test_resume_refuses_another_tournament_and_fresh_runs_refuse_old_dirs(tmp_path):
    config, _ = make_config("lotus", ["random", "random"], games=2)
    run_tournament(config, str(tmp_path), LocalExecutor(1), progress=False)
    with pytest.raises(TournamentError, match="already holds a tournament"):
        run_tournament(config, str(tmp_path), LocalExecutor(1), progress=False)
    other, _ = make_config("lotus", ["random", "random"], games=2, seed=99)
    with pytest.raises(TournamentError, match="different tournament: seed"):
        run_tournament(other, str(tmp_path), LocalExecutor(1), resume=True, progress=False)
    # --resume into a folder without a record starts it (a run killed before its first
    # write is finished by the same command)
    fresh = run_tournament(config, str(tmp_path / "empty"), LocalExecutor(1), resume=True,
                           progress=False)
    assert fresh.played_now == 2 and fresh.finished
    # resuming a finished tournament plays nothing and keeps the tables
    again = run_tournament(config, str(tmp_path), LocalExecutor(1), resume=True,
                           progress=False)
    assert again.played_now == 0 and again.finished


def test_game_log_drops_a_torn_last_line_and_duplicates(tmp_path):
    path = str(tmp_path / "games.csv")
    cols = csv_columns(2)
    log = GameLog(path, cols)
    row = {c: "" for c in cols} | {"game_id": 0, "agent_0": "a", "agent_1": "b",
                                   "result_0": "1.0", "result_1": "0.0", "plies": 3,
                                   "capped": 0}
    log.append(row)
    log.append(row)            # the same game twice is written once
    log.close()
    with open(path, "a") as f:
        f.write("1,0,0,lot")   # killed mid-write
    log = GameLog(path, cols)
    assert [r["game_id"] for r in log.read_rows()] == ["0"] and 1 not in log.done
    log.close()
    with open(path) as f:
        assert len(list(csv.reader(f))) == 2


@pytest.mark.parametrize("kwargs,message", [
    (dict(game="lotus", agents=["random", "random"], players=5), "players=5"),
    (dict(game="chess", agents=["random", "random"]), "unknown game"),
    (dict(game="lotus", agents=["random", "nope"]), "unknown agent 'nope'"),
    (dict(game="lotus", agents=["random", "random:depth=3"]), "no parameter 'depth'"),
    (dict(game="lotus", agents=["random"]), "at least 2 agents"),
    (dict(game="lotus", agents=["random", "random"], players=3), "need at least 3 agents"),
    (dict(game="lotus", agents=["random", "random"], games=4, rounds=2), "not both"),
    (dict(game="lotus", agents=["random", "random"], games=0), "at least 1"),
    (dict(game="lotus", agents=["random"] * 3, sprt="elo1=5"), "two agents"),
    (dict(game="lotus", agents=["random"] * 2, fmt="swiss"), "unknown --format"),
    (dict(game="lotus", agents=["random", "human"]), "human agent cannot"),
    (dict(game="lotus", agents=["random"] * 2, variant={"rule": "x"}), "rule"),
])
def test_bad_options_are_one_line_niwa_errors(kwargs, message):
    game, agents = kwargs.pop("game"), kwargs.pop("agents")
    with pytest.raises(NiwaError, match=message) as info:
        make_config(game, agents, **kwargs)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("game", games())
def test_three_agent_round_robin_on_every_game(game, tmp_path):
    """Chance nodes (deals, draws) and simultaneous choices go through the same runner."""
    config, _ = make_config(game, ["random", "random", "random"], games=2, seed=6)
    out = run_tournament(config, str(tmp_path), LocalExecutor(1), progress=False)
    assert out.finished and out.meta["forfeits"] == 0
    for name in ("games.csv", "standings.csv", "pairs.csv", "seats.csv", "tournament.json",
                 "ratings.png"):
        assert (tmp_path / name).stat().st_size > 0
    games_df = pd.read_csv(tmp_path / "games.csv")
    assert len(games_df) == 6 and (games_df["plies"] > 0).all()
    # seat-swapped pairs share a deal; replaying a game gives the same result
    row = play_game(build_schedule(config)[3])
    assert str(row["result_0"]) == str(games_df.loc[3, "result_0"])
