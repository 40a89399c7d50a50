"""Reading the winner's moves off a proof search: the one step the opening book
(niwa.solver.book) and the certificates (niwa.solver.certificate) share, kept below both
so that neither imports the other for it."""

from __future__ import annotations

import time

from niwa.ext.errors import NiwaError


class NoProvenMove(NiwaError):
    """The proof search does not show a winning move where one was expected."""


def winning_move(search, state, winner: int, time_limit: float = 0.0) -> int:
    """A move of `winner` (to move in `state`, a proven win for it) that the proof search
    shows wins: of the moves the table already knows to win, the one with the smallest
    recorded proof; else `state` is proved, then (no child known to win: a kept proof's
    entry has none) proved again from its children by prove_below, and, that failing, its
    moves tried in turn (moves_in_turn)."""
    best = search.cheapest_known_win(state, winner)
    if best >= 0:
        return best
    t0 = time.monotonic()
    if search.prove_value(state, winner, time_limit) != 1:
        raise NoProvenMove(f"the proof does not show a win for seat {winner} at "
                        f"{state.to_notation()}")
    # The table now has this position's proof (or its mirror's), normally with its winning
    # child's; an entry loaded without its subtree (a checkpoint's kept proofs) has none.
    # The position is then proved again from its children (prove_below).
    best = search.cheapest_known_win(state, winner)
    if best < 0:
        left = time_limit - (time.monotonic() - t0) if time_limit > 0 else 0.0
        if time_limit <= 0 or left > 0:
            best = search.prove_below(state, winner, left)
    if best >= 0:
        return best
    # Failing that (the budget ran out, or the children's proofs were overwritten at
    # once), the moves are tried in turn.
    best = moves_in_turn(search, state, winner, time_limit, t0)
    if best >= 0:
        return best
    raise NoProvenMove(f"no proven winning move found for seat {winner} at {state.to_notation()}")


def moves_in_turn(search, state, winner: int, time_limit: float = 0.0,
                  t0: float | None = None) -> int:
    """A move of `winner` that the proof search shows wins, found by trying the moves in
    turn with budgets growing 4x a round, so that no losing move's disproof runs to its end
    while a cheap win waits behind it; -1 if none was found when a round ended more than
    `time_limit` seconds (0: no limit) after `t0` (time.monotonic(); default: now).
    winning_move's fallback, and how it found every move under a kept proof before
    prove_below (bench/perfect-play/pro-rule/prove_below.py compares the two)."""
    t0 = time.monotonic() if t0 is None else t0
    budget, open_moves = 1 << 12, list(state.legal_actions())
    while open_moves:
        for a in list(open_moves):
            child = state.child(a)
            v = search.known_value(child, winner)
            if v is None:
                v = search.prove_value(child, winner, 0.0, budget)
            if v == 1:
                return a
            if v is not None:
                open_moves.remove(a)
        if time_limit > 0 and time.monotonic() - t0 > time_limit:
            break
        budget *= 4
    return -1


def most_proving_move(search, state, avoid=frozenset()) -> int:
    """The move an unfinished proof of `state` leans to: the child cheapest to prove a win
    for the player to move (smallest proof number), the one dearest to disprove among
    equals, then the first; from the table's numbers (ProofSearch.child_numbers), nothing
    searched. A proven win's child has proof number 0, so it is chosen when there is one.
    `avoid`: moves known to lose by other means (niwa.solver.known), passed over unless
    every move is one.

    >>> from niwa.ext.lotus import LotusState
    >>> from niwa.solver.proof import ProofSearch
    >>> s = LotusState(towers=1, lane=1, shared=3, trampoline_at=3)
    >>> most_proving_move(ProofSearch(tt_mb=1), s) in s.legal_actions()
    True
    """
    numbers = search.child_numbers(state)
    numbers = [m for m in numbers if m[0] not in avoid] or numbers
    best = min(numbers, key=lambda m: (m[1], -m[2]))
    return best[0]
