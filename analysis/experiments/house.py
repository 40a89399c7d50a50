"""House rules: a variant of a built-in game written as a subclass of its plain-Python
reference rules, played and analysed beside the compiled engine by the same agents.

A designer who wants to try a rule of their own does not write a plugin game. They
subclass the game's reference rules (niwa.ext.reference.lotus.LotusOracle,
niwa.ext.reference.haru.HaruOracle, niwa.ext.reference.bonsai.Bonsai), override the one
method that holds the rule, and name the class to `niwa analyse GAME --house
MODULE:CLASS` (a module on the Python path, or a path to a .py file). The class is wrapped
here into a plain-Python game (niwa.ext.python_game: the contract, PythonGameState) with
the compiled game's variant options, bounds and traits, registered in this process as
`GAME-CLASSNAME` (workers are forked, so they see it), and played as one more value of a
pseudo-setting `rules` (`engine` = the compiled game): every comparison of the report then
reads "rules=CLASS vs rules=engine", the same agents, seeds and seat orders.

The wrapper changes nothing in the rules: a subclass that overrides nothing plays move for
move like the compiled engine (`check_plays_like`, run by the tests for all three games).
Notations begin with the house game's name instead of the game's, so a house position can
never be mistaken for a position of the real game. The reference rules keep no
statistics the engines record (scores by part, goals), so those report sections are left
out when a house rule is in the run, and, for a game with hidden information (Haru), the
reference rules cannot resample what a seat does not see: searching agents then see the
whole position in the house variant (a note in the report says so). See
docs/house-rules.md for a worked example.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import random
import sys

from niwa.ext.errors import NiwaError, VariantError
from niwa.ext.python_game import CHANCE, SIMULTANEOUS, TERMINAL, PythonGame, python_game_spec
from niwa.ext.registry import get_game, register_game
from niwa.ext.spec import GameSpec

RULES_KEY, ENGINE = "rules", "engine"


class HouseRuleError(NiwaError):
    """A --house class that cannot be loaded or does not fit its game (one line)."""


class HouseGame(PythonGame):
    """The plain-Python game contract around one reference-rules object."""

    def __init__(self, rules, name: str, num_players: int):
        self.rules, self.game_name, self.num_players = rules, name, num_players
        self.variant = dict(getattr(rules, "variant", {}))

    def current_player(self):
        return self.rules.current_player()

    def is_terminal(self):
        return self.current_player() == TERMINAL

    def legal_actions(self, player=None):
        if player is None:
            return list(self.rules.legal_actions())
        return list(self.rules.legal_actions(player))

    def apply(self, action, check=False):
        self.rules.apply(action, check=check)

    def apply_joint(self, actions):
        self.rules.apply_joint(list(actions))

    def chance_outcomes(self):
        return list(self.rules.chance_outcomes())

    def returns(self):
        return list(self.rules.returns())

    def clone(self):
        return HouseGame(self.rules.clone(), self.game_name, self.num_players)

    def resample_hidden(self, player, rng):
        if hasattr(self.rules, "resample_hidden"):
            return HouseGame(self.rules.resample_hidden(player, rng), self.game_name,
                             self.num_players)
        return self.clone()       # the reference rules cannot: the seat sees everything

    def to_notation(self):
        text = self.rules.to_notation()
        head, _, rest = text.partition(" ")
        return f"{self.game_name} {rest}" if rest else self.game_name

    def action_to_string(self, action, player=None):
        if hasattr(self.rules, "action_to_string"):
            return str(self.rules.action_to_string(action))
        return str(action)


def load_class(text: str) -> type:
    """'my_rules:TrampolineJumpsTwo' or 'path/to/my_rules.py:TrampolineJumpsTwo' -> the class."""
    module_name, colon, cls_name = str(text).rpartition(":")
    if not colon or not module_name or not cls_name.isidentifier():
        raise HouseRuleError(f"--house {text!r} should be MODULE:CLASS or FILE.py:CLASS "
                             "(e.g. my_rules:TrampolineJumpsTwo)")
    try:
        if module_name.endswith(".py"):
            if not os.path.isfile(module_name):
                raise HouseRuleError(f"--house {text!r}: no file {module_name!r}")
            name = "niwa_house_" + os.path.splitext(os.path.basename(module_name))[0]
            spec = importlib.util.spec_from_file_location(name, module_name)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        else:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())     # a module next to the user, as python -m
            module = importlib.import_module(module_name)
    except HouseRuleError:
        raise
    except Exception as e:      # the user's code: any failure is one line, not a traceback
        raise HouseRuleError(f"--house {text!r}: cannot import {module_name!r}: "
                             f"{type(e).__name__}: {e}") from None
    cls = getattr(module, cls_name, None)
    if not isinstance(cls, type):
        raise HouseRuleError(f"--house {text!r}: {module_name} has no class {cls_name!r}")
    return cls


def house_name(game: str, cls: type) -> str:
    """The registry name of a house variant: 'lotus-trampolinejumpstwo'."""
    return f"{game}-{cls.__name__.lower()}"


def house_spec(game: str, cls: type) -> GameSpec:
    """The GameSpec of `cls` (a subclass of `game`'s reference rules), with the compiled
    game's options, bounds and traits. Raises HouseRuleError if it is not such a subclass.
    """
    base = get_game(game)
    reference = base.load_reference()
    rules_class = type(reference.initial())
    if not (isinstance(cls, type) and issubclass(cls, rules_class)):
        raise HouseRuleError(f"--house {cls!r} must subclass {game}'s reference rules "
                             f"{reference.__name__}.{rules_class.__name__}")
    name = house_name(game, cls)
    traits = base.traits

    def new(**variant):
        rules = cls(**variant)
        return HouseGame(rules, name, len(rules.returns()))

    return python_game_spec(
        name=name, new=new, from_notation=None, title=f"{base.title} ({cls.__name__})",
        max_game_length=base.max_game_length, num_distinct_actions=base.num_distinct_actions,
        options=base.options, players=(traits.min_players, traits.max_players),
        chance=traits.chance, simultaneous=traits.simultaneous,
        hidden_information=traits.hidden_information, deals=False,
        mcts_defaults=base.mcts_defaults, check_variant=base.check_variant,
        simultaneous_when=base.simultaneous_when)


def register_house(game: str, text: str) -> tuple[str, str]:
    """Load and register a --house class; returns (its registry name, its class name)."""
    cls = load_class(text)
    spec = house_spec(game, cls)
    register_game(spec)
    return spec.name, cls.__name__


def play_name(game: str, rules: str, houses: dict[str, str]) -> str:
    """The registry name that plays the `rules` value of a run (`engine`: the game)."""
    return game if rules == ENGINE else houses[rules]


# ---- the same game move for move ------------------------------------------------------------
def check_plays_like(house: GameSpec, base: GameSpec, variant: dict, seed: int) -> int:
    """Play one seeded random game in the house game and the compiled one side by side and
    return its plies; raise AssertionError at the first difference: current player,
    legal actions (per seat at simultaneous nodes), chance outcomes and probabilities,
    notation (after the game's name) and returns."""
    rng = random.Random(seed)
    mine, theirs = house.new(**variant), base.new(**variant)
    plies = 0
    while True:
        where = f"{base.name} {variant} seed {seed}, ply {plies}: "
        p = mine.current_player()
        assert p == theirs.current_player(), where + "current player differs"
        a, b = mine.to_notation().partition(" ")[2], theirs.to_notation().partition(" ")[2]
        assert a == b, where + f"notation differs:\n  house  {a}\n  engine {b}"
        if p == TERMINAL:
            assert list(mine.returns()) == list(theirs.returns()), where + "returns differ"
            return plies
        if p == SIMULTANEOUS:
            joint = []
            for q in range(theirs.num_players):
                la, lb = sorted(mine.legal_actions(q)), sorted(theirs.legal_actions(q))
                assert la == lb, where + f"seat {q}'s actions differ: {la} vs {lb}"
                joint.append(rng.choice(lb) if lb else -1)
            mine.apply_joint(joint)
            theirs.apply_joint(joint)
        elif p == CHANCE:
            oa, ob = dict(mine.chance_outcomes()), dict(theirs.chance_outcomes())
            assert oa.keys() == ob.keys() and all(abs(oa[k] - ob[k]) < 1e-12 for k in ob), \
                where + "chance outcomes differ"
            ids = sorted(ob)
            step = rng.choices(ids, [ob[k] for k in ids])[0]
            mine.apply(step)
            theirs.apply(step)
        else:
            la, lb = sorted(mine.legal_actions()), sorted(theirs.legal_actions())
            assert la == lb, where + f"legal actions differ: {la} vs {lb}"
            step = rng.choice(lb)
            mine.apply(step)
            theirs.apply(step)
        plies += 1


__all__ = ["ENGINE", "RULES_KEY", "HouseGame", "HouseRuleError", "VariantError",
           "check_plays_like", "house_spec", "load_class", "register_house"]
