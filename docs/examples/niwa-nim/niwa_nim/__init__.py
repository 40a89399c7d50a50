"""Nim, a niwa game written in plain Python (niwa.ext.python_game's contract).

Heap i (a, b, c, ...) starts with ``size + i`` stones; the mover takes 1 or more stones (at
most ``max_take``; 0 = no limit) from one heap. Under ``rule=normal`` whoever takes the
last stone wins, under ``rule=misere`` they lose. Under normal play the mover wins exactly
when the xor of the heaps' Grundy numbers (heap mod (max_take + 1)) is not 0.

Notation: ``nim heaps=3 size=3 max_take=0 rule=normal; piles 3 4 5; turn 0``.
Actions: ``16 * heap + (stones - 1)``, named like ``b3`` (take 3 stones from heap b).

>>> from niwa_nim import SPEC
>>> state = SPEC.new()
>>> state.to_notation()
'nim heaps=3 size=3 max_take=0 rule=normal; piles 3 4 5; turn 0'
>>> state.apply("c3"); state.piles
[3, 4, 2]
>>> SPEC.from_notation(state.to_notation()) == state
True
"""

from __future__ import annotations

from niwa.ext.errors import NiwaError, NotationError
from niwa.ext.python_game import TERMINAL, PythonGame, python_game_spec
from niwa.ext.spec import StatField, VariantOption

HEAP_NAMES = "abcde"
STRIDE = 16          # action = STRIDE * heap + (stones - 1)

OPTIONS = (
    VariantOption("heaps", range(1, 6), 3, "number of heaps"),
    VariantOption("size", range(1, 10), 3, "stones in heap a (heap i holds size + i)"),
    VariantOption("max_take", range(0, 10), 0, "most stones one move may take (0 = no limit)"),
    VariantOption("rule", ("normal", "misere"), "normal",
                  "normal: taking the last stone wins; misere: it loses"),
)


class Nim(PythonGame):
    """A Nim position: the heaps, the seat to move and the stones each seat took."""

    game_name = "nim"
    num_players = 2

    def __init__(self, heaps=3, size=3, max_take=0, rule="normal"):
        self.variant = {"heaps": heaps, "size": size, "max_take": max_take, "rule": rule}
        self.start = [size + i for i in range(heaps)]
        self.piles = list(self.start)
        self.turn = 0
        self.taken = [0, 0]

    # ---- the contract ------------------------------------------------------------------
    def current_player(self):
        return TERMINAL if not any(self.piles) else self.turn

    def legal_actions(self, player=None):
        most = self.variant["max_take"] or max(self.start)
        return [STRIDE * h + k - 1 for h, pile in enumerate(self.piles)
                for k in range(1, min(pile, most) + 1)]

    def apply(self, action):
        heap, stones = divmod(action, STRIDE)
        self.piles[heap] -= stones + 1
        self.taken[self.turn] += stones + 1
        self.turn = 1 - self.turn

    def clone(self):
        other = Nim.__new__(Nim)
        other.variant, other.start = self.variant, self.start
        other.piles, other.turn, other.taken = list(self.piles), self.turn, list(self.taken)
        return other

    def returns(self):
        last = 1 - self.turn                  # who took the last stone
        winner = last if self.variant["rule"] == "normal" else self.turn
        return [1.0 if p == winner else 0.0 for p in range(2)]

    def action_to_string(self, action, player=None):
        heap, stones = divmod(action, STRIDE)
        return f"{HEAP_NAMES[heap]}{stones + 1}"

    def to_notation(self):
        header = " ".join(f"{k}={v}" for k, v in self.variant.items())
        return f"nim {header}; piles {' '.join(map(str, self.piles))}; turn {self.turn}"

    def hash(self):
        h = self.turn
        for pile in self.piles:
            h = h * 16 + pile
        return h

    def evaluate(self, player):
        """Normal play: 0.75 for the side the Grundy theory says wins, else 0.25; 0.5 in
        misere (a heuristic, as the contract asks: the searchers still prove values)."""
        if self.variant["rule"] != "normal":
            return 0.5
        period = self.variant["max_take"] + 1 if self.variant["max_take"] else 1 << 8
        nim_sum = 0
        for pile in self.piles:
            nim_sum ^= pile % period
        mover_wins = nim_sum != 0
        return 0.75 if mover_wins == (player == self.turn) else 0.25

    def stats(self):
        return {"taken": list(self.taken)}


def from_notation(text: str) -> Nim:
    """A Nim position from its notation; what is wrong is named in a NotationError."""
    parts = [p.strip() for p in text.split(";")]
    if len(parts) != 3:
        raise NotationError(f"nim notation has 3 parts separated by ';' (header; piles; turn), "
                            f"got {len(parts)}")
    words = parts[0].split()
    if not words or words[0] != "nim":
        raise NotationError(f"nim notation must begin with 'nim', got {parts[0][:20]!r}")
    given = {}
    for word in words[1:]:
        key, eq, value = word.partition("=")
        if not eq:
            raise NotationError(f"header item {word!r} should be KEY=VALUE, e.g. heaps=3")
        given[key] = value
    try:
        variant = SPEC.parse_variant(given)
    except NiwaError as e:
        raise NotationError(f"header: {e}") from None
    state = Nim(**variant)
    piles = parts[1].split()
    if not piles or piles[0] != "piles":
        raise NotationError(f"second part must start with 'piles', got {parts[1][:20]!r}")
    if len(piles) - 1 != variant["heaps"]:
        raise NotationError(f"piles lists {len(piles) - 1} heaps; heaps={variant['heaps']}")
    for i, (word, most) in enumerate(zip(piles[1:], state.start, strict=True)):
        if not (word.isascii() and word.isdigit()) or int(word) > most:
            raise NotationError(f"heap {HEAP_NAMES[i]} holds {word!r}; expected 0..{most} "
                                f"(heaps only shrink)")
        state.piles[i] = int(word)
    turn = parts[2].split()
    if len(turn) != 2 or turn[0] != "turn" or turn[1] not in ("0", "1"):
        raise NotationError(f"third part must be 'turn 0' or 'turn 1', got {parts[2][:20]!r}")
    state.turn = int(turn[1])
    removed = [s - p for s, p in zip(state.start, state.piles, strict=True)]
    most = variant["max_take"] or max(state.start)
    fewest_moves = sum(-(-r // most) for r in removed)
    if sum(removed) == fewest_moves and fewest_moves % 2 != state.turn:
        raise NotationError(f"turn {state.turn} cannot follow: {fewest_moves} move(s) took "
                            f"the {sum(removed)} missing stone(s)")
    # who took which stones is not in the notation: stats() count from here on
    return state


def max_game_length(variant: dict) -> int:
    """Every move takes at least one stone."""
    return sum(variant["size"] + i for i in range(variant["heaps"]))


def num_distinct_actions(variant: dict) -> int:
    biggest = variant["size"] + variant["heaps"] - 1
    most = min(variant["max_take"] or biggest, biggest)
    return STRIDE * (variant["heaps"] - 1) + most


SPEC = python_game_spec(
    name="nim",
    title="Nim",
    new=Nim,
    from_notation=from_notation,
    options=OPTIONS,
    max_game_length=max_game_length,
    num_distinct_actions=num_distinct_actions,
    stats=(StatField("taken", "int", True, "stones the player took"),),
    reference="niwa_nim.reference",
)

