"""Solo Bonsai with the deck order known: "could this game have been won?"

Once the order of the deck is known, a solo Bonsai game has no chance left: it is a
one-player optimisation. `solve_solo` finds the best final score the deal allows and
whether the solo win (a goal tile of each of the 3 colours and the level's threshold,
80/100/120/140 points) was possible, by depth-first branch and bound
(`solver/solo_search.pyx`: admissible bound, transposition table, best bound first) after
a nested Monte Carlo search gives a first incumbent. The answer is exact when the search completes
within its node and time budget; otherwise it is the best score found (with its line) and
a proven upper bound.

Where the deck comes from: a position whose notation already says `deck order ...`, an
explicit card list (`with_deck`), a seeded shuffle of the unseen cards (`with_deck_seed`),
or a recorded solo game (`from_record`: the reveals it holds, in order).

>>> from niwa.ext.bonsai import new_initial
>>> start = with_deck_seed(new_initial(seed=1, players=1), 7)
>>> r = solve_solo(start, time_s=None, nodes=2000)
>>> r.upper_bound >= r.best_score >= r.incumbent_score
True
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from niwa.ext.errors import NiwaError

REVEAL = "reveal "
DECK_PART = 3           # the deck's place among a Bonsai notation's '; '-separated parts


class SoloError(NiwaError):
    """A position, deck or record the deck-known solo search cannot take."""


@dataclass(frozen=True)
class SoloResult:
    """The answer of the deck-known solo search; scores are final Bonsai points.

    `exact`: the search completed, so `best_score` is the best the deal allows and equals
    `upper_bound`. Otherwise `best_score` is the best found and `upper_bound` is proven (no
    line scores more). `win` is "yes" (a winning line is shown), "no" (proven: no line
    claims all 3 colours with at least `threshold` points) or "unknown"."""

    position: str                   # the searched position, its deck order included
    deck: list[str]                 # the deck order from that position on
    threshold: int                  # the level's winning score
    best_score: int
    upper_bound: int
    exact: bool
    best_line: list[str]            # the decisions of the best line, in the game's notation
    best_line_wins: bool            # does that line also win (3 colours, threshold)?
    win: str                        # yes | no | unknown
    best_winning_score: int | None  # the best score of a winning line found (None: none)
    winning_upper_bound: int | None  # proven bound on a winning line's score (None: no
    #                                   winning-line search was needed)
    winning_exact: bool             # best_winning_score is the best a winning line can get
    winning_line: list[str]
    start_bound: int                # the static bound at the root (before any search)
    incumbent_score: int            # the nested Monte Carlo search's best, before the B&B
    nodes: int
    time_s: float
    obtained: int | None = None     # from a record: the score actually obtained
    obtained_won: bool | None = None
    source: dict = field(default_factory=dict)  # where the position and deck came from


def check_solo(state) -> None:
    """SoloError unless `state` is a solo Bonsai position past the goal draw, not over."""
    if getattr(state, "game_name", None) != "bonsai":
        name = getattr(state, "game_name", type(state).__name__)
        raise SoloError(f"the deck-known search is for solo Bonsai; this is a {name} position")
    if state.num_players != 1:
        raise SoloError(f"the deck-known search is for solo Bonsai (players=1); this position "
                        f"has {state.num_players} players")
    if state.variant["tokonoma"] == "on":
        raise SoloError("the deck-known search does not take tokonoma=on (solo uses the plain "
                        "deck)")
    if state.phase == "goaldraw":
        raise SoloError("the goals are not drawn yet: give a position after the goal draw")
    if state.is_terminal():
        raise SoloError("the position is over: nothing to search")


def unseen_cards(state) -> list[str]:
    """The cards still in the deck, as a sorted multiset (in the notation's card names)."""
    from niwa.ext.bonsai import CARDS

    words = state.information_state(0).split("; ")[DECK_PART].split()[2:]  # set T*3 GW ...
    out = []
    for w in words:
        if w == "-":
            continue
        name, _, k = w.partition("*")
        out += [name] * (int(k) if k else 1)
    return sorted(out, key=CARDS.index)


def deck_order(state) -> list[str] | None:
    """The deck order a position carries (None: only the set is known)."""
    words = state.to_notation().split("; ")[DECK_PART].split()
    if words[1] != "order":
        return None
    return [] if words[2:] == ["-"] else words[2:]


def with_deck(state, cards: list[str]):
    """`state` with its unseen deck put in the order `cards` (first = next revealed); the
    cards must be exactly the unseen ones."""
    from niwa.ext.bonsai import CARDS, from_notation

    check_solo(state)
    for c in cards:
        if c not in CARDS:
            raise SoloError(f"unknown card {c!r} in the deck; cards are {' '.join(CARDS)}")
    want = unseen_cards(state)
    got = sorted(cards, key=CARDS.index)
    if got != want:
        missing = _diff(want, got)
        extra = _diff(got, want)
        raise SoloError(
            f"the deck ({len(cards)} cards) does not match the position's unseen cards "
            f"({len(want)}): " + "; ".join(x for x in (f"missing {' '.join(missing)}"
                                                       if missing else "",
                                                       f"not unseen {' '.join(extra)}"
                                                       if extra else "") if x))
    parts = state.to_notation().split("; ")
    parts[DECK_PART] = "deck order " + (" ".join(cards) or "-")
    return from_notation("; ".join(parts))


def _diff(a: list[str], b: list[str]) -> list[str]:
    """The cards of a that b lacks (as multisets)."""
    return list((Counter(a) - Counter(b)).elements())


def with_deck_seed(state, seed: int):
    """`state` with its unseen deck shuffled by Rng(seed) (the engine's determinisation); a
    position before the goal draw or the deal ("bonsai players=1") is first dealt from
    the same Rng, so a seed names a whole solo deal."""
    from niwa.ext.game import PLAYER_CHANCE, Rng
    from niwa.ext.registry import sample_outcome

    rng = Rng(seed)
    if getattr(state, "game_name", None) == "bonsai" and state.phase in ("goaldraw", "deal"):
        state = state.clone()
        while state.current_player() == PLAYER_CHANCE:
            state.apply(sample_outcome(state.chance_outcomes(), rng))
    check_solo(state)
    return state.resample_hidden(0, rng)


def from_record(record, ply: int = 0):
    """(position after `ply` plies of a recorded solo game, with its deck order; the final
    position). The order is the reveals the record holds after that ply; a game that did
    not reach the end of the deck (capped, quit) does not reveal all of it. `record` is a
    validated GameRecord (read_game in analysis/arena/game_record.py)."""
    if record.game != "bonsai":
        raise SoloError(f"the record is a {record.game} game, not Bonsai")
    if len(record.seats) != 1:
        raise SoloError(f"the record is a {len(record.seats)}-player Bonsai game; the "
                        "deck-known search is for solo games (players=1)")
    if not 0 <= ply < len(record.moves):
        raise SoloError(f"--ply {ply} is out of range: the game has {len(record.moves)} plies "
                        "(0 = the start; the last position is over)")
    reveals = [str(m.move)[len(REVEAL):] for m in record.moves[ply:]
               if m.by == "chance" and str(m.move).startswith(REVEAL)]
    position = record.replay(ply)
    check_solo(position)
    left = len(unseen_cards(position))
    if len(reveals) != left:
        raise SoloError(f"the record reveals {len(reveals)} of the {left} cards left in the "
                        f"deck after ply {ply} ({record.termination} game): the deck order "
                        "is not known")
    return with_deck(position, reveals), record.replay()


def line_names(state, actions: list[int]) -> list[str]:
    """The decisions `actions` from `state` in the game's notation (reveals applied as they
    come, not listed)."""
    from niwa.ext.game import PLAYER_CHANCE

    s = state.clone()
    names = []

    def resolve():
        while s.current_player() == PLAYER_CHANCE:
            s.apply(s.chance_outcomes()[0][0])

    resolve()
    for a in actions:
        names.append(s.action_to_string(a))
        s.apply(a)
        resolve()
    return names


def turns_of(names: list[str]) -> list[list[str]]:
    """A line of decisions cut into turns (a turn starts with its removal choice, or with
    Meditate or Cultivate)."""
    turns: list[list[str]] = []
    for name in names:
        opens = name.startswith(("remove ", "keep", "meditate ", "cultivate"))
        after_removal = bool(turns) and turns[-1][-1].startswith(("remove ", "keep"))
        if not turns or (opens and not after_removal):
            turns.append([])
        turns[-1].append(name)
    return turns


def play_line(state, actions: list[int]):
    """The final position of `actions` from `state` (reveals in the known order)."""
    from niwa.ext.game import PLAYER_CHANCE

    s = state.clone()
    for a in [None, *actions]:
        if a is not None:
            s.apply(a)
        while s.current_player() == PLAYER_CHANCE:
            s.apply(s.chance_outcomes()[0][0])
    return s


def _wins(final) -> bool:
    return final.is_terminal() and final.winner() == 0


def solve_solo(state, time_s: float | None = 10.0, nodes: int | None = None,
               tt_bits: int = 22, per_child: int = 32, first_share: float = 0.25,
               seed: int = 0, source: dict | None = None, final=None) -> SoloResult:
    """Search a solo Bonsai position whose deck order is known (see the module docstring).

    A nested Monte Carlo search (`per_child` playouts per action along its line; with a
    time budget, at most `first_share` of it) gives the first incumbent. The budget is
    `time_s` seconds and/or `nodes` search nodes (whichever ends first; with nodes only,
    the answer is the same on any machine): the score search gets half, then, if its best
    line does not win and the threshold is still within its bound, the same two steps
    restricted to winning lines get what is left (else more of the score search).
    `final`: a recorded game's final position, to compare (obtained score, won)."""
    from niwa.ext.bonsai import SPEC
    from niwa.solver.solo_search import SoloSearch, bound_of

    check_solo(state)
    if deck_order(state) is None:
        raise SoloError("the position's deck order is not known: give it (deck order ... in "
                        "the notation, --deck, --deck-seed or --record)")
    threshold = SPEC.solo_thresholds[state.variant["solo_level"]]
    budget = float("inf") if time_s is None else max(0.0, time_s)
    node_budget = 10**15 if nodes is None else max(1, nodes)
    t0 = time.perf_counter()

    def left():
        return max(0.0, budget - (time.perf_counter() - t0))

    search = SoloSearch(tt_bits)
    start_bound = bound_of(state, 0)
    inc, inc_line = search.nested(state, 0, per_child, min(budget * first_share, 1e9), seed)
    # half the budget for the best score; the rest for the winning-line question if it is
    # still open, else for more of the same search (its table kept)
    r = search.run(state, 0, inc, inc_line, max(node_budget // 2, 1),
                   min(max(0.0, budget / 2 - (budget - left())), 1e9))
    used = r["nodes"]
    best_final = play_line(state, r["line"])
    win_open = not _wins(best_final) and r["upper"] >= threshold
    if not win_open and not r["complete"]:
        r = search.run(state, 0, r["best"], r["line"], max(node_budget - used, 1),
                       min(left(), 1e9), False)
        used += r["nodes"]
    best, line, upper, exact = r["best"], r["line"], r["upper"], r["complete"]
    best_final = play_line(state, line)
    assert best_final.scores()[0] == best, "the best line does not replay to its score"
    line_wins = _wins(best_final)
    win_best, win_upper, win_exact, win_line = None, None, False, []
    if line_wins:
        win, win_best, win_upper, win_exact, win_line = "yes", best, upper, exact, line
    elif upper < threshold:
        win, win_upper, win_exact = "no", upper, True
    else:
        winc, winc_line = search.nested(state, 1, per_child, min(left() * first_share, 1e9),
                                        seed + 1)
        start = (winc, winc_line) if winc >= threshold else (threshold - 1, [])
        w = search.run(state, 1, start[0], start[1], max(node_budget - used, 1),
                       min(left(), 1e9), False)
        used += w["nodes"]
        win_upper = min(w["upper"], upper)
        win_exact = w["complete"]
        if w["best"] >= threshold:
            win, win_best, win_line = "yes", w["best"], w["line"]
            assert _wins(play_line(state, win_line)), "the winning line does not win"
        else:
            win = "no" if w["complete"] or win_upper < threshold else "unknown"
    if win_best is not None and win_best > best:     # a winning line is a line too
        best, line, line_wins = win_best, win_line, True
    elapsed = time.perf_counter() - t0
    return SoloResult(
        position=state.to_notation(), deck=deck_order(state), threshold=threshold,
        best_score=best, upper_bound=upper, exact=exact, best_line=line_names(state, line),
        best_line_wins=line_wins, win=win, best_winning_score=win_best,
        winning_upper_bound=win_upper, winning_exact=win_exact,
        winning_line=line_names(state, win_line), start_bound=start_bound,
        incumbent_score=inc, nodes=used, time_s=elapsed,
        obtained=final.scores()[0] if final is not None else None,
        obtained_won=_wins(final) if final is not None else None,
        source=dict(source or {}))
