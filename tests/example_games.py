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


# ---- tic-tac-toe: a game with draws and no variant options ---------------------------
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _tictactoe_class():
    from niwa.ext.python_game import TERMINAL, PythonGame

    class TicTacToe(PythonGame):
        """Tic-tac-toe: seat 0 plays x, seat 1 plays o; three in a line wins, a full board
        without one is a draw (returns 0.5 each). Actions 0..8 are the cells, row by row.
        Notation: ``tictactoe; board x.o/.x./..o; turn 1``."""

        game_name = "tictactoe"
        num_players = 2

        def __init__(self):
            self.cells = ["."] * 9
            self.variant = {}

        def winner(self):
            for a, b, c in LINES:
                if self.cells[a] != "." and self.cells[a] == self.cells[b] == self.cells[c]:
                    return 0 if self.cells[a] == "x" else 1
            return None

        def turn(self):
            return self.cells.count("x") - self.cells.count("o")

        def current_player(self):
            if self.winner() is not None or "." not in self.cells:
                return TERMINAL
            return self.turn()

        def legal_actions(self, player=None):
            return [i for i, c in enumerate(self.cells) if c == "."]

        def apply(self, action):
            self.cells[action] = "xo"[self.turn()]

        def clone(self):
            other = TicTacToe()
            other.cells = list(self.cells)
            return other

        def returns(self):
            w = self.winner()
            return [0.5, 0.5] if w is None else [1.0 - w, float(w)]

        def action_to_string(self, action, player=None):
            return "abc"[action % 3] + str(action // 3 + 1)

        def to_notation(self):
            rows = "/".join("".join(self.cells[r * 3:r * 3 + 3]) for r in range(3))
            return f"tictactoe; board {rows}; turn {self.turn()}"

        def hash(self):
            h = 0
            for c in self.cells:
                h = h * 3 + ".xo".index(c)
            return h

    return TicTacToe


def tictactoe_from_notation(text):
    from niwa.ext.errors import NotationError

    parts = [p.strip() for p in text.split(";")]
    if len(parts) != 3 or parts[0] != "tictactoe":
        raise NotationError("tictactoe notation: 'tictactoe; board ROW/ROW/ROW; turn 0|1'")
    board = parts[1].split()
    rows = board[1].split("/") if len(board) == 2 and board[0] == "board" else []
    if len(rows) != 3 or any(len(r) != 3 or set(r) - set(".xo") for r in rows):
        raise NotationError(f"board should be three rows of 3 cells . x o, got {parts[1]!r}")
    game = _tictactoe_class()()
    game.cells = list("".join(rows))
    if game.turn() not in (0, 1) or parts[2] != f"turn {game.turn()}":
        raise NotationError(f"turn does not follow from the board: {parts[2]!r}")
    if game.winner() is not None and (game.turn() == 0) != (game.winner() == 1):
        raise NotationError("the board shows a win the last move did not make")
    return game


def tictactoe_spec():
    """The tic-tac-toe plugin's GameSpec, registered in this process."""
    from niwa.ext.python_game import python_game_spec
    from niwa.ext.registry import register_game

    spec = python_game_spec(name="tictactoe", title="Tic-tac-toe", new=_tictactoe_class(),
                            from_notation=tictactoe_from_notation, max_game_length=9,
                            num_distinct_actions=9)
    register_game(spec)
    return spec


def minimax(state, pov):
    """Plain minimax value of `state` for seat `pov` (the test's oracle)."""
    if state.is_terminal():
        return state.returns()[pov]
    values = []
    for a in state.legal_actions():
        child = state.clone()
        child.apply(a)
        values.append(minimax(child, pov))
    return max(values) if state.current_player() == pov else min(values)
