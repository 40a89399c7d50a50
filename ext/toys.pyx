# cython: language_level=3
"""Toy games with known values for testing the searchers (not in the game registry).

- ChanceNimState: Nim with a die. Take 1..max_take stones; after a move that leaves
  stones, a chance event removes one more stone with probability `extra_prob`. Whoever's
  turn empties the pile (the move or its chance event) wins. Perfect information.
- MatrixGameState: `stages` rounds of the same simultaneous zero-sum matrix game; player 0
  picks the row, player 1 the column; returns are the average of payoff[row][col]
  (player 0's share, in [0, 1]) and its complement. One stage of
  [[0.9, 0.2], [0.3, 0.6]] has the mixed equilibrium rows (0.3, 0.7), columns (0.4, 0.6),
  value 0.48.
- KuhnState: Kuhn poker (3 cards J<Q<K, ante 1, one bet of 1). A chance node deals both
  cards (6 equiprobable deals); each player sees only their own card. Chip payoffs in
  [-2, 2] are mapped to returns in [0, 1] by (chips + 2) / 4. Game value for player 0 is
  -1/18 chips, a return of (2 - 1/18) / 4.
"""
from libc.stdint cimport uint64_t

from niwa.ext.game cimport State, MAX_ACTIONS, CHANCE, SIMULTANEOUS, TERMINAL
from niwa.ext.rng cimport RngState, rng_below, splitmix64

from niwa.ext.errors import IllegalActionError


cdef inline uint64_t mix(uint64_t x) noexcept:
    return splitmix64(&x)


cdef class ChanceNimState(State):
    def __init__(self, int pile=7, int max_take=2, double extra_prob=1.0 / 3.0):
        self.num_players = 2
        self.pile = pile
        self.max_take = max_take
        self.extra_prob = extra_prob
        self.to_move = 0
        self.chance_pending = 0
        self.won_by = -1

    cdef int c_current_player(self) noexcept:
        if self.won_by >= 0:
            return TERMINAL
        return CHANCE if self.chance_pending else self.to_move

    cdef int c_legal_actions(self, int* out) noexcept:
        cdef int n = 0, k
        if self.won_by >= 0 or self.chance_pending:
            return 0
        for k in range(1, min(self.max_take, self.pile) + 1):
            out[n] = k
            n += 1
        return n

    cdef int c_chance_outcomes(self, int* actions, double* probs) noexcept:
        if not self.chance_pending:
            return 0
        actions[0] = 0
        probs[0] = 1.0 - self.extra_prob
        actions[1] = 1
        probs[1] = self.extra_prob
        return 2

    cdef void c_apply(self, int action) noexcept:
        if self.chance_pending:
            self.chance_pending = 0
            self.pile -= action
            if self.pile == 0:
                self.won_by = self.to_move
                return
            self.to_move = 1 - self.to_move
            return
        self.pile -= action
        if self.pile == 0:
            self.won_by = self.to_move
            return
        self.chance_pending = 1

    cdef void c_returns(self, double* out) noexcept:
        out[0] = 1.0 if self.won_by == 0 else 0.0
        out[1] = 1.0 if self.won_by == 1 else 0.0

    cdef uint64_t c_hash(self) noexcept:
        return mix(<uint64_t>(self.pile * 8 + self.to_move * 4 + self.chance_pending * 2)
                   + <uint64_t>(self.won_by + 1) * 1000003)

    cdef State c_clone(self):
        cdef ChanceNimState s = ChanceNimState.__new__(ChanceNimState)
        s.c_copy_from(self)
        return s

    cdef void c_copy_from(self, State other) noexcept:
        cdef ChanceNimState o = <ChanceNimState>other
        self.num_players = 2
        self.pile = o.pile
        self.max_take = o.max_take
        self.extra_prob = o.extra_prob
        self.to_move = o.to_move
        self.chance_pending = o.chance_pending
        self.won_by = o.won_by

    cdef double c_evaluate(self, int player) noexcept:
        if self.won_by >= 0:
            return 1.0 if self.won_by == player else 0.0
        return 0.5

    @property
    def spec(self):
        return None     # a test-only game, outside the registry

    def hides_from(self, int player):
        return False

    @property
    def game_name(self):
        return "toy-chance-nim"

    @property
    def variant(self):
        return {"max_take": self.max_take, "extra_prob": self.extra_prob}

    @property
    def pile_size(self):
        return self.pile

    def action_to_string(self, int action, player=None):
        if self.chance_pending:
            return "extra" if action else "none"
        return f"take{action}"

    def to_notation(self):
        return (f"toy-chance-nim pile={self.pile} turn={self.to_move} "
                f"chance={self.chance_pending} winner={self.won_by}")


cdef class MatrixGameState(State):
    def __init__(self, payoff=((0.9, 0.2), (0.3, 0.6)), int stages=1):
        self.num_players = 2
        self.rows = len(payoff)
        self.cols = len(payoff[0])
        if not (1 <= self.rows <= 8 and 1 <= self.cols <= 8):
            raise ValueError("matrix game needs 1..8 rows and columns")
        for i in range(self.rows):
            for j in range(self.cols):
                self.payoff[i][j] = payoff[i][j]
        self.stages = stages
        self.stage = 0
        self.total = 0.0

    cdef int c_current_player(self) noexcept:
        return TERMINAL if self.stage >= self.stages else SIMULTANEOUS

    cdef int c_legal_actions(self, int* out) noexcept:
        return 0

    cdef int c_player_actions(self, int player, int* out) noexcept:
        cdef int n = self.rows if player == 0 else self.cols, i
        if self.stage >= self.stages:
            return 0
        for i in range(n):
            out[i] = i
        return n

    cdef void c_apply_joint(self, int* actions) noexcept:
        self.total += self.payoff[actions[0]][actions[1]]
        self.stage += 1

    cdef void c_returns(self, double* out) noexcept:
        out[0] = self.total / self.stages
        out[1] = 1.0 - out[0]

    cdef uint64_t c_hash(self) noexcept:
        return mix(<uint64_t>self.stage * 7919 + <uint64_t>(self.total * 1e6))

    cdef State c_clone(self):
        cdef MatrixGameState s = MatrixGameState.__new__(MatrixGameState)
        s.c_copy_from(self)
        return s

    cdef void c_copy_from(self, State other) noexcept:
        cdef MatrixGameState o = <MatrixGameState>other
        self.num_players = 2
        self.rows = o.rows
        self.cols = o.cols
        self.payoff = o.payoff
        self.stages = o.stages
        self.stage = o.stage
        self.total = o.total

    @property
    def spec(self):
        return None     # a test-only game, outside the registry

    def hides_from(self, int player):
        return False    # a pending choice is not part of the position

    @property
    def game_name(self):
        return "toy-matrix"

    @property
    def variant(self):
        return {"stages": self.stages}

    def action_to_string(self, int action, player=None):
        return ("r" if player in (None, 0) else "c") + str(action)

    def to_notation(self):
        return f"toy-matrix stage={self.stage}/{self.stages} total={self.total:.6f}"


# Kuhn poker ----------------------------------------------------------------------------
# Deal action d in 0..5 gives (card0, card1) = DEALS[d]; betting actions: 0 pass, 1 bet.
cdef int DEALS[6][2]
DEALS[0][:] = [0, 1]
DEALS[1][:] = [0, 2]
DEALS[2][:] = [1, 0]
DEALS[3][:] = [1, 2]
DEALS[4][:] = [2, 0]
DEALS[5][:] = [2, 1]


cdef class KuhnState(State):
    def __init__(self, deal=None):
        self.num_players = 2
        self.nhist = 0
        self.dealt = 0
        if deal is not None:
            self.cards[0], self.cards[1] = deal
            if sorted(deal) == [deal[0], deal[0]] or not all(0 <= c <= 2 for c in deal):
                raise ValueError("deal needs two different cards in 0..2")
            self.dealt = 1

    cdef int _finished(self) noexcept:
        # histories: pp, bp, bb, pbp, pbb end the game
        if self.nhist == 2:
            return not (self.history[0] == 0 and self.history[1] == 1)
        return self.nhist == 3

    cdef int c_current_player(self) noexcept:
        if not self.dealt:
            return CHANCE
        if self._finished():
            return TERMINAL
        return self.nhist % 2

    cdef int c_legal_actions(self, int* out) noexcept:
        if not self.dealt or self._finished():
            return 0
        out[0] = 0
        out[1] = 1
        return 2

    cdef int c_chance_outcomes(self, int* actions, double* probs) noexcept:
        cdef int i
        if self.dealt:
            return 0
        for i in range(6):
            actions[i] = i
            probs[i] = 1.0 / 6.0
        return 6

    cdef void c_apply(self, int action) noexcept:
        if not self.dealt:
            self.cards[0] = DEALS[action][0]
            self.cards[1] = DEALS[action][1]
            self.dealt = 1
            return
        self.history[self.nhist] = action
        self.nhist += 1

    cdef void c_returns(self, double* out) noexcept:
        cdef int h0 = self.history[0], h1 = self.history[1]
        cdef double chips
        cdef int high = 1 if self.cards[0] > self.cards[1] else -1
        if self.nhist == 2 and h0 == 1 and h1 == 0:
            chips = 1          # bet, fold: player 0 wins the ante
        elif self.nhist == 2 and h0 == 0 and h1 == 0:
            chips = high       # check, check: showdown for 1
        elif self.nhist == 2:
            chips = 2 * high   # bet, call
        elif self.history[2] == 0:
            chips = -1         # check, bet, fold
        else:
            chips = 2 * high   # check, bet, call
        out[0] = (chips + 2) / 4.0
        out[1] = 1.0 - out[0]

    cdef uint64_t c_hash(self) noexcept:
        cdef uint64_t z = <uint64_t>(self.dealt + 2 * self.cards[0] + 8 * self.cards[1])
        cdef int i
        for i in range(self.nhist):
            z = z * 31 + <uint64_t>(self.history[i] + 1)
        return mix(z * 16 + <uint64_t>self.nhist)

    cdef State c_clone(self):
        cdef KuhnState s = KuhnState.__new__(KuhnState)
        s.c_copy_from(self)
        return s

    cdef void c_copy_from(self, State other) noexcept:
        cdef KuhnState o = <KuhnState>other
        self.num_players = 2
        self.cards = o.cards
        self.dealt = o.dealt
        self.history = o.history
        self.nhist = o.nhist

    cdef void c_resample_hidden(self, int player, RngState* rng) noexcept:
        # The opponent's card is uniform among the two cards `player` does not hold. The
        # candidates are listed in a fixed order so the result never depends on the
        # opponent's real card.
        cdef int mine, n = 0, c
        cdef int other[2]
        if not self.dealt:
            return
        mine = self.cards[player]
        for c in range(3):
            if c != mine:
                other[n] = c
                n += 1
        self.cards[1 - player] = other[rng_below(rng, 2)]

    @property
    def spec(self):
        return None     # a test-only game, outside the registry

    def hides_from(self, int player):
        return True     # the other player's card (before the deal: which card it will be)

    @property
    def game_name(self):
        return "toy-kuhn"

    @property
    def variant(self):
        return {}

    @property
    def card_of(self):
        return tuple(self.cards) if self.dealt else None

    def action_to_string(self, int action, player=None):
        if not self.dealt:
            return "deal:" + "JQK"[DEALS[action][0]] + "JQK"[DEALS[action][1]]
        return "bet" if action else "pass"

    def information_state(self, int player):
        hist = "".join("pb"[self.history[i]] for i in range(self.nhist))
        card = "JQK"[self.cards[player]] if self.dealt else "?"
        return f"toy-kuhn seat={player} card={card} history={hist}"

    def to_notation(self):
        hist = "".join("pb"[self.history[i]] for i in range(self.nhist))
        cards = ("JQK"[self.cards[0]] + "JQK"[self.cards[1]]) if self.dealt else "??"
        return f"toy-kuhn cards={cards} history={hist}"
