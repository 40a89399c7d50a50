"""Haru Ichiban reference rules in plain Python, straight from docs/rules/haru-ichiban.md.

Slow and obvious on purpose: the pond is a dict {(row, col): Pad}, hands and piles are
Python sets, figures are found by walking the grid. It shares nothing with the engine
except the documented action model and notation:
    1..8 choose that flower; 32+cell Senior blooms; 64+cell displaced frog goes there;
    96+cell new dark pad; 128+4*cell+dir wind (dir 0 N, 1 E, 2 S, 3 W);
    chance: 256+v the next drawer draws v; 272+seat that seat croaks first.
(cell = 5*row + col, row 0 at the top.)
"""

from __future__ import annotations

import copy

CHANCE, SIMULTANEOUS, TERMINAL = -1, -2, -4
COLOURS = ("Y", "R")
DIRECTIONS = [(-1, 0), (0, 1), (1, 0), (0, -1)]   # N, E, S, W
ROUND_CAP = 50
LAYOUT = ["L.L.L", ".LYD.", "LL.LL", ".LLR.", "L.L.L"]
VARIANT_KEYS = ("figures", "croak", "new_round", "target", "view")


class Pad:
    def __init__(self, kind):
        self.kind = kind          # "plain", "double", "eggY", "eggR"
        self.dark = kind == "double"
        self.flower = None        # (colour index, value)


def cell_of(pos):
    return pos[0] * 5 + pos[1]


def pos_of(cell):
    return divmod(cell, 5)


def name(pos):
    return "abcde"[pos[1]] + str(pos[0] + 1)


def on_board(pos):
    return 0 <= pos[0] < 5 and 0 <= pos[1] < 5


def all_shapes():
    """Every figure shape on the 5x5 grid: [(points, frozenset of positions, length)]
    (length 0 for a square)."""
    shapes = []
    for r in range(4):
        for c in range(4):
            shapes.append((1, frozenset({(r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1)}), 0))
    for r in range(5):
        for c in range(5):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                for length in (4, 5):
                    line = [(r + k * dr, c + k * dc) for k in range(length)]
                    if all(on_board(p) for p in line):
                        pts = 5 if length == 5 else (3 if dr and dc else 2)
                        shapes.append((pts, frozenset(line), length))
    return shapes


SHAPES = all_shapes()


def figures_of(own):
    """The figures a set of positions holds."""
    if len(own) < 4:
        return []
    return [shape for shape in SHAPES if shape[1] <= own]


class HaruOracle:
    def __init__(self, figures="best", croak="random", new_round="keep", target=5,
                 view="simultaneous"):
        self.variant = {"figures": figures, "croak": croak, "new_round": new_round,
                        "target": int(target), "view": view}
        self.scores = [0, 0]
        self.round = 1
        self.winner = None        # 0, 1 or "draw"
        self.capped = False
        self.history = []
        self.lay_out_pond()
        self.new_round_setup()

    # ---- setup ----------------------------------------------------------------------
    def lay_out_pond(self):
        kinds = {"L": "plain", "Y": "eggY", "R": "eggR", "D": "double"}
        self.pads = {}
        for r, row in enumerate(LAYOUT):
            for c, ch in enumerate(row):
                if ch != ".":
                    self.pads[(r, c)] = Pad(kinds[ch])

    def find_pad(self, kind):
        return next(p for p, pad in self.pads.items() if pad.kind == kind)

    def new_round_setup(self):
        for pad in self.pads.values():
            pad.flower = None
            pad.dark = pad.kind == "double"
        self.frogs = [self.find_pad("eggY"), self.find_pad("eggR")]
        self.hands = [set(), set()]
        self.piles = [set(range(1, 9)), set(range(1, 9))]
        self.picks = [None, None]
        self.turn = 1
        self.phase = "draw"
        self.first_croaker = None

    # ---- queries --------------------------------------------------------------------
    def clone(self):
        return copy.deepcopy(self)

    def is_terminal(self):
        return self.phase == "over"

    def junior(self):
        return 0 if self.picks[0] < self.picks[1] else 1

    def next_drawer(self):
        for p in (0, 1):
            if len(self.hands[p]) < 3 and self.piles[p]:
                return p
        return None

    def current_player(self):
        ph = self.phase
        if ph in ("draw", "croak"):
            return CHANCE
        if ph == "choose":
            if self.variant["view"] == "simultaneous":
                return SIMULTANEOUS
            return 0 if self.picks[0] is None else 1
        if ph == "over":
            return TERMINAL
        if ph == "wind":
            return self.junior()
        if ph in ("bloom", "bloom-frog", "dark", "dark-frog"):
            return 1 - self.junior()
        if ph == "tie-frog1":
            return self.first_croaker
        return 1 - self.first_croaker      # tie-frog2

    def free_pads(self):
        return [p for p, pad in self.pads.items() if pad.flower is None]

    def frog_destinations(self):
        return [p for p in self.free_pads()
                if not self.pads[p].dark and p not in self.frogs]

    def legal_winds(self):
        out = []
        for pos in self.pads:
            for d, (dr, dc) in enumerate(DIRECTIONS):
                if self.push_chain(pos, dr, dc) is not None:
                    out.append(128 + 4 * cell_of(pos) + d)
        return out

    def push_chain(self, pos, dr, dc):
        chain = []
        p = pos
        while on_board(p) and p in self.pads:
            chain.append(p)
            p = (p[0] + dr, p[1] + dc)
        if not on_board(p):
            return None        # the front pad would leave the pond
        return chain

    def legal_actions(self, player=None):
        ph = self.phase
        if ph == "over":
            return []
        if ph in ("draw", "croak"):
            return [a for a, _ in self.chance_outcomes()]
        if ph == "choose":
            mover = self.current_player()
            if mover == SIMULTANEOUS:
                return sorted(self.hands[player]) if player is not None else []
            if player is not None and player != mover:
                return []
            return sorted(self.hands[mover])
        if player is not None and player != self.current_player():
            return []
        if ph == "bloom":
            return sorted(32 + cell_of(p) for p in self.free_pads())
        if ph in ("bloom-frog", "dark-frog", "tie-frog1", "tie-frog2"):
            return sorted(64 + cell_of(p) for p in self.frog_destinations())
        if ph == "dark":
            return sorted(96 + cell_of(p) for p in self.free_pads())
        if ph == "wind":
            return sorted(self.legal_winds())
        raise AssertionError(ph)

    def chance_outcomes(self):
        if self.phase == "draw":
            pile = sorted(self.piles[self.next_drawer()])
            return [(256 + v, 1.0 / len(pile)) for v in pile]
        if self.phase == "croak":
            return [(272, 0.5), (273, 0.5)]
        return []

    def returns(self):
        if self.phase != "over":
            return [0.0, 0.0]
        if self.winner == "draw":
            return [0.5, 0.5]
        return [1.0 if p == self.winner else 0.0 for p in (0, 1)]

    # ---- rules ----------------------------------------------------------------------
    def score_of(self, colour):
        """(points, formed a 5-line) of colour's figures now, under the figures variant."""
        own = {p for p, pad in self.pads.items() if pad.flower and pad.flower[0] == colour}
        figs = figures_of(own)
        if not figs:
            return 0, False
        five = any(length == 5 for _, _, length in figs)
        if self.variant["figures"] == "best":
            return max(pts for pts, _, _ in figs), five
        fives = [cells for _, cells, length in figs if length == 5]
        total = 0
        for pts, cells, length in figs:
            if length == 4 and any(cells <= f for f in fives):
                continue
            total += pts
        return total, five

    def figure_check(self):
        """Checked after every bloom and after the wind; True if the round ended."""
        (g0, f0), (g1, f1) = self.score_of(0), self.score_of(1)
        if g0 == 0 and g1 == 0:
            return False
        self.finish_round([g0, g1], [f0, f1])
        return True

    def finish_round(self, gains, fives):
        self.scores = [self.scores[0] + gains[0], self.scores[1] + gains[1]]
        self.history.append(list(self.scores))
        target = self.variant["target"]
        if fives[0] != fives[1]:
            self.winner = 0 if fives[0] else 1
        else:
            reached = [fives[p] or self.scores[p] >= target for p in (0, 1)]
            if all(reached):
                if self.scores[0] != self.scores[1]:
                    self.winner = 0 if self.scores[0] > self.scores[1] else 1
            elif reached[0]:
                self.winner = 0
            elif reached[1]:
                self.winner = 1
        if self.winner is None and self.round >= ROUND_CAP:
            self.capped = True
            if self.scores[0] == self.scores[1]:
                self.winner = "draw"
            else:
                self.winner = 0 if self.scores[0] > self.scores[1] else 1
        if self.winner is not None:
            self.phase = "over"
            self.picks = [None, None]
            return
        self.round += 1
        if self.variant["new_round"] == "reset":
            self.lay_out_pond()
        self.new_round_setup()

    def bloom(self, pos, colour):
        self.pads[pos].flower = (colour, self.picks[colour])

    def frogs_may_leave(self):
        if self.frogs[0] is not None and len(self.free_pads()) == 2:
            self.frogs = [None, None]

    def frog_on(self, pos):
        for p in (0, 1):
            if self.frogs[p] == pos:
                return p
        return None

    def dark_free_pad(self):
        return next(p for p, pad in self.pads.items() if pad.dark and pad.flower is None)

    def reveal(self):
        if self.picks[0] != self.picks[1]:
            j = self.junior()
            self.bloom(self.dark_free_pad(), j)      # Junior blooms the dark pad
            if self.figure_check():
                return
            self.frogs_may_leave()
            self.phase = "bloom"
            return
        mode = self.variant["croak"]
        if mode == "seat0":
            self.croak(0)
        elif mode == "trailing" and self.scores[0] != self.scores[1]:
            self.croak(0 if self.scores[0] < self.scores[1] else 1)
        else:
            self.phase = "croak"

    def croak(self, first):
        """A tie: both bloom at once (the seeds: the blooms are automatic, croaking first
        only means moving one's frog first), then the frogs move in croak order."""
        self.first_croaker = first
        second = 1 - first
        if self.frogs[0] is not None:
            self.bloom(self.frogs[0], 0)
            self.bloom(self.frogs[1], 1)
        else:
            self.bloom(self.dark_free_pad(), first)
            self.bloom(self.free_pads()[0], second)
        if self.figure_check():
            return
        self.frogs_may_leave()
        if self.frogs[0] is not None:
            self.moving = first
            self.phase = "tie-frog1"
        else:
            self.end_turn()

    def end_turn(self):
        self.picks = [None, None]
        self.first_croaker = None
        if self.turn == 8:
            self.finish_round([0, 0], [False, False])
            return
        self.turn += 1
        self.phase = "draw" if self.next_drawer() is not None else "choose"

    def apply_joint(self, actions):
        for p in (0, 1):
            self.picks[p] = actions[p]
            self.hands[p].remove(actions[p])
        self.reveal()

    def apply(self, a, check=True):
        if check:
            legal = self.legal_actions()
            assert a in legal, (a, legal, self.to_notation())
        ph = self.phase
        if ph == "draw":
            p = self.next_drawer()
            self.piles[p].remove(a - 256)
            self.hands[p].add(a - 256)
            self.phase = "draw" if self.next_drawer() is not None else "choose"
        elif ph == "croak":
            self.croak(a - 272)
        elif ph == "choose":
            p = 0 if self.picks[0] is None else 1
            self.picks[p] = a
            self.hands[p].remove(a)
            if p == 1:
                self.reveal()
        elif ph == "bloom":
            pos = pos_of(a - 32)
            senior = 1 - self.junior()
            self.bloom(pos, senior)
            if self.figure_check():
                return
            self.frogs_may_leave()
            frog = self.frog_on(pos)
            if frog is not None:
                self.moving = frog
                self.phase = "bloom-frog"
            else:
                self.phase = "wind"
        elif ph in ("bloom-frog", "dark-frog", "tie-frog1", "tie-frog2"):
            self.frogs[self.moving] = pos_of(a - 64)
            if ph == "bloom-frog":
                self.phase = "wind"
            elif ph == "tie-frog1":
                self.moving = 1 - self.first_croaker
                self.phase = "tie-frog2"
            else:
                self.end_turn()
        elif ph == "wind":
            cell, d = divmod(a - 128, 4)
            self.blow(pos_of(cell), *DIRECTIONS[d])
            if self.figure_check():
                return
            self.phase = "dark" if self.free_pads() else None
            if self.phase is None:
                self.end_turn()
        elif ph == "dark":
            pos = pos_of(a - 96)
            self.pads[pos].dark = True
            frog = self.frog_on(pos)
            if frog is not None:
                self.moving = frog
                self.phase = "dark-frog"
            else:
                self.end_turn()
        else:
            raise AssertionError(ph)

    def blow(self, pos, dr, dc):
        chain = self.push_chain(pos, dr, dc)
        moved = {}
        for p in chain:
            moved[(p[0] + dr, p[1] + dc)] = self.pads.pop(p)
        self.pads.update(moved)
        self.frogs = [(f[0] + dr, f[1] + dc) if f in chain else f for f in self.frogs]

    # ---- notation (the engine's format) ---------------------------------------------
    def to_notation(self):
        v = self.variant
        head = "haru " + " ".join(f"{k}={v[k]}" for k in VARIANT_KEYS)
        rows = []
        for r in range(5):
            row = ""
            for c in range(5):
                pad = self.pads.get((r, c))
                if pad is None:
                    row += "."
                elif pad.kind == "double":
                    row += "D"
                else:
                    ch = {"plain": "o", "eggY": "y", "eggR": "r"}[pad.kind]
                    if pad.kind == "plain" and pad.dark:
                        ch = "x"
                    elif pad.dark:
                        ch = ch.upper()
                    row += ch
            rows.append(row)
        flowers = " ".join(f"{name(p)}:{COLOURS[pad.flower[0]]}{pad.flower[1]}"
                           for p, pad in sorted(self.pads.items()) if pad.flower) or "-"
        frogs = " ".join(f"{COLOURS[p]}:{name(self.frogs[p]) if self.frogs[p] else 'off'}"
                         for p in (0, 1))
        if self.phase == "over":
            phase = "over " + ("draw" if self.winner == "draw" else COLOURS[self.winner])
            if self.capped:
                phase += " capped"
        elif self.phase == "choose" and self.picks[0] is not None:
            phase = f"choose Y={self.picks[0]}"
        elif self.phase in ("draw", "choose"):
            phase = self.phase
        else:
            phase = f"{self.phase} Y{self.picks[0]} R{self.picks[1]}"
            if self.phase.startswith("tie-frog"):
                phase += f" first={COLOURS[self.first_croaker]}"
        hands = " ".join(f"{COLOURS[p]}:{''.join(map(str, sorted(self.hands[p]))) or '-'}"
                         for p in (0, 1))
        piles = " ".join(f"{COLOURS[p]}:{{{','.join(map(str, sorted(self.piles[p])))}}}"
                         for p in (0, 1))
        return "; ".join([head, "pond " + "/".join(rows), "flowers " + flowers,
                          "frogs " + frogs, f"score Y:{self.scores[0]} R:{self.scores[1]}",
                          f"round {self.round} turn {self.turn}", "phase " + phase,
                          "hands " + hands, "piles " + piles])


def initial(**variant):
    return HaruOracle(**variant)


def random_playout(state, rng):
    """Play uniformly random actions (chance by its distribution) to the end."""
    plies = 0
    while not state.is_terminal():
        p = state.current_player()
        if p == CHANCE:
            state.apply(rng.choice(state.chance_outcomes())[0], check=False)
        elif p == SIMULTANEOUS:
            state.apply_joint([rng.choice(sorted(state.hands[q])) for q in (0, 1)])
        else:
            state.apply(rng.choice(state.legal_actions()), check=False)
        plies += 1
    return plies
