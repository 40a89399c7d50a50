"""Lotus reference rules in plain Python, straight from docs/rules/lotus.md.

Slow and obvious on purpose: a list per space (bottom to top), a list of tower heights per
player. Action ids follow the engine's documented action model:
    action = 4*source + 2*lane + bounce;  source = 4*seat + (h-1) for a start tower of
    height h, or 16 + space index (a1..aL, b1..bL, then shared L+1..R);  PASS = 4*(16+spaces).
"""

from __future__ import annotations

import copy
import random

COLOURS = "WBRU"


class LotusOracle:
    def __init__(self, players=2, rule="basic", trampoline="optional", lane=3, shared=11,
                 trampoline_at=8, towers="auto"):
        self.players = int(players)
        self.pro = rule == "pro"
        self.mandatory = trampoline == "mandatory"
        self.lane, self.shared = int(lane), int(shared)
        self.route = self.lane + self.shared
        self.tramp = int(trampoline_at)
        tallest = (4 if self.players == 2 else 3) if towers == "auto" else int(towers)
        self.variant = dict(players=self.players, rule=rule, trampoline=trampoline,
                            lane=self.lane, shared=self.shared, trampoline_at=self.tramp,
                            towers=tallest)
        self.stones_each = tallest * (tallest + 1) // 2
        # spaces: ("a", p) / ("b", p) for p <= lane, ("s", p) for shared positions
        self.spaces = ([("a", p) for p in range(1, self.lane + 1)]
                       + [("b", p) for p in range(1, self.lane + 1)]
                       + [("s", p) for p in range(self.lane + 1, self.route + 1)])
        self.stacks = {sp: [] for sp in self.spaces}
        self.start = [list(range(tallest, 0, -1)) for _ in range(self.players)]
        self.goal = [0] * self.players
        self.to_move = 0
        # the pro opening: seat 0 may bring a second stone on its first turn
        self.opening = "first" if (self.pro and self.players == 2) else "done"

    # -- helpers ------------------------------------------------------------------
    def space(self, lane, p):
        return ("s", p) if p > self.lane else (lane, p)

    def pass_action(self):
        return 4 * (16 + len(self.spaces))

    def winner(self):
        for p in range(self.players):
            if self.goal[p] == self.stones_each:
                return p
        return None

    def moves_of_stone(self, source, lane_choices, p, dist):
        """Actions for a stone at route position p (0 = start) moving dist."""
        acts = []
        for lane_bit, lane in lane_choices:
            target = p + dist
            if target <= self.route and self.space(lane, target) == ("s", self.tramp):
                if self.mandatory:
                    acts.append(4 * source + 2 * lane_bit + 1)
                else:
                    acts += [4 * source + 2 * lane_bit, 4 * source + 2 * lane_bit + 1]
            else:
                acts.append(4 * source + 2 * lane_bit)
        return acts

    def start_moves(self, q):
        acts = []
        for h in sorted(set(self.start[q])):
            source = 4 * q + h - 1
            # lane choice only when the stone lands inside the lanes
            lanes = [(0, "a"), (1, "b")] if h <= self.lane else [(0, "a")]
            acts += self.moves_of_stone(source, lanes, 0, h)
        return acts

    def track_moves(self, colour_filter):
        acts = []
        for i, sp in enumerate(self.spaces):
            st = self.stacks[sp]
            if st and colour_filter(st[-1]):
                lane = sp[0] if sp[0] in "ab" else "a"
                acts += self.moves_of_stone(16 + i, [(0, lane)], sp[1], len(st))
        return acts

    # -- the lane mirror --------------------------------------------------------------
    def mirrored(self):
        """This position with lanes a and b swapped: the board is the same seen from the
        other lane, so the position has the same value."""
        m = self.clone()
        for p in range(1, self.lane + 1):
            m.stacks[("a", p)], m.stacks[("b", p)] = self.stacks[("b", p)][:], \
                self.stacks[("a", p)][:]
        return m

    def mirror_action(self, action):
        """The action that does in the mirrored position what `action` does here (a start
        stone's lane bit flipped where the lanes differ, a stone on a lane space moved from
        the other lane's space; shared spaces and pass unchanged)."""
        if action == self.pass_action():
            return action
        source, lane_bit, bounce = action // 4, (action // 2) % 2, action % 2
        if source < 16:
            if source % 4 + 1 <= self.lane:
                lane_bit ^= 1
        elif source - 16 < 2 * self.lane:
            i = source - 16
            source = 16 + (i + self.lane if i < self.lane else i - self.lane)
        return 4 * source + 2 * lane_bit + bounce

    # -- contract -------------------------------------------------------------------
    def current_player(self):
        return -4 if self.winner() is not None else self.to_move

    def is_terminal(self):
        return self.winner() is not None

    def returns(self):
        w = self.winner()
        return [1.0 if p == w else 0.0 for p in range(self.players)]

    def chance_outcomes(self):
        return []

    def clone(self):
        return copy.deepcopy(self)

    def legal_actions(self):
        if self.is_terminal():
            return []
        m = self.to_move
        if self.opening == "second":
            return sorted(self.start_moves(0) + [self.pass_action()])
        own = self.start_moves(m) + self.track_moves(lambda c: c == m)
        if own:
            return sorted(own)
        if self.pro:
            return [self.pass_action()]
        others = [a for q in range(self.players) if q != m for a in self.start_moves(q)]
        others += self.track_moves(lambda c: c != m)
        return sorted(others + [self.pass_action()])

    def apply(self, action, check=True):
        if check and action not in self.legal_actions():
            raise ValueError(f"illegal action {action}")
        if action != self.pass_action():
            source, lane_bit, bounce = action // 4, (action // 2) % 2, action % 2
            if source < 16:
                q, h = divmod(source, 4)
                h += 1
                self.start[q].remove(h)
                if h > 1:
                    self.start[q].append(h - 1)
                colour, dist, p, lane = q, h, 0, "ab"[lane_bit]
            else:
                sp = self.spaces[source - 16]
                dist = len(self.stacks[sp])
                colour = self.stacks[sp].pop()
                p, lane = sp[1], (sp[0] if sp[0] in "ab" else "a")
            target = p + dist
            if bounce:
                target += dist
            if target > self.route:
                self.goal[colour] += 1
            else:
                self.stacks[self.space(lane, target)].append(colour)
            if self.winner() is not None:
                return
        if self.opening == "first":
            self.opening = "second"
            return
        self.opening = "done"
        self.to_move = (self.to_move + 1) % self.players

    def to_notation(self):
        v = self.variant
        defaults = {"lane": 3, "shared": 11, "trampoline_at": 8}
        head = ["lotus", f"players={v['players']}", f"rule={v['rule']}",
                f"trampoline={v['trampoline']}"]
        head += [f"{k}={v[k]}" for k in defaults if v[k] != defaults[k]]
        if v["towers"] != (4 if self.players == 2 else 3):
            head.append(f"towers={v['towers']}")
        track = []
        for sp in self.spaces:
            if self.stacks[sp]:
                name = str(sp[1]) if sp[0] == "s" else f"{sp[0]}{sp[1]}"
                track.append(name + ":" + "".join(COLOURS[c] for c in self.stacks[sp]))
        start = [COLOURS[p] * h for p in range(self.players)
                 for h in sorted(self.start[p], reverse=True)]
        goal = [f"{COLOURS[p]}:{self.goal[p]}" for p in range(self.players)]
        turn = f"turn {COLOURS[self.to_move]}"
        if self.opening != "done":
            turn += f" opening={self.opening}"
        return "; ".join([" ".join(head), "track " + (" ".join(track) or "-"),
                          "start " + (" ".join(start) or "-"), "goal " + " ".join(goal), turn])

    # -- facts used by property tests -------------------------------------------------
    def progress(self):
        """Sum of route positions of all stones (start = 0, goal = route + 1)."""
        total = sum(self.goal) * (self.route + 1)
        for sp, st in self.stacks.items():
            total += sp[1] * len(st)
        return total

    def stone_counts(self):
        counts = []
        for p in range(self.players):
            on_track = sum(st.count(p) for st in self.stacks.values())
            counts.append(on_track + sum(self.start[p]) + self.goal[p])
        return counts


def initial(**variant):
    return LotusOracle(**variant)


def random_playout(state, rng: random.Random) -> int:
    n = 0
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()), check=False)
        n += 1
    return n


from niwa.ext.reference import perft  # noqa: E402,F401  (shared by every oracle)
