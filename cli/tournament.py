"""`niwa tournament`: fair, resumable, parallel bot-vs-bot play (see docs/tournament.md)."""

from __future__ import annotations

import shlex
import sys
import time

import click

from niwa.analysis.arena.schedule import MAX_GAME_ID, MAX_MOVE_SECONDS, MAX_PLIES
from niwa.cli.common import (
    SEED,
    AgentsCommand,
    Number,
    creatable_folder,
    given_on_command_line,
    progress_option,
    recorded_command,
    runner_options,
    user_errors,
    variant_option,
)


def register(main: click.Group) -> None:
    main.add_command(tournament_cmd)


@click.command("tournament", cls=AgentsCommand)
@click.argument("game", required=False)
@click.option("--agents", "-a", "agents", multiple=True, metavar="SPEC [SPEC ...]",
              help="Agent specs (`niwa agents` lists them), e.g. random mcts:iters=200. "
                   "Repeat a spec to field it twice.")
@click.option("--games", "-n", type=Number(int, 1, MAX_GAME_ID), default=None,
              help="Games per table (pairing), rounded up to whole rounds. Default 10 "
                   "(2000 with --sprt, which stops earlier).")
@click.option("--rounds", "-r", type=Number(int, 1, MAX_GAME_ID), default=None,
              help="Rounds; each plays every table once in every seat order on one deal.")
@click.option("--format", "fmt", type=click.Choice(["round-robin", "gauntlet"]),
              default="round-robin", show_default=True,
              help="gauntlet: the first agent against each of the others.")
@variant_option
@click.option("--players", type=Number(int, 1, 64), default=None,
              help="Players per game (a variant).")
@runner_options
@click.option("--seed", type=SEED, default=1, show_default=True,
              help="Tournament seed: fixes every deal, chance event and agent seed.")
@click.option("--out", "-o", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default: tournament-GAME-DATE-TIME).")
@click.option("--resume", is_flag=True,
              help="Finish the tournament recorded in --out (options default to the saved "
                   "ones; any given option must match), or grow it: a larger --games or "
                   "--rounds plays the games a fresh run of that size would add. With GAME "
                   "and --agents it starts the tournament if --out holds none yet, so one "
                   "command can be repeated until the run ends.")
@click.option("--trust-engines", is_flag=True,
              help="On --resume, start the engine agents (engine:cmd=...) that the saved "
                   "record names without their being typed again: only for a folder you "
                   "trust (it could name any command).")
@click.option("--sprt", default=None, metavar="elo0=0,elo1=10,alpha=0.05,beta=0.05",
              help="Two agents only: stop when the SPRT (first agent stronger?) decides.")
@click.option("--max-plies", type=Number(int, 1, MAX_PLIES), default=None,
              help="Stop a game after this many plies and score it a draw.")
@click.option("--move-time", type=Number(float, 0, MAX_MOVE_SECONDS, low_open=True),
              default=None,
              help="Seconds allowed per move; an agent over it forfeits the game.")
@click.option("--tc", "time_control", default=None, metavar="[MOVES/]SECONDS[+INC]",
              help="Clock for every agent, cutechess syntax: 60+0.5 (60 s a game, 0.5 s "
                   "added per move) or 40/60+0.5 (60 s per 40 moves). A spec's own tc= "
                   "(e.g. mcts:tc=2+0.05) overrides it; a flag that falls loses on time. "
                   "Searchers without time=/iters= pace themselves on it.")
@click.option("--time-margin", type=Number(float, 0, MAX_MOVE_SECONDS), default=0.5,
              show_default=True,
              help="Slack (s) over an agent's own time= budget before it forfeits.")
@click.option("--openings", default=None, metavar="FILE|suite:NAME|random:plies=N[,count=M][,order=...]",
              help="Start each round from an opening, played in every seat order (two "
                   "players: colours swapped): a FILE with one position or move list a "
                   "line, a suite shipped with niwa (suite:lotus; `niwa openings list`), "
                   "or random:plies=N (distinct random openings, seeded from --seed); "
                   "order=sequential|random. See docs/tournament.md.")
@click.option("--report-every", type=Number(int, 1, MAX_GAME_ID), default=10,
              show_default=True,
              help="Print a status block (Elo ± interval, LOS, draw ratio, pentanomial "
                   "counts, SPRT LLR) every N games, besides a line per finished game.")
@click.option("--quiet", "-q", is_flag=True,
              help="No per-game lines or status blocks (the final tables still print).")
@progress_option
@click.option("--on-bad-rows", type=click.Choice(["stop", "drop"]), default="stop",
              show_default=True,
              help="On --resume, a games.csv row that is corrupt or contradicts the "
                   "schedule: stop with its line number, or drop it and replay its game.")
@user_errors
def tournament_cmd(game, agents, games, rounds, fmt, variants, players, workers, executor,
                   seed, out_dir, resume, trust_engines, sprt, max_plies, move_time,
                   time_control, time_margin, openings, report_every, quiet, progress,
                   on_bad_rows):
    """Play agents against each other on GAME with fair seating and write the results.

    \b
    Example:
      niwa tournament lotus --agents random mcts:iters=200 greedy --games 20
    \b
    Output in --out: games.csv, games.jsonl (game records), standings.csv, pairs.csv,
    seats.csv, tournament.json and ratings.png. Each game is saved as soon as it ends;
    `--resume --out DIR` finishes an interrupted run with the same results as an
    uninterrupted one.
    """
    from niwa.analysis.arena.executors import make_executor
    from niwa.analysis.arena.tournament import (
        check_out_dir,
        resume_or_make_config,
        run_tournament,
    )
    from niwa.ext.registry import parse_variant_options

    given = {name for name in ("games", "rounds", "players", "fmt", "seed", "max_plies",
                               "move_time", "time_control", "time_margin", "sprt",
                               "openings")
             if given_on_command_line(name)}
    config, notes = resume_or_make_config(
        game, agents, given=given, out_dir=out_dir, resume=resume,
        trust_engines=trust_engines, variant=parse_variant_options(variants),
        players=players, fmt=fmt, games=games, rounds=rounds, seed=seed,
        max_plies=max_plies, move_time=move_time,
        time_margin=time_margin, sprt=sprt, time_control=time_control, openings=openings)
    out_dir = out_dir or f"tournament-{config.game}-{time.strftime('%Y%m%d-%H%M%S')}"
    check_out_dir(config, out_dir, resume)
    creatable_folder(out_dir)
    ex = make_executor(executor, workers)

    def header():       # once the folder's games are checked: a refused folder gets one line
        for note in notes:
            click.echo(note, err=True)
        click.echo(f"{config.game}: {', '.join(config.labels)}; {config.format}, seed "
                   f"{config.seed}; {ex.describe()} -> {out_dir}", err=True)

    command = recorded_command("tournament")
    try:
        outcome = run_tournament(config, out_dir, executor=ex, resume=resume,
                                 progress=progress, command=command,
                                 on_bad_rows=on_bad_rows,
                                 report=None if quiet else _live_line,
                                 report_every=report_every, on_start=header)
    except KeyboardInterrupt:
        click.echo(f"interrupted; finished games are saved. Resume with: niwa tournament "
                   f"--resume --out {shlex.quote(out_dir)}", err=True)
        sys.exit(130)
    for note in outcome.notes:
        click.echo(note, err=True)
    _report(outcome)


def _live_line(text: str) -> None:
    """A live report line on stdout, flushed at once (a log file or CI sees it as it
    happens); through tqdm, which clears its bar (on stderr) first and redraws it after."""
    from tqdm import tqdm

    tqdm.write(text, file=sys.stdout)
    sys.stdout.flush()


def _report(outcome) -> None:
    import pandas as pd

    tables = outcome.tables
    meta = outcome.meta
    if tables is None:
        click.echo("no games were played")
        return
    with pd.option_context("display.width", 200, "display.max_columns", 50):
        click.echo("")
        shown = tables.standings.astype(object).fillna("")
        shown.insert(0, "rank", range(1, len(shown) + 1))
        click.echo(shown.to_string(index=False))
        click.echo("")
        click.echo("head to head (row's W-D-L against column):")
        click.echo(tables.pairs.to_string(index=False))
    if len(outcome.config.labels) == 2:
        click.echo("\n" + _match_line(outcome.config.labels, tables))
    seat = ", ".join(f"seat {s}: {round(e, 1) + 0.0:+.1f}" for s, e in enumerate(tables.fit.seat_elo))
    click.echo(f"\nseat advantage (Elo, mean 0): {seat}")
    if tables.fit.extra.get("model") == "plackett-luce":
        click.echo("ratings from finishing order (Plackett-Luce; see docs/tournament.md)")
    if meta.get("forfeits"):
        on_time = f", {meta['lost_on_time']} on time" if meta.get("lost_on_time") else ""
        click.echo(f"forfeits: {meta['forfeits']}{on_time} (e.g. "
                   f"{meta['forfeit_examples'][0]})")
    if meta.get("capped"):
        click.echo(f"games stopped by --max-plies (scored as draws): {meta['capped']}")
    sprt = outcome.sprt
    if sprt:
        verdict = {"H1": f"H1 accepted: {sprt['tested']} is stronger (elo1={sprt['elo1']:g})",
                   "H0": f"H0 accepted: {sprt['tested']} is not stronger by elo1="
                         f"{sprt['elo1']:g} (elo0={sprt['elo0']:g})",
                   None: "undecided (schedule exhausted)"}[sprt["decision"]]
        click.echo(f"SPRT: llr {sprt['llr']:.2f} ({sprt['lower']:.2f}, {sprt['upper']:.2f}) "
                   f"after {sprt['pairs']} game pairs: {verdict}")
    click.echo(f"\n{meta['games_recorded']} games; wrote games.csv games.jsonl standings.csv pairs.csv "
               f"seats.csv tournament.json ratings.png in {outcome.out_dir}")


def _match_line(labels, tables) -> str:
    """The first agent against the second: the gap of their two ratings (the figures of
    the table and of the live reports) with its interval and LOS; then, labelled, the Elo
    difference fastchess prints, from the score alone (no seat advantage, no prior), which
    can differ from it."""
    from niwa.analysis.stats.match import match_summary

    a, b = (tables.labels.index(x) for x in labels[:2])
    elo = tables.fit.elo
    diff, half = tables.fit.difference(a, b)
    first = tables.standings.set_index("agent").loc[labels[0]]
    summary = match_summary(int(first["wins"]), int(first["draws"]), int(first["losses"]))
    score_alone = summary.line().split(", LOS")[0].removeprefix("Elo difference ")
    return (f"{labels[0]} vs {labels[1]}: Elo difference {diff:+.1f} ± {half:.1f} "
            f"({labels[0]} {elo[a]:+.1f} minus {labels[1]} {elo[b]:+.1f}, the ratings "
            f"above), LOS {100 * tables.fit.los(a, b):.1f}% (W-D-L {summary.wins}-"
            f"{summary.draws}-{summary.losses})\n"
            f"  from the score alone (as fastchess computes it: no seat advantage, no "
            f"prior): {score_alone}")
