"""`niwa analyse`: rule-variant experiments with intervals, tests, plots and a report."""

from __future__ import annotations

import shlex
import sys
import time

import click

from niwa.cli.common import (
    SEED,
    AgentsCommand,
    Number,
    UserError,
    creatable_folder,
    given_on_command_line,
    recorded_command,
    runner_options,
    user_errors,
)

# experiments.variants.STRIDE (not imported here: it would load scipy for every command)
MAX_GAMES_PER_VARIANT = 1_000_000


def register(main: click.Group) -> None:
    main.add_command(analyse_cmd)


@click.command("analyse", cls=AgentsCommand)
@click.argument("game", required=False)
@click.option("--vary", "vary", multiple=True, metavar="KEY=V1,V2[,...]",
              help="A setting and the values to compare (repeatable: every combination is "
                   "played), e.g. --vary rule=basic,pro.")
@click.option("--house", "house", multiple=True, metavar="MODULE:CLASS",
              help="A house rule to analyse beside the compiled game: a subclass of the "
                   "game's plain-Python reference rules (MODULE on the Python path, or "
                   "FILE.py), compared as rules=CLASS vs rules=engine by the same agents "
                   "(repeatable; see docs/house-rules.md).")
@click.option("--agent", default=None, metavar="SPEC",
              help="Self-play: this agent in every seat (default random).")
@click.option("--agents", "agents", multiple=True, metavar="SPEC [SPEC ...]",
              help="A lineup instead of self-play: every table of these agents in every "
                   "seat order.")
@click.option("--strengths", multiple=True, metavar="NAME:KEY=V1,V2,...",
              help="Sweep self-play strength, e.g. mcts:iters=100,1000,10000 (repeatable; "
                   "weakest first).")
@click.option("--rate-games", type=Number(int, 0, MAX_GAMES_PER_VARIANT), default=None,
              help="With --strengths: games between each strength and the next (seats "
                   "swapped), to measure each strength's Elo; 0 = none.  [default: half of "
                   "--games, at least 20]")
@click.option("--rate-under", type=click.Choice(["each", "first"]), default=None,
              help="With --strengths: play the rating games under each two-player variant, "
                   "so that every variant has its own Elo per rung (costs --rate-games x "
                   "(strengths - 1) games per variant), or under the first variant only, "
                   "whose Elo then stands for every variant. --resume may turn first into "
                   "each.  [default: each; the saved one on --resume]")
@click.option("--proof-time", type=Number(float, 0, 3600), default=10.0, show_default=True,
              help="With --strengths: seconds the df-pn proof search gets to decide each "
                   "two-player variant, to show perfect play's result beside the rungs; 0 = "
                   "do not try.")
@click.option("--margin", type=Number(float, 0.1, 50, unit="points"), default=5.0, show_default=True,
              help="Points of seat-0 win rate within which two variants (or two rungs, or "
                   "a seat and its fair share) count as the same: a verdict says "
                   "\"equivalent\" only when the whole 95% interval lies inside +-margin.")
@click.option("--games", "-n", type=Number(int, 1, MAX_GAMES_PER_VARIANT), default=1000, show_default=True,
              help="Games per variant (and strength), rounded up to whole rounds of seat "
                   "orders.")
@click.option("--top-games", type=Number(int, 1, MAX_GAMES_PER_VARIANT), default=None,
              help="With --strengths: games per variant at the strongest rung instead of "
                   "--games (the rung the answer is read from: a +-3-point 95% interval needs "
                   "about 1,070 games there, the lower rungs far fewer). --resume may grow "
                   "it.  [default: --games]")
@click.option("--players", type=Number(int, 1, 64), default=None,
              help="Players per game (a fixed setting).")
@runner_options
@click.option("--seed", type=SEED, default=1, show_default=True,
              help="Experiment seed: fixes every game (each variant gets its own seed from it).")
@click.option("--out", "-o", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default: analysis-GAME-DATE-TIME).")
@click.option("--resume", is_flag=True,
              help="Continue the experiment in --out (options default to the saved ones; "
                   "given ones must match, except --games, which may grow it). With GAME it "
                   "starts the experiment if --out holds none yet.")
@click.option("--trust-engines", is_flag=True,
              help="On --resume, start the engine agents (engine:cmd=...) and import the "
                   "house rules that the saved record names without their being typed "
                   "again: only for a folder you trust.")
@click.option("--openings", default=None, metavar="FILE|suite:NAME|random:plies=N[,count=M][,order=...]",
              help="Start each round of every variant from an opening, as `niwa tournament "
                   "--openings` (a FILE's lines must fit every variant).")
@click.option("--on-bad-rows", type=click.Choice(["stop", "drop"]), default="stop",
              show_default=True,
              help="On --resume, a games.csv row that is corrupt or contradicts the "
                   "schedule: stop with its line number, or drop it and replay its game.")
@user_errors
def analyse_cmd(game, vary, house, agent, agents, strengths, rate_games, rate_under, proof_time,
                margin, games, top_games, players, workers, executor, seed, out_dir, resume,
                trust_engines, openings, on_bad_rows):
    """Compare rule variants of GAME by self-play and answer the question of --vary
    ("Does rule=pro change seat 0's win rate, compared with rule=basic?") in one
    paragraph: the change at the strongest rung with its 95% interval, the verdict
    against --margin (equivalent, different, or undecided with the games needed), the
    players' Elo, convergence with strength and perfect play's result. Then win rate by
    seat, first-player advantage, balance, game length, game-specific metrics and every
    verdict in sections.

    \b
    Example:
      niwa analyse lotus --vary rule=basic,pro --games 2000 --out runs/lotus-pro
      niwa analyse lotus --vary rule=basic,pro --strengths mcts:iters=100,1000
        --games 300 --top-games 1070 --out runs/lotus-pro-strong
    \b
    Output in --out: games.csv, games.jsonl (game records), variants.csv,
    comparisons.csv (with --vary), strengths.csv and strength_ladder.csv (with
    --strengths: each strength's Elo, seat 0's rate, whether it has converged, the
    proven result where the proof search decides the variant), seat_win_rates.png,
    game_length.png, advantage_vs_strength.png (with --strengths), report.md,
    report.html (the report and its plots in one file) and analysis.json.
    """
    from niwa.analysis.arena.executors import make_executor
    from niwa.analysis.experiments.variants import analyse, setup_experiment

    if agent and agents:
        raise UserError("give --agent SPEC (self-play) or --agents SPEC ... (a lineup), not both")
    if (agent or agents) and strengths:
        raise UserError("--strengths sets the agents itself; drop --agent/--agents")
    if len(agents) == 1:
        raise UserError("--agents needs at least two specs; for self-play use --agent SPEC")
    typed = {name: value if given_on_command_line(name) else None
             for name, value in (("players", players), ("games", games), ("seed", seed))}
    exp, plan, out_dir = setup_experiment(
        game, vary=vary, lineup=[agent] if agent else list(agents), strengths=strengths,
        out_dir=out_dir, resume=resume, rate_games=rate_games, top_games=top_games,
        rate_under=rate_under, house=house, openings=openings, trust_engines=trust_engines,
        proof_time=proof_time, margin=margin,
        default_out=lambda name: f"analysis-{name}-{time.strftime('%Y%m%d-%H%M%S')}",
        **typed)
    creatable_folder(out_dir)
    ex = make_executor(executor, workers)
    for note in plan[1]:
        click.echo(note, err=True)
    command = recorded_command("analyse")
    click.echo(f"{exp.game}: {' x '.join(k for k, _ in exp.compared) or 'one variant'}"
               f", {exp.games} games per variant"
               f"{f' ({exp.top_games} at the strongest rung)' if exp.top_games else ''}"
               f"; {ex.describe()} -> {out_dir}", err=True)
    try:
        outcome = analyse(exp, out_dir, executor=ex, resume=resume, command=command, plan=plan,
                          on_bad_rows=on_bad_rows, proof_time=proof_time,
                          margin=margin / 100)
    except KeyboardInterrupt:
        click.echo(f"interrupted; finished games are saved. Resume with: niwa analyse "
                   f"--resume --out {shlex.quote(out_dir)}", err=True)
        sys.exit(130)
    for note in outcome.run.notes:
        click.echo(note, err=True)
    summary = outcome.summary
    if summary is None:
        click.echo("no games were played")
        return
    from niwa.analysis.experiments.headline import headlines

    for head in headlines(summary, proof_time):
        click.echo(f"{head.question}\n{head.answer}\n")
    click.echo(f"{sum(m['games'] for m in summary.metrics)} games analysed; wrote "
               f"{' '.join(outcome.files)} in {out_dir} (every verdict: report.md)")
