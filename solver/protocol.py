"""The niwa engine protocol (docs/engine-protocol.md): external programs as niwa agents,
and any niwa agent as an external program.

A line-based stdin/stdout protocol modelled on UCI and GTP. The client (`EngineAgent`)
starts the engine, greets it with `niwa-engine 1`, then for every move sends the mover's
information state, the legal moves and `go`; the engine answers `info ...` lines and
`bestmove <move>`. `serve()` is the other side: it answers that protocol with any agent
of the registry (`niwa engine mcts:iters=2000`), so two niwa versions can play each other.

Moves travel as tokens: the move's text (`state.action_to_string`) with every space
written `_` (`meditate 1:MA` -> `meditate_1:MA`); a `%`, `_` or `+` inside a move is
written %25, %5F or %2B (see `encode_move`).
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import select
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from urllib.parse import unquote

from niwa.ext.errors import NiwaError
from niwa.ext.game import PLAYER_CHANCE, PLAYER_SIMULTANEOUS, Rng
from niwa.solver.agent_base import Agent, AgentError
from niwa.solver.agent_registry import register_agent
from niwa.solver.agent_spec import AgentSpec, make_agent
from niwa.solver.lifetime import (
    child_dies_with_us,
    kill_group,
    register_group,
    unregister_group,
)
from niwa.solver.results import SearchResult

PROTOCOL_VERSION = 1
GREETING = f"niwa-engine {PROTOCOL_VERSION}"
ANY_GAME = "*"
PREPARE = "prepare"          # the handshake feature: `isready GAME` before each game
GRACE_SECONDS = 5.0          # how long past its movetime or clock an engine may take to answer
LIMIT_SHARE = 0.8            # of a move's hard `limit`, what a served agent plans to think
QUIT_WAIT_SECONDS = 0.5      # how long a polite `quit` may take before the group is killed
MAX_LINE_BYTES = 64 * 1024   # the longest line an engine may send (a position is < 1 KiB)
HANDSHAKE_MAX_LINES = 1000   # lines an engine may send before the `ok` of its handshake
LINES_AHEAD = 256            # lines read ahead of the client; beyond, the engine waits
STDERR_SHOWN = 300           # characters of an engine's stderr line kept for messages
POLL_SECONDS = 0.25          # how often a waiting client looks whether the engine died

# Why an engine lost a game, as game records name it (EngineError.forfeit_reason)
START, CRASH, TIME, ILLEGAL, ERROR = "start", "crash", "time", "illegal", "error"


class EngineError(NiwaError):
    """An external engine failed to start, crashed, fell silent or broke the protocol.

    `forfeit_reason` says which, as a game record names a forfeit: `start` (it could not
    be started, or its handshake failed), `crash` (the process died or closed its
    output), `time` (no answer in time), `illegal` (an illegal or unreadable move) or
    `error` (an `error` reply, or a line over MAX_LINE_BYTES)."""

    def __init__(self, message: str, reason: str = CRASH):
        super().__init__(message)
        self.forfeit_reason = reason

    def __reduce__(self):       # keep the reason across processes
        return type(self), (str(self), self.forfeit_reason)

    def with_reason(self, reason: str) -> EngineError:
        return type(self)(str(self), reason)


# ---- move tokens -----------------------------------------------------------------------
def encode_move(text: str) -> str:
    """A move's text as one protocol token: spaces become `_`; a literal `%`, `_` or `+`
    is percent-escaped so that tokens split on spaces and joint moves on `+`."""
    return (text.replace("%", "%25").replace("_", "%5F").replace("+", "%2B")
            .replace(" ", "_"))


def decode_move(token: str) -> str:
    """The move text of a token (the inverse of encode_move; an unescaped `+` stays)."""
    return unquote(token.replace("_", " "))


def encode_joint(texts) -> str:
    """One move per seat at a simultaneous node, seat 0 first, joined by `+`."""
    return "+".join(encode_move(t) for t in texts)


def decode_joint(token: str) -> list[str]:
    return [decode_move(part) for part in token.split("+")]


# ---- go ---------------------------------------------------------------------------------
NO_CLOCK = "-"      # a seat without a clock in `time` and `inc`


@dataclass
class GoRequest:
    """The arguments of `go`: whose move (`seat`), and a time budget, either fixed
    (`movetime`, ms) or clocks (remaining `time` and increment `inc` per seat, ms; None
    for a seat without a clock, written `-`; `movestogo`: the mover's moves left before
    its clock's next period, if its time control has periods); `limit` (ms) is the hard
    limit of the move, past which it forfeits (a tournament's --move-time, or the
    agent's time= plus the margin), when there is one.

    >>> go = GoRequest(seat=1, time=[60000, 58200], inc=[1000, 1000])
    >>> go.to_line()
    'go seat 1 time 60000,58200 inc 1000,1000'
    >>> GoRequest.parse(go.to_line().split()[1:]) == go
    True
    >>> GoRequest(seat=0, time=[5000, None], inc=[0, None], movestogo=12).to_line()
    'go seat 0 time 5000,- inc 0,- movestogo 12'
    >>> GoRequest(seat=0, limit=2000).budget_seconds(0)     # what `niwa engine` plans
    1.6
    """

    seat: int | None = None
    movetime: int | None = None
    limit: int | None = None
    time: list[int | None] | None = None
    inc: list[int | None] | None = None
    movestogo: int | None = None

    def to_line(self) -> str:
        words = ["go"]
        if self.seat is not None:
            words += ["seat", str(self.seat)]
        for key in ("movetime", "limit"):
            if getattr(self, key) is not None:
                words += [key, str(getattr(self, key))]
        for key in ("time", "inc"):
            values = getattr(self, key)
            if values is not None:
                words += [key, ",".join(NO_CLOCK if v is None else str(v) for v in values)]
        if self.movestogo is not None:
            words += ["movestogo", str(self.movestogo)]
        return " ".join(words)

    @classmethod
    def parse(cls, words: list[str]) -> GoRequest:
        """From the words after `go`; ValueError names the bad part."""
        request = cls()
        if len(words) % 2:
            raise ValueError(f"go takes KEY VALUE pairs, got {' '.join(words)!r}")
        for key, value in zip(words[::2], words[1::2], strict=True):
            try:
                if key in ("seat", "movetime", "limit", "movestogo"):
                    setattr(request, key, int(value))
                elif key in ("time", "inc"):
                    setattr(request, key, [None if v == NO_CLOCK else int(v)
                                           for v in value.split(",")])
                # unknown keys are ignored: later versions may add some
            except ValueError:
                unit = {"seat": "a seat number", "movestogo": "a number of moves"}.get(
                    key, "whole milliseconds")
                raise ValueError(f"go {key} {value!r} should be {unit}") from None
        return request

    def clock_of(self, seat: int) -> tuple[int, int] | None:
        """(remaining ms, increment ms) of the seat's clock, or None without one."""
        if self.time is None or not 0 <= seat < len(self.time) or self.time[seat] is None:
            return None
        inc = self.inc[seat] if self.inc is not None and seat < len(self.inc) else None
        return self.time[seat], inc or 0

    def budget_seconds(self, seat: int) -> float | None:
        """Seconds to think: the movetime, else a share of the seat's clock, else None;
        never more than LIMIT_SHARE of the move's hard limit (the rest is left for the
        protocol's own delays)."""
        budget = None
        clock = self.clock_of(seat)
        if self.movetime is not None:
            budget = max(self.movetime, 1) / 1000
        elif clock is not None:
            left, inc = max(clock[0], 1), clock[1]
            moves = self.movestogo if self.movestogo else 30
            # a classic clock share: 1/30 (or 1/movestogo) of what is left plus most of
            # the increment, never more than half of the clock
            budget = min(left / 2, left / moves + 0.8 * inc) / 1000
        if self.limit is not None:
            cap = max(self.limit, 1) * LIMIT_SHARE / 1000
            budget = cap if budget is None else min(budget, cap)
        return budget


# ---- the client: an external program as an agent ----------------------------------------
_TOO_LONG = object()        # the reader's mark of a line over MAX_LINE_BYTES


def capped_lines(stream, limit: int):
    """(line, too_long) for each line of a binary stream, without its newline; a line of
    more than `limit` bytes is cut to `limit` (too_long True) and the rest of it skipped,
    so reading never holds more than `limit` bytes of one line. A last line without a
    newline counts. Reads what is there (no read-ahead that waits for more).

    >>> import io
    >>> list(capped_lines(io.BytesIO(b"ok\\nxxxxxxx\\nend"), 4))
    [(b'ok', False), (b'xxxx', True), (b'end', False)]
    """
    buffer = bytearray()
    skipping = False        # inside a line already reported as too long
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        parts = chunk.split(b"\n")
        for i, piece in enumerate(parts):
            ended = i < len(parts) - 1      # every part but the last ends a line
            if not skipping:
                buffer += piece
                if len(buffer) > limit:
                    yield bytes(buffer[:limit]), True
                    buffer.clear()
                    skipping = True
                elif ended:
                    yield bytes(buffer), False
                    buffer.clear()
            if ended:
                skipping = False
    if buffer and not skipping:
        yield bytes(buffer), False


class EngineProcess:
    """A running engine: lines written to its stdin, lines read from its stdout with a
    deadline (a reader thread feeds a bounded queue, so a silent engine never blocks us
    and a chatty one never fills the memory).

    The engine runs in its own session and process group, which `kill` ends as a whole
    (whatever the engine started goes with it); on Linux it also dies with the thread
    that started it, if that is the main thread (solver.lifetime). Only the reader
    threads close the engine's output pipes, so closing never waits on a pipe that a
    child of the engine still holds open."""

    def __init__(self, cmd: str, label: str):
        self.label = label
        try:
            argv = shlex.split(cmd)
        except ValueError as e:
            raise EngineError(f"engine command {cmd!r} cannot be split into words: {e}",
                              START) from None
        if not argv:
            raise EngineError("engine command is empty", START)
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                bufsize=0, start_new_session=True, preexec_fn=child_dies_with_us())
        except (OSError, subprocess.SubprocessError) as e:
            why = getattr(e, "strerror", None) or first_words(e)
            raise EngineError(f"engine {label} cannot start {argv[0]!r}: {why}", START) from None
        self.group = self.proc.pid if hasattr(os, "killpg") else 0
        if self.group:
            register_group(self.group)
        try:        # writes wait for room in the pipe under a deadline (send), never blindly
            os.set_blocking(self.proc.stdin.fileno(), False)
            self.waits_for_room = True
        except (OSError, AttributeError):   # (a platform without non-blocking pipes)
            self.waits_for_room = False
        self.lines: queue.Queue = queue.Queue(maxsize=LINES_AHEAD)
        self.stderr_tail: collections.deque = collections.deque(maxlen=5)
        self.stopped = threading.Event()
        out, err = self.proc.stdout, self.proc.stderr
        self.proc.stdout = self.proc.stderr = None     # the reader threads own them
        threading.Thread(target=self._read_output, args=(out,), daemon=True).start()
        self.stderr_reader = threading.Thread(target=self._read_stderr, args=(err,),
                                              daemon=True)
        self.stderr_reader.start()

    # -- the reader threads
    def _put(self, item) -> bool:
        while not self.stopped.is_set():
            try:
                self.lines.put(item, timeout=POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def _read_output(self, stream):
        try:
            for line, too_long in capped_lines(stream, MAX_LINE_BYTES):
                if too_long:
                    self._put(_TOO_LONG)
                    return
                if not self._put(line.decode("utf-8", "replace").rstrip("\r")):
                    return
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                stream.close()
            self._put(None)     # None marks the end of the output

    def _read_stderr(self, stream):
        with contextlib.suppress(OSError, ValueError):
            for line, too_long in capped_lines(stream, MAX_LINE_BYTES):
                text = line.decode("utf-8", "replace").rstrip("\r")
                if too_long or len(text) > STDERR_SHOWN:
                    text = text[:STDERR_SHOWN] + "..."
                self.stderr_tail.append(text)
        with contextlib.suppress(OSError):
            stream.close()

    # -- the client's side
    def send(self, line: str, deadline: float | None = None, allowed: float = 0.0) -> None:
        """Write one line to the engine. An engine that stops reading fills its input pipe;
        then EngineError (reason `time`) once `deadline` passes (`allowed` seconds after
        the request, for the message), rather than a write that blocks forever."""
        data = memoryview((line + "\n").encode("utf-8"))
        while data:
            try:
                written = self.proc.stdin.write(data)
            except (OSError, ValueError):       # a broken pipe, or closed
                raise self.died() from None
            if written is None:     # the pipe is full: wait for the engine to read
                self._wait_for_room(deadline, allowed)
            else:
                data = data[written:]

    def _wait_for_room(self, deadline: float | None, allowed: float) -> None:
        fd = self.proc.stdin.fileno()
        while True:
            left = POLL_SECONDS if deadline is None else deadline - time.monotonic()
            if left <= 0:
                raise EngineError(f"engine {self.label} did not read its input in time "
                                  f"(waited {allowed:.3g} s)", TIME)
            if self.proc.poll() is not None:
                raise self.died()
            if select.select([], [fd], [], min(left, POLL_SECONDS))[1]:
                return

    def read(self, deadline: float, waiting_for: str, allowed: float) -> str:
        """The next line before `deadline` (`allowed` seconds after the request, for the
        message); EngineError if the engine exits, does not send `waiting_for` in time
        (however much else it says) or sends a line over MAX_LINE_BYTES."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EngineError(f"engine {self.label} sent no {waiting_for} in time "
                                  f"(waited {allowed:.3g} s)", TIME)
            try:
                line = self.lines.get(timeout=min(left, POLL_SECONDS))
                break
            except queue.Empty:
                # an engine that died while a child of it holds its output open
                if self.proc.poll() is not None and self.lines.empty():
                    time.sleep(0.05)
                    if self.lines.empty():
                        raise self.died() from None
        if line is None:
            raise self.died()
        if line is _TOO_LONG:
            raise EngineError(f"engine {self.label} sent a line longer than "
                              f"{MAX_LINE_BYTES} bytes", ERROR)
        return line

    def drain(self) -> None:
        """Forget lines left over from an earlier command (a second bestmove, late info),
        so they cannot pass for the answer to the next one."""
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return
            if line is None:
                raise self.died()
            if line is _TOO_LONG:
                raise EngineError(f"engine {self.label} sent a line longer than "
                                  f"{MAX_LINE_BYTES} bytes", ERROR)

    def died(self) -> EngineError:
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return EngineError(f"engine {self.label} closed its output", CRASH)
        self.stderr_reader.join(timeout=0.5)    # its last words (unless a child holds on)
        last = f": {self.stderr_tail[-1]}" if self.stderr_tail else ""
        return EngineError(f"engine {self.label} exited with code {code}{last}", CRASH)

    def close(self) -> None:
        """Ask the engine to quit; then end its process group (what it left running)."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                os.set_blocking(self.proc.stdin.fileno(), False)   # never wait to say it
                self.proc.stdin.write(b"quit\n")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=QUIT_WAIT_SECONDS)
        self.kill()

    def kill(self) -> None:
        """Kill the engine's whole process group at once."""
        self.stopped.set()
        if self.group:
            kill_group(self.group)
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        if self.group:
            unregister_group(self.group)
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()


def first_words(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


@dataclass
class EngineInfo:
    """What an engine said about itself in the handshake."""

    name: str = ""
    author: str = ""
    games: tuple[str, ...] = ()
    features: tuple[str, ...] = ()      # optional parts of the protocol it asks for

    def plays(self, game: str) -> bool:
        return ANY_GAME in self.games or game in self.games


class EngineAgent(Agent):
    """An external program that speaks the niwa engine protocol, as a niwa agent.

    The program starts at the first move (so building the agent to check a spec costs
    nothing). Each move it gets the mover's information state (never hidden parts), the
    legal moves and `go` with its time: `time=` as movetime, and on a clock every seat's
    clock (the game loop sets `clock` and `all_clocks` before the move). A crash, closed
    output, `error` reply, illegal move, silence past the deadline or an overlong line
    raises EngineError (with its `forfeit_reason`); the process group is then killed,
    and the next move starts it afresh. A healthy engine is kept between games (reset
    sends `newgame` before the next move) rather than restarted: a launch and handshake
    per game would cost more than many of the games. `close()` ends it.
    """

    name = "engine"
    all_clocks: tuple | None = None     # every seat's ClockReading (None: no clock)

    def __init__(self, cmd: str = "", seed: int | None = None, name: str = "",
                 timeout: float = 30.0, time: float = 0.0, **params):
        super().__init__(seed, cmd=cmd, name=name, timeout=timeout, time=time, **params)
        if not cmd.strip():
            raise AgentError("agent 'engine' needs cmd=COMMAND, "
                             "e.g. engine:cmd=python3 docs/examples/random_engine.py")
        if not (timeout > 0 and time >= 0):
            raise AgentError("agent 'engine' needs timeout > 0 and time >= 0 (seconds)")
        self.cmd = cmd
        self.label = repr(name or cmd)
        self.timeout = timeout
        self.move_time = time
        self.engine: EngineProcess | None = None
        self.info = EngineInfo()
        self._new_game = True

    # -- lifetime
    def start(self) -> EngineInfo:
        """Start the program and shake hands (EngineError, reason `start`, on any
        failure)."""
        self.close()
        try:
            self.engine = EngineProcess(self.cmd, self.label)
            self.info = self._handshake()
        except EngineError as e:
            self.kill()
            raise e.with_reason(START) from None
        self._new_game = True
        return self.info

    def _handshake(self) -> EngineInfo:
        deadline = time.monotonic() + self.timeout
        self.engine.send(GREETING, deadline, self.timeout)
        info = EngineInfo()
        for _ in range(HANDSHAKE_MAX_LINES):
            line = self.engine.read(deadline, "handshake (ok)", self.timeout)
            words = line.split()
            if not words:
                continue
            if words[0] == "ok":
                return info
            if words[0] == "error":
                raise EngineError(f"engine {self.label} refused {GREETING!r}: {line[6:]}")
            if words[0] == "id" and len(words) >= 2:
                value = line.split(None, 2)[2] if len(words) > 2 else ""
                if words[1] == "name":
                    info.name = value
                elif words[1] == "author":
                    info.author = value
            elif words[0] == "games":
                info.games = tuple(w.lower() for w in words[1:])
            elif words[0] == "features":
                info.features += tuple(w.lower() for w in words[1:])
        raise EngineError(f"engine {self.label} sent {HANDSHAKE_MAX_LINES} lines without "
                          "ending its handshake with ok")

    def reset(self):
        """A new game: a healthy engine is told `newgame` (at the first move)."""
        self._new_game = True
        self._last = None
        self.clock = self.all_clocks = None     # the loop tells this game's, if any

    def close(self):
        """End the engine: `quit`, then its process group is killed."""
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    def kill(self):
        if self.engine is not None:
            self.engine.kill()
            self.engine = None

    def __del__(self):
        with contextlib.suppress(Exception):
            self.kill()

    def prepare(self, state):
        """Before a game, off the move clock: start the engine (launch and handshake)
        and, if its handshake asked for `features prepare`, send `newgame` and
        `isready GAME VARIANT...` and wait up to `timeout` for `readyok`, so that a book
        or table the engine loads for that game is not paid for by its first move."""
        self._started_for(state)
        if PREPARE not in self.info.features:
            return
        header = state.to_notation().split(";")[0].strip()     # the game, no position
        deadline = time.monotonic() + self.timeout
        try:
            self.engine.drain()
            for line in (["newgame"] if self._new_game else []) + [f"isready {header}"]:
                self.engine.send(line, deadline, self.timeout)
            self._new_game = False
            while True:
                words = self.engine.read(deadline, "readyok", self.timeout).split()
                if words and words[0] == "readyok":
                    return
                if words and words[0] == "error":
                    raise EngineError(f"engine {self.label} could not prepare for "
                                      f"{header!r}: {' '.join(words[1:])}")
        except EngineError as e:
            self.kill()
            raise e.with_reason(START) from None

    def _started_for(self, state):
        """Start the engine if it is not running, and check that it plays the game."""
        if self.engine is None:     # first move, or the last engine was killed
            self.start()
        if not self.info.plays(state.game_name):
            self.kill()
            raise EngineError(f"engine {self.label} does not play {state.game_name} "
                              f"(it plays: {' '.join(self.info.games) or 'nothing'})", START)

    # -- playing
    def step(self, state, player):
        if state.current_player() == PLAYER_CHANCE:
            raise EngineError("an engine is never asked for a chance outcome", ERROR)
        self._started_for(state)
        try:
            return self._ask(state, player)
        except EngineError:
            self.kill()     # a misbehaving engine is not trusted with the next move
            raise

    def go_request(self, player: int, players: int) -> GoRequest:
        """The `go` for `player`: movetime from `time=`, the move's limit and the clocks
        from the game loop."""
        go = GoRequest(seat=player,
                       movetime=round(self.move_time * 1000) if self.move_time else None,
                       limit=round(self.move_limit * 1000) if self.move_limit else None)
        clocks = self.all_clocks
        if clocks is None and self.clock is not None:   # told only its own clock
            clocks = [self.clock if q == player else None for q in range(players)]
        if clocks and any(c is not None for c in clocks):
            go.time = [None if c is None else max(0, round(c.remaining * 1000))
                       for c in clocks]
            go.inc = [None if c is None else round(c.increment * 1000) for c in clocks]
            own = clocks[player] if player < len(clocks) else None
            go.movestogo = own.moves_to_go if own is not None else None
        return go

    def wait_seconds(self, go: GoRequest, player: int) -> float:
        """How long to wait for `bestmove`: the movetime, the limit or the clock
        (whichever is least) plus GRACE_SECONDS, else `timeout`. A loss on time is the
        game loop's to rule; this only stops waiting for an engine that will never
        answer."""
        budgets = [v / 1000 for v in (go.movetime, go.limit) if v is not None]
        clock = go.clock_of(player)
        if clock is not None:
            budgets.append(clock[0] / 1000)
        return min(budgets) + GRACE_SECONDS if budgets else self.timeout

    def _ask(self, state, player) -> int:
        legal = state.legal_actions(player)
        names = {state.action_to_string(a, player): a for a in legal}
        self.engine.drain()
        go = self.go_request(player, state.num_players)
        wait = self.wait_seconds(go, player)
        deadline = time.monotonic() + wait      # for the request's lines, then the answer
        lines = ["newgame"] if self._new_game else []
        lines += ["position " + state.information_state(player),
                  "legal " + " ".join(encode_move(n) for n in names), go.to_line()]
        for line in lines:
            self.engine.send(line, deadline, wait)
        self._new_game = False
        deadline = time.monotonic() + wait
        info: dict = {}
        while True:
            line = self.engine.read(deadline, "bestmove", wait)
            words = line.split()
            if not words:
                continue
            if words[0] == "info":
                info.update(parse_info(words[1:]))
            elif words[0] == "error":
                raise EngineError(f"engine {self.label} reported an error: "
                                  f"{line[6:].strip()}", ERROR)
            elif words[0] == "bestmove":
                self._last = result_of_info(info, player)
                return self._action_of(words[1:], names, state, player)
            # other lines are ignored, as in UCI: later versions may add some

    def _action_of(self, words, names, state, player) -> int:
        text = decode_move("_".join(words))     # a move sent with spaces is accepted too
        if text in names:
            return names[text]
        shown = ", ".join(list(names)[:12]) + (", ..." if len(names) > 12 else "")
        what = f"an illegal move {text!r}" if text else "bestmove without a move"
        raise EngineError(f"engine {self.label} played {what} for seat {player} in "
                          f"{state.game_name}; legal: {shown}", ILLEGAL)


# ---- checking engines before a run -------------------------------------------------------
_CHECKED: dict[tuple[str, str], str] = {}      # (spec, game) -> its label ("": the spec)


def check_engines(specs, game: str) -> dict[str, str]:
    """Start each distinct `engine:` spec among `specs` (AgentSpec values or their text)
    once, shake hands, check that it plays `game`, and stop it, as cutechess does before
    a run: the first that fails raises EngineError `engine 'X' did not start: ...`
    (reason `start`). Returns {spec text: label} for the engines that have a name: the
    spec's `name=`, else the name it gave (`id name`). Each spec is checked once per
    process."""
    labels = {}
    for text in dict.fromkeys(str(s) for s in specs):
        spec = AgentSpec.parse(text)
        if spec.name != "engine":
            continue
        key = (str(spec.without_clock()), game)
        if key not in _CHECKED:
            agent = make_agent(spec.without_clock(), seed=0)
            try:
                info = agent.start()
                if not info.plays(game):
                    raise EngineError(f"engine {agent.label} does not play {game} (it "
                                      f"plays: {' '.join(info.games) or 'nothing'})")
            except EngineError as e:
                detail = str(e).removeprefix(f"engine {agent.label}").lstrip(": ")
                raise EngineError(f"engine {agent.label} did not start: {detail}",
                                  START) from None
            finally:
                agent.close()
            _CHECKED[key] = agent.params.get("name") or info.name
        if _CHECKED[key]:
            labels[text] = _CHECKED[key]
    return labels


def result_of_info(info: dict, player: int) -> SearchResult:
    """What an engine's `info` lines said (parse_info), as a SearchResult."""
    return SearchResult(algo="engine", value=info.get("value"), player=player,
                        pv=info.get("pv", []), depth=info.get("depth", 0),
                        nodes=info.get("nodes", 0), time_s=info.get("time", 0) / 1000)


def parse_info(words: list[str]) -> dict:
    """`value 0.6 depth 5 nodes 1200 pv a b` -> {'value': 0.6, 'depth': 5, 'nodes': 1200,
    'pv': ['a', 'b']}. `pv` and `string` take the rest of the line; every other key one
    value (unknown keys are skipped); a bad number is dropped, not fatal."""
    out: dict = {}
    i = 0
    while i < len(words):
        key = words[i]
        if key == "pv":
            out["pv"] = [decode_move(w) for w in words[i + 1:]]
            break
        if key == "string":
            out["string"] = " ".join(words[i + 1:])
            break
        if i + 1 < len(words):
            kind = {"value": float, "depth": int, "nodes": int, "time": int}.get(key)
            if kind is not None:
                with contextlib.suppress(ValueError):
                    out[key] = kind(words[i + 1])
        i += 2
    return out


# ---- the server: a niwa agent as an external program -------------------------------------
def parse_information_state(text: str):
    """(state, hidden): a full state consistent with an information state, and whether
    anything in it was guessed (then resample it for the seat before searching)."""
    from niwa.ext.registry import find_game, parse_position

    game = find_game(text.split(None, 1)[0]) if text.strip() else None
    guess = game.complete_information_state if game is not None else None
    full = guess(text) if guess is not None else text
    return parse_position(full), full != text


class EngineServer:
    """Answers the protocol with a niwa agent: one command line in, its reply lines out."""

    def __init__(self, agent_spec: str, write, seed: int | None = None, name: str = ""):
        from niwa.ext.registry import games

        spec = AgentSpec.parse(agent_spec)
        if spec.name == "human":
            raise AgentError("the human agent cannot be served: it would read the "
                             "protocol's own stdin")
        self.agent = make_agent(spec, seed=seed)
        self.time_param = "time" in spec.entry.params
        self.spec = agent_spec
        self.name = name or f"niwa {agent_spec}"
        self.games = games()
        self.write = write
        self.rng = Rng(0 if seed is None else seed)
        self.state = None
        self.hidden = False
        self.greeted = False

    def handle(self, line: str) -> bool:
        """Answer one command; False after `quit`."""
        words = line.split()
        if not words:
            return True
        command, rest = words[0], line.strip()[len(words[0]):].strip()
        if command == "quit":
            return False
        handlers = {"niwa-engine": self.greet, "isready": self.isready,
                    "newgame": self.newgame, "position": self.position, "legal": self.legal,
                    "moves": self.moves, "go": self.go}
        if command not in handlers:
            self.write(f"error unknown command {command!r}")
        elif not self.greeted and command != "niwa-engine":
            self.write(f"error say {GREETING!r} first")
        else:
            try:
                handlers[command](rest)
            except NiwaError as e:
                self.write("error " + (str(e).splitlines() or [type(e).__name__])[0])
            except Exception as e:      # a bug in an agent: say so, and stay up
                detail = (str(e).splitlines() or [""])[0]
                self.write(f"error internal {type(e).__name__}: {detail}")
        return True

    def greet(self, rest):
        if rest != str(PROTOCOL_VERSION):
            self.write(f"error unsupported protocol version {rest!r}; this engine speaks "
                       f"{PROTOCOL_VERSION}")
            return
        self.greeted = True
        from importlib.metadata import PackageNotFoundError, version

        try:
            niwa_version = version("niwa")
        except PackageNotFoundError:
            niwa_version = "?"
        self.write(f"id name {self.name}")
        self.write(f"id author niwa {niwa_version}")
        self.write("games " + " ".join(self.games))
        self.write(f"features {PREPARE}")
        self.write("ok")

    def isready(self, rest):
        """`readyok`; after `isready GAME VARIANT...` the agent first loads what that
        game needs (its book, its endgame table), which the client waits for off the
        move clock."""
        if rest:
            from niwa.ext.registry import parse_position

            if ";" in rest:
                raise EngineError("isready takes a game and its variant, not a position")
            self.agent.prepare(parse_position(rest))
        self.write("readyok")

    def newgame(self, rest):
        self.agent.reset()
        self.state = None

    def position(self, rest):
        self.state = None
        try:
            self.state, self.hidden = parse_information_state(rest)
        except (IndexError, KeyError, ValueError) as e:
            if isinstance(e, NiwaError):
                raise
            raise EngineError(f"position cannot be read: {e}") from None

    def legal(self, rest):
        """The client's list of legal moves: a niwa agent knows them already."""

    def moves(self, rest):
        if self.state is None:
            raise EngineError("moves needs a position first")
        if self.hidden:
            raise EngineError("moves cannot follow a position with hidden parts; "
                              "send the new position instead")
        for token in rest.split():
            state = self.state
            if state.current_player() == PLAYER_SIMULTANEOUS:
                texts = decode_joint(token)
                state.apply_joint([state.string_to_action(t, seat) for seat, t in enumerate(texts)])
            else:
                state.apply(decode_move(token))

    def go(self, rest):
        if self.state is None:
            raise EngineError("go needs a position first")
        try:
            request = GoRequest.parse(rest.split())
        except ValueError as e:
            raise EngineError(str(e)) from None
        state = self.state
        mover = state.current_player()
        seat = request.seat if request.seat is not None else mover
        if state.is_terminal():
            raise EngineError("the game is over: there is no move to make")
        if mover == PLAYER_CHANCE:
            raise EngineError("the position is a chance node: engines do not choose chance")
        if seat < 0 or not state.legal_actions(seat):
            raise EngineError(f"seat {seat} has no move here" if seat >= 0 else
                              "go needs 'seat N' at a simultaneous node")
        if self.hidden:
            state = state.resample_hidden(seat, self.rng.next_u64())
        budget = request.budget_seconds(seat)
        started = time.perf_counter()
        action = self._step(state, seat, budget)
        spent = round((time.perf_counter() - started) * 1000)
        self.write(info_line(self.agent.analysis(), spent))
        self.write("bestmove " + encode_move(state.action_to_string(action, seat)))

    def _step(self, state, seat, budget):
        if budget is None or not self.time_param:
            return self.agent.step(state, seat)
        # a per-move budget replaces the agent's own `time` for this move only
        saved = dict(self.agent.params)
        self.agent.params["time"] = budget
        try:
            return self.agent.step(state, seat)
        finally:
            self.agent.params.clear()
            self.agent.params.update(saved)


def info_line(result: SearchResult | None, spent_ms: int) -> str:
    """The `info` line of an agent's last search (agent.analysis()); MCTS reports no
    depth (its line's length is none), and the line is its first six moves."""
    words = ["info"]
    if result is not None and result.value is not None:
        words += ["value", f"{result.value:.4g}"]
    if result is not None and result.depth and result.iterations is None:
        words += ["depth", str(result.depth)]
    if result is not None and result.nodes:
        words += ["nodes", str(result.nodes)]
    words += ["time", str(spent_ms)]
    pv = result.pv[:6] if result is not None else []
    if pv:
        words += ["pv"] + [encode_move(str(m)).replace("%2B", "+") for m in pv]
    return " ".join(words)


def serve(agent_spec: str, stdin=None, stdout=None, seed: int | None = None,
          name: str = "") -> None:
    """Expose the agent `agent_spec` as an engine on stdin/stdout until `quit` or EOF."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout

    def write(line):
        stdout.write(line + "\n")
        stdout.flush()

    server = EngineServer(agent_spec, write, seed=seed, name=name)
    for line in stdin:
        if not server.handle(line):
            break


# ---- registration -------------------------------------------------------------------------
ENGINE_PARAMS = {
    "cmd": (str, "", "the engine's command line (required), e.g. "
                     "cmd=python3 docs/examples/random_engine.py; no commas"),
    "name": (str, "", "its label in tables, records and messages (default: the name it "
                      "gives in the handshake, else the command)"),
    "timeout": (float, 30.0, "seconds to wait for the handshake, and for a move when "
                             "no time is set"),
    "time": (float, 0.0, "seconds per move, sent as go movetime (0: the engine decides, "
                         "from its clock if it has one)"),
}


def register_agents() -> None:
    """Register the `engine` agent spec (the `niwa.agents` entry point calls this)."""
    register_agent("engine", EngineAgent, dict(ENGINE_PARAMS),
                   "an external program speaking the niwa engine protocol, "
                   "e.g. engine:cmd=niwa engine mcts:iters=200")

