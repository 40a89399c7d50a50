"""Building an opening suite: distinct positions reached by random plies, kept when a
quick search finds them roughly balanced (what `niwa openings build` runs).

The model, stated once:

* Candidate k (k = 1, 2, ...) is a fresh deal seeded by (seed, k) followed by `plies`
  uniformly random plies (chance outcomes by their odds, both seeded by (seed, k)); if the
  position reached then waits for a chance event (a draw, a reveal) the chance events are
  played on (still seeded) until someone has to decide. So an opening of a chance game is
  the position after those plies *with the chance outcomes that fell during them* (the
  deal, the cards drawn so far): what is still hidden or still to be drawn (the deck's
  order, the piles) stays unknown, and each game of a tournament draws it from its own
  seed. A candidate that ends the game, or repeats a position kept before, is skipped.
* Its value is the searcher's expected return in [0, 1] for the side to move (seat 0 at a
  simultaneous node): alpha-beta to a fixed depth (deterministic) or MCTS (ISMCTS when
  something is hidden) with a fixed number of iterations and a seed derived from
  (seed, k), so the same command always writes the same file.
* It is kept when |value - fair| <= band, fair being an even share of the win: 1/2 for
  two players, 1/n for n. The suite is the first `count` kept candidates.

Every line of the file is a position in niwa notation (the format `--openings FILE`
reads); `#` lines above them record the command, the seed, the search and how many
candidates were drawn.

>>> parse_search("alphabeta:depth=3"), parse_search("mcts:iters=500")
(('alphabeta', 3), ('mcts', 500))
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from niwa.analysis.arena.openings import random_opening
from niwa.analysis.arena.schedule import TournamentError, derive_seed
from niwa.ext.game import Rng
from niwa.ext.registry import get_game, sample_outcome

SEARCHES = {"alphabeta": "depth", "mcts": "iters"}
MAX_BUDGET = {"depth": 12, "iters": 1_000_000}
MAX_DRAWS_PER_OPENING = 50      # candidates drawn per opening wanted before giving up
MAX_CHANCE_TAIL = 1000          # chance events played on after the plies (a safety bound)


def parse_search(text: str) -> tuple[str, int]:
    """('alphabeta', depth) or ('mcts', iters) from 'alphabeta:depth=D' or 'mcts:iters=N'."""
    algo, _, rest = str(text).strip().partition(":")
    key = SEARCHES.get(algo)
    name, eq, value = rest.partition("=")
    if key is None or name != key or not eq:
        raise TournamentError(f"--search {text!r}: expected alphabeta:depth=D or "
                              "mcts:iters=N")
    if not (value.isascii() and value.isdigit() and len(value) <= 9
            and 1 <= int(value) <= MAX_BUDGET[key]):
        raise TournamentError(f"--search {text!r}: {key} must be a whole number from 1 to "
                              f"{MAX_BUDGET[key]}")
    return algo, int(value)


def default_search(game: str, variant: dict) -> str:
    """Alpha-beta to depth 4 where nothing is hidden and nothing is left to chance (its
    value is then exact to that depth), else MCTS with 1,000 iterations."""
    traits = get_game(game).traits
    if traits.chance or traits.hidden_information or traits.simultaneous:
        return "mcts:iters=1000"
    return "alphabeta:depth=4"


@dataclass(frozen=True)
class BuiltSuite:
    """A suite as built: its positions (notations), their values, how many candidates
    were drawn, and the file's text."""

    positions: tuple[str, ...]
    values: tuple[float, ...]
    drawn: int
    text: str


def candidate(game: str, variant: dict, plies: int, seed: int, k: int):
    """Candidate k: the state after `plies` random plies from deal (seed, k), chance
    events then played on until a decision; None if the game ended on the way."""
    opening = random_opening(k, seed, plies, game, variant)
    if len(opening.moves) < plies:          # the game would have ended inside the plies
        return None
    state = opening.state()
    rng = Rng(derive_seed(seed, "opening-tail", k))
    for _ in range(MAX_CHANCE_TAIL):
        if state.is_terminal():
            return None
        if not state.is_chance_node():
            return state
        action = sample_outcome(state.chance_outcomes(), rng)
        state.apply(action)
    return None


def value_for_mover(state, algo: str, budget: int, seed: int) -> float:
    """The searcher's expected return in [0, 1] for the seat to move (seat 0 at a
    simultaneous node)."""
    from niwa.solver.solve import solve_position

    pov = state.current_player() if state.current_player() >= 0 else 0
    if algo == "alphabeta":
        r = solve_position(state, algo="alphabeta", depth=budget, seed=seed)
    else:
        r = solve_position(state, algo="mcts", iters=budget, seed=seed)
    if r.values is not None and r.values[pov] is not None:
        return float(r.values[pov])
    if r.value is None:
        raise TournamentError(f"the search gave no value for {state.to_notation()}")
    if r.player == pov:
        return float(r.value)
    if state.num_players == 2:
        return 1.0 - float(r.value)
    raise TournamentError(f"the search gave no value for seat {pov}")


def build_suite(game: str, variant: dict, plies: int, count: int, seed: int = 1,
                search: str | None = None, band: float = 0.15, command: str = "",
                name: str = "", progress=None) -> BuiltSuite:
    """The suite of the model above (see the module's docstring). `command` and `name`
    go into the header; `progress(kept, drawn)` is called after every candidate."""
    info = get_game(game)
    variant = info.parse_variant(variant)
    search = search or default_search(info.name, variant)
    algo, budget = parse_search(search)
    if not 0 <= band <= 0.5:
        raise TournamentError(f"--band must be between 0 and 0.5, got {band}")
    fair = 1 / info.new(seed=0, **variant).num_players
    centre = "0.5" if fair == 0.5 else f"{fair:.3f} (1/{round(1 / fair)})"
    positions: list[str] = []
    values: list[float] = []
    seen: set[str] = set()
    drawn = 0
    limit = MAX_DRAWS_PER_OPENING * count
    while len(positions) < count:
        if drawn >= limit:
            raise TournamentError(
                f"only {len(positions)} of {count} openings found in {drawn} candidates "
                f"({plies} plies, value within {centre} ± {band:g} by {search}): widen --band, "
                "change --plies or ask for fewer")
        drawn += 1
        state = candidate(info.name, variant, plies, seed, drawn)
        if progress is not None:
            progress(len(positions), drawn)
        if state is None:
            continue
        notation = state.to_notation()
        if notation in seen:
            continue
        seen.add(notation)
        value = value_for_mover(state, algo, budget, derive_seed(seed, "opening-value", drawn))
        if abs(value - fair) <= band:
            positions.append(notation)
            values.append(value)
    header = [
        f"# niwa opening suite{': ' + name if name else ''} ({info.title}, {count} openings)",
        f"# built by: {command or suite_command(info.name, variant, plies, count, seed, search, band)}",
        f"# each line: the position after {plies} random plies of a fresh deal (seed {seed}; "
        "chance events then played on to the next decision),",
        f"# kept when {search} values it within {centre} ± {band:g} for the side to move "
        f"(seat 0 at a simultaneous choice); {count} kept of {drawn} drawn",
        f"# values: mean {sum(values) / len(values):.3f}, from {min(values):.3f} to "
        f"{max(values):.3f}",
    ]
    text = "\n".join(header + positions) + "\n"
    return BuiltSuite(tuple(positions), tuple(values), drawn, text)


def suite_command(game: str, variant: dict, plies: int, count: int, seed: int, search: str,
                  band: float) -> str:
    """The `niwa openings build` command that rebuilds a suite (variant settings that
    differ from the defaults included)."""
    defaults = get_game(game).defaults()
    settings = [f"-v {k}={v}" for k, v in variant.items() if defaults.get(k) != v]
    parts = ["niwa openings build", game, *settings, f"--plies {plies}", f"--count {count}",
             f"--seed {seed}", f"--search {shlex.quote(search)}", f"--band {band:g}"]
    return " ".join(parts)

