"""`niwa.openspiel`: niwa games as OpenSpiel games and OpenSpiel bots as niwa agents.

The implementation lives in `niwa.analysis.interop.openspiel`; this package is the public import
name the optional extra promises (`pip install 'niwa[openspiel]'`).
"""

from niwa.analysis.interop.openspiel import *  # noqa: F401,F403
from niwa.analysis.interop.openspiel import (  # noqa: F401
    NiwaGame,
    NiwaSpielState,
    OpenSpielMCTSAgent,
    game_for,
    load_game,
    register_games,
)
