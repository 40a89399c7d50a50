"""Shared helpers of the Click commands: one-line errors with exit status 2."""

from __future__ import annotations

import contextlib
import functools
import os
import sys

import click

from niwa.ext.errors import NiwaError


class UserError(click.ClickException):
    """Printed as 'Error: message' with exit status 2, no traceback."""

    exit_code = 2


class OneLineErrorsGroup(click.Group):
    """The `niwa` group: a usage error (an unknown option or command, a value Click's own
    types refuse, a missing argument) is one 'Error: ...' line naming the command's
    --help, exit status 2, like every other error of niwa; Click alone would print the
    usage line and a hint around it. `niwa` with no arguments still shows the help."""

    def make_context(self, *args, **kwargs):
        with _one_line_usage():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        import warnings

        saved, warnings.formatwarning = warnings.formatwarning, _one_line_warning
        try:
            with _one_line_usage():
                return super().invoke(ctx)
        finally:
            warnings.formatwarning = saved


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    """A warning as one 'warning: ...' line (Python's own format adds the file, the line
    number and the source line of where it was raised)."""
    return f"warning: {(str(message).splitlines() or [category.__name__])[0]}\n"


@contextlib.contextmanager
def _one_line_usage():
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise
    except click.UsageError as e:
        lines = e.format_message().splitlines() or [type(e).__name__]
        where = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
        raise UserError(lines[0] + where) from None


def user_errors(fn):
    """Turn every NiwaError (bad position, agent, variant, action) and a MemoryError into
    a UserError."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NiwaError as e:
            raise UserError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
        except MemoryError as e:
            # a table or a pool larger than the memory (or ulimit -v) allows
            detail = str(e).splitlines()[0] if str(e) else "a table or buffer did not fit"
            raise UserError(f"out of memory: {detail}; ask for less (--tt-mb, --tt, "
                            f"--workers)") from None
        except (KeyboardInterrupt, BrokenPipeError):
            sys.exit(130)

    return wrapper


def load_position(text: str):
    from niwa.ext.registry import parse_position

    return parse_position(text)


def variant_option(fn):
    return click.option(
        "--variant", "-v", "variants", multiple=True, metavar="KEY=VALUE",
        help="A variant setting (repeatable); `niwa games` lists them.",
    )(fn)


class AgentsCommand(click.Command):
    """Lets `--agents A B C` take several values, as in cutechess-cli.

    Click options take a fixed number of values, so before parsing, `--agents A B C`
    is rewritten to `--agents A --agents B --agents C` (values end at the next option, or
    at a game's name after an agent: `--agents A B lotus` leaves `lotus` the GAME).
    The exact arguments are kept in ctx.meta["niwa_raw_args"] for the run's record.
    """

    def parse_args(self, ctx, args):
        ctx.meta["niwa_raw_args"] = list(args)
        out, i = [], 0
        while i < len(args):
            arg = args[i]
            if arg in ("--agents", "-a"):
                i += 1
                taken = 0
                while i < len(args) and not args[i].startswith("-"):
                    if taken and _is_game_name(args[i]):
                        break   # `--agents A B lotus`: the game, given after the agents
                    out += ["--agents", args[i]]
                    i += 1
                    taken += 1
                if not taken:
                    out.append(arg)     # let Click report the missing value
                continue
            out.append(arg)
            i += 1
        return super().parse_args(ctx, out)


def _is_game_name(word: str) -> bool:
    """A bare installed game name (never an agent spec: no agent is named after a game)."""
    from niwa.ext.registry import games

    return word.lower() in games()


def given_on_command_line(name: str) -> bool:
    """Did the user type option `name` (rather than take its default)? Resumed runs keep
    their saved settings except those given again."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    return ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE


class Number(click.ParamType):
    """An int or float option checked where it is parsed: a number of the right kind,
    finite, within [low, high] (`low_open`: strictly above low). Anything else is a
    one-line error (exit 2), never a value a searcher or a schedule chokes on later."""

    def __init__(self, kind: type, low: float, high: float, low_open: bool = False,
                 unit: str = "seconds"):
        self.kind, self.low, self.high, self.low_open = kind, low, high, low_open
        self.unit = unit        # what a float counts, for the metavar and the messages
        self.name = "integer" if kind is int else unit

    def convert(self, value, param, ctx):
        import math

        option = param.opts[0] if param is not None and param.opts else "value"
        text = str(value).strip()
        if self.kind is int:
            try:
                number = value if isinstance(value, int) and not isinstance(value, bool) \
                    else int(text, 10)
            except ValueError:
                raise UserError(f"{option} must be a whole number, got {text!r}") from None
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise UserError(f"{option} must be a number of {self.unit}, got {text!r}") from None
            if not math.isfinite(number):
                raise UserError(f"{option} must be a finite number, got {text}")
        too_low = number <= self.low if self.low_open else number < self.low
        if too_low or number > self.high:
            fmt = (lambda x: str(int(x))) if self.kind is int else (lambda x: f"{x:g}")
            low = f"above {fmt(self.low)}" if self.low_open else f"at least {fmt(self.low)}"
            raise UserError(f"{option} must be {low} and at most {fmt(self.high)}, got {text}")
        return number


# the ranges of the options shared by several commands
SEED = Number(int, 0, 2**64 - 1)
WORKERS = Number(int, 1, 4096)


def recorded_command(name: str) -> str:
    """The command as the user typed it (AgentsCommand keeps its arguments), for a run's
    record."""
    import shlex

    ctx = click.get_current_context()
    return shlex.join(["niwa", name, *ctx.meta.get("niwa_raw_args", [])])


@contextlib.contextmanager
def executor_for(spec: str | None, workers: int | None):
    """None (the work runs in this process) for `local` with one worker, else the
    executor `--executor`/`--workers` name (make_executor), closed when the block ends."""
    if (spec or "local").strip() == "local" and (workers or 1) == 1:
        yield None
        return
    from niwa.analysis.arena.executors import make_executor

    ex = make_executor(spec, workers)
    try:
        yield ex
    finally:
        if hasattr(ex, "close"):
            ex.close()


def progress_option(fn):
    """--progress/--no-progress: a progress bar on stderr, by default only when stderr
    is a terminal (None: the command decides by isatty)."""
    return click.option("--progress/--no-progress", default=None,
                        help="Progress bar on stderr (default: only on a terminal).")(fn)


def huge_pages_option(fn):
    """--huge-pages, shared by the commands that run a df-pn proof."""
    return click.option("--huge-pages", "huge_pages", is_flag=True,
                        help="Put the df-pn table on 2 MB pages (Linux transparent huge "
                             "pages): fewer TLB misses in a table of gigabytes, for long "
                             "proofs. The shared table of --checkpoint --workers needs "
                             "transparent_hugepage/shmem_enabled advise.")(fn)


def warn_small_pages(shared: bool = False) -> None:
    """The one warning line of --huge-pages where the kernel will give small pages (not an
    error: the proof is the same, only slower)."""
    from niwa.solver.proof_tree import huge_pages_note

    note = huge_pages_note(shared)
    if note:
        click.echo(f"warning: --huge-pages: {note}; the table gets small pages", err=True)


def executor_options(workers_help: str, executor_help: str):
    """--workers and --executor (what executor_for and make_executor take), with each
    command's own words for them."""
    def add(fn):
        fn = click.option("--executor", default="local", show_default=True,
                          metavar="local|dask://HOST:PORT", help=executor_help)(fn)
        return click.option("--workers", "-j", type=WORKERS, default=None,
                            help=workers_help)(fn)
    return add


# --workers and --executor of the commands that play many games
runner_options = executor_options(
    "Parallel games (default: all cores; with dask: the cluster's threads).",
    "Where games run: a local process pool or a Dask scheduler.")


def creatable_folder(path, option: str = "--out") -> None:
    """Make the output folder `path` (and its parents) now, so that a folder that cannot
    be created or written is one 'Error:' line before any work, not a traceback after."""
    import os
    import tempfile
    from pathlib import Path

    folder = Path(path).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"{option} {path}: cannot create the folder "
                        f"({e.strerror or type(e).__name__})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path}: the folder is not writable")
    try:
        # os.access says yes to root everywhere, even where no file can be made (/proc)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise UserError(f"{option} {path}: no file can be written in the folder "
                        f"({e.strerror or type(e).__name__})") from None


def creatable_file(path, option: str = "--out") -> None:
    """The folder of output file `path` made now (see creatable_folder); `path` itself
    must not be a folder."""
    from pathlib import Path

    file = Path(path).expanduser()
    try:
        is_dir = file.is_dir()
    except OSError as e:        # a name too long for the file system
        raise UserError(f"{option} {path}: {e.strerror or type(e).__name__}") from None
    if is_dir:
        raise UserError(f"{option} {path} is a folder; give a file name")
    creatable_folder(file.parent if str(file.parent) else ".", option)


def check_writable(path, flag: str) -> None:
    """Refuse, before a search that may take minutes rather than after it, a file `path`
    (given with `flag`) whose folder is missing or not writable."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise UserError(f"{flag}: cannot write into {folder}")
