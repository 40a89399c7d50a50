"""Games as plugins: the plain-Python contract behind PythonGameState, python_game_spec,
and the example Nim package (docs/examples/niwa-nim) through every searcher and command."""

import doctest
import importlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from example_games import NIM_DIR, nim_spec
from hypothesis import given, settings
from hypothesis import strategies as st

from niwa.cli.main import main
from niwa.ext.errors import GameContractError, IllegalActionError, NotationError, VariantError
from niwa.ext.game import State
from niwa.ext.python_game import (
    CHANCE,
    SIMULTANEOUS,
    TERMINAL,
    PythonGame,
    PythonGameState,
    python_game_spec,
)
from niwa.ext.python_state import batch_playouts, notation_hash
from niwa.ext.reference import perft as oracle_perft
from niwa.ext.registry import unregister_game
from niwa.ext.toys import ChanceNimState, KuhnState, MatrixGameState
from niwa.solver.alphabeta import AlphaBeta
from niwa.solver.mcts import MCTS


@pytest.fixture(autouse=True)
def nim():
    spec = nim_spec()
    yield spec
    unregister_game("nim")


# the package's own examples run in test_doctests.py; these are the example plugin's
@pytest.mark.parametrize("module", ["niwa_nim", "niwa_nim.reference"])
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


# ---- the example plugin through the adapter ------------------------------------------
def test_nim_is_a_full_state_with_its_own_attributes_reachable(nim):
    s = nim.new(heaps=2, size=2)
    assert isinstance(s, State) and isinstance(s, PythonGameState)
    assert s.game_name == "nim" and s.variant == {"heaps": 2, "size": 2, "max_take": 0,
                                                  "rule": "normal"}
    assert s.piles == [2, 3]                 # the wrapped game's own attribute
    s.apply("b3")
    assert s.piles == [2, 0] and s.current_player() == 1
    with pytest.raises(IllegalActionError, match="illegal action 'b1'.*legal: a1, a2"):
        s.apply("b1")
    assert pickle.loads(pickle.dumps(s)) == s


@pytest.mark.parametrize("variant", [{}, {"heaps": 4, "size": 1, "max_take": 2},
                                     {"rule": "misere", "heaps": 2}])
def test_perft_through_the_c_contract_matches_the_reference(nim, variant):
    s = nim.new(**variant)
    reference = nim.load_reference().initial(**nim.parse_variant(variant))
    assert [s.perft(d) for d in (1, 2, 3, 4)] == [oracle_perft(reference, d) for d in (1, 2, 3, 4)]
    assert sum(n for _, n in s.perft_divide(3)) == s.perft(3)


def grundy_winner(piles, max_take=0):
    x = 0
    for p in piles:
        x ^= p % (max_take + 1) if max_take else p
    return x != 0


@pytest.mark.parametrize("text", [
    "nim heaps=3 size=3 max_take=0 rule=normal; piles 3 4 5; turn 0",     # 3^4^5 = 2: win
    "nim heaps=3 size=1 max_take=0 rule=normal; piles 1 2 3; turn 0",     # 1^2^3 = 0: loss
    "nim heaps=2 size=5 max_take=3 rule=normal; piles 5 6; turn 0",       # 1^2 = 3: win
    "nim heaps=2 size=4 max_take=3 rule=normal; piles 4 4; turn 1",       # 0^0: loss
])
def test_alphabeta_and_mcts_prove_the_known_value(nim, text):
    s = nim.from_notation(text)
    want = 1.0 if grundy_winner(s.piles, s.variant["max_take"]) else 0.0
    r = AlphaBeta(2).search(s, depth=60)
    assert r.proven and r.value == want
    m = MCTS(2, seed=1).search(s, iterations=60_000)
    assert m.proven and m.value == want
    if want == 1.0:     # the proven move leaves a zero nim-sum
        after = s.child(r.best)
        assert not grundy_winner(after.piles, s.variant["max_take"])


def test_playouts_and_batch_playouts_count_games_and_wins(nim):
    s = nim.new()
    games, actions, wins = nim.batch_playouts(s, 200, seed=3)
    assert games == 200 and sum(wins) == 200 and 3 * 200 <= actions <= 12 * 200
    assert batch_playouts(s, 50, 3, "heuristic")[0] == 50
    assert nim.batch_playouts(s, 200, seed=3) == (games, actions, wins)
    c = s.clone()
    assert 3 <= c.random_playout(1) <= 12 and c.is_terminal() and not s.is_terminal()


def test_hash_comes_from_the_game_or_from_the_notation(nim):
    s = nim.new()
    assert s.hash() == s.game.hash()

    class NoHash(PythonGame):
        game_name = "nohash"

        def current_player(self):
            return TERMINAL

        def legal_actions(self, player=None):
            return []

        def apply(self, action):
            pass

        def to_notation(self):
            return "nohash; done"

    assert PythonGameState(NoHash()).hash() == notation_hash("nohash; done")


def test_nim_notation_errors_name_the_offending_part(nim):
    good = "nim heaps=3 size=3 max_take=0 rule=normal; piles 3 4 5; turn 0"
    assert nim.from_notation(good).to_notation() == good
    for text, message in [
        ("nim heaps=3; piles 3 4 5", "3 parts"),
        ("nim heaps=9; piles 3; turn 0", "header: nim variant heaps=9 is out of range"),
        ("nim heaps=3 size=3; piles 3 4; turn 0", "piles lists 2 heaps; heaps=3"),
        ("nim heaps=3 size=3; piles 3 4 6; turn 0", "heap c holds '6'; expected 0..5"),
        ("nim heaps=3 size=3; piles 3 4 5; turn 1", "turn 1 cannot follow: 0 move(s)"),
        ("nim heaps=3 size=3; piles 3 4 4; turn 0", "turn 0 cannot follow: 1 move(s)"),
        ("nim heaps=3 size=3; heaps 3 4 5; turn 0", "must start with 'piles'"),
        ("nim heaps=3 size=3; piles 3 4 5; turn x", "'turn 0' or 'turn 1'"),
    ]:
        with pytest.raises(NotationError, match=message.replace("(", r"\(").replace(")", r"\)")):
            nim.from_notation(text)
    nim.from_notation("nim heaps=3 size=3; piles 3 4 3; turn 0")    # 2 stones: 1 or 2 moves


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | st.builds(
    lambda a, b, c: f"nim {a}; piles {b}; turn {c}",
    st.sampled_from(["", "heaps=2", "heaps=2 size=1", "size=x", "rule=misere max_take=2"]),
    st.text("0123456789 -²", max_size=8), st.text("01 x", max_size=3)))
def test_nim_parsing_never_crashes(text):
    spec = nim_spec()
    try:
        state = spec.from_notation(text)
    except NotationError:
        return
    assert spec.from_notation(state.to_notation()) == state


# ---- chance, simultaneous and hidden-information games through the adapter ----------------
class PyChanceNim(PythonGame):
    """toys.ChanceNimState in plain Python: the searchers must agree on both."""

    game_name = "py-chance-nim"

    def __init__(self, pile=7, max_take=2, extra=1 / 3):
        self.pile, self.max_take, self.extra = pile, max_take, extra
        self.to_move, self.pending, self.won_by = 0, False, -1

    def current_player(self):
        if self.won_by >= 0:
            return TERMINAL
        return CHANCE if self.pending else self.to_move

    def legal_actions(self, player=None):
        return list(range(1, min(self.max_take, self.pile) + 1))

    def chance_outcomes(self):
        return [(0, 1 - self.extra), (1, self.extra)]

    def apply(self, action):
        self.pile -= action
        if self.pile == 0:
            self.won_by = self.to_move
        elif self.pending:
            self.to_move = 1 - self.to_move
        self.pending = not self.pending and self.pile > 0

    def returns(self):
        return [float(self.won_by == 0), float(self.won_by == 1)]

    def to_notation(self):
        return (f"py-chance-nim pile={self.pile} turn={self.to_move} "
                f"chance={int(self.pending)} winner={self.won_by}")


class PyMatrix(PythonGame):
    game_name = "py-matrix"

    def __init__(self, payoff=((0.9, 0.2), (0.3, 0.6)), stages=1):
        self.payoff, self.stages, self.stage, self.total = payoff, stages, 0, 0.0

    def current_player(self):
        return TERMINAL if self.stage >= self.stages else SIMULTANEOUS

    def legal_actions(self, player=None):
        return list(range(len(self.payoff) if player == 0 else len(self.payoff[0])))

    def apply(self, action):
        raise IllegalActionError("a simultaneous game: use apply_joint")

    def apply_joint(self, actions):
        self.total += self.payoff[actions[0]][actions[1]]
        self.stage += 1

    def returns(self):
        return [self.total / self.stages, 1 - self.total / self.stages]

    def action_to_string(self, action, player=None):
        return ("r" if player in (None, 0) else "c") + str(action)

    def to_notation(self):
        return f"py-matrix stage={self.stage}/{self.stages} total={self.total:.6f}"


DEALS = [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]


class PyKuhn(PythonGame):
    """Kuhn poker: each player sees only their own card."""

    game_name = "py-kuhn"

    def __init__(self, deal=None):
        self.cards, self.history = deal, []

    def current_player(self):
        h = self.history
        if self.cards is None:
            return CHANCE
        if len(h) == 3 or (len(h) == 2 and h != [0, 1]):
            return TERMINAL
        return len(h) % 2

    def legal_actions(self, player=None):
        return [0, 1]

    def chance_outcomes(self):
        return [(d, 1 / 6) for d in range(6)]

    def apply(self, action):
        if self.cards is None:
            self.cards = DEALS[action]
        else:
            self.history.append(action)

    def returns(self):
        high = 1 if self.cards[0] > self.cards[1] else -1
        chips = {(1, 0): 1, (0, 0): high, (0, 1, 0): -1}.get(tuple(self.history), 2 * high)
        return [(chips + 2) / 4, 1 - (chips + 2) / 4]

    def information_state(self, player):
        card = "JQK"[self.cards[player]] if self.cards else "?"
        return f"py-kuhn seat={player} card={card} history={self.history}"

    def resample_hidden(self, player, rng):
        other = self.clone()
        if self.cards is not None:
            mine = self.cards[player]
            theirs = [c for c in range(3) if c != mine][rng.below(2)]
            other.cards = (mine, theirs) if player == 0 else (theirs, mine)
        return other

    def to_notation(self):
        cards = "".join("JQK"[c] for c in self.cards) if self.cards else "??"
        return f"py-kuhn cards={cards} history={''.join('pb'[a] for a in self.history)}"


@pytest.mark.parametrize("pile", [1, 5, 9])
def test_chance_nodes_searched_like_the_cython_toy(pile):
    py, cy = PythonGameState(PyChanceNim(pile)), ChanceNimState(pile=pile)
    assert [py.perft(d) for d in range(1, 7)] == [cy.perft(d) for d in range(1, 7)]
    a, b = AlphaBeta(2).search(py, depth=200), AlphaBeta(2).search(cy, depth=200)
    assert a.proven and a.value == pytest.approx(b.value)
    m, n = MCTS(2, seed=5).search(py, iterations=3000), MCTS(2, seed=5).search(cy, iterations=3000)
    assert [x.visits for x in m.actions] == [x.visits for x in n.actions]


def test_simultaneous_nodes_are_solved_as_matrix_games():
    r = AlphaBeta(2).search(PythonGameState(PyMatrix()), depth=10)
    assert r.proven and r.value == pytest.approx(0.48)
    assert r.strategy["row_strategy"] == pytest.approx([0.3, 0.7])
    s = PythonGameState(PyMatrix(stages=2))
    assert s.perft(2) == MatrixGameState(stages=2).perft(2) == 16
    m = MCTS(2, seed=6, sim="rm", gamma=0.05).search(PythonGameState(PyMatrix()), iterations=40_000)
    assert m.values[0] == pytest.approx(0.48, abs=0.03)
    s.apply_joint(["r1", "c0"])
    assert s.game.total == pytest.approx(0.3)
    with pytest.raises(IllegalActionError, match="simultaneous node: use apply_joint"):
        s.apply(0)


def test_hidden_information_reaches_ismcts_through_resample_hidden():
    s = PythonGameState(PyKuhn(deal=(2, 0)))
    view = s.resample_hidden(1, 4)
    assert view.information_state(1) == s.information_state(1) and view.game.cards[1] == 0
    assert s.game.cards == (2, 0)                      # resampling made a new game

    def answer_to_bet(card):
        t = PythonGameState(PyKuhn(deal=((card + 1) % 3, card)))
        t.apply(1)
        return MCTS(2, seed=9, ismcts=True).search(t, iterations=6000).best

    assert answer_to_bet(2) == 1      # king calls
    assert answer_to_bet(0) == 0      # jack folds
    assert PythonGameState(PyKuhn()).perft(3) == KuhnState().perft(3)


# ---- errors -------------------------------------------------------------------------------
def test_a_failure_inside_a_search_is_reported_with_the_method_and_the_cause():
    class Faulty(PyChanceNim):
        game_name = "faulty"

        def apply(self, action):
            if self.pile == 3:
                raise ZeroDivisionError("division by zero")
            super().apply(action)

    with pytest.raises(GameContractError,
                       match=r"faulty: apply\(\) raised ZeroDivisionError: division by zero"):
        AlphaBeta(2).search(PythonGameState(Faulty(5)), depth=20)
    with pytest.raises(GameContractError, match="apply"):
        PythonGameState(Faulty(5)).perft(4)
    PythonGameState(Faulty(5)).perft(1)      # nothing pending after the error was raised


def test_contract_violations_are_named():
    class TooBig(PyChanceNim):
        game_name = "toobig"

        def current_player(self):
            return 7

    with pytest.raises(GameContractError, match=r"current_player\(\) returned 7; expected a seat"):
        PythonGameState(TooBig()).current_player()
    with pytest.raises(GameContractError, match="current_player"):
        PythonGameState(TooBig()).perft(2)
    with pytest.raises(GameContractError, match="object is not a niwa game: it lacks "
                                                "current_player, legal_actions, apply"):
        PythonGameState(object())


def test_python_game_spec_checks_what_it_is_given():
    with pytest.raises(VariantError, match="game name 'My Game' must be one lower-case word"):
        python_game_spec(name="My Game", new=PyMatrix, from_notation=None,
                         max_game_length=1, num_distinct_actions=2)
    with pytest.raises(VariantError, match="num_distinct_actions must be a positive int"):
        python_game_spec(name="m", new=PyMatrix, from_notation=None, max_game_length=1,
                         num_distinct_actions=0)
    spec = python_game_spec(name="py-matrix", new=PyMatrix, from_notation=None,
                            max_game_length=1, num_distinct_actions=2, simultaneous=True)
    assert spec.traits.simultaneous and spec.max_game_length({}) == 1
    with pytest.raises(NotationError, match="py-matrix reads no positions"):
        spec.from_notation("py-matrix; x")


# ---- the CLI on the plugin game, registered in this process -----------------------------
def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_position_commands_work_on_the_plugin_game():
    r = run("games")
    assert r.exit_code == 0 and "\nnim\n" in r.output and "misere" in r.output
    r = run("new", "nim", "-v", "heaps=4")
    assert r.output.strip() == "nim heaps=4 size=3 max_take=0 rule=normal; piles 3 4 5 6; turn 0"
    r = run("show", "nim heaps=2")
    assert r.exit_code == 0 and "piles 3 4" in r.output
    r = run("moves", "nim heaps=1 size=2", "--json")
    assert json.loads(r.output) == {"player": 0, "actions": [{"id": 0, "name": "a1"},
                                                             {"id": 1, "name": "a2"}]}
    r = run("perft", "nim", "--depth", "3")
    assert r.exit_code == 0 and r.output.strip() == "810"
    r = run("solve", "nim")
    assert r.exit_code == 0 and "value 1.0000 (proven)" in r.output and "best   a2" in r.output
    r = run("new", "nim", "-v", "heaps=7")
    assert r.exit_code == 2 and "nim variant heaps=7 is out of range; expected 1..5" in r.output


def test_tournament_and_analyse_run_on_the_plugin_game(tmp_path):
    r = run("tournament", "nim", "--agents", "random", "mcts:iters=200", "--games", 4,
            "--workers", 1, "--out", tmp_path / "t")
    assert r.exit_code == 0, r.output
    assert "4 games" in r.output and (tmp_path / "t" / "games.csv").exists()
    r = run("analyse", "nim", "--vary", "rule=normal,misere", "--games", 20, "--workers", 1,
            "--out", tmp_path / "a")
    assert r.exit_code == 0, r.output
    assert "40 games" in r.output and (tmp_path / "a" / "variants.csv").exists()


# ---- installed as a package: the entry point is all niwa needs ---------------------------
def _installed(dist):
    """Is `dist` installed in this environment? (Asked in a fresh process: this one has
    the example's folder, and so its egg-info, on sys.path.)"""
    r = subprocess.run([sys.executable, "-m", "pip", "show", "-q", dist], capture_output=True)
    return r.returncode == 0


def test_the_example_package_installs_and_every_command_finds_it(tmp_path):
    """pip-installs docs/examples/niwa-nim into this environment (and removes it again),
    then runs the CLI in fresh processes, which find the game through its entry point."""
    niwa = Path(sys.executable).parent / "niwa"
    had_it = _installed("niwa-nim")
    pip = [sys.executable, "-m", "pip", "-q"]
    subprocess.run([*pip, "install", "--no-deps", "-e", str(NIM_DIR)], check=True,
                   capture_output=True, timeout=120)
    env = {**os.environ, "PYTHONPATH": ""}

    def cli(*args):
        r = subprocess.run([str(niwa), *map(str, args)], capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=120)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        return r.stdout

    try:
        assert "nim" in cli("games").split()
        start = cli("new", "nim").strip()
        assert start == "nim heaps=3 size=3 max_take=0 rule=normal; piles 3 4 5; turn 0"
        assert "piles 3 4 5" in cli("show", start)
        assert "c5" in cli("moves", "nim")
        assert cli("perft", "nim", "--depth", "3").strip() == "810"
        assert "value 1.0000 (proven)" in cli("solve", "nim")
        out = cli("tournament", "nim", "--agents", "random", "mcts:iters=200", "--games", 4,
                  "--out", "t")
        assert "4 games" in out
        out = cli("analyse", "nim", "--games", 20, "--out", "a")
        assert "20 games" in out
    finally:
        if not had_it:
            subprocess.run([*pip, "uninstall", "-y", "niwa-nim"], check=True,
                           capture_output=True, timeout=120)


def test_the_snippets_of_adding_a_game_run(monkeypatch):
    """docs/adding-a-game.md: every ```python block, run in order in one namespace."""
    root = NIM_DIR.parents[2]
    text = (root / "docs" / "adding-a-game.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    assert len(blocks) >= 4
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "path", list(sys.path))
    namespace = {"__name__": "adding_a_game"}
    for block in blocks:
        exec(compile(block, "docs/adding-a-game.md", "exec"), namespace)
    assert namespace["report"].games == 3 * 3
