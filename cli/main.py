"""The `niwa` command line: a thin Click layer over niwa.ext, niwa.solver, niwa.analysis."""

from __future__ import annotations

import faulthandler
import importlib
import signal

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


def take_back_interrupts() -> None:
    """Give SIGINT its default meaning (KeyboardInterrupt: a run stops and keeps every
    finished game) even if whoever started niwa left it ignored or blocked. A script's
    background job (`niwa tournament ... &` without job control, so also such a CI run)
    inherits an ignored SIGINT, and then neither Ctrl-C nor `kill -INT` could stop a run
    cleanly: it would go on for hours. A run meant to be out of reach of a terminal's
    Ctrl-C belongs in its own session (`setsid niwa tournament ...`).

    Also `kill -USR1 PID` prints the stack of every thread to stderr (faulthandler), to
    see where a run that seems stuck sits; its forked workers inherit it."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)


def run() -> None:
    """The `niwa` console script: the process set up as a command line, then `main`."""
    take_back_interrupts()
    main()


if __name__ == "__main__":
    run()
