"""Game records: one versioned JSON Lines format for every game niwa plays.

One game per line (see docs/game-records.md): the tags (format version, game, variant,
seats with their agents' resolved settings, seeds, start position, result per seat,
termination, date, niwa version) and the moves in their notation, chance outcomes and
joint (simultaneous) moves included and marked as such, each with the mover's thinking
time and optional comment (the agent's analysis: value, visits, depth, pv).

Reading validates a record the way a position is validated: the moves must replay
legally from the start position to the recorded final position and result; anything else
is one NiwaError naming the file's line.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version

from niwa.analysis.arena.game_loop import FORFEIT_REASONS
from niwa.ext.errors import IllegalActionError, NiwaError
from niwa.ext.game import PLAYER_CHANCE, PLAYER_SIMULTANEOUS
from niwa.ext.registry import get_game, parse_position

FORMAT = "niwa-game"
VERSION = 1
RECORD_FIELD = "_record"     # the games.csv row key that carries a game's record line
CHANCE, JOINT = "chance", "joint"          # the `by` of a chance outcome / a joint move
TERMINATIONS = ("normal", "capped", "forfeit", "quit")


class RecordError(NiwaError):
    """A game record that cannot be read or does not replay (one-line message)."""


@dataclass
class Seat:
    agent: str                   # the label shown in tables (a spec, #2.. when repeated)
    spec: str = ""               # the agent spec it was built from ("human": a person)
    settings: dict = field(default_factory=dict)    # every parameter, defaults filled in
    seed: int | None = None
    time_control: str | None = None     # its clock (arena.clock syntax), if it had one
    move_limit: float | None = None     # seconds per move before it forfeits, if limited


@dataclass
class Move:
    """One ply. `by` is the seat that moved, "chance", or "joint" (a simultaneous node:
    `move` then holds one notation per seat, "" for a seat that had no choice)."""

    by: int | str
    move: str | list[str]
    time: float | None = None           # seconds the mover thought (joint: the slowest)
    comment: dict | None = None         # the mover's analysis (joint: by seat, "0", "1"..)
    clock: float | list | None = None   # seconds left on the mover's clock after the move
                                        # (increment added; joint: by seat)

    def as_json(self) -> dict:
        out = {"by": self.by, "move": self.move}
        if self.time is not None:
            out["time"] = round(self.time, 4)
        if isinstance(self.clock, list):
            out["clock"] = [None if c is None else round(c, 4) for c in self.clock]
        elif self.clock is not None:
            out["clock"] = round(self.clock, 4)
        if self.comment:
            out["comment"] = self.comment
        return out


@dataclass
class GameRecord:
    game: str
    variant: dict
    seats: list[Seat]
    start: str                          # the start position's notation
    result: list[float]                 # per seat
    termination: str                    # one of TERMINATIONS
    moves: list[Move]
    final: str = ""                     # the final position's notation
    deal_seed: int | None = None
    forfeit: dict | None = None         # {"seat", "reason", "message"} of a forfeit
    date: str = ""
    niwa: str = ""
    event: dict = field(default_factory=dict)   # where it was played (tournament ids...)
    opening: dict | None = None         # {"id", "plies"}: the first plies were a book's
    format: str = FORMAT
    version: int = VERSION

    def to_json(self) -> dict:
        out = {"format": self.format, "version": self.version, "game": self.game,
               "variant": self.variant, "seats": [_seat_json(s) for s in self.seats],
               "deal_seed": self.deal_seed, "start": self.start, "result": self.result,
               "termination": self.termination}
        if self.forfeit:
            out["forfeit"] = self.forfeit
        if self.opening:
            out["opening"] = self.opening
        out.update({"plies": len(self.moves), "final": self.final, "date": self.date,
                    "niwa": self.niwa})
        if self.event:
            out["event"] = self.event
        out["moves"] = [m.as_json() for m in self.moves]
        return out

    def to_line(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"), default=str)

    @classmethod
    def from_json(cls, data: dict) -> GameRecord:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RecordError(f"not a niwa game record (expected \"format\": \"{FORMAT}\")")
        if data.get("version") != VERSION:
            raise RecordError(f"record version {data.get('version')!r}; this niwa reads "
                              f"version {VERSION}")
        try:
            seats = [Seat(**s) for s in data["seats"]]
            moves = [Move(m["by"], m["move"], m.get("time"), m.get("comment"), m.get("clock"))
                     for m in data["moves"]]
            return cls(game=data["game"], variant=data["variant"], seats=seats,
                       start=data["start"], result=[float(r) for r in data["result"]],
                       termination=data["termination"], moves=moves,
                       final=data.get("final", ""), deal_seed=data.get("deal_seed"),
                       forfeit=data.get("forfeit"), date=data.get("date", ""),
                       niwa=data.get("niwa", ""), event=data.get("event") or {},
                       opening=data.get("opening"))
        except KeyError as e:
            raise RecordError(f"missing tag {e.args[0]!r}") from None
        except (TypeError, ValueError, AttributeError) as e:
            raise RecordError(f"malformed tag: {e}") from None

    # ---- replay ---------------------------------------------------------------------
    def start_state(self):
        state = parse_position(self.start)
        if state.game_name != self.game:
            raise RecordError(f"start position is a {state.game_name} position, not {self.game}")
        return state

    def positions(self):
        """(ply, state before that ply) for every ply, then (len(moves), final state);
        each state is a fresh clone. RecordError names the first move that does not fit."""
        state = self.start_state()
        for ply, move in enumerate(self.moves):
            yield ply, state.clone()
            apply_move(state, move, ply)
        yield len(self.moves), state

    def replay(self, plies: int | None = None):
        """The position after the first `plies` moves (all of them by default)."""
        if plies is not None and not 0 <= plies <= len(self.moves):
            raise RecordError(f"ply {plies} is out of range: the game has {len(self.moves)} "
                              "plies (0 = the start position)")
        state = self.start_state()
        for ply, move in enumerate(self.moves[:plies]):
            apply_move(state, move, ply)
        return state

    def validate(self) -> None:
        """The moves replay legally to the recorded final position and result."""
        if self.termination not in TERMINATIONS:
            raise RecordError(f"unknown termination {self.termination!r}; expected "
                              + ", ".join(TERMINATIONS))
        state = self.replay()
        n = state.num_players
        if len(self.seats) != n or len(self.result) != n:
            raise RecordError(f"{len(self.seats)} seats and {len(self.result)} results for "
                              f"a {n}-player game")
        if self.final and state.to_notation() != self.final:
            raise RecordError("the moves do not lead to the recorded final position")
        if self.termination == "normal":
            if not state.is_terminal():
                raise RecordError(f"termination is normal but the game is not over after "
                                  f"{len(self.moves)} plies")
            returns = [float(r) for r in state.returns()]
            if any(abs(a - b) > 1e-6 for a, b in zip(returns, self.result, strict=True)):
                raise RecordError(f"result {self.result} differs from the final position's "
                                  f"{returns}")
        elif state.is_terminal():
            raise RecordError(f"termination is {self.termination} but the game is over")
        book = (self.opening.get("plies") if isinstance(self.opening, dict)
                else 0 if self.opening is None else None)
        if not (isinstance(book, int) and 0 <= book <= len(self.moves)):
            raise RecordError(f"opening plies {book!r} is not a count of the record's "
                              f"{len(self.moves)} moves")
        if self.termination == "forfeit" and not (self.forfeit and "seat" in self.forfeit):
            raise RecordError("a forfeit needs its \"forfeit\": {\"seat\", \"reason\"} tag")


def apply_move(state, move: Move, ply: int) -> None:
    """Apply one recorded move to `state`, checking who moves and that it is legal."""
    player = state.current_player()
    expected = (CHANCE if player == PLAYER_CHANCE else JOINT if player == PLAYER_SIMULTANEOUS
                else player)
    where = f"ply {ply + 1} ({_shown(move.move)})"
    if state.is_terminal():
        raise RecordError(f"{where}: the game is already over")
    if move.by != expected:
        raise RecordError(f"{where}: recorded as played by {move.by!r}, but "
                          f"{_who(expected)} is to move")
    if expected == JOINT:
        if not isinstance(move.move, list) or len(move.move) != state.num_players:
            raise RecordError(f"{where}: a joint move needs one notation per seat "
                              f"({state.num_players})")
        joint = [_action(state, text, q, where) if state.legal_actions(q) else -1
                 for q, text in enumerate(move.move)]
        state.apply_joint(joint)
    else:
        if not isinstance(move.move, str):
            raise RecordError(f"{where}: expected one move's notation")
        seat = None if expected == CHANCE else expected
        if expected == CHANCE:
            legal = [a for a, _ in state.chance_outcomes()]
            action = _lookup(state, move.move, None, legal, where)
        else:
            action = _action(state, move.move, seat, where)
        state.apply(action)


def _action(state, text: str, seat: int, where: str) -> int:
    return _lookup(state, text, seat, state.legal_actions(seat), where)


def _lookup(state, text, seat, legal, where) -> int:
    names = {(state.action_to_string(a, seat) if seat is not None else state.action_to_string(a)): a
             for a in legal}
    if text not in names:
        shown = ", ".join(list(names)[:12]) + (" ..." if len(names) > 12 else "")
        raise RecordError(f"{where}: {text!r} is not legal here (legal: {shown})")
    return names[text]


def _who(by) -> str:
    return {CHANCE: "chance", JOINT: "every seat at once (a joint move)"}.get(by, f"seat {by}")


def _shown(move) -> str:
    return " ".join(m or "-" for m in move) if isinstance(move, list) else str(move)


def _seat_json(seat: Seat) -> dict:
    return {k: v for k, v in asdict(seat).items() if v not in (None, "", {})}


# ---- from a played game ------------------------------------------------------------
def forfeit_reason(message: str) -> str:
    """The game loop's forfeit message ("seat 1 (label) crashed: ...") as one of
    FORFEIT_REASONS: the loop's phrase that comes first (the agent's own exception text
    follows it and may contain anything)."""
    phrases = {"failed to start": "start", "played an illegal action": "illegal",
               "exceeded its time budget": "time", "lost on time": "time",
               "ran out of time": "time", "answered with an error": "error",
               "crashed": "crash"}
    found = [(message.find(p), reason) for p, reason in phrases.items() if p in message]
    return min(found)[1] if found else "crash"


def record_of(result, *, seats: list[Seat], deal_seed=None, event=None,
              opening=None) -> GameRecord:
    """The record of a game played by the game loop (`GameResult`, whose `start` and
    `notes` the loop fills in); with an `opening` (arena.openings.Opening) the record
    starts at the opening's start position and its moves come first."""
    moves = list(opening.moves) if opening is not None else []
    for (player, _action), note in zip(result.actions, result.notes, strict=True):
        by = CHANCE if player == PLAYER_CHANCE else JOINT if player == PLAYER_SIMULTANEOUS \
            else player
        moves.append(Move(by, note.notation, note.seconds, note.comment, note.clock))
    if result.forfeited:
        termination = "forfeit"
        reason = (result.termination if result.termination in FORFEIT_REASONS
                  else forfeit_reason(result.error))
        forfeit = {"seat": result.error_seat, "reason": reason,
                   "message": result.error}
    else:
        termination = "quit" if result.quit else "capped" if result.capped else "normal"
        forfeit = None
    start = result.start
    return GameRecord(
        game=start.game_name, variant=dict(start.variant), seats=seats,
        start=opening.start if opening is not None else start.to_notation(),
        result=[round(float(r), 6) for r in result.results],
        termination=termination, moves=moves,
        final=result.state.to_notation() if result.state is not None else "",
        deal_seed=deal_seed, forfeit=forfeit, date=now(), niwa=niwa_version(),
        event=dict(event or {}),
        opening=None if opening is None else {"id": opening.id, "plies": len(opening.moves)})


def task_record_line(task, result) -> dict:
    """{RECORD_FIELD: record line} of a scheduled game (arena.schedule.GameTask), to ride
    along with its games.csv row (arena.games_jsonl writes it to games.jsonl)."""
    try:
        if result.start is None:        # an agent could not be built: no move was played
            result.start = (task.opening.state() if task.opening is not None else
                            get_game(task.game).new(seed=task.deal_seed, **dict(task.variant)))
            result.state = result.start
        seats = seats_for(task.specs, task.labels, task.game, task.agent_seeds,
                          task.time_controls or None, task.time_limits)
        event = {"game_id": task.game_id, "round": task.round, "table": task.table,
                 **dict(task.extra)}
        record = record_of(result, seats=seats, deal_seed=task.deal_seed, event=event,
                           opening=task.opening)
    except Exception:   # a game without notation (a test's toy): never lose the game over it
        return {}
    return {RECORD_FIELD: sealed_line(record.to_json())}


# ---- the checksum of a line of games.jsonl ------------------------------------------
CHECK_TAG = "check"
_CHECK_OPEN = f',"{CHECK_TAG}":"'       # the last tag: ,"check":"<16 hex digits>"}
_CHECK_LEN = len(_CHECK_OPEN) + 16 + 2
# what differs between two plays of the same game: the date and every time and clock tag
_TIMING = re.compile(r'"date":"[^"]*",|,"(?:time|clock)":(?:\[[^\]]*\]|[^,}\]]+)')


def record_check(text: str) -> str:
    """The checksum of a record line (compact JSON, without its `check` tag): BLAKE2b (64
    bits, hex) of the line without its `date` and its `time` and `clock` tags (thinking
    times, clocks, a time= setting), as games.csv's checksum leaves out duration_s: the
    same game gives the same check.

    >>> a = '{"game":"lotus","date":"x","moves":[{"by":0,"move":"m","time":1.5}]}'
    >>> record_check(a) == record_check(a.replace("1.5", "2.5").replace("x", "y"))
    True
    >>> record_check(a) == record_check(a.replace("lotus", "haru"))
    False
    """
    return hashlib.blake2b(_TIMING.sub("", text).encode("utf-8"), digest_size=8).hexdigest()


def sealed_line(data: dict) -> str:
    """A record's line in games.jsonl: its compact JSON with the `check` tag last
    (record_check; readers ignore the tag)."""
    text = json.dumps({k: v for k, v in data.items() if k != CHECK_TAG},
                      separators=(",", ":"), default=str)
    return f'{text[:-1]}{_CHECK_OPEN}{record_check(text)}"}}'


def unsealed(line: str) -> tuple[str, bool | None]:
    """(the line without its `check` tag, whether its checksum matches); None for the
    verdict of a line without the tag (written before it existed, or damaged there).

    >>> line = sealed_line({"a": 1})
    >>> unsealed(line), unsealed(line.replace("1", "2", 1))[1], unsealed('{"a":1}')[1]
    (('{"a":1}', True), False, None)
    """
    tail = line[-_CHECK_LEN:]
    if len(line) > _CHECK_LEN and tail.startswith(_CHECK_OPEN) and tail.endswith('"}'):
        body = line[:-_CHECK_LEN] + "}"
        return body, record_check(body) == tail[len(_CHECK_OPEN):-2]
    return line, None


def seats_for(specs, labels, game: str, seeds=None, time_controls=None,
              move_limits=None) -> list[Seat]:
    """The seats of a game: each agent's label, spec, resolved settings, seed, clock
    (TimeControl or None by seat) and per-move limit (seconds or None by seat)."""
    from niwa.solver.agent_spec import agent_settings

    out = []
    for k, (spec, label) in enumerate(zip(specs, labels, strict=True)):
        try:
            settings = agent_settings(spec, game)
        except Exception:       # an unknown agent still gets its seat in the record
            settings = {}
        tc = time_controls[k] if time_controls else None
        limit = move_limits[k] if move_limits else None
        out.append(Seat(label, str(spec), settings, None if seeds is None else seeds[k],
                        None if tc is None else str(tc), limit))
    return out


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


_VERSION: list[str] = []


def niwa_version() -> str:
    if not _VERSION:
        try:
            _VERSION.append(version("niwa"))
        except PackageNotFoundError:
            _VERSION.append("unknown")
    return _VERSION[0]


# ---- files ------------------------------------------------------------------------
def parse_line(line: str, where: str = "") -> GameRecord:
    """One line of a records file, validated (RecordError prefixed with `where`)."""
    try:
        try:
            data = json.loads(line)
        except ValueError as e:
            raise RecordError(f"not JSON: {e}") from None
        record = GameRecord.from_json(data)
        record.validate()
        return record
    except NiwaError as e:
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise RecordError(f"{where}{text}") from None


def read_records(path: str, validate: bool = True) -> list[GameRecord]:
    """Every record of a .jsonl file (blank lines skipped), each validated by replaying."""
    not_records = (f"{path} is not a file of game records (one JSON object a line, as "
                   "games.jsonl or a `niwa play` save)")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise RecordError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise RecordError(f"{not_records}: it is not UTF-8 text") from None
    first = next((line for line in lines if line.strip()), "")
    if first and not first.lstrip().startswith("{"):
        hint = (f"; the records are in {os.path.join(os.path.dirname(path), 'games.jsonl')}"
                if os.path.basename(path) == "games.csv" else "")
        raise RecordError(f"{not_records}: its first line does not begin with '{{'{hint}")
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path} line {number}: "
        if validate:
            out.append(parse_line(line, where))
        else:
            try:
                out.append(GameRecord.from_json(json.loads(line)))
            except (ValueError, NiwaError) as e:
                raise RecordError(f"{where}{str(e).splitlines()[0]}") from None
    if not out:
        raise RecordError(f"{path} holds no game records")
    return out


def read_game(path: str, number: int | None = None) -> GameRecord:
    """Game `number` (1-based, in file order) of a records file; the only game if there is
    one and no number is given. Only that game is replayed to validate it."""
    records = read_records(path, validate=False)
    if number is None:
        if len(records) > 1:
            raise RecordError(f"{path} holds {len(records)} games: choose one with --game N "
                              f"(1..{len(records)})")
        number = 1
    if not 1 <= number <= len(records):
        raise RecordError(f"{path} holds {len(records)} games; --game must be 1..{len(records)}")
    record = records[number - 1]
    try:
        record.validate()
    except NiwaError as e:
        raise RecordError(f"{path} game {number}: {e}") from None
    return record


def append_record(path: str, record: GameRecord) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(record.to_line() + "\n")


# ---- typed move lists -------------------------------------------------------------
def apply_move_list(state, text: str, moves: list | None = None) -> list[str]:
    """Apply a typed list of moves (notation or action ids, separated by spaces or commas)
    to `state`; returns the notation of each ply applied (and appends each ply as a record
    Move to `moves` if given). A notation holding a space
    ("reveal GF") is matched whole; a joint move takes one move per seat that has a choice,
    in seat order ("Y2 R5"). IllegalActionError names the first move that does not fit."""
    words = text.replace(",", " ").split()
    played, i = [], 0
    while i < len(words):
        if state.is_terminal():
            raise IllegalActionError(f"move {len(played) + 1} ({words[i]!r}): the game is over")
        if state.is_simultaneous_node():
            joint, names = [], []
            for q in range(state.num_players):
                legal = state.legal_actions(q)
                if not legal:
                    joint.append(-1)
                    names.append("")
                    continue
                if i >= len(words):
                    raise IllegalActionError(f"move {len(played) + 1}: a joint move needs a "
                                             f"move for seat {q}")
                a, used = _match(state, words, i, q, legal, len(played) + 1)
                joint.append(a)
                names.append(state.action_to_string(a, q))
                i += used
            state.apply_joint(joint)
            played.append("+".join(n for n in names if n))
            if moves is not None:
                moves.append(Move(JOINT, names))
            continue
        legal = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                 else state.legal_actions())
        a, used = _match(state, words, i, None, legal, len(played) + 1)
        played.append(state.action_to_string(a))
        if moves is not None:
            by = CHANCE if state.is_chance_node() else state.current_player()
            moves.append(Move(by, played[-1] if by == CHANCE
                              else state.action_to_string(a, by)))
        state.apply(a)
        i += used
    return played


def _match(state, words, i, seat, legal, number):
    """The legal action the words from i spell (the longest notation that fits, else an
    id) and how many words it took."""
    names = {(state.action_to_string(a, seat) if seat is not None
              else state.action_to_string(a)): a for a in legal}
    for j in range(min(len(words), i + 4), i, -1):
        text = " ".join(words[i:j])
        if text in names:
            return names[text], j - i
    # an id is ASCII digits, and short ('²' is a digit to str.isdigit, not to int(); a
    # 5,000-digit number is over int()'s limit)
    if words[i].isascii() and words[i].isdigit() and len(words[i]) <= 18 \
            and int(words[i]) in legal:
        return int(words[i]), 1
    shown = ", ".join(list(names)[:15]) + (" ..." if len(names) > 15 else "")
    who = "" if seat is None else f" for seat {seat}"
    raise IllegalActionError(f"move {number} ({words[i]!r}) is not legal{who}; legal: {shown}")
