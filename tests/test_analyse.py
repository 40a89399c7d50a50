"""`niwa analyse` end to end: outputs, plots, report, resume, strength sweeps, errors."""

import dataclasses
import os

import pandas as pd
import pytest
from click.testing import CliRunner

from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.experiments import variants as va
from niwa.cli.main import main
from niwa.ext.registry import games as registered_games
from niwa.solver.agents import REGISTRY, RandomAgent, register_agent

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module", autouse=True)
def test_agent():
    register_agent("testrandom", RandomAgent, {"iters": (int, 1, "ignored")}, "test only")
    yield
    REGISTRY.pop("testrandom", None)


@pytest.fixture(scope="module", autouse=True)
def quick_exact_table():
    """Only the instantly solved set-up in the reports of these tests (the full table
    takes ~10 s of alpha-beta; its own test is below)."""
    from niwa.analysis.experiments import report

    saved = report.LOTUS_EXACT_SETUPS
    report.LOTUS_EXACT_SETUPS = [("standard", {}, 1)]
    yield
    report.LOTUS_EXACT_SETUPS = saved


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_png(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data.startswith(PNG_MAGIC) and len(data) > 5000, path


def comparable(df):
    """games.csv without the timing column (the only thing that may differ between runs)."""
    return df.drop(columns=["duration_s"]).sort_values("game_id").reset_index(drop=True)


@pytest.fixture(scope="module")
def pro_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("an") / "lotus-pro"
    r = run("analyse", "lotus", "--vary", "rule=basic,pro", "--games", 30, "--workers", 1,
            "--seed", 5, "--out", out)
    assert r.exit_code == 0, r.output
    return out, r


def test_every_output_is_written(pro_run):
    out, r = pro_run
    for name in ("games.csv", "variants.csv", "comparisons.csv", "report.md", "analysis.json"):
        assert os.path.getsize(out / name) > 0, name
    for name in ("seat_win_rates.png", "game_length.png"):
        assert_png(out / name)
    games = pd.read_csv(out / "games.csv")
    assert len(games) == 60 and sorted(games["cell"].unique()) == [0, 1]
    assert games["variant"].str.contains("rule=pro").sum() == 30
    variants = pd.read_csv(out / "variants.csv")
    assert variants["label"].tolist() == ["rule=basic", "rule=pro"]
    for col in ("win_0", "win_0_low", "win_0_high", "win_1", "first_player_advantage", "fpa_p",
                "balance", "plies_mean", "plies_q1", "plies_median", "plies_q3", "verdict"):
        assert col in variants.columns, col
    # every rate sits inside its interval and the seat shares add up
    assert ((variants["win_0_low"] <= variants["win_0"])
            & (variants["win_0"] <= variants["win_0_high"])).all()
    assert (variants["win_0"] + variants["win_1"]).round(9).eq(1).all()
    # the counts behind the table are the games' own results
    basic = games[games["cell"] == 0]
    assert variants.loc[0, "wins_0"] == (basic["result_0"] == 1.0).sum()
    # the answer comes first: the question of --vary, then its one-paragraph answer
    assert r.output.index("Does rule=pro change seat 0's win rate, compared with "
                          "rule=basic?") < r.output.index("60 games analysed")


def test_report_embeds_plots_and_tables(pro_run):
    out, _ = pro_run
    text = (out / "report.md").read_text()
    assert "niwa analyse lotus --vary rule=basic,pro" in text or "```" in text
    for needle in ("## Verdicts", "![win rate by seat](seat_win_rates.png)",
                   "![game length](game_length.png)", "| rule=basic | 30 |",
                   "## Between variants", "Fisher exact", "## Method", "Wilson"):
        assert needle in text, needle
    variants = pd.read_csv(out / "variants.csv")
    assert f"{100 * variants.loc[1, 'win_0']:.1f}%" in text


def test_parallel_run_gives_the_same_games(pro_run, tmp_path):
    out, _ = pro_run
    r = run("analyse", "lotus", "--vary", "rule=basic,pro", "--games", 30, "--workers", 2,
            "--seed", 5, "--out", tmp_path / "par")
    assert r.exit_code == 0, r.output
    pd.testing.assert_frame_equal(comparable(pd.read_csv(out / "games.csv")),
                                  comparable(pd.read_csv(tmp_path / "par" / "games.csv")))


class _InterruptAfter:
    """An executor that plays k games, then behaves as if Ctrl-C was pressed."""

    def __init__(self, k):
        self.k = k

    def describe(self):
        return "interrupting"

    def run(self, tasks):
        for i, row in enumerate(LocalExecutor(1).run(tasks)):
            if i == self.k:
                raise KeyboardInterrupt
            yield row


def test_resume_after_an_interruption_gives_the_uninterrupted_result(pro_run, tmp_path):
    out, _ = pro_run
    exp = va.Experiment("lotus", vary=[["rule", ["basic", "pro"]]], games=30, seed=5)
    cells, _ = va.plan_cells(exp)
    part = tmp_path / "part"
    with pytest.raises(KeyboardInterrupt):
        va.run_experiment(exp, cells, str(part), _InterruptAfter(37), progress=False)
    assert len(pd.read_csv(part / "games.csv")) == 37
    # a kill in the middle of a write leaves half a line: it is dropped and replayed
    with open(part / "games.csv", "a") as f:
        f.write("1000005,5,0,lotus,lane=3")
    # without --resume the folder is protected
    r = run("analyse", "lotus", "--vary", "rule=basic,pro", "--games", 30, "--seed", 5,
            "--out", part)
    assert r.exit_code == 2 and "--resume" in r.output
    r = run("analyse", "--resume", "--out", part, "--workers", 1)
    assert r.exit_code == 0, r.output
    pd.testing.assert_frame_equal(comparable(pd.read_csv(out / "games.csv")),
                                  comparable(pd.read_csv(part / "games.csv")))
    assert (part / "report.md").read_text().count("| rule=") >= 2


def test_resume_checks_identity_and_can_extend(pro_run, tmp_path):
    out, _ = pro_run
    r = run("analyse", "--resume", "--out", out, "--seed", 6)
    assert r.exit_code == 2 and "seed" in r.output and len(r.output.strip().splitlines()) == 1
    ext = tmp_path / "ext"
    r = run("analyse", "lotus", "--vary", "rule=basic,pro", "--games", 10, "--workers", 1,
            "--seed", 5, "--out", ext)
    assert r.exit_code == 0, r.output
    r = run("analyse", "--resume", "--out", ext, "--games", 30, "--workers", 1)
    assert r.exit_code == 0, r.output
    # the first 10 games of each variant were kept, the rest are those of a 30-game run
    pd.testing.assert_frame_equal(comparable(pd.read_csv(out / "games.csv")),
                                  comparable(pd.read_csv(ext / "games.csv")))


def test_exact_results_table_is_included(pro_run, tmp_path):
    out, _ = pro_run
    pd.DataFrame({"towers": [1, 2], "rule": ["basic", "basic"], "winner": ["seat 0", "seat 1"]}
                 ).to_csv(out / "exact.csv", index=False)
    r = run("analyse", "--resume", "--out", out, "--workers", 1)
    assert r.exit_code == 0, r.output
    text = (out / "report.md").read_text()
    assert "| towers | rule | winner |" in text and "| 2 | basic | seat 1 |" in text


def test_strength_sweep(tmp_path):
    out = tmp_path / "sweep"
    r = run("analyse", "lotus", "--vary", "rule=basic,pro", "--strengths",
            "testrandom:iters=1,10,100", "--games", 10, "--workers", 1, "--proof-time", 0,
            "--out", out)
    assert r.exit_code == 0, r.output
    assert_png(out / "advantage_vs_strength.png")
    variants = pd.read_csv(out / "variants.csv")
    assert len(variants) == 6 and variants["strength"].nunique() == 3
    trends = pd.read_csv(out / "strengths.csv")
    assert trends["variant"].tolist() == ["rule=basic", "rule=pro"]
    assert trends["weakest"].tolist() == ["testrandom:iters=1"] * 2
    comps = pd.read_csv(out / "comparisons.csv")
    assert len(comps) == 3            # pro vs basic at each strength
    text = (out / "report.md").read_text()
    assert "![advantage vs strength](advantage_vs_strength.png)" in text


def test_strength_ladder_with_elo_and_the_proven_value(tmp_path):
    """A tiny Lotus board the proof search decides at once: each strength gets an Elo from
    the rating games (weakest = 0), and the proven winner stands beside every rung."""
    from niwa.ext.lotus import LotusState
    from niwa.solver.proof import ProofSearch

    board = "lane=1 shared=3 trampoline_at=3 towers=1"
    out = tmp_path / "ladder"
    r = run("analyse", "lotus", *sum((["--vary", kv] for kv in board.split()), []),
            "--strengths", "random", "--strengths", "perfect:time=0.5", "--games", 10,
            "--rate-games", 10, "--workers", 1, "--out", out)
    assert r.exit_code == 0, r.output
    ladder = pd.read_csv(out / "strength_ladder.csv")
    assert ladder["strength"].tolist() == ["random", "perfect:time=0.5"]
    assert ladder.loc[0, "elo"] == 0 and ladder.loc[1, "elo"] > 0
    assert (ladder["elo_low"] <= ladder["elo"]).all() and (ladder["elo"] <= ladder["elo_high"]).all()
    state = LotusState(lane=1, shared=3, trampoline_at=3, towers=1)
    value = ProofSearch(tt_mb=16).solve(state, root_values=False, pv=False).value
    assert ladder["proven_seat0"].tolist() == [value, value]
    # perfect self-play reaches the proven result in every game
    assert ladder.loc[1, "seat0_rate"] == value
    assert "Perfect play: " in r.output and "rating: random vs perfect" not in r.output
    assert "proven with perfect play" in (out / "report.md").read_text()
    games = pd.read_csv(out / "games.csv")
    assert (games["cell"] == 2).sum() == 10         # the rating games, after both strengths
    assert "Seat balance along the strength ladder" in (out / "report.md").read_text()


def test_three_players_and_default_variant(tmp_path):
    r = run("analyse", "lotus", "--players", 3, "--games", 6, "--workers", 1,
            "--out", tmp_path / "p3")
    assert r.exit_code == 0, r.output
    variants = pd.read_csv(tmp_path / "p3" / "variants.csv")
    assert variants.loc[0, "label"] == "default" and variants.loc[0, "players"] == 3
    assert variants.loc[0, "fair_share"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("args, words", [
    (["lotus", "--vary", "rule"], "KEY=V1,V2"),
    (["lotus", "--vary", "colour=red,blue"], "no setting 'colour'"),
    (["lotus", "--vary", "rule=basic,ultra"], "rule='ultra'"),
    (["lotus", "--agent", "nosuch"], "unknown agent"),
    (["lotus", "--agent", "random", "--agents", "random", "random"], "not both"),
    (["lotus", "--agents", "random"], "at least two"),
    (["lotus", "--strengths", "random", "--agent", "random"], "--strengths"),
    (["lotus", "--games", "0"], "at least 1"),
    (["lotus", "--players", "7"], "players"),
    (["lotus", "--executor", "ftp://x"], "--executor"),
    (["lotus", "--workers", "0"], "--workers"),
    (["chess"], "unknown game"),
    ([], "missing GAME"),
    (["--resume"], "--out"),
])
def test_bad_input_is_one_line_with_exit_2(args, words, tmp_path):
    r = run("analyse", *args, "--out", tmp_path / "x") if "--resume" not in args \
        else run("analyse", *args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:") and words in lines[0], r.output
    assert not (tmp_path / "x" / "games.csv").exists()


def test_agents_lineup_takes_several_values(tmp_path):
    r = run("analyse", "lotus", "--agents", "random", "testrandom:iters=3", "--games", 4,
            "--workers", 1, "--out", tmp_path / "lineup")
    assert r.exit_code == 0, r.output
    games = pd.read_csv(tmp_path / "lineup" / "games.csv")
    assert set(games["agent_0"]) == {"random", "testrandom:iters=3"}


@pytest.mark.parametrize("game", [g for g in registered_games() if g != "lotus"])
def test_other_games_run_end_to_end(game, tmp_path):
    r = run("analyse", game, "--games", 4, "--workers", 1, "--out", tmp_path / game)
    assert r.exit_code == 0, r.output
    assert os.path.getsize(tmp_path / game / "report.md") > 0


# ---- solo games (Bonsai's solo mode) through a tiny stand-in game ----------------------
class _SoloState:
    """Three turns of 'add 0..9 points'; won at `level` when the total reaches 10 * level
    and three goal colours were claimed (always, here)."""

    num_players = 1

    def __init__(self, level, total=0, turn=0):
        self.level, self.total, self.turn = level, total, turn
        self.variant = {"players": 1, "solo_level": level}

    def current_player(self):
        return -4 if self.turn == 3 else 0

    def legal_actions(self, player=None):
        return list(range(10))

    def apply(self, action):
        self.total += action
        self.turn += 1

    def clone(self):
        return _SoloState(self.level, self.total, self.turn)

    def is_terminal(self):
        return self.turn == 3

    def returns(self):
        return [1.0 if self.total >= SOLO_THRESHOLDS[self.level] else 0.0]

    def stats(self):
        return {"scores": [self.total], "goals_claimed": [["brown.s", "green.m", "pink.l"]],
                "turns": self.turn}


SOLO_THRESHOLDS = {1: 10, 2: 20}


def test_solo_levels_end_to_end(tmp_path, monkeypatch):
    from niwa.ext import registry
    from niwa.ext.spec import GameSpec, Traits, VariantOption

    spec = GameSpec(
        name="solotest", title="Solo test",
        options=(VariantOption("players", (1,), 1, "players"),
                 VariantOption("solo_level", (1, 2), 1, "level")),
        traits=Traits(min_players=1, max_players=1, chance=False, simultaneous=False,
                      hidden_information=False, deals=False),
        create=lambda variant, seed: _SoloState(variant["solo_level"]),
        parse_notation=lambda text: None, max_game_length=lambda v: 3,
        num_distinct_actions=lambda v: 10, solo_thresholds=SOLO_THRESHOLDS)
    registry.register_game(spec)
    monkeypatch.setattr(registry, "_registered_here", {"solotest": spec})
    out = tmp_path / "solo"
    r = run("analyse", "solotest", "--vary", "solo_level=1,2", "--games", 200, "--workers", 1,
            "--out", out)
    assert r.exit_code == 0, r.output
    variants = pd.read_csv(out / "variants.csv")
    games = pd.read_csv(out / "games.csv")
    scores = games["scores"].map(lambda s: __import__("json").loads(s)["scores"][0])
    for cell, level in ((0, 1), (1, 2)):
        mine = scores[games["cell"] == cell]
        assert variants.loc[cell, "solo_win"] == pytest.approx((mine >= 10 * level).mean())
        assert variants.loc[cell, "reached_level_1"] == pytest.approx((mine >= 10).mean())
        assert variants.loc[cell, "reached_level_2"] == pytest.approx((mine >= 20).mean())
    assert variants.loc[1, "solo_win"] < variants.loc[0, "solo_win"]
    comps = pd.read_csv(out / "comparisons.csv")
    assert comps.loc[0, "test"] == "Fisher exact" and comps.loc[0, "p"] < 0.001
    text = (out / "report.md").read_text()
    assert "## Solo: share of games reaching each level" in text
    assert "the solo win rate is different (" in text


def test_small_lotus_exact_table_from_the_solver(tmp_path, monkeypatch):
    from niwa.analysis.experiments import report
    from niwa.solver.alphabeta import AlphaBeta

    monkeypatch.setattr(report, "LOTUS_EXACT_SETUPS", [
        ("lane 1, shared 4, trampoline 3", {"lane": 1, "shared": 4, "trampoline_at": 3}, 1),
        ("standard", {}, 1)])
    exp = va.Experiment("lotus", vary=[["rule", ["basic", "pro"]]], games=2)
    cells, _ = va.plan_cells(exp)
    table = report.exact_results(exp, str(tmp_path), cells)
    assert table.columns.tolist() == ["board", "towers", "rule=basic", "rule=pro"]
    # the same answer as the solver asked directly (towers 1..1: one stone each)
    from niwa.ext.lotus import LotusState

    r = AlphaBeta(2).search(LotusState(towers=1, lane=1, shared=4, trampoline_at=3,
                                       rule="pro"), depth=200)
    assert r.proven
    expected = "first player wins" if r.value > 0.5 else "second player wins"
    assert table.loc[0, "rule=pro"] == expected
    assert (tmp_path / "exact.csv").exists()        # cached for --resume


def test_top_games_gives_the_strongest_rung_more_games_and_resume_grows_it(tmp_path):
    out = tmp_path / "top"
    args = ["analyse", "lotus", "--vary", "rule=basic,pro", "--strengths",
            "testrandom:iters=1,10", "--games", 4, "--rate-games", 2, "--proof-time", 0,
            "--workers", 1, "--out", out]
    r = run(*args, "--top-games", 6)
    assert r.exit_code == 0, r.output
    per_cell = pd.read_csv(out / "games.csv")["cell"].value_counts().sort_index().tolist()
    assert per_cell == [4, 4, 6, 6, 2, 2]   # weak basic/pro, top basic/pro, rating basic/pro
    assert "6 at the strongest rung" in (out / "report.md").read_text()
    r = run("analyse", "--resume", "--out", out, "--top-games", 10, "--workers", 1)
    assert r.exit_code == 0, r.output
    games = pd.read_csv(out / "games.csv")
    assert games["cell"].value_counts().sort_index().tolist() == [4, 4, 10, 10, 2, 2]
    ladder = pd.read_csv(out / "strength_ladder.csv")
    assert ladder.groupby("rung")["games"].max().tolist() == [4, 10]
    # the same games as a run asked for 10 at the top from the start
    fresh = tmp_path / "fresh"
    r = run(*args[:-1], fresh, "--top-games", 10)
    assert r.exit_code == 0, r.output
    pd.testing.assert_frame_equal(comparable(games), comparable(pd.read_csv(fresh / "games.csv")))


@pytest.mark.parametrize("args", [
    ["lotus", "--top-games", 10],
    ["lotus", "--strengths", "random", "--top-games", 10],
    ["lotus", "--strengths", "random,testrandom", "--top-games", 0],
])
def test_top_games_needs_a_ladder(args, tmp_path):
    r = run("analyse", *args, "--out", tmp_path / "x")
    assert r.exit_code == 2 and "top-games" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1


def test_exact_table_says_the_proof_time_it_was_given(tmp_path, monkeypatch):
    from niwa.analysis.experiments import report

    monkeypatch.setattr(report, "LOTUS_EXACT_SETUPS", [("standard", {}, 4)])
    exp = va.Experiment("lotus", vary=[["rule", ["basic", "pro"]]], games=2)
    cells, _ = va.plan_cells(exp)
    table = report.exact_results(exp, str(tmp_path), cells, proof_time=0.01)
    assert table.loc[0, "rule=basic"] == "not proven in 0.01 s"
    assert report.exact_results(exp, str(tmp_path / "none"), cells, proof_time=0) is None


def test_report_answers_first_and_its_counts_add_up_to_games_csv(tmp_path):
    out = tmp_path / "counts"
    r = run("analyse", "lotus", "--vary", "rule=basic,pro", "--strengths", "mcts:iters=2,4",
            "--games", 4, "--rate-games", 6, "--proof-time", 0, "--margin", 8,
            "--workers", 1, "--out", out)
    assert r.exit_code == 0, r.output
    games = pd.read_csv(out / "games.csv")
    text = (out / "report.md").read_text()
    # 2 strengths x 2 variants x 4 self-play games + 6 rating games per variant, said
    # and tabled: every row of games.csv is in the table under its purpose
    assert len(games) == 28
    assert "games.csv holds 28 games: 16 self-play games analysed for the verdicts, 12 " \
           "rating games" in text
    assert "played under each variant: 6 under rule=basic, 6 under rule=pro" in text
    assert "| all |  | 28 | 28 |" in text
    table = [line.split(" | ") for line in text.split("## Games")[1].splitlines()
             if line.startswith(("| self-play", "| rating"))]
    per_cell = games["cell"].value_counts().sort_index().tolist()
    assert [int(row[3].strip(" |")) for row in table] == per_cell
    assert sum(row[0] == "| rating" for row in table) == 2
    order = [text.index(h) for h in ("## Answer", "## Set-up", "## Verdicts", "## Method",
                                     "## Appendix: run history")]
    assert order == sorted(order)
    assert text.startswith("# lotus: Does rule=pro change seat 0's win rate, compared "
                           "with rule=basic?")
    assert "margin +-8 points" in text and "Perfect play: not searched (--proof-time 0)" in text
    assert (out / "report.html").read_text().count("data:image/png;base64,") >= 3
    # a continuation goes to the appendix, and the counts follow the log
    r = run("analyse", "--resume", "--out", out, "--games", 6)
    assert r.exit_code == 0, r.output
    text = (out / "report.md").read_text()
    assert text.index("- Continued with `niwa analyse --resume") > text.index("## Appendix")
    assert f"games.csv holds {len(pd.read_csv(out / 'games.csv'))} games" in text


def test_shipped_answers_are_what_the_code_writes(tmp_path):
    """Every shipped answer (a folder under bench/ with analysis.json and variants.csv)
    rebuilt from its tables gives its report.md as shipped."""
    import glob
    import shutil

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folders = [os.path.dirname(p) for p in glob.glob(os.path.join(root, "bench", "**",
                                                                  "analysis.json"),
                                                     recursive=True)
               if os.path.exists(os.path.join(os.path.dirname(p), "variants.csv"))]
    assert len(folders) >= 3
    for i, folder in enumerate(folders):
        copy = tmp_path / f"answer{i}"     # campaign folders all name theirs results/
        shutil.copytree(folder, copy)
        va.rebuild_report(str(copy))
        shipped = open(os.path.join(folder, "report.md"), encoding="utf-8").read()
        assert (copy / "report.md").read_text() == shipped, folder
        assert shipped.index("## Answer") < shipped.index("## Verdicts")


def test_rating_games_under_each_variant_or_the_first_and_first_grows_into_each(tmp_path):
    """--rate-under first rates the rungs under the first variant only; resuming with
    --rate-under each adds the other variant's rating games and gives the games a run
    rated under each variant from the start plays; going back is refused in one line."""
    import json

    args = ["--vary", "rule=basic,pro", "--strengths", "testrandom:iters=1,10", "--games", 4,
            "--rate-games", 2, "--proof-time", 0, "--workers", 1]
    first = tmp_path / "first"
    r = run("analyse", "lotus", *args, "--rate-under", "first", "--out", first)
    assert r.exit_code == 0, r.output
    assert pd.read_csv(first / "games.csv")["cell"].value_counts().sort_index().tolist() \
        == [4, 4, 4, 4, 2]
    text = (first / "report.md").read_text()
    assert "played under rule=basic only, whose Elo stands for every variant" in text
    assert "from 2 rating games played under rule=basic only" in text
    ladder = pd.read_csv(first / "strength_ladder.csv")
    assert ladder.loc[ladder["variant"] == "rule=pro", "elo"].tolist() == \
        ladder.loc[ladder["variant"] == "rule=basic", "elo"].tolist()
    # a record written before --rate-under existed resumes as first-only
    meta = json.loads((first / "analysis.json").read_text())
    del meta["experiment"]["rate_under"]
    (first / "analysis.json").write_text(json.dumps(meta))
    r = run("analyse", "--resume", "--out", first, "--workers", 1)
    assert r.exit_code == 0, r.output
    assert len(pd.read_csv(first / "games.csv")) == 18
    # ... and grows into a run rated under each variant
    r = run("analyse", "--resume", "--out", first, "--rate-under", "each", "--workers", 1)
    assert r.exit_code == 0, r.output
    each = tmp_path / "each"
    r = run("analyse", "lotus", *args, "--out", each)
    assert r.exit_code == 0, r.output
    grown, fresh = pd.read_csv(first / "games.csv"), pd.read_csv(each / "games.csv")
    pd.testing.assert_frame_equal(comparable(grown), comparable(fresh))
    assert "under each variant: 2 under rule=basic, 2 under rule=pro" in \
        (first / "report.md").read_text()
    r = run("analyse", "--resume", "--out", first, "--rate-under", "first")
    assert r.exit_code == 2 and "cannot go back to --rate-under first" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1


def test_each_variant_gets_its_own_elo():
    """The rating games of each variant are fitted apart: a rung that wins every rating
    game under one rule and half under the other gets two different Elo."""
    exp = va.Experiment("lotus", vary=[["rule", ["basic", "pro"]]],
                        strengths=["random", "mcts:iters=10"], games=2, rate_games=20)
    all_cells, _ = va.plan_cells(exp)
    cells = [c for c in all_cells if not c.rating]
    rating = [c for c in all_cells if c.rating]
    assert [c.variant_label for c in rating] == ["rule=basic", "rule=pro"]
    rows = []
    for c in rating:
        for i in range(20):
            strong_first = i % 2 == 1
            strong_wins = c.variant_label == "rule=basic" or i % 4 < 2
            won_0 = strong_wins == strong_first
            rows.append({"cell": c.index, "agent_0": exp.strengths[strong_first],
                         "agent_1": exp.strengths[not strong_first], "error_seat": "",
                         "result_0": float(won_0), "result_1": float(not won_0)})
    elo = va.rungs_elo(exp, cells, pd.DataFrame(rows), rating)
    basic, pro = elo["rule=basic"]["elo"].iloc[1], elo["rule=pro"]["elo"].iloc[1]
    assert basic > 200 and abs(pro) < 1
    first = va.rungs_elo(dataclasses.replace(exp, rate_under="first"), cells,
                         pd.DataFrame(rows[:20]), rating[:1])
    assert first["rule=pro"] is first["rule=basic"]


def test_a_proof_that_does_not_finish_is_said_not_proven_in_its_time(tmp_path):
    out = tmp_path / "proof"
    r = run("analyse", "lotus", "--vary", "rule=basic,pro", "--strengths",
            "testrandom:iters=1,10", "--games", 2, "--rate-games", 2, "--proof-time", 0.05,
            "--workers", 1, "--out", out)
    assert r.exit_code == 0, r.output
    answer = (out / "report.md").read_text().split("## Set-up")[0]
    proven = pd.read_json(out / "proven.json", typ="series")
    assert proven.isna().any(), "the full game was proven in 0.05 s?"
    unproven = ", ".join(label for label, value in proven.items() if value != value)
    assert f"{unproven}: not proven in 0.05 s" in answer, answer
    assert "Perfect play:" in answer and "not decided" not in answer


@pytest.mark.parametrize("args, message", [
    (["lotus", "--rate-under", "first"], "give --strengths too"),
    (["lotus", "--strengths", "random,testrandom", "--rate-under", "some"], "rate-under"),
])
def test_rate_under_errors_are_one_line(args, message, tmp_path):
    r = run("analyse", *args, "--out", tmp_path / "x")
    assert r.exit_code == 2 and message in r.output, r.output
    errors = [line for line in r.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in r.output
