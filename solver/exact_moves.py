"""Exact moves for an agent: what the solver knows about a position, asked in one place by
both the `perfect` agent and MCTS (`mcts:book=auto,tables=true,proof=0.3`).

ExactMoves answers, for games the df-pn proof search can decide (proof_refusal in
niwa.solver.solve: two players, deterministic, alternating, perfect information):
- book_move: the opening book's move (niwa.solver.book), for the seat the book wins;
- table_move: the endgame table's move (niwa.solver.tables) when the position is inside
  it (the fastest win, or the slowest loss);
- proof_move: a live df-pn proof within a time limit, in the process's one shared proof
  table (kept across moves and games of the same variant): a proven win gives a proving
  move, a proven loss the move whose refutation cost the most work.
Each returns a SearchResult (algo "book", "tables" or "proof"; `proven` says whether its
`best` is exact) or None. Other games get None from every question, with no error.

>>> from niwa.ext.lotus import LotusState
>>> exact = ExactMoves("perfect", tt_mb=16)
>>> s = LotusState(towers=1, lane=1, shared=3, trampoline_at=3)
>>> r = exact.proof_move(s, time_limit=1.0)
>>> r.proven, r.best in s.legal_actions()
(True, True)
"""

from __future__ import annotations

import sys
from pathlib import Path

from niwa.solver.agent_base import AgentError
from niwa.solver.proof import ProofSearch
from niwa.solver.results import SearchResult
from niwa.solver.solve import proof_refusal, proof_to_search_result
from niwa.solver.tables import find_table, solve_from_table

# One proof table per process and table size (with and without endgame tables), reused by
# every agent built in it (a tournament worker builds one agent per game): entries are
# exact values, valid for every game of the variant; the search clears the table itself
# when the game or the variant changes. A slot per size, not one in all: two agents asking
# for different sizes in one game would otherwise each throw the other's table away at
# every move.
_SEARCHERS: dict[tuple[float, bool], tuple[object, ProofSearch]] = {}
_BOOKS: dict[str, object] = {}      # path -> loaded Book
_TOLD: set[str] = set()             # notes already printed in this process


def shared_searcher(tt_mb: float, tables=None):
    """The process's proof search with a `tt_mb` table and these endgame `tables` (loaded
    tables are cached, so the same variant keeps its search; other tables, another
    variant's, replace the search of that size).

    >>> shared_searcher(16) is shared_searcher(16) is not shared_searcher(32)
    True
    >>> a = shared_searcher(16); b = shared_searcher(32)
    >>> shared_searcher(16) is a and shared_searcher(32) is b    # both kept
    True
    """
    slot = (float(tt_mb), tables is not None)
    held = _SEARCHERS.get(slot)
    if held is None or held[0] is not tables:
        _SEARCHERS.pop(slot, None)      # free the old table before mapping a new one
        held = _SEARCHERS[slot] = (tables, ProofSearch(tt_mb=tt_mb, tables=tables))
    return held[1]


def tell_once(who: str, text: str) -> None:
    """A note on stderr, once per process."""
    if text not in _TOLD:
        _TOLD.add(text)
        print(f"{who}: {text}", file=sys.stderr, flush=True)


def check_book_where(who: str, where: str) -> None:
    """A `book=` value is auto, none or an existing file (else a one-line AgentError)."""
    if where not in ("auto", "none") and not Path(where).is_file():
        raise AgentError(f"agent {who!r}: no book file {where} (book= takes auto, none or "
                         f"the path of a book from `niwa book build`)")
    if where not in ("auto", "none") and where not in _BOOKS:
        from niwa.solver.book import BookError, load_book

        try:      # a damaged book named on purpose is refused before any game starts
            _BOOKS[where] = load_book(where)
        except BookError as e:
            raise AgentError(f"agent {who!r}: {e}") from None


def book_for(state, where: str, who: str = "perfect", quiet: bool = False):
    """The book `where` names for `state`'s game and variant ("auto": the one find_book
    finds, "none": no book, else a file path), loaded once per process; None if there is
    none (a note, once per process, unless `quiet`). A book for another variant, or a
    damaged one, raises AgentError."""
    # (here, not on top: the books need numpy, which a game without a book never loads)
    from niwa.solver.book import BookError, book_name, books_dir, find_book, load_book

    if where == "none":
        return None
    if where == "auto":
        try:
            path = find_book(state.game_name, state.variant)
        except BookError as e:      # a link in the books folder: skipped, as a damaged book
            tell_once(who, f"{e} (the book is skipped: proving live)")
            return None
        if path is None:
            if not quiet:
                tell_once(who, f"no opening book for {state.game_name} {state.variant} "
                               f"(looked for {book_name(state.game_name, state.variant)} in "
                               f"{books_dir()}); proving live from the first move. Build one "
                               f"with `niwa book build`.")
            return None
        where = str(path)
        if where not in _BOOKS:
            try:
                _BOOKS[where] = load_book(where)
            except BookError as e:
                # a damaged book found on its own is skipped (the agent proves live), not
                # a reason to forfeit every game
                tell_once(who, f"{e} (the book is skipped: proving live)")
                return None
    if where not in _BOOKS:
        try:
            _BOOKS[where] = load_book(where)
        except BookError as e:
            raise AgentError(f"agent {who!r}: {e}") from None
    book = _BOOKS[where]
    if not book.matches(state):
        raise AgentError(f"agent {who!r}: the book {where} is for {book.game} "
                         f"{book.variant}, not this game's variant")
    return book


class ExactMoves:
    """The exact knowledge one agent consults: its `book` (auto / none / a path), the
    endgame `tables` (True: the variant's table in the default folder, if built) and live
    proofs in a shared `tt_mb` table; `cpu_time`: proof time limits count CPU seconds.
    `who` names the agent in messages; `quiet` drops the missing-book note. What it learns
    about a game (whether proofs apply, the book, the table) is kept until reset()."""

    def __init__(self, who: str, book: str = "none", tables: bool = False,
                 tt_mb: float = 256.0, cpu_time: bool = False, quiet: bool = False):
        check_book_where(who, book)
        self.who, self.book_where, self.use_tables = who, book, tables
        self.tt_mb, self.cpu_time, self.quiet = tt_mb, cpu_time, quiet
        self.reset()

    def reset(self) -> None:
        self.refusal = None     # why the proof search cannot play this game ("" = it can)
        self.book = False       # not looked up yet
        self.table = False

    def applies(self, state) -> bool:
        """Whether the proof search (and so the book and the tables) can decide this game."""
        if self.refusal is None:
            self.refusal = proof_refusal(state) or ""
        return not self.refusal

    def prepare(self, state) -> None:
        """Load the book and the table now (once a game), so a timed move does not pay."""
        if self.applies(state):
            self._book(state)
            self._table(state)

    def _book(self, state):
        if self.book is False:
            self.book = book_for(state, self.book_where, self.who, self.quiet)
        return self.book

    def _table(self, state):
        if self.table is False:
            self.table = find_table(state) if self.use_tables else None
        return self.table

    def book_move(self, state, player, actions=None):
        """The book's move for `player` if the book wins for that seat and holds the
        position (legal-checked), else None."""
        if not self.applies(state):
            return None
        book = self._book(state)
        if book is None or book.winner != player:
            return None
        from niwa.solver.book import IN_BOOK, move_from

        move, where = move_from(book, state, actions or state.legal_actions(player))
        if move is None:
            return None     # out of book (or a 64-bit collision)
        status = f"book ({book.plies} plies)" if where == IN_BOOK else f"book ({where})"
        return SearchResult(algo="book", value=1.0, player=player, proven=True, best=move,
                            best_name=state.action_to_string(move),
                            pv=[state.action_to_string(move)], depth=1, status=status)

    def table_move(self, state):
        """The endgame table's answer when the position is inside it, else None."""
        if not self.applies(state):
            return None
        table = self._table(state)
        if table is None or table.index(state) < 0:
            return None
        return solve_from_table(state, table)

    def proof_move(self, state, time_limit: float):
        """A live proof of `state` within `time_limit` seconds (and a tenth of that for
        reading off the move): its SearchResult, `proven` False if it ran out of time;
        None for a game proofs cannot decide."""
        if not self.applies(state):
            return None
        # Only the PV's first move is wanted: a proving move (win) or the loser's move
        # with the largest refutation (loss), both read from the table. Playing the PV
        # out to the end (and valuing every root move) could cost more than the proof
        # (3M nodes a move on towers 3..1), so the follow-up gets a tenth of the time.
        proof = shared_searcher(self.tt_mb, self._table(state)).solve(
            state, time_limit=time_limit, root_values=False,
            followup_time_limit=0.1 * time_limit, cpu_time=self.cpu_time)
        return proof_to_search_result(state, proof)

    def leaning_move(self, state, unfinished):
        """After a proof_move that ran out of time (`unfinished`, its SearchResult, whose
        figures are kept): the unfinished proof's most-proving move
        (proof_moves.most_proving_move, read from the table, nothing searched) as that
        unproven SearchResult's move, passing over the moves known to lose
        (niwa.solver.known: a certificate, a proof record); a move known to win instead,
        proven, if there is one (the position's own known winning move first)."""
        from dataclasses import replace

        from niwa.solver.known import known_answer
        from niwa.solver.proof_moves import most_proving_move

        here, known = known_answer(state, books=self.book_where != "none")
        if here is not None and here.best is not None:
            return replace(unfinished, value=1.0, proven=True, best=here.best,
                           best_name=here.best_name, pv=here.pv, depth=1, status=here.status)
        move = most_proving_move(shared_searcher(self.tt_mb, self._table(state)), state,
                                 avoid={m.action for m in known})
        name = state.action_to_string(move)
        lost = here is not None and here.value == 0.0
        avoided = "" if not known else " (every move known to lose)" if lost else \
            f" ({len(known)} known to lose passed over)"
        return replace(unfinished, best=move, best_name=name, pv=[name], depth=1,
                       status=f"{unfinished.status}: the unfinished proof's most-proving "
                              f"move{avoided}")
