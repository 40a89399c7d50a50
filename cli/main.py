"""The `niwa` command line: a thin Click layer over niwa.ext, niwa.solver, niwa.analysis."""

from __future__ import annotations

import importlib

import click

from niwa.cli.common import OneLineErrorsGroup

# Each module offers register(main); a new command group is one line here.
COMMAND_MODULES = [
    "niwa.cli.positions",
    "niwa.cli.solve",
    "niwa.cli.book",
    "niwa.cli.proof",
    "niwa.cli.play",
    "niwa.cli.records",
    "niwa.cli.score",
    "niwa.cli.tournament",
    "niwa.cli.openings",
    "niwa.cli.analyse",
    "niwa.cli.engine",
    "niwa.cli.tune",
    "niwa.cli.tables",
]


@click.group(cls=OneLineErrorsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="niwa")
def main():
    """niwa: engines, solvers, tournaments and rule-variant analysis for Haru Ichiban,
    Lotus and Bonsai.

    Positions are one-line notations (see `niwa new GAME`); a bare game name means its
    initial position.
    """


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(main)


if __name__ == "__main__":
    main()
