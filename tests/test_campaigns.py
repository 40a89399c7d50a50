"""The campaign scripts in bench/ (not in the package: each test loads a run.py by path):
the variant questions' sweeps, their results folders, and tiny runs of the scripts whose
logic is theirs alone. The long campaigns themselves are not rerun here."""

import importlib.util
import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from niwa.analysis.experiments.variants import parse_strengths, parse_vary

BENCH = Path(__file__).resolve().parents[1] / "bench"
ANSWERS = ("lotus-pro-rule", "haru-figures", "bonsai-seats", "calibration")
CAMPAIGNS = ("lotus-pro-rule", "haru-figures", "bonsai-seats", "calibration", "ladder",
             "best-agents", "perfect-play", "endgame-tables", "bonsai-solo", "eval-weights",
             "speed", "review-calibration", "audit")


def load(question: str, script: str = "run.py"):
    """bench/<question>/<script> as a module (`question` may be a sub-folder's path)."""
    name = "bench_" + question.replace("-", "_").replace("/", "_")
    if script != "run.py":
        name += "_" + Path(script).stem
    spec = importlib.util.spec_from_file_location(name, BENCH / question / script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module         # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_campaign_folder_has_its_script_readme_and_results():
    for q in CAMPAIGNS:
        folder = BENCH / q
        assert (folder / "run.py").is_file() and (folder / "README.md").is_file(), q
        assert any((folder / "results").iterdir()), q
    index = (BENCH / "README.md").read_text()
    assert all(f"{q}/" in index for q in CAMPAIGNS)


@pytest.mark.parametrize("question", CAMPAIGNS)
def test_every_script_loads_and_explains_itself(question, capsys):
    module = load(question)
    with pytest.raises(SystemExit) as e:
        module.main(["--help"])
    assert e.value.code == 0
    assert len(capsys.readouterr().out) > 200


@pytest.mark.parametrize("question", ANSWERS)
def test_every_question_is_a_valid_sweep(question):
    q = load(question).QUESTION
    parse_vary(list(q.vary), q.game)                 # keys and values the game accepts
    assert len(parse_strengths(list(q.strengths))) >= 2
    assert q.games >= 2 and q.rate_games >= 2
    assert q.top_games == 0 or q.top_games >= q.games      # 0: the top rung as the others


def test_lotus_top_rung_gets_a_three_point_interval():
    q = load("lotus-pro-rule").QUESTION
    assert 1.96 * (0.25 / q.top_games) ** 0.5 <= 0.030


def test_scale_multiplies_every_games_count_only():
    q = load("lotus-pro-rule").QUESTION
    big = q.scaled(10)
    assert (big.games, big.top_games, big.rate_games) == (10 * q.games, 10 * q.top_games,
                                                          10 * q.rate_games)
    assert (big.vary, big.strengths, big.proof_time) == (q.vary, q.strengths, q.proof_time)
    with pytest.raises(ValueError, match="at least 1"):
        q.scaled(0)


def test_dry_run_prints_the_plan_and_bad_options_exit_2(capsys, tmp_path):
    run = load("haru-figures")
    assert run.main(["--dry-run", "--scale", "10", "--runs", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "1000 games per variant (4000 at the top rung)" in err
    assert str(tmp_path / "x10") in err
    for bad in (["--scale", "0"], ["--games", "1"], ["--nosuch"]):
        with pytest.raises(SystemExit) as e:
            run.main(bad)
        assert e.value.code == 2


def test_copy_small_outputs_takes_the_small_files_only(tmp_path):
    campaign = _campaign_module()
    run, res = tmp_path / "run", tmp_path / "res"
    run.mkdir()
    for f in ("games.csv", "games.jsonl", "variants.csv", "report.md", "seat_win_rates.png",
              "analysis.json"):
        (run / f).write_text("x")
    assert campaign.copy_small_outputs(run, res) == ["analysis.json", "report.md",
                                                     "seat_win_rates.png", "variants.csv"]
    assert sorted(p.name for p in res.iterdir()) == ["analysis.json", "report.md",
                                                     "seat_win_rates.png", "variants.csv"]


def _campaign_module():
    sys.path.insert(0, str(BENCH))
    try:
        import campaign
    finally:
        sys.path.remove(str(BENCH))
    return campaign


def test_a_tiny_variant_question_runs_resumes_and_copies_its_tables(tmp_path):
    campaign = _campaign_module()
    # Haru: no exact results to prove, so the report costs nothing beyond the games
    tiny = campaign.Question("haru", ("figures=best,sum",), ("mcts:iters=5,10",), games=2,
                             top_games=4, rate_games=2, proof_time=0,
                             question="A tiny question?")
    script = tmp_path / "q" / "run.py"          # results/ and runs/ go beside the script
    assert campaign.answer_main(tiny, script, []) == 0
    variants = pd.read_csv(tmp_path / "q" / "results" / "variants.csv")
    assert set(variants["set_figures"]) == {"best", "sum"}
    assert sorted(variants["games"]) == [2, 2, 4, 4]         # the top rung gets top_games
    assert (tmp_path / "q" / "results" / "report.md").is_file()
    assert not (tmp_path / "q" / "results" / "games.csv").exists()
    log = tmp_path / "q" / "runs" / "published" / "games.csv"
    played = len(pd.read_csv(log))
    assert campaign.answer_main(tiny, script, []) == 0          # resumed: nothing to play
    assert len(pd.read_csv(log)) == played
    # a quick look goes to its own run folder and copies nothing unless told where
    assert campaign.answer_main(tiny, script, ["--games", "2", "--rate-games", "0"]) == 0
    assert (tmp_path / "q" / "runs" / "quick-2-0-0").is_dir()


@pytest.mark.parametrize("question", ANSWERS)
def test_every_question_rates_where_its_published_run_did(question):
    """The command of a published run reproduces it: a record that predates per-variant
    rating (no rate_under) was rated under the first variant only."""
    import json

    record = BENCH / question / "results" / "analysis.json"
    if not record.exists():         # (calibration ships its tables only: one variant)
        q = load(question).QUESTION
        assert len(parse_vary(list(q.vary), q.game)) == 1
        return
    saved = json.loads(record.read_text())["experiment"].get("rate_under", "first")
    assert load(question).QUESTION.rate_under == saved


def test_a_tiny_question_rates_under_the_first_variant_then_grows_into_each(tmp_path):
    import json

    campaign = _campaign_module()
    tiny = campaign.Question("haru", ("figures=best,sum",), ("mcts:iters=5,10",), games=2,
                             top_games=0, rate_games=2, proof_time=0,
                             question="A tiny question?", rate_under="first")
    script = tmp_path / "q" / "run.py"
    record = tmp_path / "q" / "runs" / "published" / "analysis.json"

    def rating_cells():
        return [c["label"] for c in json.loads(record.read_text())["cells"]
                if c["label"].startswith("rating")]

    assert campaign.answer_main(tiny, script, []) == 0
    assert len(rating_cells()) == 1
    assert json.loads(record.read_text())["experiment"]["rate_under"] == "first"
    played = len(pd.read_csv(record.parent / "games.csv"))
    assert campaign.answer_main(tiny, script, ["--rate-under", "each"]) == 0
    assert len(rating_cells()) == 2         # figures=sum's rating games added, none replayed
    assert len(pd.read_csv(record.parent / "games.csv")) == played + 2
    assert tiny.scaled(3).rate_under == "first"


@pytest.mark.slow
def test_a_published_question_runs_on_a_tiny_budget(tmp_path):
    run = load("haru-figures")
    out = tmp_path / "out"
    assert run.main(["--games", "2", "--rate-games", "2", "--runs", str(tmp_path / "runs"),
                     "--results", str(out)]) == 0
    variants = pd.read_csv(out / "variants.csv")
    assert set(variants["set_figures"]) == {"best", "sum"}


def test_best_agents_records_a_match_and_refuses_bad_specs(tmp_path, capsys):
    run = load("best-agents")
    results = tmp_path / "experiments.csv"
    args = ["match", "lotus", "greedy", "random", "--games", "2", "--runs",
            str(tmp_path / "runs"), "--results", str(results)]
    assert run.main(args) == 0
    assert run.main(args) == 0                  # resumed: the same two games, one more row
    rows = pd.read_csv(results)
    assert list(rows["games"]) == [2, 2] and rows["score"].between(0, 1).all()
    assert (rows["score_low"] <= rows["score"]).all()
    campaign = _campaign_module()
    assert campaign.guarded(run.main, ["match", "lotus", "nosuchagent", "random",
                                       "--runs", str(tmp_path / "bad")]) == 2
    assert capsys.readouterr().err.startswith("Error: ")


def test_perfect_play_proofs_agree_with_the_published_table(tmp_path):
    run = load("perfect-play")
    out = tmp_path / "proofs.csv"
    assert run.main(["proofs", "--only", "2:basic:optional", "2:pro:mandatory", "--tt-mb",
                     "16", "--time-limit", "60", "--out", str(out)]) == 0
    mine = pd.read_csv(out).set_index(["towers", "rule", "trampoline"])
    published = pd.read_csv(BENCH.parent / "docs" / "lotus-perfect-play.csv").set_index(
        ["towers", "rule", "trampoline"])
    assert list(mine["status"]) == ["proven", "proven"]
    for case in mine.index:
        assert mine.loc[case, "value_first_player"] == published.loc[case, "value_first_player"]


def test_the_published_table_names_each_shipped_certificate():
    """docs/lotus-perfect-play.csv's certificate columns are the shipped certificates'
    measured figures, and each certificate it names is in the repository."""
    run = load("perfect-play")
    published = pd.read_csv(BENCH.parent / "docs" / "lotus-perfect-play.csv", dtype=str,
                            keep_default_na=False)
    rows = {run.case_key(r.towers, r.rule, r.trampoline): r for r in published.itertuples()}
    shipped = run.certificate_columns()
    assert {"3:pro:optional", "4:basic:optional", "4:pro:mandatory"} <= set(shipped)
    for key, columns in shipped.items():
        row = rows[key]
        assert row.status.startswith("proven") and row.value_first_player == "0"
        assert (BENCH.parent / columns["certificate"]).is_file()
        for name, value in columns.items():
            assert str(getattr(row, name)) == str(value), (key, name)
    assert int(rows["4:pro:mandatory"].certificate_positions) > 10**9
    assert all(not r.certificate for k, r in rows.items() if k not in shipped)


def test_perfect_play_commands_refuse_bad_input(capsys):
    run = load("perfect-play")
    with pytest.raises(SystemExit) as e:
        run.main(["nosuch"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        run.main(["seat", "--out", "x", "--games", "0"])
    assert e.value.code == 2


def test_perfect_play_paired_compares_two_seat_runs_game_by_game(tmp_path):
    run = load("perfect-play")

    def seat_run(name, results):
        folder = tmp_path / name
        folder.mkdir()
        rows = ["opponent,game,seat,result"] + [
            f"{opp},{g},1,{r}" for opp, rs in results.items() for g, r in enumerate(rs)]
        (folder / "games.csv").write_text("\n".join(rows) + "\n")
        return folder

    # 12 games: A alone wins 9, B alone wins 1, both win 2 -> McNemar on 9 of 10
    a = seat_run("a", {"x": [1.0] * 6, "y": [1.0] * 5 + [0.0]})
    b = seat_run("b", {"x": [1.0, 1.0] + [0.0] * 4, "y": [0.0] * 5 + [1.0]})
    out = tmp_path / "p.csv"
    assert run.main(["paired", "--case", "c", str(a), str(b), "--out", str(out)]) == 0
    rows = pd.read_csv(out).set_index("opponent")
    assert list(rows.index) == ["x", "y", "all"]
    total = rows.loc["all"]
    assert (total.games, total.wins_a, total.wins_b, total.only_a, total.only_b) == \
        (12, 11, 3, 9, 1)
    assert total.mcnemar_p == pytest.approx(22 / 1024, rel=1e-3)    # 2 * P(X >= 9 | 10, 1/2)
    assert out.with_suffix(".png").is_file()
    c = seat_run("c", {"x": [1.0] * 5})
    with pytest.raises(SystemExit, match="different games"):
        run.main(["paired", "--case", "c", str(a), str(c), "--out", str(out)])


def test_pro_rule_milestones_find_where_each_position_was_decided(tmp_path):
    """run.py milestones: the first job whose row has a position's pn (a win for player 0)
    or dn (a loss) at 0, with its share of the run's nodes."""
    history = tmp_path / "h.csv"
    history.write_text(
        "job,nodes,cpu_s,root_pn,root_dn,A pn,A dn,B pn,B dn,A x pn,A x dn\n"
        "1,10,1.0,5,7,3,4,2,3,1,2\n"
        "2,20,2.0,5,6,inf,0,2,3,inf,0\n"
        "3,40,4.0,5,4,inf,0,0,inf,inf,0\n"
        "4,80,8.0,5,4,inf,0,0,inf,inf,0\n")
    out = tmp_path / "m.csv"
    load("perfect-play/pro-rule", "run.py").main(
        ["milestones", f"c={history}", "--out", str(out)])
    rows = pd.read_csv(out)
    assert list(rows.line) == ["A", "A x", "B"] and list(rows.value_player0) == [0, 0, 1]
    assert list(rows.job) == [2, 2, 3]
    assert list(rows.share_of_nodes_so_far) == [0.25, 0.25, 0.5]
    assert not rows.root_decided.any()


def test_the_pro_rule_scripts_refuse_a_bad_job_range_in_one_line(capsys, tmp_path):
    campaign = _campaign_module()
    assert campaign.job_range("27022:") == (27022, None)
    assert campaign.job_range("5:9") == (5, 9)
    for script, argv in (("job_size.py", [str(tmp_path)]),
                         ("run.py", ["certification", str(tmp_path)])):
        main = load("perfect-play/pro-rule", script).main
        for bad in ("abc", "5:x", "9:5", "-1:", "7"):
            with pytest.raises(SystemExit) as e:
                main([*argv, f"--jobs={bad}"])
            assert e.value.code == 2
            assert "is not a range of job numbers" in capsys.readouterr().err


def test_eval_weights_tunes_a_published_run_on_a_tiny_budget(tmp_path):
    run = load("eval-weights")
    assert run.main(["tune", "haru", "--iterations", "2", "--runs", str(tmp_path / "runs"),
                     "--results", str(tmp_path / "res")]) == 0
    trajectory = pd.read_csv(tmp_path / "res" / "haru-tune-trajectory.csv")
    assert list(trajectory["iteration"]) == [0, 1]
    assert {"w_block", "w_make_near"} <= set(trajectory.columns)
    assert (tmp_path / "res" / "haru-tune.json").is_file()
    # without --results a shortened run leaves the published files alone
    assert run.main(["tune", "haru", "--iterations", "2", "--runs",
                     str(tmp_path / "runs")]) == 0


def tiny_pro_checkpoint(d: Path, jobs: int = 12) -> Path:
    """A two-level proof checkpoint of towers 2..1 under the pro rule after `jobs` tiny
    jobs (in this process), for the pro-rule campaign's scripts."""
    from niwa.ext.lotus import LotusState
    from niwa.solver.proof_tree import open_checkpoint

    tree = open_checkpoint(d, LotusState(towers=2, lane=1, shared=4, trampoline_at=3,
                                         rule="pro"), job_nodes=30, tt_mb=8)
    try:
        tree.run(max_jobs=jobs)
    finally:
        tree.close()
    return d


def test_certify_certifies_a_finished_proof_end_to_end_and_records_each_step(
        tmp_path, monkeypatch, capsys):
    """bench/perfect-play/pro-rule/certify.py on a finished towers 2..1 pro proof: the parts
    extracted, the whole checked with the reference rules, the book read off it, one
    measured row a step; a second run resumes from the parts already saved."""
    from niwa.solver.certificate import certificate_folder, check_certificate, load_certificate

    certify = load("perfect-play/pro-rule", "certify.py")
    monkeypatch.setattr(certify, "RESULTS", tmp_path / "certificates.csv")
    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=10_000)
    out = tmp_path / "cert"
    args = [str(d), "--name", "tiny", "--out", str(out), "--no-tables", "--tt-mb", "16",
            "--split", "1", "--processes", "2"]
    certify.main(args)
    rows = pd.read_csv(tmp_path / "certificates.csv")
    assert list(rows["step"]) == ["extract (2 processes)", "check (2 processes)", "book"]
    assert (rows["exit"] == 0).all() and (rows["wall_s"] > 0).all()
    assert rows["peak_rss_mb"].iloc[0] > 0 and rows["parts"].iloc[0] > 0
    cert = load_certificate(out / "tiny.npz")
    assert cert.parts and (out / "tiny-book.npz").exists()
    report = check_certificate(cert, parts=certificate_folder(out / "parts"))
    assert report.part_nodes > 0       # (check_certificate raises on anything wrong)
    def parts_made():
        return {p.name: p.stat().st_mtime_ns for p in (out / "parts").glob("part-*.npz")}

    made = parts_made()
    # the progress bar's total: the parts saved and those still to make (none left)
    import argparse

    done = argparse.Namespace(move=None, checkpoint=str(d), split=1)
    assert certify.expected_parts(done, out / "parts") == len(made)
    certify.main(args)          # again: every part is taken from the folder, none made anew
    assert parts_made() == made and len(pd.read_csv(tmp_path / "certificates.csv")) == 6
    assert "certified:" in capsys.readouterr().out


def test_certify_checks_a_decided_move_in_both_orientations_and_keeps_its_top(
        tmp_path, monkeypatch):
    """certify.py --move LINE: a position off the start (W1-a1, whose lane mirror is W1-b1)
    is extracted, checked as made and then mirrored into the same ledger, so that a later
    certification of the whole stops at it either way; --copy-to keeps the top (no book:
    a book starts at the start)."""
    from niwa.solver.certificate import CheckLedger, load_certificate

    certify = load("perfect-play/pro-rule", "certify.py")
    monkeypatch.setattr(certify, "RESULTS", tmp_path / "certificates.csv")
    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=10_000)
    out, kept, ledger = tmp_path / "cert", tmp_path / "repo", tmp_path / "ledger.jsonl"
    certify.main([str(d), "--name", "tiny-W1-a1", "--out", str(out), "--move", "W1-a1",
                  "--no-tables", "--tt-mb", "16", "--split", "1", "--ledger", str(ledger),
                  "--copy-to", str(kept)])
    rows = pd.read_csv(tmp_path / "certificates.csv")
    assert list(rows["step"]) == ["extract", "check", "check (mirror)"]
    assert (rows["exit"] == 0).all()
    cert = load_certificate(kept / "tiny-W1-a1.npz")
    assert "W1-a1" not in cert.root and cert.parts
    checked = CheckLedger(ledger).refresh().rows
    assert {(cert.sha256, False), (cert.sha256, True)} <= set(checked)
    assert not certify.own_mirror(cert.root)
    assert not (out / "tiny-W1-a1-book.npz").exists()


def test_certify_checks_parts_as_made_and_resumes_from_its_ledger_alone(
        tmp_path, monkeypatch):
    """certify.py --check-as-made --ledger L: each part is checked into L (in both
    orientations) beside the extraction; on a new machine (the output folder gone, L kept)
    no part is made again and the whole checks with its parts taken from L."""
    import shutil

    from niwa.solver.certificate import CheckLedger, load_certificate

    certify = load("perfect-play/pro-rule", "certify.py")
    monkeypatch.setattr(certify, "RESULTS", tmp_path / "certificates.csv")
    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=10_000)
    out, ledger = tmp_path / "cert", tmp_path / "kept" / "ledger.jsonl"
    args = [str(d), "--name", "tiny", "--out", str(out), "--no-tables", "--tt-mb", "16",
            "--split", "1", "--processes", "2", "--check-as-made", "--ledger", str(ledger),
            "--plies", "4", "--piece-plies", "4", "--checkers", "2",
            "--max-part-positions", "40", "--roll-ledger-mb", "0"]
    certify.main(args)
    # (rolled up at the end: the archive carries the ledger to the run below)
    assert (tmp_path / "kept" / "ledger.0001.jsonl.gz").exists()
    from niwa.solver.book import load_book

    book = load_book(out / "tiny-book.npz")     # through the parts' files
    full = dict(zip(book.keys.tolist(), book.actions.tolist(), strict=True))
    pieces = list((tmp_path / "kept" / "ledger-book-pieces").glob("*.npz"))
    assert pieces and book.info["pieces"] == len(pieces)
    rows = pd.read_csv(tmp_path / "certificates.csv")
    made = list((out / "parts").glob("part-*.npz"))
    # a row a part's check beside the parts, their sums (a row a checker) in the campaign's
    checks = pd.read_csv(out / "part-checks.csv")
    assert set(checks["step"]) == {"check part"}
    assert len(made) > 0 and len(checks) > 0 and (checks["exit"] == 0).all()
    sums = rows[rows["step"] == "check parts"]
    assert not rows["step"].str.startswith("check part ").any() and 1 <= len(sums) <= 2
    assert sums["positions"].sum() == checks["positions"].sum()
    assert sum(json.loads(f)["checks"] for f in sums["figures"]) == len(checks)
    # a piece for each part the 4-ply book can reach, none for those made deeper
    plies = {p.sha256[:16]: p.info["plies_from_top"] for p in map(load_certificate, made)}
    assert min(plies.values()) >= 1 and max(plies.values()) >= 4
    assert {p.stem for p in pieces} == {sha for sha, n in plies.items() if n < 4}
    # every part is checked as it is, and each other way a saved certificate meets it (at
    # its root's mirror: inside the check of the one that meets it so)
    in_ledger = CheckLedger(ledger).rows
    certs = [*map(load_certificate, made), load_certificate(out / "tiny.npz")]
    met = {(ref["sha256"], bool(ref.get("mirror"))) for c in certs for ref in c.parts}
    assert all((p.sha256, False) in in_ledger for p in certs)
    assert met <= set(in_ledger) and any(mirrored for _, mirrored in met)
    # the two checkers never check one part in one orientation twice
    assert not checks.duplicated(["sha256", "step"]).any()
    # (the parts left when the extraction ends are checked before the whole)
    assert "extract (2 processes)" in set(rows["step"])
    assert list(rows["step"])[-3:] == ["check (2 processes)", "book", "book + pieces"]
    whole = json.loads(rows["figures"].iloc[-3])
    # all checked as made at their roots; the whole's check checked only mirrors (a part
    # met mirrored is checked mirrored, and so are the parts it meets in turn)
    mirrored_lines = sum(mirrored for _, mirrored in in_ledger)
    assert whole["parts_from_ledger"] > 0
    assert whole["parts"] - whole["parts_from_ledger"] <= mirrored_lines
    top = load_certificate(out / "tiny.npz")
    assert (top.sha256, False) in CheckLedger(ledger).rows
    # the parts cut for --max-part-positions are kept beside the ledger
    cut = [p for p in map(load_certificate, made) if "cut_depth" in p.info]
    kept = [json.loads(line) for line in
            (tmp_path / "kept" / "ledger-cuts.jsonl").read_text().splitlines()]
    assert cut and len([row for row in kept if "bound" in row]) == len(cut)
    # and so are the plans of their tops and of the top's (both processes may plan it)
    planned = {row["root"] for row in kept if "plan" in row}
    assert planned == {p.root for p in cut} | {top.root}
    shutil.rmtree(out)
    certify.main(args)
    assert list((out / "parts").glob("part-*.npz")) == []
    rows = pd.read_csv(tmp_path / "certificates.csv")
    again = json.loads(rows["figures"].iloc[-3])
    assert again["parts_from_ledger"] == again["parts"] == whole["parts"]
    assert json.loads(rows["figures"].iloc[-2])["lines_cut"] >= 1
    # the book of the top alone stops at the parts; their pieces give back every entry
    kept_book = load_book(out / "tiny-book.npz")
    assert list(rows["step"])[-1] == "book + pieces"
    assert kept_book.info["top_book_entries"] < len(full)
    merged = dict(zip(kept_book.keys.tolist(), kept_book.actions.tolist(), strict=True))
    assert {k: merged.get(k) for k in full} == full


def test_check_stream_checks_the_same_parts_both_ways_and_writes_a_row_a_batch(tmp_path):
    """bench/perfect-play/pro-rule/check_stream.py: the same parts, as commands of --batch
    and through one `niwa proof check -`, side by side; a row a way and a batch."""
    from niwa.solver.certificate import certificate_from_checkpoint

    ab = load("perfect-play/pro-rule", "check_stream.py")
    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=10_000)
    parts = tmp_path / "parts"
    certificate_from_checkpoint(d, tt_mb=16, tables=None, split=2, parts_dir=parts)
    made = sorted(parts.glob("part-*.npz"), key=lambda p: p.stat().st_mtime)
    listed = tmp_path / "parts.txt"
    listed.write_text("".join(f"{p}\n" for p in made))
    out = tmp_path / "check-stream.csv"
    assert ab.main([str(listed), "--parts", str(parts), "--batch", "2", "--out",
                    str(out)]) == 0
    rows = pd.read_csv(out)
    batches = (len(made) + 1) // 2
    assert sorted(rows["way"].unique()) == ["commands", "stream"] and len(rows) == 2 * batches
    by_way = {way: group.sort_values("batch") for way, group in rows.groupby("way")}
    assert list(by_way["commands"]["positions"]) == list(by_way["stream"]["positions"])
    assert by_way["stream"]["parts"].sum() == len(made) and (rows["check_s"] >= 0).all()


def test_count_parts_foresees_the_parts_a_split_extraction_makes(tmp_path, capsys):
    """bench/perfect-play/pro-rule/count_parts.py: the parts a split certification of a
    finished proof will make, counted before (all to make) and after (all saved, met)."""
    from niwa.solver.certificate import certificate_from_checkpoint

    count = load("perfect-play/pro-rule", "count_parts.py")
    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=10_000)
    parts = tmp_path / "parts"
    before = count.count_parts(d, parts, 2)
    assert before["parts_to_make"] > 1 and before["saved_parts_met"] == 0
    certificate_from_checkpoint(d, tt_mb=16, tables=None, split=2, parts_dir=parts)
    made = len(list(parts.glob("part-*.npz")))
    after = count.count_parts(d, parts, 2)
    if before["winner_positions_not_decided_by_jobs"] == 0:     # (else a floor only)
        assert made == before["parts_to_make"]
    assert made >= before["parts_to_make"] and after["parts_to_make"] == 0
    # (a part met higher up, through a transposition, hides the parts below it)
    assert 0 < after["saved_parts_met"] <= made
    # the yardstick: the proven job nodes below the parts, none saved before, all after
    assert before["proven_job_nodes_below_parts"] == \
        after["proven_job_nodes_below_parts"] > 0
    assert (before["share_below_saved_parts"], after["share_below_saved_parts"]) == (0.0, 1.0)
    table = tmp_path / "parts.csv"
    assert count.main([str(d), "--parts", str(parts), "--split", "2", "--csv", str(table)]) == 0
    assert '"parts_to_make": 0' in capsys.readouterr().out
    rows = pd.read_csv(table)
    assert len(rows) == after["saved_parts_met"] and rows["saved"].all()
    assert rows["proven_job_nodes"].sum() == after["proven_job_nodes_below_parts"]
    assert (rows["job_nodes"] >= rows["proven_job_nodes"]).all()
    # the parts checked into a ledger count as saved once their files are gone
    import shutil

    from niwa.solver.certificate import certificate_folder, check_certificate, load_certificate

    ledger = tmp_path / "ledger.jsonl"
    for path in parts.glob("part-*.npz"):     # (both ways: a part known by its ledger alone
        for mirror in (False, True):          # is met only the ways it was checked)
            check_certificate(load_certificate(path), parts=certificate_folder(parts),
                              ledger=ledger, mirror=mirror)
    shutil.rmtree(parts)
    assert count.count_parts(d, parts, 2)["parts_to_make"] == before["parts_to_make"]
    assert count.count_parts(d, parts, 2, ledger) == after


def test_progress_sums_a_whole_certification_and_estimates_a_part_not_made(tmp_path,
                                                                           capsys):
    """bench/perfect-play/pro-rule/progress.py: with every part made, the estimate is the
    count (the top's positions and every part's, once); with a cut part and one of its
    parts not made, the cut part is taken from its plan and the missing part is estimated
    from its siblings; with no plan kept, a one-line error and status 2."""
    from niwa.solver.certificate import certificate_from_checkpoint, load_certificate

    prog = load("perfect-play/pro-rule", "progress.py")
    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=10_000)
    parts, cuts = tmp_path / "parts", tmp_path / "parts" / "cuts.jsonl"
    assert prog.guarded(prog.main, [str(d), "--parts", str(parts), "--cuts", str(cuts)]) == 2
    assert "holds no plan of the top" in capsys.readouterr().err
    certificate_from_checkpoint(d, tt_mb=16, tables=None, split=2, parts_dir=tmp_path / "u")
    bound = max(2, max(load_certificate(p).nodes for p in (tmp_path / "u").glob("*.npz")) // 4)
    top = certificate_from_checkpoint(d, tt_mb=16, tables=None, split=2, parts_dir=parts,
                                      max_part_positions=bound)
    made = {p: load_certificate(p) for p in parts.glob("part-*.npz")}
    whole = prog.progress(d, parts, cuts)
    assert whole["positions_placed_by_plans"] == whole["positions_saved"] == \
        sum(c.nodes for c in made.values())
    assert whole["estimated_total_positions"] == top.nodes + whole["positions_saved"] == \
        whole["estimated_total_with_planned_in_top_fill"]       # (nothing left to fill)
    assert whole["positions_saved_no_plan_reaches"] == 0
    from niwa.ext.registry import parse_position

    below_top = {parse_position(p["root"]).symmetric_hash() for p in top.parts}
    assert whole["top_parts"] == len(below_top) == whole["top_parts_by_state"]["saved"]
    # a cut part and the first part it stops at, not made yet
    cut = next(p for p, c in made.items() if "cut_depth" in c.info and len(c.parts) > 1)
    below = next(p for p, c in made.items() if c.sha256 == made[cut].parts[0]["sha256"])
    cut.unlink()
    below.unlink()
    table = tmp_path / "top.csv"
    assert prog.main([str(d), "--parts", str(parts), "--cuts", str(cuts), "--csv",
                      str(table)]) == 0
    partial = json.loads(capsys.readouterr().out)
    levels = partial["parts_by_level"]
    assert any(c.get("planned") for level, c in levels.items() if level != "0")
    assert any(c.get("unknown") for c in levels.values())
    assert partial["positions_placed_by_plans"] < whole["positions_placed_by_plans"]
    assert partial["estimated_total_positions"] > partial["positions_placed_by_plans"]
    rows = pd.read_csv(table)
    assert len(rows) == len(below_top) and set(rows["state"]) <= {"saved", "planned",
                                                                   "unknown"}


def test_the_scaling_model_replays_a_checkpoint_as_a_resume_does(tmp_path):
    """bench/perfect-play/pro-rule/model.py: the job log replayed through open_checkpoint
    (the same tree, of positions, a resume rebuilds), open leaves counted every N jobs,
    the schedule on N workers written to --csv; one worker's replay speed-up is 1."""
    from niwa.solver.proof_tree import open_checkpoint

    model = load("perfect-play/pro-rule", "model.py")
    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=40)
    resumed = open_checkpoint(d, read_only=True)
    try:
        expected = resumed.result()
    finally:
        resumed.close()
    jobs, result = model.replay(d, width_every=3)
    assert (result.value, result.jobs, result.nodes) == (expected.value, expected.jobs,
                                                         expected.nodes)
    assert len(jobs) == expected.jobs and all(width >= 1 for _cpu, _n, width in jobs)
    out = tmp_path / "scaling.csv"
    rows = model.main([str(d), "--workers", "1", "2", "4", "--inflation", "1.5",
                       "--csv", str(out), "--width-every", "3"])
    assert [r["workers"] for r in rows] == [1, 2, 4] and rows[0]["replay_speedup"] == 1.0
    assert all(r["replay_speedup"] <= r["workers"] for r in rows)
    table = pd.read_csv(out)
    assert list(table["inflation"]) == [1.0, 1.5, 2.25]
    assert (table["whole_proof_wall_h_low"] <= table["whole_proof_wall_h_high"]).all()


def test_the_dag_mode_sets_the_tree_numbers_beside_the_proof_set_numbers(tmp_path):
    """bench/perfect-play/pro-rule's `dag` mode: a checkpoint's top-tree numbers against
    proof-set numbers (niwa.solver.proof_sets), which are never above them."""
    run = load("perfect-play/pro-rule")
    d = tiny_pro_checkpoint(tmp_path / "cp")
    rows = run.double_counting(d, ["W1-a1", "W2-2"], "t")
    assert [r["line"] for r in rows] == ["W1-a1", "W2-2"] and rows[0]["jobs"] == 12
    for r in rows:
        assert 0 < r["set_pn"] <= r["tree_pn"] and 0 < r["set_dn"] <= r["tree_dn"]
        assert r["set_pn_leaves"] >= 1 and r["set_dn_leaves"] >= 1
        assert 0 <= r["same_choice_plies"] <= min(r["tree_line_plies"], r["set_line_plies"])
        parted = r["same_choice_plies"] < min(r["tree_line_plies"], r["set_line_plies"])
        assert (r["parting"] is not None) == parted
        if parted:      # the two choices there are two different children, each flagged once
            choices = [c["choice"] for c in r["parting"]["children"]]
            assert choices.count("sets ") == 1 and choices.count("tree") == 1
            assert r["parting"]["line"].startswith(r["line"])


@pytest.mark.parametrize("kind", ["optional", "mandatory"])
def test_the_published_stop_figures_are_the_shipped_checkpoints(kind):
    """The pro-rule README's state table (last row of each kind) and, while a proof is open,
    the README, results page and campaign README's figures agree with the checkpoint kept
    in the repository (its tree.json): the figures are copied by hand at each stop."""
    run = load("perfect-play/pro-rule")
    fig = run.stop_figures(BENCH / "perfect-play/pro-rule" / f"checkpoint-pro-{kind}")
    assert fig["kind"] == kind and run.figure_mismatches(fig) == []


def test_the_figures_check_finds_a_stale_figure(tmp_path, capsys):
    """figure_mismatches on copies of the documents with one figure changed: a stale state
    table cell and a stale phrase are each named."""
    run = load("perfect-play/pro-rule")
    here = "bench/perfect-play/pro-rule"
    ckpt = tmp_path / here / "checkpoint"
    ckpt.mkdir(parents=True)
    for name in ("tree.json", "meta.json"):
        (ckpt / name).write_text((BENCH / "perfect-play/pro-rule/checkpoint-pro-optional"
                                  / name).read_text())
    for doc in ("README.md", "docs/results/perfect-play.md", f"{here}/README.md"):
        (tmp_path / doc).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / doc).write_text((BENCH.parent / doc).read_text())
    assert run.figure_mismatches(run.stop_figures(ckpt), tmp_path) == []
    readme = tmp_path / here / "README.md"   # a later table naming the setting is not it
    readme.write_text(readme.read_text() + "\n| setting | x |\n|---|---|\n"
                      "| optional trampoline | 1 |\n")
    assert run.figure_mismatches(run.stop_figures(ckpt), tmp_path) == []
    tree = json.loads((ckpt / "tree.json").read_text())
    tree["jobs"] += 1
    tree["root_dn"] += 20_000
    (ckpt / "tree.json").write_text(json.dumps(tree))
    fig = run.stop_figures(ckpt)
    problems = run.figure_mismatches(fig, tmp_path)
    assert any(p.startswith("state table, optional:") and f"{tree['jobs']:,}" in p
               for p in problems)
    assert any(p.startswith("docs/results/perfect-play.md lacks") and "dn" in p
               for p in problems)
    assert run.decided_cell({"a": 0.0, "b": None, "c": 1.0, "d": 0.0}) == "3 of 4 (a = d = 0; c = 1)"
    assert run.state_cells(fig)[2] == f"{tree['jobs']:,}"
    with pytest.raises(SystemExit) as e:
        run.main(["figures", str(tmp_path)])
    assert e.value.code == 2 and "is not a proof checkpoint" in capsys.readouterr().err


def two_path_dag():
    """A top tree (root x, children a and b) where a leaf below a is reached along two
    paths: the tree's number counts it twice (6) and prefers b (5); the proof set counts
    it once (3)."""
    from niwa.solver.proof_tree import Node

    x = Node(1, (), None, 0, 1, 1, 0)
    a, b = Node(2, (0,), x, 1, 1, 6, 1), Node(3, (1,), x, 1, 1, 5, 1)
    p, q = Node(4, (0, 0), a, 0, 1, 3, 2), Node(5, (0, 1), a, 0, 1, 3, 2)
    shared = Node(6, (0, 0, 0), p, 1, 1, 3, 3)
    shared.parents.append(q)
    x.children, a.children, p.children, q.children = [a, b], [p, q], [shared], [shared]
    x.actions, a.actions, p.actions, q.actions = [0, 1], [0, 1], [0], [0]
    return x, a, b


class StandInMoves:
    """A stand-in state for run.py's move names: action a is the move "m<a>", 0..9 legal."""

    def __init__(self, line=()):
        self.line = tuple(line)

    def clone(self):
        return StandInMoves(self.line)

    def apply(self, a):
        self.line += (a,)

    def is_terminal(self):
        return False

    def legal_actions(self):
        return list(range(10))

    def action_to_string(self, a):
        return f"m{a}"


def test_the_parting_names_the_children_the_sets_and_the_tree_choose():
    """run.py's parting_choices on two_path_dag: the sets choose a (3 counted once), the
    tree b (5 against a's 6). Moves are named by the tree's key from the walk's own
    position: the shared leaf, listed under q's action 7 (the view of the path q was first
    reached by, say a lane mirror), is reached from this walk's q by m5."""
    from types import SimpleNamespace

    from niwa.solver.proof_sets import set_line

    run = load("perfect-play/pro-rule")
    x, a, b = two_path_dag()
    q, shared = a.children[1], a.children[1].children[0]
    q.actions = [7]
    nodes = {(): x, (0,): a, (1,): b, (0, 0): a.children[0], (0, 1): q, (0, 0, 0): shared,
             (0, 1, 5): shared}
    tree = SimpleNamespace(root_state=StandInMoves(), node_at=lambda line: nodes.get(tuple(line)))
    memo = {}
    by_set, by_tree = set_line(x, 1, memo)[1], run.numbers_line(x)[1]
    got = run.parting_choices(tree, "", x, by_set, by_tree, memo)
    assert got == {"line": "", "children": [
        {"move": "m0", "set": 3, "tree": 6, "choice": "sets "},
        {"move": "m1", "set": 5, "tree": 5, "choice": "tree"}]}
    assert run.move_name(tree, "m0 m1", shared) == "m5"
    assert run.walk_text(tree, "m0", [a, q, shared]) == "m0 m1 m5"


def test_steering_by_sets_takes_the_sets_choice_unless_the_last_is_within_one_plus_eps():
    """run.py's sets_steer_choice on two_path_dag: the sets' child a (3) where nothing was
    steered to before; b (5), steered to before, is kept while 5 <= (1 + eps) * 3 and left
    for a when eps is smaller; a decided b is not kept; no choice where the lines agree."""
    from niwa.solver.proof_tree import Node

    run = load("perfect-play/pro-rule")
    x, a, b = two_path_dag()
    assert run.sets_steer_choice(x, None, {})[1:] == (a, 3, 3, False)
    assert run.sets_steer_choice(x, b, {}, eps=1.0)[1:] == (b, 5, 3, True)
    assert run.sets_steer_choice(x, b, {}, eps=0.5)[1:] == (a, 3, 3, False)
    assert run.sets_steer_choice(x, a, {}, eps=0.0)[1:] == (a, 3, 3, True)
    c = Node(7, (2,), x, 1, 1, 4, 1)    # a third child the tree prefers (4)
    x.children.append(c)
    x.actions.append(2)
    assert run.sets_steer_choice(x, b, {}, eps=1.0)[1] is b
    b.dn = 0            # b decided: no work left in it to keep
    assert run.sets_steer_choice(x, b, {}, eps=1.0)[1:] == (a, 3, 3, False)
    c.dn = 9            # the tree now prefers a too: the lines agree, nothing to steer
    assert run.sets_steer_choice(x, None, {}) is None


def test_the_steer_mode_reads_a_checkpoint_and_writes_nothing_when_dry(tmp_path, capsys):
    """`run.py steer CHECKPOINT "" --dry` on an open towers 2..1 proof: one row of the base's
    numbers (counted once never above the tree's count), no CSV and no steering file."""
    run = load("perfect-play/pro-rule")
    d = tiny_pro_checkpoint(tmp_path / "cp")
    out = tmp_path / "steer.csv"
    run.main(["steer", str(d), "", "--dry", "--out", str(out)])
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["jobs"] == 12 and 0 < row["base_set_dn"] <= row["base_tree_dn"]
    assert not out.exists() and not list(d.glob("*.steer"))


def test_the_warmup_mode_cuts_the_log_into_sessions_and_parts(tmp_path):
    """bench/perfect-play/pro-rule's `warmup` mode: a job log cut into sessions where no job
    started for ten minutes, each cut into equal parts with the share of decided jobs;
    sessions too short to cut are left out."""
    run = load("perfect-play/pro-rule")

    def job(n, started, decided):
        return {"job": n, "started": started, "pn": 0 if decided else 5, "dn": 3, "cpu_s": 1.0}

    # a session of 10 jobs (decided: none of the first half, every one of the second),
    # an hour later one of 4 jobs, then one of 10 again, each job 5 s after the last
    log = [job(i, 5.0 * i, i >= 5) for i in range(10)]
    log += [job(10 + i, 3600.0 + 5 * i, True) for i in range(4)]
    log += [job(14 + i, 7200.0 + 5 * i, i % 2 == 0) for i in range(10)]
    rows = run.warm_up(list(reversed(log)), parts=2, min_jobs=5)
    assert [(r["first_job"], r["part"], r["jobs"], r["decided"]) for r in rows] == \
        [(0, 1, 5, 0), (0, 2, 5, 5), (14, 1, 5, 3), (14, 2, 5, 2)]
    assert rows[1]["decided_share"] == 1.0 and rows[0]["session_jobs"] == 10
    assert [len(s) for s in run.sessions_of(log)] == [10, 4, 10]
    out = tmp_path / "warm-up.csv"
    d = tiny_pro_checkpoint(tmp_path / "cp")
    run.main(["warmup", str(d), "--out", str(out), "--parts", "2", "--min-jobs", "2"])
    assert out.with_suffix(".png").stat().st_size > 0 and out.read_text().startswith(
        "session_start_utc,")


def test_job_size_proves_sampled_undecided_jobs_again_with_one_larger_job(tmp_path):
    """bench/perfect-play/pro-rule/job_size.py: a sample of the jobs that did not decide
    their position, each proved again by one job of a larger budget, beside the top
    tree's jobs below it; a rerun skips the jobs already in the results."""
    from niwa.solver.proof_tree import read_rows

    job_size = load("perfect-play/pro-rule", "job_size.py")
    d = tiny_pro_checkpoint(tmp_path / "cp")
    undecided = job_size.undecided_jobs(read_rows(d), 0, None)
    assert undecided and all(0 < r["pn"] and 0 < r["dn"] for r in undecided)
    out = tmp_path / "job-size.csv"
    args = [str(d), "--sample", "3", "--budget", "100000", "--tt-mb", "8", "--out", str(out)]
    assert job_size.main(args) == 0
    rows = pd.read_csv(out)
    assert len(rows) == min(3, len(undecided))
    assert set(rows["job"]) <= {r["job"] for r in undecided}
    # towers 2..1 is small: 100,000 nodes decide every position, and the top tree has
    # spent at least the sampled job below each one it still holds
    assert rows["one_job_value"].isin([0.0, 1.0]).all()
    assert (rows["one_job_nodes"] <= 100000).all()
    assert (rows["tree_jobs_below"].dropna() >= 1).all()
    assert job_size.main(args) == 0 and len(pd.read_csv(out)) == len(rows)


def test_a_results_file_that_gains_columns_keeps_its_rows(tmp_path):
    """campaign.append_row: a CSV written before a campaign gained columns is rewritten
    once with the new header; one with columns the campaign does not write is refused."""
    import sys

    sys.path.insert(0, str(BENCH))
    from campaign import append_row

    out = tmp_path / "r.csv"
    append_row(out, {"a": 1, "b": 2}, ["a", "b"])
    append_row(out, {"a": 3, "b": 4, "c": 5}, ["a", "b", "c"])
    append_row(out, {"a": 6, "b": 7, "c": 8}, ["a", "b", "c"])
    assert out.read_text().splitlines() == ["a,b,c", "1,2,", "3,4,5", "6,7,8"]
    with pytest.raises(SystemExit, match="move it aside"):
        append_row(out, {"a": 9}, ["a"])
    assert out.read_text().splitlines()[-1] == "6,7,8"


def test_build_memory_builds_a_tiny_table_and_records_its_peaks(tmp_path):
    run = load("endgame-tables")
    code = run.main(["--dir", str(tmp_path), "--results", str(tmp_path / "res"), "--towers",
                     "2", "build-memory", "--stones", "1", "--workers", "2", "--label", "t"])
    assert code == 0
    row = pd.read_csv(tmp_path / "res" / "build-memory.csv").iloc[0]
    assert row["label"] == "t" and row["positions"] > 0 and row["peak_anon_mb"] > 0
    assert row["peak_anon_main_mb"] <= row["peak_anon_mb"]
    assert not (tmp_path / "build-memory-k1").exists()      # the scratch table is removed


def test_certify_winds_down_on_sigusr1_and_checks_only_what_is_made(
        tmp_path, monkeypatch, capsys):
    """certify.py before a machine goes: SIGUSR1 stops the extraction at once and the
    checkers still check every part already made into the ledger (in both orientations),
    then the script ends without the whole's check; --check-only does the same without
    starting an extraction."""
    import os
    import signal
    import threading
    import time

    from niwa.solver.certificate import CheckLedger, certificate_from_checkpoint, part_headers

    certify = load("perfect-play/pro-rule", "certify.py")
    monkeypatch.setattr(certify, "RESULTS", tmp_path / "certificates.csv")
    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=10_000)
    out = tmp_path / "cert"
    certificate_from_checkpoint(d, tt_mb=16, tables=None, split=1, parts_dir=out / "parts")
    made = part_headers(out / "parts")
    assert made
    real = certify.measured

    def slow_extraction(cmd, label="", count=None, total=None, started=None):
        if label.startswith("extract"):     # an extraction that would take a minute
            cmd = ["sleep", "60"]
            threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        return real(cmd, label, count, total, started)

    monkeypatch.setattr(certify, "measured", slow_extraction)
    args = [str(d), "--name", "tiny", "--out", str(out), "--no-tables", "--tt-mb", "16",
            "--split", "1", "--check-as-made", "--checkers", "2", "--ledger",
            str(tmp_path / "ledger.jsonl")]
    start = time.monotonic()
    certify.main(args)
    assert time.monotonic() - start < 30
    told = capsys.readouterr().out
    assert "every part in" in told and "--check-only" not in told
    assert signal.getsignal(signal.SIGUSR1) is signal.SIG_DFL     # (given back)
    rows = pd.read_csv(tmp_path / "certificates.csv")
    extract = rows[rows["step"] == "extract"]
    assert len(extract) == 1 and extract["exit"].iloc[0] != 0
    assert not (out / "tiny.npz").exists() and "check" not in set(rows["step"])
    checked = CheckLedger(tmp_path / "ledger.jsonl").rows
    assert all((h.sha256, False) in checked for h in made)
    # --check-only: a new ledger, no extraction row, the same parts checked
    before, before_parts = len(rows), len(pd.read_csv(out / "part-checks.csv"))
    certify.main([*args[:-1], str(tmp_path / "ledger2.jsonl"), "--check-only"])
    assert "again without --check-only" in capsys.readouterr().out
    assert set(pd.read_csv(tmp_path / "certificates.csv").iloc[before:]["step"]) == \
        {"check parts"}
    rows = pd.read_csv(out / "part-checks.csv").iloc[before_parts:]
    assert set(rows["step"]) <= {"check part", "check part (mirror)"} and len(rows) >= len(made)
    # each checker is one long-lived `niwa proof check -` (one leaf memo), a row a part
    streams = rows["command"].str.split(" <<< ").str[0]
    assert streams.nunique() <= 2 and (streams.str.contains("proof check -")).all()
    assert (rows["exit"] == 0).all() and (rows["peak_rss_mb"] > 0).all()
    checked_paths = [json.loads(f)["certificate"] for f in rows["figures"]]
    assert all(path in command
               for path, command in zip(checked_paths, rows["command"], strict=True))
    assert CheckLedger(tmp_path / "ledger2.jsonl").rows.keys() == checked.keys()
    with pytest.raises(SystemExit) as e:
        certify.main([a for a in args if a != "--check-as-made"] + ["--check-only"])
    assert e.value.code == 2


def test_certify_winding_down_checks_the_mirrors_below_cuts_left_open(tmp_path,
                                                                      monkeypatch):
    """certify.py's last look at a wind-down also checks, mirrored, each saved part below
    a cut top not saved yet (the run stopped before the cut was whole) that has no parts
    of its own, so that on another machine, its files gone, a walk of that top again
    makes only the top: every such part below it is in the ledger both ways, whichever
    way the plan meets it."""
    import shutil

    from niwa.solver.certificate import (
        CheckLedger,
        PartCuts,
        certificate_from_checkpoint,
        load_certificate,
        parse_reference_position,
    )

    certify = load("perfect-play/pro-rule", "certify.py")
    monkeypatch.setattr(certify, "RESULTS", tmp_path / "certificates.csv")
    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=10_000)
    out, cuts = tmp_path / "cert", tmp_path / "cuts.jsonl"
    parts = out / "parts"
    certificate_from_checkpoint(d, tt_mb=16, tables=None, split=1, parts_dir=parts,
                                max_part_positions=40, cuts=cuts)
    made = {p: load_certificate(p) for p in parts.glob("part-*.npz")}
    cut = [p for p, c in made.items() if "cut_depth" in c.info]
    assert cut
    for path in cut:        # cut tops not made yet: their plans are kept, their parts saved
        path.unlink()
    plans = PartCuts(cuts).plans()      # (the root's top is never a part file: open too)
    below = {f"part-{k:016x}.npz" for key, plan in plans.items()
             if not (parts / f"part-{key:016x}.npz").exists() for k in plan.children}
    ledger = tmp_path / "ledger.jsonl"
    certify.main([str(d), "--name", "tiny", "--out", str(out), "--no-tables", "--split", "1",
                  "--check-as-made", "--checkers", "1", "--ledger", str(ledger),
                  "--cuts", str(cuts), "--check-only"])
    checked = CheckLedger(ledger).rows
    two_way = [c for p, c in made.items() if p.name in below and p.exists() and
               parse_reference_position(c.root).mirrored().to_notation() != c.root]
    assert any(not c.parts for c in two_way)
    assert all((c.sha256, True) in checked for c in two_way if not c.parts)
    shutil.rmtree(parts)
    again = tmp_path / "again"
    certificate_from_checkpoint(d, tt_mb=16, tables=None, split=1, parts_dir=again,
                                max_part_positions=40, cuts=cuts, ledger=ledger)
    remade = {load_certificate(p).root for p in again.glob("part-*.npz")}
    # (a part with parts of its own is not checked mirrored at a wind-down, so one met
    # mirrored is made again, and so are its parts met mirrored below it: see
    # open_cut_mirrors)
    assert {made[p].root for p in cut} <= remade
    assert not remade & {c.root for c in two_way if not c.parts}


def test_certify_stops_the_extraction_when_a_part_is_refused(tmp_path, monkeypatch, capsys):
    """A part the checker refuses stops the certification at once, with the reason: the
    extraction no longer goes on making parts no checker takes."""
    import numpy as np
    from damaged_certificates import cut_one_reply

    from niwa.solver.certificate import certificate_from_checkpoint, load_certificate

    certify = load("perfect-play/pro-rule", "certify.py")
    monkeypatch.setattr(certify, "RESULTS", tmp_path / "certificates.csv")
    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=10_000)
    out = tmp_path / "cert"
    parts = out / "parts"
    certificate_from_checkpoint(d, tt_mb=16, tables=None, split=1, parts_dir=parts)
    # one part with a loser's reply cut out, saved under its own name
    path = next(p for p in sorted(parts.glob("part-*.npz"))
                if (c := load_certificate(p)) and np.any(np.diff(c.offsets) > 1))
    cut_one_reply(load_certificate(path)).save(path)
    with pytest.raises(SystemExit) as stop:
        certify.main([str(d), "--name", "tiny", "--out", str(out), "--no-tables",
                      "--split", "1", "--check-as-made", "--checkers", "1",
                      "--ledger", str(tmp_path / "ledger.jsonl")])
    assert f"check part {path} failed" in str(stop.value)
    assert "the extraction is stopped" in capsys.readouterr().err


def test_certify_stopped_at_any_moment_leaves_no_check_running(tmp_path):
    """certify.py killed (SIGTERM) while its checkers look for parts or check them: no
    `niwa proof check` outlives it (one did, started while the checker was looking)."""
    import os
    import signal
    import subprocess
    import time

    from niwa.solver.certificate import certificate_from_checkpoint

    d = tiny_pro_checkpoint(tmp_path / "cp", jobs=10_000)
    out = tmp_path / "cert"
    certificate_from_checkpoint(d, tt_mb=16, tables=None, split=1, parts_dir=out / "parts")
    script = Path(__file__).resolve().parents[1] / "bench/perfect-play/pro-rule/certify.py"

    def checks_alive() -> list[int]:
        found = []
        for pid in os.listdir("/proc"):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if pid.isdigit() and str(out).encode() in cmd and b"proof check" in cmd:
                found.append(int(pid))
        return found

    for k, delay in enumerate((1.5, 1.8, 2.5, 3.5)):
        ledger = tmp_path / f"ledger{k}.jsonl"
        proc = subprocess.Popen(
            [sys.executable, str(script), str(d), "--name", "tiny", "--out", str(out),
             "--no-tables", "--split", "1", "--check-as-made", "--check-only",
             "--checkers", "2", "--ledger", str(ledger),
             "--results", str(tmp_path / "certificates.csv")],
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(script.parent)})
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        time.sleep(0.5)
        alive = checks_alive()
        info = [Path(f"/proc/{p}/stat").read_text().split()[:8] for p in alive]
        assert alive == [], f"a check outlived certify.py (stopped after {delay} s): {info}"
