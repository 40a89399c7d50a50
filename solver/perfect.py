"""The `perfect` agent: plays from df-pn proofs (niwa.solver.proof) where it can prove.

Each move, in order:
1. its opening book (niwa.solver.book), if one exists for the game and variant and holds
   the position: a move read off the proof of the whole game (legal-checked);
2. a live proof of the position within `time` seconds, continuing in one table that is
   kept across the moves of a game and, within one process, across games of the same
   variant (a proven position is then answered at once). A proven win: a proving move. A
   proven loss: the move whose refutation cost the most work, the one a fallible opponent
   is likeliest to get wrong;
3. no proof in time: the `fallback` agent (MCTS with the game's tuned defaults unless told
   otherwise) chooses.
With `tables=true`, a position inside the variant's endgame table (niwa.solver.tables) is
answered from it before step 2, and the live proofs stop at the tables' frontier.
analysis() says which: its `algo` is "book", "proof", "tables" or the fallback's own;
`sources` counts them over the game (and "forced" for positions with one legal move).

>>> from niwa.ext.lotus import LotusState
>>> agent = PerfectAgent(time=1.0, tt_mb=16, book="none")
>>> s = LotusState(towers=1, lane=1, shared=3, trampoline_at=3)
>>> agent.step(s, 0) in s.legal_actions(), agent.analysis().algo
(True, 'proof')
"""

from __future__ import annotations

import sys
from collections import Counter

from niwa.solver.agents import Agent, AgentError

# One proof table per process, reused by every perfect agent built in it (a tournament
# worker builds one agent per game): entries are exact values, valid for every game of the
# variant; the search clears the table itself when the game or the variant changes.
_SEARCHER = {"key": None, "search": None}
_BOOKS: dict[str, object] = {}      # path -> loaded Book (or the BookError text)
_TOLD: set[str] = set()             # notes already printed in this process


def shared_searcher(tt_mb: float, tables=None):
    """The process's proof search with a `tt_mb` table and these endgame `tables` (a new
    one if either differs; loaded tables are cached, so the same variant keeps its search)."""
    from niwa.solver.proof import ProofSearch

    key = (tt_mb, id(tables))
    if _SEARCHER["search"] is None or _SEARCHER["key"] != key:
        _SEARCHER["search"] = None      # free the old table before mapping a new one
        _SEARCHER["search"] = ProofSearch(tt_mb=tt_mb, tables=tables)
        _SEARCHER["key"] = key
    return _SEARCHER["search"]


def _tell_once(text: str) -> None:
    if text not in _TOLD:
        _TOLD.add(text)
        print(f"perfect: {text}", file=sys.stderr, flush=True)


def book_for(state, where: str):
    """The book `where` names for `state`'s game and variant ("auto": the one find_book
    finds, "none": no book, else a file path), loaded once per process; None if there is
    none. A book for another variant, or a damaged one, raises AgentError."""
    from niwa.solver.book import BookError, book_name, books_dir, find_book, load_book

    if where == "none":
        return None
    if where == "auto":
        path = find_book(state.game_name, state.variant)
        if path is None:
            _tell_once(f"no opening book for {state.game_name} {state.variant} (looked for "
                       f"{book_name(state.game_name, state.variant)} in {books_dir()}); "
                       f"proving live from the first move. Build one with `niwa book build`.")
            return None
        where = str(path)
    if where not in _BOOKS:
        try:
            _BOOKS[where] = load_book(where)
        except BookError as e:
            raise AgentError(f"agent 'perfect': {e}") from None
    book = _BOOKS[where]
    if not book.matches(state):
        raise AgentError(f"agent 'perfect': the book {where} is for {book.game} "
                         f"{book.variant}, not this game's variant")
    return book


class PerfectAgent(Agent):
    name = "perfect"

    def __init__(self, seed=None, **params):
        super().__init__(seed, **params)
        self.time = params.get("time", 1.0)
        self.tt_mb = params.get("tt_mb", 256.0)
        self.fallback_spec = params.get("fallback", "mcts")
        self.book_where = params.get("book", "auto")
        if self.time <= 0 or self.tt_mb <= 0:
            raise AgentError("agent 'perfect': time and tt_mb should be positive")
        if self.fallback_spec.split(":")[0].strip().lower() == "perfect":
            raise AgentError("agent 'perfect': its fallback cannot be perfect itself")
        self.seed = seed
        self.fallback = None
        self.refusal = None     # why the proof search cannot play this game (then: fallback)
        self.book = False       # not looked up yet
        self.sources = Counter()
        self._last = None

    def step(self, state, player):
        from niwa.solver.solve import proof_refusal, proof_to_search_result

        actions = state.legal_actions(player)
        if len(actions) == 1:
            self.sources["forced"] += 1
            self._last = None
            return actions[0]
        if self.refusal is None:
            self.refusal = proof_refusal(state) or ""
        if not self.refusal:
            move = self._from_book(state, player, actions)
            if move is not None:
                return move
            table = None
            if self.params.get("tables", True):
                from niwa.solver.agents import _tables_for
                from niwa.solver.tables import solve_from_table

                table = _tables_for(state)
                if table is not None and table.index(state) >= 0:
                    # inside the table: its move (the fastest win, or the slowest loss)
                    self.sources["tables"] += 1
                    self._last = solve_from_table(state, table)
                    return self._last.best
            # Only the PV's first move is wanted: a proving move (win) or the loser's move
            # with the largest refutation (loss), both read from the table. Playing the PV
            # out to the end (and valuing every root move) could cost more than the proof
            # (3M nodes a move on towers 3..1), so the follow-up gets a tenth of the time.
            proof = shared_searcher(self.tt_mb, table).solve(
                state, time_limit=self.time, root_values=False,
                followup_time_limit=0.1 * self.time)
            result = proof_to_search_result(state, proof)
            self._last = result
            if proof.proven and result.best in actions:
                self.sources["proof"] += 1
                return result.best
        self.sources["fallback"] += 1
        return self._fallback().step(state, player)

    def _from_book(self, state, player, actions):
        from niwa.solver.results import SearchResult

        if self.book is False:
            self.book = book_for(state, self.book_where)
        if self.book is None or self.book.winner != player:
            return None
        move = self.book.lookup(state)
        if move is None or move not in actions:     # out of book (or a 64-bit collision)
            return None
        self.sources["book"] += 1
        self._last = SearchResult(algo="book", value=1.0, player=player, proven=True,
                                  best=move, best_name=state.action_to_string(move),
                                  pv=[state.action_to_string(move)], depth=1,
                                  status=f"book ({self.book.plies} plies)")
        return move

    def _fallback(self):
        from niwa.solver.agents import make_agent

        if self.fallback is None:
            self.fallback = make_agent(self.fallback_spec, seed=self.seed)
        return self.fallback

    def observe(self, state, action):
        if self.fallback is not None:
            self.fallback.observe(state, action)

    def analysis(self):
        if self.fallback is not None and self._last is not None and not self._last.proven:
            return self.fallback.analysis() or self._last
        return self._last

    def reset(self):
        # the shared table is kept: its entries are exact for every game of the variant
        if self.fallback is not None:
            self.fallback.reset()
        self.refusal = None
        self.book = False
        self.sources = Counter()
        self._last = None
