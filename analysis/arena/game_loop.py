"""The game loop: agents play one game from a position to the end, whoever runs it.

Tournaments, variant experiments, `niwa play`, the benchmarks' matches and test helpers all
play through `play()`. It asks each agent for its move on a clone of the state (so no agent
can touch the game), samples chance through `registry.sample_outcome`, collects every
seat's pick at a simultaneous node from the same position (nobody sees another's pick),
tells every agent what happened (`observe`), and ends on a terminal state, at `max_plies`
(a capped game, scored as a shared result) or at a forfeit.

Forfeits (with `forfeits=True`, the default): an agent that fails to start, crashes, plays
an illegal action, overruns its per-move time limit or answers with an error loses the
game; everyone else is credited the win over it. The game's termination is then the
reason (FORFEIT_REASONS): the loop's own finding (an exception in `reset` is `start`, in
`step` or `observe` `crash`, an action the game refuses `illegal`, a move over its time
`time`), unless the agent's exception names its own in a `forfeit_reason` attribute (an
external engine's EngineError: `error` for an `error` reply, `time` for silence...).

Clocks (`clocks`, a TimeControl or None per seat, see arena.clock): each clocked seat's
agent is told its clock before its move (`agent.clock`, a ClockReading) and every seat's
(`agent.all_clocks`, a ClockReading or None by seat: what an external engine passes on),
the move's wall time is charged to it, and a clock that goes negative loses the game on
time (termination "time"). Every agent is also told its per-move limit before its move
(`agent.move_limit`, seconds or None: what an external engine passes on as `go limit`).
With `forfeits=False` an agent's exception propagates instead (an interactive game shows
the traceback rather than scoring it).

People: an agent may raise `UndoRequest` at its prompt; the loop then takes back that
seat's previous decision (and everything after it) by replaying the recorded actions from
the start. `QuitRequest` ends the game unfinished (`GameResult.quit`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from niwa.analysis.arena.clock import Clock
from niwa.ext.game import PLAYER_CHANCE as CHANCE
from niwa.ext.game import PLAYER_SIMULTANEOUS as SIMULTANEOUS
from niwa.ext.game import PLAYER_TERMINAL as TERMINAL
from niwa.ext.registry import sample_outcome


class PlayerRequest(Exception):
    """Raised by an agent (a person at a prompt) to steer the loop instead of moving."""

    seat: int = -1      # set by the loop: who asked


class UndoRequest(PlayerRequest):
    """Take back the requesting seat's last decision."""


class QuitRequest(PlayerRequest):
    """Leave the game unfinished."""


class _Forfeit(Exception):
    """An agent lost the game (internal: ends the loop)."""

    def __init__(self, seat: int, what: str, termination: str):
        super().__init__(what)
        self.seat, self.what, self.termination = seat, what, termination


def first_line(exc: BaseException) -> str:
    """'Type: first line of the message', as forfeits and one-line errors show it."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# Why a seat forfeited: it could not be built or started (or its handshake failed), it
# crashed (an exception, or its process died), it played an illegal or unreadable move,
# it ran out of time (clock, per-move limit, or silence), or it answered with an error.
FORFEIT_REASONS = ("start", "crash", "illegal", "time", "error")
FORFEIT_WORDS = {"start": "failed to start", "crash": "crashed",
                 "illegal": "played an illegal action", "time": "ran out of time",
                 "error": "answered with an error"}
# How a game ended: by its rules, at the ply cap, left unfinished, or forfeited for one of
# FORFEIT_REASONS ("forfeit": a reason not known, as in logs older than the reasons). The
# game records (arena.game_record) say "forfeit" with the reason beside it.
TERMINATIONS = ("normal", "capped", "quit", *FORFEIT_REASONS, "forfeit")


def forfeit_reason_of(exc: BaseException, found: str) -> str:
    """The reason of a forfeit the loop `found` while `exc` was raised: the exception's
    own `forfeit_reason` when it names one of FORFEIT_REASONS, else `found`."""
    own = getattr(exc, "forfeit_reason", None)
    return own if own in FORFEIT_REASONS else found


@dataclass
class PlyNote:
    """What a game record keeps of one ply beyond its action: the move's notation, taken
    before it was applied (a joint move: one notation per seat, "" for a seat that had
    no choice), the mover's thinking time, and the mover's own comment (its analysis)."""

    notation: str | list[str]
    seconds: float | None = None      # None for chance
    comment: dict | None = None
    clock: float | list | None = None     # seconds left on the mover's clock after the
                                          # move (joint: by seat); None: no clock


@dataclass
class GameResult:
    """How one game ended. `results` are per seat (the state's returns; a forfeit gives 0 to
    the offender and 1 to everyone else; a capped game 1/N each)."""

    results: list[float]
    plies: int
    capped: bool = False
    error_seat: int | None = None
    error: str = ""
    actions: list = field(default_factory=list)   # (player, action) per ply, chance included
    state: object = None                          # the final state
    quit: bool = False
    notes: list[PlyNote] = field(default_factory=list)   # one per ply of `actions`
    start: object = None                          # a clone of the start position
    termination: str = ""                         # one of TERMINATIONS ("" if not given)

    @property
    def forfeited(self) -> bool:
        return self.error_seat is not None


class Watcher:
    """What a loop's spectator is told (`niwa play` prints it); every hook is optional."""

    def position(self, state) -> None:
        """Before each ply is played."""

    def played(self, before, player: int, action) -> None:
        """After `action` (a joint list at a simultaneous node) was applied to `before`."""

    def undone(self, done: bool) -> None:
        """After an undo request (done=False: there was nothing to take back)."""

    def move_started(self, seat: int, limit: float | None) -> None:
        """An agent was asked for its move and has `limit` seconds before it loses (its
        per-move limit or its clock, whichever is less; None: no limit): what a watchdog
        of runaway moves needs."""


class _Game:
    """One running game: the state, the agents, the record of actions for undo."""

    def __init__(self, state, agents, chance_rng, time_limits, labels, forfeits, watcher,
                 clocks=None, move_clock=None):
        self.move_clock = move_clock
        self.start = state.clone()
        self.state = state
        self.agents = agents
        self.n = state.num_players
        self.chance_rng = chance_rng
        self.time_limits = time_limits or [None] * self.n
        self.labels = labels or [str(q) for q in range(self.n)]
        self.forfeits = forfeits
        self.watcher = watcher or Watcher()
        self.clocks = [None if tc is None else Clock(tc) for tc in (clocks or [None] * self.n)]
        self.actions: list = []
        self.notes: list[PlyNote] = []
        self.thinking: dict[int, tuple] = {}   # seat -> (seconds, comment, clock left)
        self.decisions: list[tuple[int, int]] = []   # (ply, seat) of each decision made

    def fail(self, seat: int, exc: Exception, found: str, what: str | None = None):
        """Forfeit `seat` over `exc`, for the reason `found` unless the exception names
        its own; `what` words the loop's finding (default FORFEIT_WORDS)."""
        if not self.forfeits:
            raise exc
        reason = forfeit_reason_of(exc, found)
        words = what if what is not None and reason == found else FORFEIT_WORDS[reason]
        raise _Forfeit(seat, f"seat {seat} ({self.labels[seat]}) {words}: {first_line(exc)}",
                       reason)

    def start_agents(self) -> None:
        for seat, agent in enumerate(self.agents):
            try:
                agent.reset()
                # (off the move clock: a book or an endgame table loaded for the game)
                prepare = getattr(agent, "prepare", None)
                if prepare is not None:
                    prepare(self.state.clone())
            except Exception as e:   # an agent that cannot even start loses
                self.fail(seat, e, "start")

    def ask(self, seat: int):
        """The seat's action; a crash or a time overrun forfeits."""
        clock = self.clocks[seat]
        if clock is not None:
            plies = len(self.actions)
            _tell_clock(self.agents[seat], clock.reading(plies),
                        tuple(None if c is None else c.reading(plies) for c in self.clocks))
        on_clock = clock.remaining if clock is not None else None
        _tell_limit(self.agents[seat], self.time_limits[seat])
        limit = self.move_limit(seat)
        self.watcher.move_started(seat, limit)
        start = time.perf_counter()
        if self.move_clock is not None:     # a watchdog outside may stop a move that hangs
            self.move_clock.started(seat, limit, len(self.actions))
        try:
            action = self.agents[seat].step(self.state.clone(), seat)
        except PlayerRequest as request:
            request.seat = seat
            raise
        except Exception as e:
            self.fail(seat, e, "crash")
        finally:
            if self.move_clock is not None:
                self.move_clock.finished()
        spent = time.perf_counter() - start
        limit = self.time_limits[seat]
        if limit is not None and spent > limit:
            raise _Forfeit(seat, f"seat {seat} ({self.labels[seat]}) exceeded its time budget: "
                                 f"{spent:.3f}s > {limit:.3f}s per move", "time")
        if clock is not None and not clock.punch(spent):
            raise _Forfeit(seat, f"seat {seat} ({self.labels[seat]}) lost on time: its move "
                                 f"took {spent:.3f}s with {on_clock:.3f}s left on its clock "
                                 f"(time control {clock.control.describe()})", "time")
        self.decisions.append((len(self.actions), seat))
        self.thinking[seat] = (spent, agent_comment(self.agents[seat]),
                               None if clock is None else clock.remaining)
        return action

    def move_limit(self, seat: int) -> float | None:
        """The longest `seat`'s next move may run before it has lost: the smaller of its
        per-move limit and the time on its clock (None: no limit). A watchdog that stops
        runaway moves adds its margin to this."""
        limit, clock = self.time_limits[seat], self.clocks[seat]
        if clock is None:
            return limit
        left = max(0.0, clock.remaining)
        return left if limit is None else min(limit, left)

    def apply(self, player: int, action) -> None:
        try:
            if player == SIMULTANEOUS:
                self.state.apply_joint(action)
            else:
                self.state.apply(action)
        except Exception as e:
            seat = _illegal_seat(self.state, action) if player == SIMULTANEOUS else player
            self.fail(seat, e, "illegal")

    def ply(self) -> None:
        """Play one ply (a chance outcome, a move or a joint move) and tell every agent."""
        state, player = self.state, self.state.current_player()
        before = state.clone()
        self.thinking = {}
        if player == CHANCE:
            action = sample_outcome(state.chance_outcomes(), self.chance_rng)
        elif player == SIMULTANEOUS:
            # every seat chooses from the same position: nobody sees another's pick
            action = [self.ask(q) if state.legal_actions(q) else -1 for q in range(self.n)]
        else:
            action = self.ask(player)
        note = self.note(before, player, action)
        self.apply(player, action)
        self.actions.append((player, action))
        self.notes.append(note)
        self.watcher.played(before, player, action)
        for q in range(self.n):
            try:
                self.agents[q].observe(before, action)
            except Exception as e:
                self.fail(q, e, "crash", "crashed in observe")

    def note(self, before, player: int, action) -> PlyNote:
        """The record's view of a ply, taken before it is applied (notation depends on
        the position); an action that is not legal keeps its raw id as notation."""
        if player == CHANCE:
            return PlyNote(_name(before, action))
        if player == SIMULTANEOUS:
            names = [_name(before, a, q) if a >= 0 else "" for q, a in enumerate(action)]
            think = [self.thinking.get(q) for q in range(self.n)]
            seconds = max((t[0] for t in think if t), default=None)
            comments = {str(q): t[1] for q, t in enumerate(think) if t and t[1]}
            clocks = [t[2] if t else None for t in think]
            return PlyNote(names, seconds, comments or None,
                           clocks if any(c is not None for c in clocks) else None)
        spent, comment, left = self.thinking.get(player, (None, None, None))
        return PlyNote(_name(before, action, player), spent, comment, left)

    def undo(self, seat: int) -> None:
        """Take back `seat`'s last decision and every ply after it, by replaying the
        recorded actions from the start."""
        done = [i for i, (ply, q) in enumerate(self.decisions)
                if q == seat and ply < len(self.actions)]
        if not done:
            # picks already made at an unfinished simultaneous node are asked again
            self.decisions = [d for d in self.decisions if d[0] < len(self.actions)]
            self.watcher.undone(False)
            return
        keep = self.decisions[done[-1]][0]
        self.decisions = self.decisions[:done[-1]]
        self.actions = self.actions[:keep]
        self.notes = self.notes[:keep]
        self.state = replay(self.start, self.actions)
        # agents keep no stale tree: their reuse finds the position again or starts anew
        self.watcher.undone(True)


def _name(before, a, seat=None) -> str:
    """`a`'s notation in `before` (as seen by `seat`); an action that is not legal keeps
    its raw id (it forfeits in apply, named there)."""
    try:
        return before.action_to_string(a, seat) if seat is not None \
            else before.action_to_string(a)
    except Exception:
        return str(a)


def _tell_clock(agent, reading, every_seat: tuple) -> None:
    try:
        agent.clock = reading
        agent.all_clocks = every_seat
    except AttributeError:   # an agent object that takes no attributes plays unaware
        pass


def _tell_limit(agent, seconds: float | None) -> None:
    try:
        agent.move_limit = seconds
    except AttributeError:   # an agent object that takes no attributes plays unaware
        pass


def replay(start, actions):
    """A clone of `start` with the recorded (player, action) plies applied."""
    state = start.clone()
    for player, action in actions:
        if player == SIMULTANEOUS:
            state.apply_joint(action)
        else:
            state.apply(action)
    return state


def agent_comment(agent) -> dict | None:
    """The agent's analysis of its last move, reduced to what a record keeps (value,
    proven, visits, depth, nodes, pv); None when it says nothing."""
    try:
        info = agent.analysis()
    except Exception:       # a comment is a bonus; never lose a game over it
        return None
    if info is None:
        return None
    if not isinstance(info, dict):      # a SearchResult (solver/results.py)
        from dataclasses import asdict, is_dataclass
        info = asdict(info) if is_dataclass(info) else {}
        if info.get("actions") and info.get("iterations") is not None:
            info["visits"] = info["actions"][0].get("visits")   # MCTS: the chosen move's
        if info.get("iterations") is not None:
            info["depth"] = None        # (MCTS's depth is only its line's length)
    keep = {k: info[k] for k in ("algo", "value", "proven", "visits", "depth", "nodes", "pv")
            if info.get(k) is not None}
    if "pv" in keep:
        keep["pv"] = [str(m) for m in keep["pv"]]
    if isinstance(keep.get("value"), float):
        keep["value"] = round(keep["value"], 4)
    return keep or None


def _illegal_seat(state, joint) -> int:
    """The first seat whose pick in a joint action is not legal (0 if none is found)."""
    for seat, a in enumerate(joint):
        if a not in state.legal_actions(seat):
            return seat
    return 0


def play(state, agents, *, chance_rng, max_plies: int | None = None, time_limits=None,
         labels=None, forfeits: bool = True, watcher: Watcher | None = None,
         clocks=None, move_clock=None) -> GameResult:
    """Play `state` to the end with one agent per seat; the final state is
    `GameResult.state` (`state` itself unless a move was undone, which replays a clone).

    `chance_rng` samples chance outcomes (a niwa Rng); `time_limits` are seconds per move
    by seat (None: no limit); `labels` name the seats in forfeit messages; `clocks` are
    time controls by seat (None: no clock). `move_clock` (optional) is told
    `started(seat, limit, ply)` and `finished()` around every move, so that a watchdog in
    another process can stop a move that never returns (arena.executors).
    """
    game = _Game(state, agents, chance_rng, time_limits, labels, forfeits, watcher, clocks,
                 move_clock)
    failed = None
    try:
        game.start_agents()
    except _Forfeit as f:
        failed = (f.seat, f.what, f.termination)
    capped = quit_ = False
    while failed is None:
        if game.state.current_player() == TERMINAL:
            break
        if max_plies is not None and len(game.actions) >= max_plies:
            capped = True
            break
        game.watcher.position(game.state)
        try:
            game.ply()
        except _Forfeit as f:
            failed = (f.seat, f.what, f.termination)
        except UndoRequest as request:
            game.undo(request.seat)
        except QuitRequest:
            quit_ = True
            break
    return _result(game, failed, capped, quit_)


def _result(game: _Game, failed, capped: bool, quit_: bool) -> GameResult:
    n, plies = game.n, len(game.actions)
    if failed is not None:
        seat, error, termination = failed
        results = [0.0 if q == seat else 1.0 for q in range(n)]
        return GameResult(results, plies, False, seat, error, game.actions, game.state,
                          notes=game.notes, start=game.start, termination=termination)
    if capped or quit_:
        results = [1.0 / n] * n
    else:
        results = [float(r) for r in game.state.returns()]
    termination = "capped" if capped else "quit" if quit_ else "normal"
    return GameResult(results, plies, capped, None, "", game.actions, game.state, quit_,
                      notes=game.notes, start=game.start, termination=termination)
