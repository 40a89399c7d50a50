"""`niwa score POSITION`: each player's score so far, broken down by source."""

from __future__ import annotations

import json

import click

from niwa.cli.common import UserError, load_position, user_errors


def register(main: click.Group) -> None:
    main.add_command(score_cmd)


@click.command("score")
@click.argument("position")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@user_errors
def score_cmd(position, as_json):
    """Print each player's score of POSITION: leaves, flowers, fruits, parchments, goals.

    Works for games that score by parts (Bonsai). Supply tiles score nothing.

    Example: niwa score "$(niwa new bonsai --seed 1)"
    """
    state = load_position(position)
    spec = state.spec
    if spec is None or not spec.score_parts:
        raise UserError(f"{state.game_name} has no score breakdown (it scores by win or loss)")
    rows = state.score_breakdown()
    winner = state.winner() if state.is_terminal() else None
    if as_json:
        click.echo(json.dumps({"game": state.game_name, "terminal": state.is_terminal(),
                               "winner": winner,
                               "players": [dict(player=p, **row) for p, row in enumerate(rows)]}))
        return
    parts = [name for name in spec.score_parts if name != "total"]
    click.echo(f"{'player':<8}" + "".join(f"{name:>11}" for name in parts) + f"{'total':>8}")
    for p, row in enumerate(rows):
        click.echo(f"{p:<8}" + "".join(f"{row[name]:>11}" for name in parts)
                   + f"{row['total']:>8}")
    if state.is_terminal():
        click.echo(f"game over: player {winner} wins" if winner is not None
                   else "game over: the solo game is lost")
