"""`niwa tune`: SPSA tuning of an agent's numeric parameters (analysis.experiments.tune)."""

from __future__ import annotations

import shlex
import sys
import time

import click

from niwa.analysis.arena.schedule import MAX_PLIES
from niwa.cli.common import (
    SEED,
    Number,
    UserError,
    creatable_folder,
    recorded_command,
    runner_options,
    user_errors,
    variant_option,
)

MAX_ITERATIONS = 10**6              # SPSA iterations
MAX_GAMES_PER_ITERATION = 10**6     # games of one iteration


def register(main: click.Group) -> None:
    main.add_command(tune_cmd)


class _RecordedCommand(click.Command):
    """Keeps the arguments as typed for the run's record (cli.common.recorded_command)."""

    def parse_args(self, ctx, args):
        ctx.meta["niwa_raw_args"] = list(args)
        return super().parse_args(ctx, args)


@click.command("tune", cls=_RecordedCommand)
@click.argument("game")
@click.option("--agent", "-a", required=True, metavar="SPEC",
              help="The agent tuned; its values of the tuned parameters are the start, "
                   "e.g. mcts:iters=100,c=5.")
@click.option("--param", "-p", "params", multiple=True, required=True,
              metavar="NAME=LOW:HIGH", help="A numeric parameter and its range (repeatable); "
              "w_<name> is one of the game's evaluation weights (`niwa agents` lists them).")
@click.option("--iterations", "-n", type=Number(int, 1, MAX_ITERATIONS), default=100, show_default=True,
              help="SPSA iterations.")
@click.option("--games-per-iteration", type=Number(int, 1, MAX_GAMES_PER_ITERATION), default=None,
              help="Games per iteration: seat-swapped pairs, theta+ against theta- (default "
                   "2), or a multiple of 4 with --opponent (default 4).")
@click.option("--opponent", default=None, metavar="SPEC",
              help="Play theta+ and theta- each against this agent (4 games a deal) "
                   "instead of against each other.")
@click.option("--c-frac", type=Number(float, 0, 1, low_open=True, unit="fraction"), default=None,
              help="Final perturbation as a fraction of each range (default 0.2).")
@click.option("--step-frac", type=Number(float, 0, 1, low_open=True, unit="fraction"), default=None,
              help="Final move per unit score as a fraction of each range (default 0.04).")
@variant_option
@runner_options
@click.option("--seed", type=SEED, default=1, show_default=True,
              help="Fixes every sign draw, deal and agent seed.")
@click.option("--max-plies", type=Number(int, 1, MAX_PLIES), default=None,
              help="Stop a game after this many plies and score it a draw.")
@click.option("--out", "-o", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default: tune-GAME-DATE-TIME).")
@click.option("--openings", default=None, metavar="FILE|suite:NAME|random:plies=N[,count=M][,order=...]",
              help="Start each deal from an opening (played with the seats swapped), as "
                   "`niwa tournament --openings`: a FILE of positions or move lists, a "
                   "shipped suite (suite:GAME), or random:plies=N.")
@click.option("--resume", is_flag=True,
              help="Finish the run in --out (same options); into a folder that holds no "
                   "run yet, start it, so the same command can be repeated until it ends.")
@click.option("--progress/--no-progress", default=False, help="A progress bar per iteration.")
@user_errors
def tune_cmd(game, agent, params, iterations, games_per_iteration, opponent, c_frac,
             step_frac, variants, workers, executor, seed, max_plies, out_dir, openings,
             resume, progress):
    """Tune numeric parameters of an agent on GAME by SPSA (fishtest's method).

    \b
    Example:
      niwa tune lotus --agent mcts:iters=100,c=5 --param c=0.1:5 --iterations 150
      niwa tune lotus --agent best:iters=300 --param w_covered=0:20 --param w_scale=2:60
    \b
    Output in --out: trajectory.csv, games.csv, games.jsonl, tune.json, trajectory.png;
    the final values are printed as a spec. Same --seed, same trajectory, whatever the
    number of workers; `--resume --out DIR` finishes an interrupted run identically.
    """
    from niwa.analysis.arena.executors import make_executor
    from niwa.analysis.experiments import tune
    from niwa.ext.registry import parse_variant_options

    if resume and not out_dir:
        raise UserError("--resume needs --out DIR (the folder of the run to finish)")
    config = tune.make_tune_config(
        game, agent, list(params), iterations=iterations,
        games_per_iteration=games_per_iteration, variant=parse_variant_options(variants),
        seed=seed, c_frac=tune.C_FRACTION if c_frac is None else c_frac,
        step_frac=tune.STEP_FRACTION if step_frac is None else step_frac,
        max_plies=max_plies, opponent=opponent, openings=openings)
    out_dir = out_dir or f"tune-{config.game}-{time.strftime('%Y%m%d-%H%M%S')}"
    tune.check_out_dir(config, out_dir, resume)
    creatable_folder(out_dir)
    ex = make_executor(executor, workers)
    names = [p.name for p in config.param_list]
    click.echo(f"{config.game}: SPSA on {config.agent} ({', '.join(names)}), "
               f"{config.iterations} iterations x {config.games_per_iteration} games, seed "
               f"{config.seed}; {ex.describe()} -> {out_dir}", err=True)

    def show(k, row):
        if k == config.iterations - 1 or k % max(1, config.iterations // 20) == 0:
            values = " ".join(f"{n}={float(row[n]):.4g}" for n in names)
            click.echo(f"  iteration {k + 1}/{config.iterations}: {values} "
                       f"(score {float(row['score']):+.2f})", err=True)

    try:
        outcome = tune.run_tune(config, out_dir, executor=ex, resume=resume,
                                progress=progress, command=recorded_command("tune"),
                                on_iteration=show)
    except KeyboardInterrupt:
        click.echo(f"interrupted; finished games are saved. Resume with: niwa tune {game} "
                   f"--resume --out {shlex.quote(out_dir)} (and the same options)", err=True)
        sys.exit(130)
    for note in outcome.notes:
        click.echo(note, err=True)
    click.echo(f"wrote trajectory.csv games.csv tune.json trajectory.png in {out_dir}",
               err=True)
    click.echo(outcome.final_spec)
