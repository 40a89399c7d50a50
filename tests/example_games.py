"""The example plugin game (docs/examples/niwa-nim) for tests, without installing it:
`nim_spec()` imports it from the checkout and registers it in this process."""

import sys
from pathlib import Path

NIM_DIR = Path(__file__).resolve().parents[1] / "docs" / "examples" / "niwa-nim"
BUILT_IN = ("lotus", "bonsai", "haru")
ALL_GAMES = (*BUILT_IN, "nim")


def nim_spec():
    """The Nim plugin's GameSpec, registered in this process (its reference importable)."""
    from niwa.ext.registry import register_game

    if str(NIM_DIR) not in sys.path:
        sys.path.insert(0, str(NIM_DIR))
    import niwa_nim

    register_game(niwa_nim.SPEC)
    return niwa_nim.SPEC


def spec_for(name):
    """A built-in game's spec, or the example plugin's."""
    from niwa.ext.registry import get_game

    return nim_spec() if name == "nim" else get_game(name)
