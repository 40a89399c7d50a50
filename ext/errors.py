"""Errors raised by niwa engines: each says what is wrong and what was expected."""


class NiwaError(ValueError):
    """Base of every error niwa reports to a user as a one-line message."""


class NotationError(NiwaError):
    """A position string that does not describe a legal, reachable-shaped position."""


class IllegalActionError(NiwaError):
    """An action that is not legal in the state it was applied to."""


class VariantError(NiwaError):
    """An unknown game, variant key, or a variant value out of range."""


class GameContractError(NiwaError):
    """A game that breaks the game contract (niwa.ext.game), e.g. a plain-Python game whose
    method raised inside a search, or returned an action id out of range."""


def file_error_reason(error: BaseException) -> str:
    """The first line of an error met reading a data file, as a user should read it.

    numpy takes any file that is not .npy or .npz for a pickle and suggests loading it
    "unsafely"; niwa never loads pickles, so that advice is replaced:

    >>> file_error_reason(ValueError("This file contains pickled (object) data. If you trust"))
    'not a numpy .npy/.npz file'
    >>> file_error_reason(EOFError())
    'EOFError'
    """
    text = str(error)
    if text.startswith("This file contains pickled"):
        return "not a numpy .npy/.npz file"
    return text.splitlines()[0] if text else type(error).__name__
