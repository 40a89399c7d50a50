"""Shared helpers of the Click commands: one-line errors with exit status 2."""

from __future__ import annotations

import functools
import sys

import click

from niwa.ext.errors import NiwaError


class UserError(click.ClickException):
    """Printed as 'Error: message' with exit status 2, no traceback."""

    exit_code = 2


def user_errors(fn):
    """Turn every NiwaError (bad position, agent, variant, action) into a UserError."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NiwaError as e:
            raise UserError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
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
