"""`niwa openings`: build opening suites and list those shipped with niwa (logic in
niwa.analysis.arena.opening_build and niwa.analysis.arena.openings)."""

from __future__ import annotations

import click

from niwa.cli.common import Number, creatable_file, progress_option, user_errors, variant_option


def register(main: click.Group) -> None:
    main.add_command(openings_group)


@click.group("openings")
def openings_group():
    """Opening suites for `--openings` (tournament, analyse, tune): one position a line.
    Suites shipped with niwa are used by name: --openings suite:lotus."""


@openings_group.command("build")
@click.argument("game")
@variant_option
@click.option("--plies", type=Number(int, 1, 1000), required=True,
              help="Random plies from a fresh deal (chance events count as plies).")
@click.option("--count", type=Number(int, 1, 100_000), required=True,
              help="Openings in the suite.")
@click.option("--out", "-o", type=click.Path(dir_okay=False), required=True,
              help="The suite file to write.")
@click.option("--seed", type=Number(int, 0, 2**63 - 1), default=1, show_default=True,
              help="Seed of the deals, the random plies and the searches.")
@click.option("--search", default=None, metavar="alphabeta:depth=D|mcts:iters=N",
              help="The searcher that values each candidate [default: alphabeta:depth=4 "
                   "for Lotus, mcts:iters=1000 where there is chance or hidden "
                   "information].")
@click.option("--band", type=Number(float, 0.0, 0.5, unit="value"), default=0.15,
              show_default=True,
              help="Keep a position when its value for the side to move is within "
                   "BAND of an even share (0.5 for two players, 1/n for n).")
@progress_option
@user_errors
def build_cmd(game, variants, plies, count, out, seed, search, band, progress):
    """Write a suite of COUNT distinct, roughly balanced positions of GAME, each reached
    by PLIES random plies (seeded), to OUT: the format `--openings FILE` reads, with the
    command that rebuilds it in its header. The same command always writes the same file.

    \b
    Example:
      niwa openings build lotus --plies 6 --count 30 --out my-lotus.txt
      niwa tournament lotus --agents greedy mcts --openings my-lotus.txt
    """
    import os
    import sys

    from niwa.analysis.arena.opening_build import build_suite, default_search, suite_command
    from niwa.ext.registry import get_game, parse_variant_options

    info = get_game(game)
    variant = info.parse_variant(parse_variant_options(variants))
    search = search or default_search(info.name, variant)
    creatable_file(out)
    show = sys.stderr.isatty() if progress is None else progress

    def report(kept, drawn):
        if show:
            click.echo(f"\r{kept}/{count} kept of {drawn} drawn", nl=False, err=True)

    name = os.path.splitext(os.path.basename(out))[0]
    built = build_suite(info.name, variant, plies, count, seed=seed, search=search, band=band,
                        command=suite_command(info.name, variant, plies, count, seed,
                                              search, band) + f" --out {name}.txt",
                        name=name, progress=report)
    if show:
        click.echo("", err=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(built.text)
    values = built.values
    click.echo(f"{len(built.positions)} openings ({built.drawn} candidates drawn; values "
               f"{min(values):.3f}..{max(values):.3f}, mean {sum(values) / len(values):.3f}) "
               f"written to {out}")


@openings_group.command("list")
@user_errors
def list_cmd():
    """The suites shipped with niwa: name, game, openings and the command that built it."""
    from niwa.analysis.arena.openings import shipped_suites

    for name, path in shipped_suites().items():
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        positions = [x for x in lines if x.strip() and not x.startswith("#")]
        game = positions[0].split()[0] if positions else "?"
        built = next((x[len("# built by: "):] for x in lines
                      if x.startswith("# built by: ")), "")
        click.echo(f"{name}: {game}, {len(positions)} openings (--openings suite:{name})")
        if built:
            click.echo(f"  built by: {built}")
