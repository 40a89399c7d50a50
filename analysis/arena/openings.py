"""Opening suites: the positions a tournament's rounds start from.

Without openings every round starts from the game's initial position (its deal), so
near-deterministic agents in a game without chance replay one game over and over, and
every statistic counts copies. With a suite, round r starts from opening k(r), played in
every seat order of every table (two players: colours swapped), as cutechess-cli and
fastchess play an opening book.

Suites (`--openings`):

    FILE                       one opening a line: a position in niwa notation (it begins
                               with the game's name), or a move list in niwa notation
                               from the initial position (spaces or commas between
                               moves); blank lines and lines starting with # are skipped
    suite:NAME                 a suite shipped with niwa (analysis/arena/suites/NAME.txt):
                               lotus-balanced, haru-balanced, bonsai-balanced; suite:GAME
                               means GAME-balanced, and a bare NAME that is no file works
                               too (`niwa openings list` shows them, `niwa openings build`
                               makes more)
    random:plies=N             generated: N random plies (chance included) from a fresh
                               deal, every opening a distinct position, seeded from the
                               tournament seed
    ...,count=M                (generated) a suite of M openings, cycled; default: a new
                               opening every round
    ...,order=sequential|random   the order the suite is played in: a file top to bottom
                               (cycled), or shuffled once per pass (seeded)

An opening is a value (`Opening`): its id (the 1-based index in the suite), the start
position's notation and the opening moves as record moves; game i's opening is a pure
function of the configuration and i, so resume and any number of workers play the same
games. Opening k of a generated suite depends only on the seed and k (never on the
length of the run), so a run grown with `--resume --games N` keeps its first games.

>>> spec = parse_openings("random:plies=6,order=random")
>>> spec["source"], spec["plies"], spec["order"], spec["count"]
('random', 6, 'random', None)
>>> spec = parse_openings("suite:lotus,order=random")
>>> spec["source"], spec["suite"], os.path.basename(spec["path"]), spec["order"]
('file', 'lotus-balanced', 'lotus-balanced.txt', 'random')
>>> parse_openings("random:plies=x")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
niwa.analysis.arena.schedule.TournamentError: --openings random:plies=x: plies must be ...
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from niwa.analysis.arena.game_record import Move, apply_move, apply_move_list
from niwa.analysis.arena.schedule import TournamentError, derive_seed
from niwa.ext.errors import NiwaError
from niwa.ext.game import Rng
from niwa.ext.registry import games, get_game, parse_position, sample_outcome

ORDERS = ("sequential", "random")
SUITES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suites")
SUITE_SUFFIX = ".txt"
MAX_OPENING_PLIES = 1000
MAX_TRIES = 200          # random openings drawn in vain before the suite is declared full


@dataclass(frozen=True)
class Opening:
    """Where a game starts: opening `id` of its suite (1-based), a start position's
    notation, and the moves (arena.game_record.Move) played from it before the agents
    take over."""

    id: int
    start: str
    moves: tuple = field(default=(), hash=False)   # record Moves (not hashable)

    def state(self):
        """The position after the opening moves (a fresh state)."""
        state = parse_position(self.start)
        for ply, move in enumerate(self.moves):
            apply_move(state, move, ply)
        return state


def shipped_suites() -> dict[str, str]:
    """The suites shipped with niwa, name -> path (analysis/arena/suites/NAME.txt)."""
    try:
        names = sorted(os.listdir(SUITES_DIR))
    except OSError:
        return {}
    return {n[: -len(SUITE_SUFFIX)]: os.path.join(SUITES_DIR, n) for n in names
            if n.endswith(SUITE_SUFFIX)}


def shipped_suite(name: str) -> str | None:
    """The shipped suite called `name` (or `name`-balanced: suite:lotus), or None."""
    suites = shipped_suites()
    return next((n for n in (name, f"{name}-balanced") if n in suites), None)


def parse_openings(text: str) -> dict:
    """The suite of `--openings TEXT` as a JSON-able dict (the run's identity keeps it):
    {"source": "random", "plies", "count", "order"} or {"source": "file", "path",
    "order"} (plus "suite": its name for a shipped suite; the file's lines are added by
    `load_suite`)."""
    text = str(text).strip()
    if not text:
        raise TournamentError("--openings needs a FILE, suite:NAME or random:plies=N")
    kind, _, rest = text.partition(":")
    if kind not in ("random", "file", "suite") and not os.path.exists(text) \
            and shipped_suite(text) is not None:      # a bare suite name: lotus-balanced
        kind, rest = "suite", text
    options: dict[str, str] = {}
    if kind in ("random", "suite") or (kind == "file" and rest):
        for item in filter(None, (s.strip() for s in rest.split(","))):
            key, eq, value = item.partition("=")
            if kind in ("file", "suite") and not eq and "path" not in options:
                options["path"] = item          # file:book.txt, suite:lotus
                continue
            if not eq or key not in ("plies", "count", "order", "path"):
                raise TournamentError(
                    f"--openings {text}: unknown option {item!r}; expected plies=N, "
                    "count=N, order=sequential|random")
            options[key] = value
    order = options.get("order", "sequential")
    if order not in ORDERS:
        raise TournamentError(f"--openings {text}: order must be sequential or random, "
                              f"got {order!r}")
    if kind == "suite":
        name = shipped_suite(options.get("path", ""))
        if name is None:
            known = ", ".join(shipped_suites()) or "none installed"
            raise TournamentError(f"--openings {text}: no suite called "
                                  f"{options.get('path', '')!r} ships with niwa (known: "
                                  f"{known})")
        return {"source": "file", "path": shipped_suites()[name], "order": order,
                "suite": name}
    if kind == "random":
        if "plies" not in options:
            raise TournamentError(f"--openings {text}: give the number of plies, e.g. "
                                  "random:plies=6")
        plies = _whole(text, "plies", options["plies"], MAX_OPENING_PLIES)
        count = (_whole(text, "count", options["count"], 10**6) if "count" in options
                 else None)
        return {"source": "random", "plies": plies, "count": count, "order": order}
    path = options.get("path", text if kind != "file" else rest)
    return {"source": "file", "path": path, "order": order}


def _whole(text: str, name: str, value: str, high: int) -> int:
    # ASCII digits, and no number longer than any bound (int() refuses 5,000 digits)
    if not (value.isascii() and value.isdigit() and len(value) <= 9 and 1 <= int(value) <= high):
        raise TournamentError(f"--openings {text}: {name} must be a whole number from 1 "
                              f"to {high}, got {value!r}")
    return int(value)


def load_suite(spec: dict, game: str | None, variant: dict) -> dict:
    """The suite with a file's openings read and checked (each line must be a position of
    this game and variant, or moves legal from its initial position): {"lines": [...]}
    added, so that the run's identity holds the openings themselves, not just a path. A
    suite already read is checked again (against another variant, say); game=None reads
    without checking."""
    if spec["source"] != "file":
        return spec
    path = spec["path"]
    if "lines" in spec:
        numbered = list(enumerate(spec["lines"], 1))
        where = "opening"
    else:
        try:
            with open(path, encoding="utf-8") as f:
                raw = f.read().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            reason = getattr(e, "strerror", None) or "not UTF-8 text"
            raise TournamentError(f"--openings {path}: cannot read it ({reason})") from None
        numbered = [(n, line.strip()) for n, line in enumerate(raw, 1)
                    if line.strip() and not line.strip().startswith("#")]
        where = "line"
    lines = []
    for number, line in numbered:
        if game is not None:
            try:
                opening_from_line(line, len(lines) + 1, game, variant)
            except NiwaError as e:
                name = f"suite:{spec['suite']}" if spec.get("suite") else path
                raise TournamentError(f"--openings {name} {where} {number}: "
                                      f"{str(e).splitlines()[0]}") from None
        lines.append(line)
    if not lines:
        raise TournamentError(f"--openings {path}: no openings in it (one position or move "
                              "list a line)")
    return {**spec, "path": os.path.abspath(path), "lines": lines}


def opening_from_line(line: str, ident: int, game: str, variant: dict) -> Opening:
    """An opening of a suite file: a position (it begins with a game name) or a move list
    from the initial position of the tournament's game and variant."""
    first = line.split()[0].lower()
    info = get_game(game)
    if first in games():        # a position (of this game, checked below)
        state = parse_position(line)
        if state.game_name != info.name or dict(state.variant) != dict(variant):
            wanted = " ".join(f"{k}={v}" for k, v in variant.items())
            raise TournamentError("the position is not one of this tournament's game and "
                                  f"variant: it is {line.split(';')[0]!r}, the tournament "
                                  f"plays '{info.name} {wanted}'")
        if state.is_terminal():
            raise TournamentError("the position is already over")
        return Opening(ident, state.to_notation())
    state = info.new(seed=0, **variant)
    start = state.to_notation()
    moves: list[Move] = []
    apply_move_list(state, line, moves)
    if state.is_terminal():
        raise TournamentError("the moves end the game")
    return Opening(ident, start, tuple(moves))


def random_opening(ident: int, seed: int, plies: int, game: str, variant: dict,
                   attempt: int = 0) -> Opening:
    """`plies` uniformly random plies (chance by its odds) from a deal seeded by (seed,
    id, attempt); a game that ends sooner is cut one ply before its end."""
    rng = Rng(derive_seed(seed, "opening", ident, attempt))
    state = get_game(game).new(seed=derive_seed(seed, "opening-deal", ident, attempt),
                               **variant)
    start = state.to_notation()
    moves: list[Move] = []
    for _ in range(plies):
        if state.is_chance_node():
            action = sample_outcome(state.chance_outcomes(), rng)
            move = Move("chance", state.action_to_string(action))
        elif state.is_simultaneous_node():
            action = [rng.choice(state.legal_actions(q)) if state.legal_actions(q) else -1
                      for q in range(state.num_players)]
            move = Move("joint", [state.action_to_string(a, q) if a >= 0 else ""
                                  for q, a in enumerate(action)])
        else:
            player = state.current_player()
            action = rng.choice(state.legal_actions())
            move = Move(player, state.action_to_string(action, player))
        after = state.clone()
        if isinstance(action, list):
            after.apply_joint(action)
        else:
            after.apply(action)
        if after.is_terminal():
            break
        state = after
        moves.append(move)
    return Opening(ident, start, tuple(moves))


class OpeningSuite:
    """Game i's opening from a suite spec (see parse_openings/load_suite), computed on
    demand: a generated suite draws its openings in id order (each must differ from the
    ones before it, so they are kept), a file suite reads its lines."""

    def __init__(self, spec: dict, seed: int, game: str, variant: dict):
        self.spec, self.seed, self.game, self.variant = spec, seed, game, dict(variant)
        self._drawn: list[Opening] = []
        self._seen: set[str] = set()
        self._file: dict[int, Opening] = {}
        self._orders: dict[int, list[int]] = {}

    @property
    def size(self) -> int | None:
        """Openings in the suite (None: a new one for every round)."""
        if self.spec["source"] == "file":
            return len(self.spec["lines"])
        return self.spec.get("count")

    def for_round(self, rnd: int) -> Opening:
        size = self.size
        if size is None:
            return self.opening(rnd + 1)
        cycle, within = divmod(rnd, size)
        if self.spec.get("order") == "random":
            if cycle not in self._orders:
                order = list(range(size))
                Rng(derive_seed(self.seed, "opening-order", cycle)).shuffle(order)
                self._orders = {cycle: order}      # one pass at a time in memory
            within = self._orders[cycle][within]
        return self.opening(within + 1)

    def opening(self, ident: int) -> Opening:
        """Opening `ident` (1-based) of the suite."""
        if self.spec["source"] == "file":
            if ident not in self._file:
                self._file[ident] = opening_from_line(self.spec["lines"][ident - 1], ident,
                                                      self.game, self.variant)
            return self._file[ident]
        while len(self._drawn) < ident:
            self._draw()
        return self._drawn[ident - 1]

    def _draw(self) -> None:
        ident = len(self._drawn) + 1
        for attempt in range(MAX_TRIES):
            opening = random_opening(ident, self.seed, self.spec["plies"], self.game,
                                     self.variant, attempt)
            key = opening.state().to_notation()
            if key not in self._seen:
                self._seen.add(key)
                self._drawn.append(opening)
                return
        raise TournamentError(
            f"--openings random:plies={self.spec['plies']}: could not find opening {ident} "
            f"distinct from the {ident - 1} before it in {MAX_TRIES} tries; use more plies "
            "or fewer rounds (or count=N to cycle a smaller suite)")
