"""Nim's reference rules (the oracle): written again from the rules, plainly and differently
(a dict of heaps by name, a winner decided when the last stone goes), so the contract
suite's lockstep test can compare the two implementations move by move.

>>> s = initial(heaps=2, size=1)
>>> s.legal_actions()
[0, 16, 17]
"""

from __future__ import annotations

import random

_TERMINAL = -4


class NimReference:
    def __init__(self, heaps=3, size=3, max_take=0, rule="normal"):
        self.header = f"nim heaps={heaps} size={size} max_take={max_take} rule={rule}"
        self.limit = max_take
        self.misere = rule == "misere"
        self.heaps = {"abcde"[i]: size + i for i in range(heaps)}
        self.mover = 0
        self.winner = None

    def clone(self):
        other = NimReference.__new__(NimReference)
        other.__dict__ = {**self.__dict__, "heaps": dict(self.heaps)}
        return other

    def current_player(self):
        return _TERMINAL if self.winner is not None else self.mover

    def is_terminal(self):
        return self.winner is not None

    def chance_outcomes(self):
        return []

    def legal_actions(self):
        if self.winner is not None:
            return []
        acts = []
        for i, name in enumerate(sorted(self.heaps)):
            for take in range(1, self.heaps[name] + 1):
                if self.limit == 0 or take <= self.limit:
                    acts.append(16 * i + take - 1)
        return acts

    def apply(self, action, check=True):
        if check and action not in self.legal_actions():
            raise ValueError(f"illegal action {action}")
        name = sorted(self.heaps)[action // 16]
        self.heaps[name] -= action % 16 + 1
        if sum(self.heaps.values()) == 0:
            self.winner = 1 - self.mover if self.misere else self.mover
        self.mover = 1 - self.mover

    def returns(self):
        if self.winner is None:
            return [0.0, 0.0]
        return [float(p == self.winner) for p in (0, 1)]

    def to_notation(self):
        piles = " ".join(str(self.heaps[n]) for n in sorted(self.heaps))
        return f"{self.header}; piles {piles}; turn {self.mover}"


def initial(**variant):
    return NimReference(**variant)


def random_playout(state, rng: random.Random) -> int:
    plies = 0
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()), check=False)
        plies += 1
    return plies
