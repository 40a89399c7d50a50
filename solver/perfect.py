"""The `perfect` agent: plays from df-pn proofs (niwa.solver.proof) where it can prove.

Each move, in order:
1. its opening book (niwa.solver.book), if one exists for the game and variant and holds
   the position: a move read off the proof of the whole game (legal-checked); past the
   book's plies, if the book knows won positions (a certification's part roots), a move
   whose every line reaches one of them within 3 plies (book.won_move);
2. a live proof of the position within `time` seconds, continuing in one table that is
   kept across the moves of a game and, within one process, across games of the same
   variant (a proven position is then answered at once). A proven win: a proving move. A
   proven loss: the move whose refutation cost the most work, the one a fallible opponent
   is likeliest to get wrong;
3. no proof in time: a move to a position known lost for the opponent (a certificate, a
   proof record: niwa.solver.known) if there is one, else the unfinished proof's
   most-proving move (the child with the smallest proof number, read from the table:
   proof_moves.most_proving_move) among the moves not known to lose, or with `lean=false`
   the `fallback` agent (MCTS with the game's tuned defaults unless told otherwise). The
   first loses far fewer won games: as the proven winner of pro/mandatory with 20 ms
   proofs and no endgame table it won 197 of 200 games against two MCTS agents, where the
   MCTS fallback won 165 (bench/perfect-play/README.md). The fallback also plays every
   game proofs cannot decide.
With `tables=true`, a position inside the variant's endgame table (niwa.solver.tables) is
answered from it before step 2, and the live proofs stop at the tables' frontier.
analysis() says which: its `algo` is "book", "proof" (its `proven` False for a lean
move), "tables" or the fallback's own; `sources` counts them over the game ("book",
"tables", "proof", "known", "lean", "fallback", and "forced" for positions with one
legal move).

>>> from niwa.ext.lotus import LotusState
>>> agent = PerfectAgent(time=1.0, tt_mb=16, book="none")
>>> s = LotusState(towers=1, lane=1, shared=3, trampoline_at=3)
>>> agent.step(s, 0) in s.legal_actions(), agent.analysis().algo
(True, 'proof')
"""

from __future__ import annotations

from collections import Counter

from niwa.solver.agent_base import Agent, AgentError
from niwa.solver.agent_spec import AgentSpec, make_agent
from niwa.solver.exact_moves import ExactMoves, book_for, shared_searcher

__all__ = ["PerfectAgent", "book_for", "shared_searcher"]


class PerfectAgent(Agent):
    name = "perfect"

    def __init__(self, seed=None, **params):
        super().__init__(seed, **params)
        self.tt_mb = params.get("tt_mb", 256.0)
        # the fallback is read (and checked) now: a bad one fails when the agent is made
        self.fallback_spec = AgentSpec.parse(params.get("fallback", "mcts"))
        self.book_where = params.get("book", "auto")
        if self.time <= 0 or self.tt_mb <= 0:
            raise AgentError("agent 'perfect': time and tt_mb should be positive")
        if self.fallback_spec.name == "perfect":
            raise AgentError("agent 'perfect': its fallback cannot be perfect itself")
        self.seed = seed
        self.fallback = None
        # the book, the tables (on by default) and live proofs; the fallback otherwise
        self.exact = ExactMoves("perfect", book=self.book_where,
                                tables=params.get("tables", True), tt_mb=self.tt_mb,
                                cpu_time=params.get("cpu", False))
        self.sources = Counter()
        self._last = None
        self._by_fallback = False     # whether the last move was the fallback's

    @property
    def time(self) -> float:
        """Seconds for each live proof: read from `params` at every move, so that a
        served engine's `go movetime` (which replaces params["time"] for one move) holds."""
        return self.params.get("time", 1.0)

    def step(self, state, player):
        actions = state.legal_actions(player)
        self._by_fallback = False
        if len(actions) == 1:
            self.sources["forced"] += 1
            self._last = None
            return actions[0]
        exact = self.exact
        if exact.applies(state):
            for source, result in (("book", lambda: exact.book_move(state, player, actions)),
                                   ("tables", lambda: exact.table_move(state))):
                self._last = result()
                if self._last is not None:
                    self.sources[source] += 1
                    return self._last.best
            self._last = exact.proof_move(state, self.time)
            if self._last.proven and self._last.best in actions:
                self.sources["proof"] += 1
                return self._last.best
            if self.params.get("lean", True):
                self._last = exact.leaning_move(state, self._last)
                self.sources["known" if self._last.proven else "lean"] += 1
                return self._last.best
        self.sources["fallback"] += 1
        self._by_fallback = True
        return self._fallback().step(state, player)

    def _fallback(self):
        if self.fallback is None:
            self.fallback = make_agent(self.fallback_spec, seed=self.seed)
        return self.fallback

    def observe(self, state, action):
        if self.fallback is not None:
            self.fallback.observe(state, action)

    def analysis(self):
        if self._by_fallback:
            return self.fallback.analysis() or self._last
        return self._last

    def prepare(self, state):
        self.exact.prepare(state)

    def reset(self):
        # the shared table is kept: its entries are exact for every game of the variant
        if self.fallback is not None:
            self.fallback.reset()
        self.exact.reset()
        self.sources = Counter()
        self._last = None
        self._by_fallback = False
