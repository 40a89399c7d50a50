"""Commands on positions: games, new, show, moves, perft, bench."""

from __future__ import annotations

import json

import click

from niwa.cli.common import (
    SEED,
    Number,
    UserError,
    creatable_file,
    load_position,
    user_errors,
    variant_option,
)
from niwa.ext.registry import games as list_games
from niwa.ext.registry import get_game, parse_variant_options


def register(main: click.Group) -> None:
    for cmd in (games_cmd, agents_cmd, new_cmd, show_cmd, moves_cmd, perft_cmd, bench_cmd):
        main.add_command(cmd)


@click.command("games")
@user_errors
def games_cmd():
    """List every game with its variants and defaults.

    Example: niwa games
    """
    rows = {name: [(option.key, option.shown().replace(", ", "|"), str(option.default),
                    option.help) for option in get_game(name).options]
            for name in list_games()}
    every = [row for options in rows.values() for row in options]
    widths = [max((len(r[i]) for r in every), default=0) for i in range(3)]
    for name, options in rows.items():
        click.echo(name)
        if not options:
            click.echo("  (no variant options)")
        for key, shown, default, help_ in options:
            click.echo(f"  {key:<{widths[0]}}  {shown:<{widths[1]}}  "
                       f"default {default:<{widths[2]}}  {help_}")


@click.command("agents")
@user_errors
def agents_cmd():
    """List every agent spec with its parameters (used by play, tournament, analyse).

    Example: niwa agents
    """
    from niwa.ext.registry import games, get_game
    from niwa.solver.agents import describe_agents

    for name, help_, params in describe_agents():
        click.echo(f"{name:<16} {help_}")
        for key, (typ, default, phelp) in params.items():
            click.echo(f"    {key}={typ.__name__} (default {default}): {phelp}")
    tuned = {g: get_game(g).mcts_defaults for g in games()}
    for game, settings in tuned.items():
        if settings:
            shown = ",".join(f"{k}={v}" for k, v in settings.items())
            click.echo(f"mcts and ismcts defaults tuned for {game}: {shown}")
    for game in games():
        click.echo(f"best on {game}: {get_game(game).best_agent}")
    click.echo("evaluation weights (greedy, mcts, ismcts, alphabeta, best: w_<name>=value, "
               "e.g. mcts:cutoff=10,w_free=6):")
    for game in games():
        for w in get_game(game).eval_weights:
            click.echo(f"    {game} w_{w.name}={w.default:g} (range {w.low:g}..{w.high:g}): "
                       f"{w.help}")


@click.command("new")
@click.argument("game")
@click.option("--players", type=int, help="Number of players (a variant setting).")
@variant_option
@click.option("--seed", type=int, default=None, help="Seed for the deal (games with chance).")
@user_errors
def new_cmd(game, players, variants, seed):
    """Print the initial position of GAME as one line of notation.

    Example: niwa new lotus --players 3 --variant rule=pro
    """
    info = get_game(game)
    kw = parse_variant_options(variants)
    if players is not None:
        if "players" in kw:
            raise UserError("players is given twice (--players and -v players=...)")
        kw["players"] = players
    click.echo(info.new(seed=seed, **kw).to_notation())


@click.command("show")
@click.argument("position")
@click.option("--moves", "move_list", default=None, metavar='"M1 M2 ..."',
              help="Apply these moves first (notation as `niwa moves` prints it, or ids; "
                   "chance outcomes too, e.g. \"reveal GF\").")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@user_errors
def show_cmd(position, move_list, as_json):
    """Draw POSITION (a notation string, or a game name for its start) for a person.

    Example: niwa show lotus --moves "W1-a1 B1-a1"
    """
    from niwa.analysis.arena.game_record import apply_move_list

    state = load_position(position)
    if move_list:
        played = apply_move_list(state, move_list)
        if not as_json:
            click.echo(f"after {len(played)} plies: {' '.join(played)}")
    if as_json:
        click.echo(json.dumps(state.to_json()))
    else:
        click.echo(state.render())
        if move_list:
            click.echo(state.to_notation())


@click.command("moves")
@click.argument("position")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@user_errors
def moves_cmd(position, as_json):
    """List the legal actions of POSITION with readable names.

    Example: niwa moves lotus
    """
    state = load_position(position)
    p = state.current_player()
    if state.is_terminal():
        rows = []
    elif state.is_chance_node():
        rows = [(a, state.action_to_string(a), prob) for a, prob in state.chance_outcomes()]
    elif state.is_simultaneous_node():
        rows = [(a, f"player {q}: {state.action_to_string(a, q)}", None)
                for q in range(state.num_players) for a in state.legal_actions(q)]
    else:
        rows = [(a, state.action_to_string(a), None) for a in state.legal_actions()]
    if as_json:
        click.echo(json.dumps({"player": p, "actions": [
            {"id": a, "name": n, **({"prob": pr} if pr is not None else {})} for a, n, pr in rows]}))
        return
    if not rows:
        click.echo("no legal actions (the game is over)")
    for a, name, prob in rows:
        click.echo(f"{a:>5}  {name}" + (f"  p={prob:.4f}" if prob is not None else ""))


@click.command("perft")
@click.argument("position")
@click.option("--depth", "-d", type=Number(int, 0, 64), required=True, help="Plies to count.")
@click.option("--divide", is_flag=True, help="Also print the count below each first action.")
@user_errors
def perft_cmd(position, depth, divide):
    """Count action sequences of length DEPTH from POSITION; the last line is the total.

    Example: niwa perft lotus --depth 5 --divide
    """
    state = load_position(position)
    if divide:
        if depth < 1:
            raise UserError("--divide needs --depth of at least 1")
        total = 0
        for label, count in state.perft_divide(depth):
            click.echo(f"{label}: {count}")
            total += count
        click.echo(total)
    else:
        click.echo(state.perft(depth))


@click.command("bench")
@click.argument("game", required=False)
@variant_option
@click.option("--seconds", type=Number(float, 0, 3600, low_open=True), default=2.0,
              show_default=True, help="Time spent on each side (engine, oracle).")
@click.option("--seed", type=SEED, default=1, show_default=True)
@click.option("--suite", is_flag=True,
              help="The full suite (engine, search, OpenSpiel, strength, throughput, memory); "
                   "writes --out. Needs niwa[openspiel]; about 9 minutes on 2 cores.")
@click.option("--out", type=click.Path(dir_okay=False), default="bench.csv", show_default=True,
              help="CSV written by --suite.")
@click.option("--search/--no-search", default=True, show_default=True,
              help="Also measure MCTS simulations/s and alpha-beta nodes/s from the same start.")
@user_errors
def bench_cmd(game, variants, seconds, seed, suite, out, search):
    """Random playouts per second: Cython engine vs the plain-Python oracle, one run.

    Example: niwa bench lotus       (or: niwa bench --suite --out bench.csv)
    """
    from niwa.analysis.bench.playouts import bench_engine_vs_oracle

    if suite:
        creatable_file(out)
        try:
            from niwa.analysis.bench.suite import format_table, run_suite
        except ImportError as e:
            raise UserError(f"niwa bench --suite needs the openspiel extra "
                            f"(pip install 'niwa[openspiel]'): {e}") from None
        df = run_suite(out, progress=lambda line: click.echo(line, err=True))
        click.echo(format_table(df))
        return

    names = [game] if game else list_games()
    kw = parse_variant_options(variants)
    for name in names:
        r = bench_engine_vs_oracle(name, seconds=seconds, seed=seed, **kw)
        click.echo(
            f"{name:<7} engine {r['engine_games_s']:>12,.0f} games/s {r['engine_actions_s']:>14,.0f}"
            f" actions/s | oracle {r['oracle_games_s']:>9,.1f} games/s"
            f" {r['oracle_actions_s']:>11,.0f} actions/s | ratio {r['ratio']:,.0f}x"
        )
        if search:
            from niwa.analysis.bench.search import search_speed

            q = search_speed(name, seconds=seconds, seed=seed, **kw)
            click.echo(
                f"{'':<7} MCTS {q['mcts_sims_s']:>14,.0f} sims/s = {q['mcts_ratio']:.2f} x random "
                f"playouts/s ({q['playouts_s']:,.0f}) | alpha-beta {q['alphabeta_nps']:,.0f} nodes/s"
                f" = {q['alphabeta_ratio']:.2f} x perft leaves/s, {q['alphabeta_ratio_made']:.2f} x"
                f" perft moves made/s ({q['perft_made_s']:,.0f})"
            )
