"""bench/answers.py: the README's variant questions as reruns (command building only)."""

import pytest

from niwa.analysis.bench import answers
from niwa.analysis.experiments.variants import parse_strengths, parse_vary


def option(args, name):
    return [args[i + 1] for i, a in enumerate(args) if a == name]


@pytest.mark.parametrize("name", sorted(answers.QUESTIONS))
def test_every_question_is_a_valid_resumable_sweep(name, tmp_path):
    q = answers.QUESTIONS[name]
    args = answers.analyse_args(name, tmp_path / name)
    assert args[:2] == ["analyse", q.game] and args[-1] == "--resume"
    assert option(args, "--out") == [str(tmp_path / name)]
    # the vary keys and the strengths are ones the game and the agents accept
    parse_vary(option(args, "--vary"), q.game)
    assert len(parse_strengths(option(args, "--strengths"))) >= 2
    assert option(args, "--games") == [str(q.games)]
    assert option(args, "--top-games") == [str(q.top_games)]


def test_scale_multiplies_every_games_count_and_passes_the_executor(tmp_path):
    base = answers.analyse_args("lotus-pro", tmp_path)
    big = answers.analyse_args("lotus-pro", tmp_path, scale=10,
                               executor="dask://sched:8786", workers=64)
    for name in ("--games", "--top-games", "--rate-games"):
        assert int(option(big, name)[0]) == 10 * int(option(base, name)[0])
    assert option(big, "--executor") == ["dask://sched:8786"]
    assert option(big, "--workers") == ["64"]
    # everything else (the experiment's identity) is the same
    assert option(big, "--strengths") == option(base, "--strengths")
    assert option(big, "--seed") == option(base, "--seed")
    assert answers.out_name("lotus-pro", 10) == "lotus-pro-x10"
    assert answers.out_name("lotus-pro", 1) == "lotus-pro"


def test_lotus_top_rung_gets_a_three_point_interval():
    q = answers.QUESTIONS["lotus-pro"]
    assert 1.96 * (0.25 / q.top_games) ** 0.5 <= 0.030


@pytest.mark.parametrize("name, scale, words", [("nosuch", 1, "unknown question"),
                                                ("lotus-pro", 0, "at least 1")])
def test_bad_question_or_scale(name, scale, words, tmp_path):
    with pytest.raises(ValueError, match=words):
        answers.analyse_args(name, tmp_path, scale=scale)


def test_copy_outputs_takes_the_small_files_only(tmp_path):
    run, res = tmp_path / "run", tmp_path / "res"
    run.mkdir()
    for f in ("games.csv", "games.jsonl", "variants.csv", "report.md", "seat_win_rates.png",
              "analysis.json"):
        (run / f).write_text("x")
    assert answers.copy_outputs(run, res) == ["analysis.json", "report.md",
                                              "seat_win_rates.png", "variants.csv"]
    assert sorted(p.name for p in res.iterdir()) == ["analysis.json", "report.md",
                                                     "seat_win_rates.png", "variants.csv"]


def test_dry_run_prints_the_command(capsys, tmp_path):
    assert answers.main(["haru-figures", "--dry-run", "--scale", "10", "--runs",
                         str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("niwa analyse haru") and "--games 1000" in err
    assert str(tmp_path / "haru-figures-x10") in err
    with pytest.raises(SystemExit):
        answers.main(["nosuch"])
