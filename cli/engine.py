"""`niwa engine SPEC`: serve a niwa agent over the engine protocol (docs/engine-protocol.md)."""

from __future__ import annotations

import click

from niwa.cli.common import user_errors


def register(main: click.Group) -> None:
    main.add_command(engine_cmd)


@click.command("engine")
@click.argument("spec")
@click.argument("params", nargs=-1, metavar="[KEY=VALUE ...]")
@click.option("--seed", type=int, default=None, help="Seed of the agent's random choices.")
@click.option("--name", default="", help="The name the engine gives in the handshake.")
@user_errors
def engine_cmd(spec, params, seed, name):
    """Play as an engine on stdin/stdout: any agent SPEC, for another program (or another
    niwa version) to drive through the niwa engine protocol.

    Parameters may follow as separate words, so that a command line inside an
    `engine:cmd=...` spec needs no commas (the same as mcts:iters=200,c=1.4):

    \b
      niwa engine mcts iters=200 c=1.4

    Example (docs/engine-protocol.md describes the protocol):

    \b
      niwa tournament lotus --agents random "engine:cmd=niwa engine mcts iters=200"
    """
    from niwa.solver.protocol import serve

    if params:
        spec += ("," if ":" in spec else ":") + ",".join(params)
    serve(spec, seed=seed, name=name)
