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
