"""What a cutechess/fastchess user expects of `niwa tournament`: opening suites played with
seats swapped, live reports on stdout, a finished run grown with --resume, clocks in
the records."""

import json
import os

import pandas as pd
import pytest
from click.testing import CliRunner

from niwa.analysis.arena.game_record import read_records
from niwa.analysis.arena.openings import OpeningSuite, load_suite, parse_openings
from niwa.analysis.arena.schedule import TournamentError
from niwa.cli.main import main


def tournament(*args):
    result = CliRunner().invoke(main, ["tournament", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def games(out):
    return pd.read_csv(os.path.join(out, "games.csv"), dtype=str, keep_default_na=False)


def records(out):
    with open(os.path.join(out, "games.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def without_timing(record):
    record = {k: v for k, v in record.items() if k != "date"}
    record["moves"] = [{k: v for k, v in m.items() if k not in ("time", "clock")}
                       for m in record["moves"]]
    return record


# ---- openings ---------------------------------------------------------------------
def test_random_openings_make_distinct_games_with_seats_swapped_whatever_the_workers(tmp_path):
    runs = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        tournament("lotus", "--agents", "greedy", "alphabeta:depth=2", "--openings",
                   "random:plies=6", "--games", 20, "--workers", workers, "--seed", 5,
                   "--quiet", "--out", out)
        runs[workers] = (games(out).drop(columns=["duration_s"]), records(out))
    rows, recs = runs[1]
    assert len(rows) == 20 and len(recs) == 20
    move_lists = {tuple(json.dumps(m["move"]) for m in r["moves"]) for r in recs}
    assert len(move_lists) == 20                      # no copies
    assert rows["opening"].tolist() == [str(k // 2 + 1) for k in range(20)]
    for k in range(0, 20, 2):                          # each opening, seats swapped
        a, b = rows.iloc[k], rows.iloc[k + 1]
        assert (a["agent_0"], a["agent_1"]) == (b["agent_1"], b["agent_0"])
        ra, rb = recs[k], recs[k + 1]
        assert ra["opening"] == rb["opening"] == {"id": k // 2 + 1, "plies": 6}
        assert ra["start"] == rb["start"] and ra["moves"][:6] == rb["moves"][:6]
        assert [m.get("time") for m in ra["moves"][:6]] == [None] * 6   # book moves
    openings = {tuple(json.dumps(m["move"]) for m in r["moves"][:6]) for r in recs}
    assert len(openings) == 10
    # the records replay (opening included) to their final positions and results
    assert len(read_records(str(tmp_path / "w1" / "games.jsonl"))) == 20
    pd.testing.assert_frame_equal(runs[1][0], runs[2][0])
    assert [without_timing(r) for r in recs] == [without_timing(r) for r in runs[2][1]]


def test_generated_suite_is_a_function_of_seed_and_index():
    spec = parse_openings("random:plies=4")
    a = OpeningSuite(spec, 7, "lotus", {})
    b = OpeningSuite(spec, 7, "lotus", {})
    assert [a.for_round(r) for r in range(12)] == [b.for_round(r) for r in range(12)]
    positions = {a.for_round(r).state().to_notation() for r in range(12)}
    assert len(positions) == 12
    assert OpeningSuite(spec, 8, "lotus", {}).for_round(0) != a.for_round(0)
    cycled = OpeningSuite(parse_openings("random:plies=4,count=3,order=random"), 7, "lotus", {})
    first_pass = sorted(cycled.for_round(r).id for r in range(3))
    assert first_pass == [1, 2, 3]                    # each opening once per pass


def test_opening_file_positions_and_move_lists(tmp_path):
    from niwa.ext.registry import get_game

    state = get_game("lotus").new(seed=0)
    first = state.action_to_string(state.legal_actions()[0])
    position = get_game("lotus").new(seed=0)
    position.apply(position.legal_actions()[1])
    path = tmp_path / "book.txt"
    path.write_text(f"# a comment\n{first}\n\n{position.to_notation()}\n")
    suite = load_suite(parse_openings(str(path)), "lotus", dict(state.variant))
    assert len(suite["lines"]) == 2
    book = OpeningSuite(suite, 1, "lotus", dict(state.variant))
    assert [m.move for m in book.opening(1).moves] == [first]
    assert book.opening(2).moves == () and book.opening(2).start == position.to_notation()
    assert [book.for_round(r).id for r in range(5)] == [1, 2, 1, 2, 1]
    out = tmp_path / "t"
    tournament("lotus", "--agents", "random", "greedy", "--openings", path, "--games", 4,
               "--workers", 1, "--quiet", "--out", out)
    assert games(out)["opening"].tolist() == ["1", "1", "2", "2"]
    recs = records(out)
    assert recs[0]["moves"][0]["move"] == first and recs[2]["start"] == position.to_notation()


@pytest.mark.parametrize("content,message", [
    ("", "no openings in it"),
    ("zz9\n", "line 1: move 1 ('zz9') is not legal"),
    ("haru\n", "line 1: the position is not one of this tournament's"),
])
def test_bad_opening_file_is_a_one_line_error(tmp_path, content, message):
    path = tmp_path / "book.txt"
    path.write_text(content)
    result = CliRunner().invoke(main, ["tournament", "lotus", "--agents", "random", "random",
                                       "--openings", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].startswith("Error: ")
    assert message in result.output


@pytest.mark.parametrize("text,message", [
    ("random", "give the number of plies"),
    ("random:plies=0", "plies must be a whole number"),
    ("random:plies=" + "9" * 5000, "plies must be a whole number"),
    ("random:plies=4,count=²", "count must be a whole number"),
    ("random:plies=4,order=shuffle", "order must be sequential or random"),
    ("random:plies=4,depth=2", "unknown option 'depth=2'"),
])
def test_bad_opening_spec(text, message):
    with pytest.raises(TournamentError, match=message):
        parse_openings(text)


# ---- live reports -----------------------------------------------------------------
def test_live_reports_a_line_per_game_and_status_blocks_on_stdout(tmp_path):
    """As a CI job runs it: stdout to a file (no terminal), the progress bar elsewhere."""
    import subprocess
    import sys

    log = tmp_path / "stdout.txt"
    with open(log, "w", encoding="utf-8") as f:
        subprocess.run([sys.executable, "-m", "niwa.cli.main", "tournament", "lotus",
                        "--agents", "greedy", "random", "--games", "60", "--openings",
                        "random:plies=2", "--report-every", "20", "--workers", "1",
                        "--out", str(tmp_path / "t")], stdout=f, stderr=subprocess.DEVNULL,
                       check=True, timeout=600)
    lines = log.read_text(encoding="utf-8").splitlines()
    game_lines = [x for x in lines if x.startswith("game ")]
    assert len(game_lines) == 60
    assert game_lines[0].startswith("game 1/60: greedy vs random ")
    assert " plies, opening 1" in game_lines[0]
    blocks = [k for k, x in enumerate(lines) if x.startswith("--- status after")]
    assert [lines[k].split()[3] for k in blocks] == ["20", "40", "60"]
    for k in blocks:        # one clearly labelled rating per agent, and no second one
        assert "one Elo per agent" in lines[k] and "mean 0" in lines[k]
        agents = lines[k + 1:k + 3]
        assert [x.split(":")[0] for x in agents] == ["1. greedy", "2. random"] or \
            [x.split(":")[0] for x in agents] == ["1. random", "2. greedy"]
        assert all(x.count("Elo ") == 1 and " ± " in x for x in agents)
        assert "LOS" in agents[0]
        block = lines[k:k + 6]
        assert not any("Elo difference" in x for x in block)
        assert block[3].startswith("draw ratio") and block[4].startswith("pentanomial")
    quiet = tournament("lotus", "--agents", "greedy", "random", "--games", 4, "--quiet",
                       "--workers", 1, "--out", tmp_path / "q")
    assert not [x for x in quiet.stdout.splitlines() if x.startswith(("game ", "---"))]


def test_sprt_status_shows_the_llr_before_the_end(tmp_path):
    result = tournament("lotus", "--agents", "greedy", "random", "--sprt",
                        "elo0=0,elo1=200", "--games", 400, "--report-every", 4,
                        "--workers", 1, "--out", tmp_path / "s")
    lines = result.stdout.splitlines()
    llr = [k for k, x in enumerate(lines) if x.startswith("SPRT: llr") and "game pairs" in x]
    final = max(k for k, x in enumerate(lines) if x.startswith("SPRT: llr"))
    assert llr and llr[0] < final
    assert "(-2.94, 2.94)" in lines[llr[0]]


def test_three_players_status_has_placements(tmp_path):
    result = tournament("lotus", "--agents", "greedy", "random", "random", "--players", 3,
                        "--games", 6, "--report-every", 6, "--workers", 1,
                        "--out", tmp_path / "p")
    lines = result.stdout.splitlines()
    head = next(k for k, x in enumerate(lines) if x.startswith("--- status after"))
    assert "one Plackett-Luce Elo per agent" in lines[head]
    block = lines[head + 1:head + 4]
    assert all(x.count("Elo ") == 1 and "avg place" in x for x in block)


# ---- growing a run ----------------------------------------------------------------
def test_resume_with_more_games_grows_a_finished_run_to_a_fresh_runs_result(tmp_path):
    common = ["--workers", 1, "--seed", 11, "--quiet", "--openings", "random:plies=2"]
    grown, fresh = tmp_path / "grown", tmp_path / "fresh"
    tournament("lotus", "--agents", "greedy", "random", "--games", 20, *common, "--out", grown)
    result = tournament("--resume", "--out", grown, "--games", 40,
                        "--workers", 1, "--quiet")
    meta = json.loads((grown / "tournament.json").read_text())
    assert meta["runs"][-1]["games_played"] == 20 and meta["games_recorded"] == 40
    tournament("lotus", "--agents", "greedy", "random", "--games", 40, *common, "--out", fresh)
    for name in ("standings.csv", "pairs.csv", "seats.csv"):
        assert (grown / name).read_text() == (fresh / name).read_text()
    pd.testing.assert_frame_equal(games(grown).drop(columns="duration_s"),
                                  games(fresh).drop(columns="duration_s"))
    assert "40 games" in result.stdout
    shrink = CliRunner().invoke(main, ["tournament", "--resume", "--out", str(grown),
                                       "--games", "10"])
    assert shrink.exit_code == 2 and "can add games" in shrink.output


# ---- clocks in the records --------------------------------------------------------
def test_records_hold_time_controls_and_clock_per_move(tmp_path):
    out = tmp_path / "c"
    tournament("lotus", "--agents", "greedy", "random:tc=30+0.5", "--tc", "60+1",
               "--games", 2, "--workers", 1, "--quiet", "--out", out)
    rec = records(out)[0]
    controls = {s["agent"]: s.get("time_control") for s in rec["seats"]}
    assert controls == {"greedy": "60+1", "random:tc=30+0.5": "30+0.5"}
    moves = [m for m in rec["moves"] if m["by"] in (0, 1)]
    assert moves and all(isinstance(m["clock"], float) and m["time"] >= 0 for m in moves)
    first = {m["by"]: m for m in reversed(moves)}     # each seat's first move
    by_seat = {k: controls[rec["seats"][k]["agent"]] for k in (0, 1)}
    for seat, move in first.items():
        base, inc = map(float, by_seat[seat].split("+"))
        assert move["clock"] == pytest.approx(base - move["time"] + inc, abs=1e-3)


def test_loss_on_time_says_what_the_time_control_is(tmp_path):
    from niwa.analysis.arena.clock import TimeControl

    assert TimeControl.parse("1").describe() == "1: 1 s for the game, no increment"
    assert TimeControl.parse("40/60+0.5").describe() == \
        "40/60+0.5: 60 s per 40 moves, + 0.5 s a move"


# ---- replay -----------------------------------------------------------------------
def test_replay_header_numbers_the_game_as_asked_and_marks_the_opening(tmp_path):
    out = tmp_path / "r"
    tournament("lotus", "--agents", "greedy", "random", "--games", 6, "--tc", "60",
               "--openings", "random:plies=2", "--workers", 1, "--quiet", "--out", out)
    r = CliRunner().invoke(main, ["replay", str(out / "games.jsonl"), "--game", "5"])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("game 5 (game_id 4, round 2, table 0, opening 3): lotus, ")
    moves = [x for x in r.stdout.splitlines() if x.startswith("     ")]
    assert moves[0].endswith("(opening)") and moves[1].endswith("(opening)")
    assert "clock" in moves[2] and not moves[2].endswith("(opening)")


@pytest.mark.parametrize("name,content,message", [
    ("games.csv", "game_id,round\n0,0\n", "the records are in"),
    ("notes.txt", "hello\n", "is not a file of game records"),
    ("blob.bin", b"\xff\xfe\x00\x81", "not UTF-8 text"),
])
def test_replay_of_a_file_that_is_not_records_is_one_line(tmp_path, name, content, message):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    r = CliRunner().invoke(main, ["replay", str(path)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1 and message in r.output


def test_growing_an_undecided_sprt_continues_it_to_a_fresh_runs_decision(tmp_path):
    common = ["--sprt", "elo0=0,elo1=200", "--workers", 1, "--quiet", "--seed", 3]
    grown, fresh = tmp_path / "grown", tmp_path / "fresh"
    tournament("lotus", "--agents", "greedy", "random", "--games", 4, *common, "--out", grown)
    before = json.loads((grown / "tournament.json").read_text())["sprt"]
    assert before["decision"] is None and before["pairs"] == 2
    tournament("--resume", "--out", grown, "--games", 400, "--workers", 1, "--quiet")
    tournament("lotus", "--agents", "greedy", "random", "--games", 400, *common, "--out", fresh)
    after = json.loads((grown / "tournament.json").read_text())
    assert after["sprt"]["pairs"] > 2 and after["sprt"]["decision"] is not None
    assert after["sprt"] == json.loads((fresh / "tournament.json").read_text())["sprt"]
    assert (grown / "games.csv").read_text().count("\n") == \
        (fresh / "games.csv").read_text().count("\n")


def test_tune_plays_each_deal_from_its_own_opening_with_seats_swapped(tmp_path):
    out = tmp_path / "tune"
    r = CliRunner().invoke(main, [
        "tune", "lotus", "--agent", "mcts:iters=3,c=4", "--param", "c=0.1:5",
        "--iterations", "2", "--games-per-iteration", "4", "--openings", "random:plies=4",
        "--workers", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = games(out)
    assert rows["opening"].tolist() == ["1", "1", "2", "2", "3", "3", "4", "4"]
    recs = records(out)
    assert [r["opening"]["id"] for r in recs] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert recs[0]["moves"][:4] == recs[1]["moves"][:4] != recs[2]["moves"][:4]


def test_analyse_plays_every_variant_from_openings(tmp_path):
    out = tmp_path / "a"
    r = CliRunner().invoke(main, [
        "analyse", "lotus", "--vary", "rule=basic,pro", "--agent", "greedy", "--games", "4",
        "--openings", "random:plies=4", "--workers", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = games(out)
    assert rows["opening"].tolist() == ["1", "1", "2", "2"] * 2
    recs = records(out)
    assert all(r["opening"]["plies"] == 4 for r in recs)
    assert len({tuple(json.dumps(m["move"]) for m in r["moves"]) for r in recs}) > 2
    again = CliRunner().invoke(main, ["analyse", "--resume", "--out", str(out),
                                      "--openings", "random:plies=5"])
    assert again.exit_code == 2 and "openings" in again.output


@pytest.mark.parametrize("opening,ok", [({"id": 1, "plies": 2}, True),
                                        ({"id": 1, "plies": 10**6}, False),
                                        ([1, 2], False)])
def test_a_records_opening_tag_is_validated(tmp_path, opening, ok):
    from niwa.analysis.arena.game_record import RecordError, parse_line

    out = tmp_path / "v"
    tournament("lotus", "--agents", "random", "random", "--games", 2, "--openings",
               "random:plies=2", "--workers", 1, "--quiet", "--out", out)
    record = records(out)[0]
    record["opening"] = opening
    if ok:
        assert parse_line(json.dumps(record)).opening == opening
    else:
        with pytest.raises(RecordError, match="opening plies"):
            parse_line(json.dumps(record))
