"""Bonsai reference rules in plain Python, written straight from docs/rules/bonsai.md.

Independent of the engine (no import of niwa.ext); it shares only the action model and the
notation, which are part of the spec (both documented in ext/bonsai.pyx's docstring).
Slow and obvious on purpose: trees are lists of (x, y, type) in placement order.
"""

from __future__ import annotations

from itertools import combinations

W, L, F, R = range(4)
TILES = "WLFR"
CARDS = ["T", "GW", "GL", "GF", "GR", "MA", "MWW", "MWL", "MWLF", "MWLR", "MLL", "MLF", "MLFF",
         "MLR", "HW", "HL", "HF", "HR", "PW", "PL", "PF", "PR", "PG", "PH", "PM"]
C = {name: i for i, name in enumerate(CARDS)}
#          T GW GL GF GR MA WW WL WLF WLR LL LF LFF LR HW HL HF HR  7 parchments
DECK = {2: [3, 2, 2, 2, 2, 2, 1, 1, 0, 0, 1, 1, 0, 1, 3, 2, 1, 1] + [1] * 7,
        3: [5, 3, 4, 3, 2, 3, 1, 3, 1, 1, 1, 1, 0, 1, 3, 2, 1, 1] + [1] * 7,
        4: [6, 4, 4, 3, 3, 3, 1, 3, 1, 1, 1, 1, 1, 1, 3, 2, 1, 1] + [1] * 7}
MASTER_TILES = {"MWW": [W, W], "MWL": [W, L], "MWLF": [W, L, F], "MWLR": [W, L, R],
                "MLL": [L, L], "MLF": [L, F], "MLFF": [L, F, F], "MLR": [L, R]}
PARCHMENTS = range(C["PW"], C["PM"] + 1)
GROWTHS = range(C["GW"], C["GR"] + 1)
MASTERS = range(C["MA"], C["MLR"] + 1)
HELPERS = range(C["HW"], C["HR"] + 1)

COLOURS = ["brown", "green", "orange", "pink", "blue"]
SIZES = "sml"
NEED = {"brown": (8, 10, 12), "green": (5, 7, 9), "orange": (3, 4, 5), "pink": (3, 4, 5)}
POINTS = {"brown": (5, 10, 15), "green": (6, 9, 12), "orange": (9, 11, 13), "pink": (8, 12, 16),
          "blue": (7, 10, 14)}
GOAL_DRAWS = list(combinations(range(5), 3))
SOLO_THRESHOLD = {1: 80, 2: 100, 3: 120, 4: 140}
START_TILES = [[W], [W, L], [W, L, F], [W, L, F, R]]

# action ids (see ext/bonsai.pyx)
REMOVE, KEEP, MEDITATE, CULTIVATE = 768, 896, 900, 904
TAKE, PLACE, STOP, CLAIM, RENOUNCE, DISCARD, REVEAL, GOALS = 908, 912, 916, 920, 936, 952, 960, 992

POT = ({(x, 0) for x in range(-2, 4) if x != 0} | {(x, -1) for x in range(-1, 4)}
       | {(x, -2) for x in range(-1, 3)})


def neighbours(x, y):
    """The six neighbours, in direction order 0..5 (up-right, right, down-right, down-left,
    left, up-left)."""
    if y % 2:
        return [(x, y + 1), (x + 1, y), (x, y - 1), (x - 1, y - 1), (x - 1, y), (x - 1, y + 1)]
    return [(x + 1, y + 1), (x + 1, y), (x + 1, y - 1), (x, y - 1), (x - 1, y), (x, y + 1)]


def protrudes_right(x, y):
    return x > 3 if y % 2 else x >= 3


def protrudes_left(x, y):
    return x < -1 if y % 2 else x <= -2


def _flag(value, key):
    if value in (True, "on", "true", "1", 1):
        return True
    if value in (False, "off", "false", "0", 0):
        return False
    raise ValueError(f"bonsai {key} must be on or off, got {value!r}")


class Tree:
    def __init__(self, tiles):
        self.tiles = list(tiles)        # (x, y, type), placement order, bud first

    def at(self):
        return {(x, y): t for x, y, t in self.tiles}

    def count(self, t):
        return sum(1 for _, _, u in self.tiles if u == t)

    def legal_cells(self, t):
        """{action id: cell} where a tile of type t may go; id = 6 * (first tile the cell
        neighbours, in list order) + direction from that tile."""
        at = self.at()
        out = {}
        seen = set()
        for i, (x, y, _) in enumerate(self.tiles):
            for k, cell in enumerate(neighbours(x, y)):
                if cell in at or cell in POT or cell in seen:
                    continue
                seen.add(cell)
                around = [at.get(c) for c in neighbours(*cell)]
                if t in (W, L):
                    ok = W in around
                elif t == F:
                    ok = L in around
                else:
                    ok = R not in around and any(around[j] == L and around[(j + 1) % 6] == L
                                                 for j in range(6))
                if ok:
                    out[6 * i + k] = cell
        return out

    def wood_blocked(self):
        at = self.at()
        return not any(c not in at and c not in POT
                       for x, y, t in self.tiles if t == W for c in neighbours(x, y))

    def lost_support(self, removed):
        """Flowers and fruits without support once the tiles at `removed` are gone."""
        at = {c: t for c, t in self.at().items() if c not in removed}
        lost = set()
        for c, t in at.items():
            around = [at.get(n) for n in neighbours(*c)]
            if t == F and L not in around:
                lost.add(c)
            if t == R and not any(around[j] == L and around[(j + 1) % 6] == L for j in range(6)):
                lost.add(c)
        return lost

    def removal_options(self):
        """{tile index: cells removed} for the cheapest removals that free a wood placement."""
        at = self.at()
        opts = {}
        for i, (x, y, t) in enumerate(self.tiles):
            if t != W and any(at.get(c) == W for c in neighbours(x, y)):
                opts[i] = {(x, y)} | self.lost_support({(x, y)})
        best = min(len(v) for v in opts.values())
        return {i: v for i, v in opts.items() if len(v) == best}

    def largest_leaf_group(self):
        at = self.at()
        leaves = {c for c, t in at.items() if t == L}
        best = 0
        while leaves:
            todo = [leaves.pop()]
            size = 0
            while todo:
                c = todo.pop()
                size += 1
                for n in neighbours(*c):
                    if n in leaves:
                        leaves.remove(n)
                        todo.append(n)
            best = max(best, size)
        return best

    def flower_points(self):
        at = self.at()
        return sum(1 for x, y, t in self.tiles if t == F
                   for c in neighbours(x, y) if c not in at)

    def goal_met(self, g):
        colour, size = COLOURS[g // 3], g % 3
        if colour == "brown":
            return self.count(W) >= NEED[colour][size]
        if colour == "green":
            return self.largest_leaf_group() >= NEED[colour][size]
        if colour == "orange":
            return self.count(R) >= NEED[colour][size]
        if colour == "pink":
            right = sum(1 for x, y, t in self.tiles if t == F and protrudes_right(x, y))
            left = sum(1 for x, y, t in self.tiles if t == F and protrudes_left(x, y))
            return max(right, left) >= NEED[colour][size]
        right = any(protrudes_right(x, y) for x, y, _ in self.tiles)
        left = any(protrudes_left(x, y) for x, y, _ in self.tiles)
        below_right = any(protrudes_right(x, y) and y <= -2 for x, y, _ in self.tiles)
        below_left = any(protrudes_left(x, y) and y <= -2 for x, y, _ in self.tiles)
        if size == 0:
            return right
        if size == 1:
            return right and left
        return (right and below_left) or (left and below_right)


class Bonsai:
    def __init__(self, players=2, goals="on", tokonoma="off", solo_level=1,
                 discard_before_reveal="off"):
        self.n = n = int(players)
        self.goals_on = _flag(goals, "goals") or n == 1
        self.tokonoma = _flag(tokonoma, "tokonoma")
        self.solo_level = int(solo_level)
        self.dbr = _flag(discard_before_reveal, "discard_before_reveal")
        full = DECK[max(2, n)]
        self.deck = list(full)           # unseen cards by type
        self.order = None                # known deck order (next card first), if any
        self.top = 7 + (sum(full) - 7) // 2 if self.tokonoma else 0
        self.gone = [0] * 25
        self.market = [None] * 4
        self.trees = [Tree([(0, 0, W)]) for _ in range(n)]
        self.supply = [[0] * 4 for _ in range(n)]
        for p in range(n):
            for t in ([W, L] if n == 1 else START_TILES[p]):
                self.supply[p][t] += 1
        self.cards = [[0] * 25 for _ in range(n)]
        self.goals = None if self.goals_on else []
        self.claimed = {}
        self.renounced = [set() for _ in range(n)]
        self.phase = "goaldraw" if self.goals_on else "deal"
        self.to_move = 0
        self.pending = None
        self.by = None
        self.any = 0
        self.allow = [0] * 4
        self.ptype = None
        self.dmin = 0
        self.burn = 0
        self.final = None
        self.turns = 0

    # ---- queries -------------------------------------------------------------------
    def clone(self):
        import copy
        return copy.deepcopy(self)

    def current_player(self):
        if self.phase == "over":
            return -4
        if self.phase in ("goaldraw", "deal", "reveal"):
            return -1
        return self.to_move

    def is_terminal(self):
        return self.phase == "over"

    def capacity(self, p):
        return 5 + 2 * self.cards[p][C["T"]]

    def placeable(self):
        p = self.to_move
        return [t for t in range(4)
                if self.supply[p][t] and (self.allow[t] or self.any)
                and self.trees[p].legal_cells(t)]

    def pending_goal(self):
        p = self.to_move
        mine = {g // 3 for g, q in self.claimed.items() if q == p}
        for g in self.goals:
            if g in self.claimed or g in self.renounced[p] or g // 3 in mine:
                continue
            if self.trees[p].goal_met(g):
                return g
        return None

    def reveal_needed(self):
        return sum(self.deck) > 0 and (self.burn or None in self.market)

    def chance_outcomes(self):
        if self.phase == "goaldraw":
            return [(GOALS + i, 1 / 10) for i in range(10)]
        if self.order is not None:
            return [(REVEAL + self.order[0], 1.0)]
        total = sum(self.deck)
        if self.top:
            unseen_parch = sum(self.deck[c] for c in PARCHMENTS)
            others = total - unseen_parch
            out = []
            for c in range(25):
                if not self.deck[c]:
                    continue
                if c in PARCHMENTS:
                    out.append((REVEAL + c, 1 / self.top))
                elif self.top > unseen_parch:
                    out.append((REVEAL + c,
                                (self.top - unseen_parch) / self.top * self.deck[c] / others))
            return out
        return [(REVEAL + c, self.deck[c] / total) for c in range(25) if self.deck[c]]

    def legal_actions(self):
        ph, p = self.phase, self.to_move
        if ph == "over":
            return []
        if self.current_player() == -1:
            return [a for a, _ in self.chance_outcomes()]
        if ph == "remove":
            return [REMOVE + i for i in sorted(self.trees[p].removal_options())] + [KEEP]
        if ph == "action":
            return [MEDITATE + s for s in range(4) if self.market[s] is not None] + [CULTIVATE]
        if ph == "slot":
            return [TAKE + W, TAKE + L]
        if ph == "master":
            return [TAKE + t for t in range(4)]
        if ph == "place":
            return [PLACE + t for t in self.placeable()] + [STOP]
        if ph == "cell":
            return sorted(self.trees[p].legal_cells(self.ptype))
        if ph == "goals":
            g = self.pending_goal()
            return [CLAIM + g, RENOUNCE + g]
        if ph == "discard":
            excess = sum(self.supply[p]) - self.capacity(p)
            return [DISCARD + t for t in range(self.dmin, 4)
                    if self.supply[p][t] and sum(self.supply[p][t:]) >= excess]
        raise AssertionError(ph)

    # ---- transitions ---------------------------------------------------------------
    def apply(self, a, check=True):
        if check:
            assert a in self.legal_actions(), (a, self.to_notation())
        p = self.to_move
        ph = self.phase
        if ph == "goaldraw":
            self.goals = [3 * c + s for c in GOAL_DRAWS[a - GOALS]
                          for s in ((0, 2) if self.n <= 2 else (0, 1, 2))]
            self.phase = "deal"
        elif ph in ("deal", "reveal"):
            self._reveal(a - REVEAL)
        elif ph == "remove":
            if a != KEEP:
                tree = self.trees[p]
                gone = tree.removal_options()[a - REMOVE]
                tree.tiles = [t for t in tree.tiles if (t[0], t[1]) not in gone]
            self.phase = "action"
        elif ph == "action":
            if a == CULTIVATE:
                g = self.cards[p]
                self.by, self.any = "cultivate", 1
                self.allow = [1 + g[C["GW"]], 1 + g[C["GL"]], g[C["GF"]], g[C["GR"]]]
                self._enter_place()
            else:
                self._meditate(a - MEDITATE)
        elif ph == "slot":
            self.supply[p][a - TAKE] += 1
            card, self.pending = self.pending, None
            self._resolve(card)
        elif ph == "master":
            self.supply[p][a - TAKE] += 1
            self._advance(None)
        elif ph == "place":
            if a == STOP:
                self._end_place()
            else:
                self.ptype = a - PLACE
                self.phase = "cell"
        elif ph == "cell":
            t = self.ptype
            x, y = self.trees[p].legal_cells(t)[a]
            self.trees[p].tiles.append((x, y, t))
            self.supply[p][t] -= 1
            if self.allow[t]:
                self.allow[t] -= 1
            else:
                self.any -= 1
            self.ptype = None
            self._enter_place()
        elif ph == "goals":
            if a < RENOUNCE:
                self.claimed[a - CLAIM] = p
            else:
                self.renounced[p].add(a - RENOUNCE)
            if self.pending_goal() is None:
                self._advance("goals")
        elif ph == "discard":
            self.supply[p][a - DISCARD] -= 1
            self.dmin = a - DISCARD
            if sum(self.supply[p]) <= self.capacity(p):
                self._advance("discard")

    def _meditate(self, s):
        p = self.to_move
        card = self.market[s]
        self.market[s] = None
        self.cards[p][card] += 1
        if self.n == 1:       # solo: the card nearer the deck goes too (or the next one)
            if s > 0:
                if self.market[s - 1] is not None:
                    self.gone[self.market[s - 1]] += 1
                    self.market[s - 1] = None
            else:
                self.burn = 1
        self._slide()
        if s == 2:
            self.supply[p][W] += 1
            self.supply[p][F] += 1
        elif s == 3:
            self.supply[p][L] += 1
            self.supply[p][R] += 1
        elif s == 1:
            self.phase, self.pending = "slot", card
            return
        self._resolve(card)

    def _resolve(self, card):
        p = self.to_move
        name = CARDS[card]
        if name in MASTER_TILES:
            for t in MASTER_TILES[name]:
                self.supply[p][t] += 1
        if name == "MA":
            self.phase = "master"
            return
        if card in HELPERS:
            self.by, self.any = "helper", 1
            self.allow = [0] * 4
            self.allow[card - C["HW"]] = 1
            self._enter_place()
            return
        self._advance(None)

    def _slide(self):
        cards = [c for c in self.market if c is not None]
        self.market = [None] * (4 - len(cards)) + cards

    def _enter_place(self):
        if self.placeable():
            self.phase = "place"
        else:
            self._end_place()

    def _end_place(self):
        if self.by == "cultivate" and self.n == 1 and self.market[3] is not None:
            self.gone[self.market[3]] += 1
            self.market[3] = None
            self._slide()
        self.by, self.any, self.allow = None, 0, [0] * 4
        self._advance(None)

    def _reveal(self, card):
        self.deck[card] -= 1
        if self.order is not None:
            self.order.pop(0)
        if self.top:
            self.top -= 1
        if self.burn:
            self.gone[card] += 1
            self.burn = 0
        else:
            slot = max(s for s in range(4) if self.market[s] is None)
            self.market[slot] = card
        if sum(self.deck) == 0 and self.final is None:
            self.final = self.n
        if self.reveal_needed():
            return
        if self.phase == "deal":
            self._start_turn()
        else:
            self._advance("reveal")

    def _advance(self, done):
        order = ["goals", "discard", "reveal", "end"] if self.dbr else \
            ["reveal", "goals", "discard", "end"]
        p = self.to_move
        for stage in order[order.index(done) + 1 if done else 0:]:
            if stage == "reveal" and self.reveal_needed():
                self.phase = "reveal"
                return
            if stage == "goals" and self.pending_goal() is not None:
                self.phase = "goals"
                return
            if stage == "discard" and sum(self.supply[p]) > self.capacity(p):
                self.phase, self.dmin = "discard", 0
                return
            if stage == "end":
                self._end_turn()

    def _end_turn(self):
        self.turns += 1
        self.dmin = 0
        if self.final is not None:
            if self.final == 0:
                self.phase = "over"
                return
            self.final -= 1
        self.to_move = (self.to_move + 1) % self.n
        self._start_turn()

    def _start_turn(self):
        self.phase = "remove" if self.trees[self.to_move].wood_blocked() else "action"

    # ---- scoring -------------------------------------------------------------------
    def score_breakdown(self, p):
        tree, cards = self.trees[p], self.cards[p]
        counts = [tree.count(t) for t in range(4)]
        per_card = {"PW": counts[W], "PL": counts[L], "PF": 2 * counts[F], "PR": 2 * counts[R],
                    "PG": 2 * sum(cards[c] for c in GROWTHS),
                    "PH": 2 * sum(cards[c] for c in HELPERS),
                    "PM": 2 * sum(cards[c] for c in MASTERS)}
        parts = {"leaves": 3 * counts[L], "flowers": tree.flower_points(),
                 "fruits": 7 * counts[R],
                 "parchments": sum(v for k, v in per_card.items() if cards[C[k]]),
                 "goals": sum(POINTS[COLOURS[g // 3]][g % 3]
                              for g, q in self.claimed.items() if q == p)}
        parts["total"] = sum(parts.values())
        return parts

    def returns(self):
        if not self.is_terminal():
            return [0.0] * self.n
        scores = [self.score_breakdown(p)["total"] for p in range(self.n)]
        if self.n == 1:
            colours = {g // 3 for g in self.claimed}
            win = len(colours) == 3 and scores[0] >= SOLO_THRESHOLD[self.solo_level]
            return [1.0 if win else 0.0]
        best = max(scores)
        winner = max(p for p in range(self.n) if scores[p] == best)
        return [1.0 if p == winner else 0.0 for p in range(self.n)]

    # ---- notation ------------------------------------------------------------------
    def to_notation(self):
        onoff = {True: "on", False: "off"}
        head = (f"bonsai players={self.n} goals={onoff[self.goals_on]} "
                f"tokonoma={onoff[self.tokonoma]} solo_level={self.solo_level} "
                f"discard_before_reveal={onoff[self.dbr]}")
        if self.goals is None:
            goals = "goals ?"
        elif not self.goals_on:
            goals = "goals off"
        else:
            toks = []
            for g in self.goals:
                status = f"c{self.claimed[g]}" if g in self.claimed else ""
                who = "".join(str(p) for p in range(self.n) if g in self.renounced[p])
                status += f"x{who}" if who else ""
                toks.append(f"{COLOURS[g // 3]}.{SIZES[g % 3]}:{status or '-'}")
            goals = "goals " + " ".join(toks)
        market = "market " + " ".join(CARDS[c] if c is not None else "-" for c in self.market)
        if self.order is not None:
            deck = "deck order " + (" ".join(CARDS[c] for c in self.order) or "-")
        else:
            deck = "deck set " + _multiset(self.deck)
        if self.tokonoma:
            deck += f" top={self.top}"
        parts = [head, goals, market, deck, "gone " + _multiset(self.gone)]
        for p in range(self.n):
            tiles = [f"{TILES[t]}{x},{y}" for x, y, t in self.trees[p].tiles[1:]]
            sup = " ".join(f"{TILES[t]}{self.supply[p][t]}" for t in range(4))
            parts.append(f"p{p} tree {' '.join(tiles) or '-'} supply {sup} "
                         f"cards {_multiset(self.cards[p])}")
        turn = f"turn p{self.to_move} phase={self.phase}"
        if self.phase == "slot":
            turn += f" card={CARDS[self.pending]}"
        if self.phase in ("place", "cell"):
            turn += f" by={self.by} any={self.any} allow=" + ",".join(
                f"{TILES[t]}{self.allow[t]}" for t in range(4))
        if self.phase == "cell":
            turn += f" type={TILES[self.ptype]}"
        if self.phase == "discard":
            turn += f" min={TILES[self.dmin]}"
        if self.burn:
            turn += " burn=1"
        turn += f" final={'-' if self.final is None else self.final} turns={self.turns}"
        parts.append(turn)
        return "; ".join(parts)


def _multiset(counts):
    toks = [CARDS[c] + (f"*{k}" if k > 1 else "") for c, k in enumerate(counts) if k]
    return " ".join(toks) or "-"


def initial(**variant):
    """The position before the goal draw and the deal (both chance nodes)."""
    return Bonsai(**variant)


def random_playout(state, rng):
    """Uniformly random decisions, chance by its distribution; returns actions applied."""
    n = 0
    while not state.is_terminal():
        if state.current_player() == -1:
            outcomes = state.chance_outcomes()
            u = rng.random()
            a = outcomes[-1][0]
            for b, prob in outcomes:
                u -= prob
                if u < 0:
                    a = b
                    break
        else:
            a = rng.choice(state.legal_actions())
        state.apply(a, check=False)
        n += 1
    return n
