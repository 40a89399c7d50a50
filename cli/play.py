"""`niwa play`: play a game in the terminal, people and bots in any seats."""

from __future__ import annotations

import click

from niwa.analysis.arena.game_loop import (
    QuitRequest,
    UndoRequest,
    Watcher,
    play,
)
from niwa.cli.common import UserError, creatable_file, user_errors, variant_option
from niwa.ext.errors import IllegalActionError
from niwa.ext.game import PLAYER_CHANCE, PLAYER_SIMULTANEOUS
from niwa.solver.agent_base import Agent
from niwa.solver.solve import has_hidden_information

HELP = ("type a move's number or its name; 'moves' lists them again, 'undo' takes back "
        "your last move, 'quit' (or Ctrl-C) leaves, 'help' shows this (and what the board's "
        "codes mean)")


def register(main: click.Group) -> None:
    main.add_command(play_cmd)


def _reasoning(agent, hide_line: bool = False) -> str:
    """A bot's analysis in a few words; `hide_line` leaves out its principal variation
    (in a game with hidden cards the line could show the bot's own hand)."""
    info = agent.analysis()     # a SearchResult, or None
    if info is None:
        return ""
    parts = []
    if info.value is not None:
        parts.append(f"value {info.value:.3f}" + (" proven" if info.proven else ""))
    visits = info.actions[0].visits if info.actions else None     # the most visited action
    if visits is not None:
        parts.append(f"visits {visits}/{info.iterations}")
    if info.depth and info.iterations is None:     # (MCTS's depth is only its line's length)
        parts.append(f"depth {info.depth}")
    if info.nodes:
        parts.append(f"nodes {info.nodes:,}")
    if info.pv and not hide_line:
        parts.append("line " + " ".join(info.pv[:6]))
    return " (" + ", ".join(parts) + ")" if parts else ""


def numbered_moves(names: list[str], width: int = 78) -> list[str]:
    """The moves as '  1. name' cells, laid out in columns that fit `width`."""
    cells = [f"{k:>3}. {name}" for k, name in enumerate(names, 1)]
    cell_width = max(len(c) for c in cells) + 2
    per_line = max(1, width // cell_width)
    return ["".join(c.ljust(cell_width) for c in cells[i:i + per_line]).rstrip()
            for i in range(0, len(cells), per_line)]


def choose_move(state, player: int, text: str) -> int:
    """The action a person typed: its number in the list (1..N) or its name (any case).
    Action ids are not accepted: numbers are list positions, so nothing is ambiguous."""
    legal = state.legal_actions(player)
    names = [state.action_to_string(a, player) for a in legal]
    text = text.strip()
    if text.isascii() and text.isdigit():
        # ASCII digits only ('²' is a digit to str.isdigit, not to int()), and no number
        # longer than any list: a 5,000-digit one is over int()'s limit
        k = int(text) if len(text) <= 9 else None
        if k is not None and 1 <= k <= len(legal):
            return legal[k - 1]
        shown = text if len(text) <= 12 else text[:12] + "..."
        raise IllegalActionError(f"there is no move {shown}: choose 1..{len(legal)} or type "
                                 f"a name")
    lowered = {n.lower(): a for n, a in zip(names, legal, strict=True)}
    if text.lower() in lowered:
        return lowered[text.lower()]
    raise IllegalActionError(f"unknown or illegal move {text!r}; type 1..{len(legal)} or a "
                             "name ('moves' lists them)")


class TerminalPerson(Agent):
    """A person at the terminal: the legal moves numbered 1..N, then a prompt that takes a
    number, a move's name, 'moves', 'undo', 'quit' or 'help'."""

    name = "human"

    def __init__(self, echo, read):
        super().__init__(seed=None)
        self.echo, self.read = echo, read

    def step(self, state, player):
        names = [state.action_to_string(a, player) for a in state.legal_actions(player)]
        self.echo(f"Player {player}, your move. Legal moves:")
        for line in numbered_moves(names):
            self.echo(line)
        while True:
            try:
                text = self.read(f"player {player}> ").strip()
            except (EOFError, KeyboardInterrupt):   # the game so far is still saved
                raise QuitRequest() from None
            if text in ("quit", "exit", "q"):
                raise QuitRequest()
            if text == "undo":
                raise UndoRequest()
            if text in ("help", "?", ""):
                self.echo(HELP)
                if state.spec.legend:
                    self.echo(state.spec.legend)
                continue
            if text in ("moves", "list"):
                for line in numbered_moves(names):
                    self.echo(line)
                continue
            try:
                return choose_move(state, player, text)
            except IllegalActionError as e:
                self.echo(str(e))


def board_for(state, viewer):
    """What `viewer` may see: the board, unless it would show hidden data (an opponent's
    hand); then the game's own render for that player if it has one, else the one-line
    information state."""
    if viewer is None or not state.hides_from(viewer):
        return state.render()
    try:
        return state.render(player=viewer)
    except TypeError:
        return (f"(the board would show hidden cards; player {viewer} sees:)\n"
                + state.information_state(viewer))


class TerminalWatcher(Watcher):
    """Prints the game: the board once per turn (as the people at it may see it) and again
    before a person's decision if it changed since, the game's legend under the first
    board, chance events, revealed joint moves, and the bots' moves with their reasoning.
    A chance event (a draw) is one line: its board comes with the next decision."""

    def __init__(self, agents, specs, echo, show_board):
        self.agents, self.specs, self.echo, self.show_board = agents, specs, echo, show_board
        self.humans = [q for q, a in enumerate(agents) if isinstance(a, TerminalPerson)]
        self._plies = 0             # the turn of a game whose every ply is a turn
        self._shown = None          # (turn, text) of the last board printed
        self._legend_shown = False

    def position(self, state):
        self._plies += 1
        if not self.show_board or state.current_player() == PLAYER_CHANCE:
            return
        turn = state.spec.turn(state) if state.spec.turn is not None else self._plies
        board = board_for(state, self._viewer(state))
        if self._shown is not None and turn == self._shown[0] and \
                not (self._person_decides(state) and board != self._shown[1]):
            return
        self.echo("")
        self.echo(board)
        if not self._legend_shown and state.spec.legend:
            self.echo(state.spec.legend)
            self._legend_shown = True
        self._shown = (turn, board)

    def _person_decides(self, state) -> bool:
        p = state.current_player()
        if p == PLAYER_SIMULTANEOUS:
            return any(state.legal_actions(q) for q in self.humans)
        return p in self.humans

    def _viewer(self, state):
        """The person whose eyes the board is shown to (None: no person, show everything)."""
        if not self.humans:
            return None
        p = state.current_player()
        return p if p in self.humans else self.humans[0]

    def played(self, before, player, action):
        if player == PLAYER_CHANCE:
            viewer = self._viewer(before)
            if viewer is not None and _outcome_hidden(before, action, viewer):
                self.echo("chance: a hidden draw")
            else:
                self.echo(f"chance: {before.action_to_string(action)}")
        elif player == PLAYER_SIMULTANEOUS:
            names = ", ".join(f"player {q}: {before.action_to_string(a, q)}"
                              for q, a in enumerate(action) if a >= 0)
            self.echo(f"revealed: {names}")
        elif player not in self.humans:
            secret = bool(self.humans) and has_hidden_information(before)
            self.echo(f"player {player} ({self.specs[player]}) plays "
                      f"{before.action_to_string(action)}"
                      f"{_reasoning(self.agents[player], hide_line=secret)}")

    def undone(self, done):
        self.echo("undone" if done else "nothing to undo")
        if done:
            self._shown = None      # the position taken back to is shown again


def _outcome_hidden(before, action, viewer: int) -> bool:
    """Whether `viewer` cannot tell this chance outcome from another (an opponent's draw):
    some other outcome leaves them the same information state."""
    seen = before.child(action).information_state(viewer)
    return any(before.child(other).information_state(viewer) == seen
               for other, _ in before.chance_outcomes() if other != action)


def play_game(state, specs, seed=0, echo=click.echo, read=input, show_board=True):
    """Play from `state` with one agent spec per seat (through the arena's game loop);
    returns the loop's GameResult (`quit` set if a person left). People are prompted via
    `read`."""
    from niwa.ext.game import Rng
    from niwa.solver.agents import make_agent

    agents = [TerminalPerson(echo, read) if spec == "human" else make_agent(spec, seed + 7919 * seat)
              for seat, spec in enumerate(specs)]
    watcher = TerminalWatcher(agents, specs, echo, show_board)
    result = play(state, agents, chance_rng=Rng(seed), forfeits=False, watcher=watcher)
    if result.quit:
        echo("bye")
        return result
    state = result.state
    if show_board:
        echo("")
        echo(state.render())
    echo("final returns: " + ", ".join(f"player {q}: {r:g}" for q, r in enumerate(state.returns())))
    return result


def save_record(result, specs, seed: int, path: str) -> None:
    """Append the game's record to `path` (JSON Lines: docs/game-records.md)."""
    from niwa.analysis.arena.game_record import append_record, record_of, seats_for

    seats = seats_for(specs, specs, result.start.game_name,
                      [None if spec == "human" else seed + 7919 * q
                       for q, spec in enumerate(specs)])
    append_record(path, record_of(result, seats=seats, deal_seed=seed,
                                  event={"site": "niwa play"}))


def _writable_record(path: str) -> None:
    """A one-line error now if the record `path` cannot be appended to (its folder is
    made if need be, as the other commands' output files)."""
    import os
    from pathlib import Path

    creatable_file(path, "--record")
    file = Path(path).expanduser()
    try:
        existed = file.exists()
        with open(file, "a", encoding="utf-8"):
            pass
        if not existed:
            os.unlink(file)
    except OSError as e:        # no such place, a name too long, not writable...
        raise UserError(f"--record {path}: cannot write there "
                        f"({e.strerror or type(e).__name__})") from None


@click.command("play")
@click.argument("game")
@click.option("--p0", default="human", show_default=True, help="Agent spec of seat 0.")
@click.option("--p1", default="mcts:iters=5000", show_default=True, help="Agent of seat 1.")
@click.option("--p2", default=None, help="Agent of seat 2 (3-4 player games).")
@click.option("--p3", default=None, help="Agent of seat 3 (4 player games).")
@click.option("--position", default=None, help="Start from this notation instead.")
@variant_option
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed for the deal, chance events and the bots.")
@click.option("--record", "record_path", type=click.Path(dir_okay=False), default=None,
              help="Append the game's record to FILE (default: niwa-play-GAME-DATE-TIME.jsonl "
                   "here); `niwa replay FILE` shows it again.")
@click.option("--no-record", is_flag=True, help="Do not save the game.")
@user_errors
def play_cmd(game, p0, p1, p2, p3, position, variants, seed, record_path, no_record):
    """Play GAME in the terminal: the board after each move (only what you may see),
    the legal moves numbered (type a number or a name), bots' moves with their
    reasoning; 'undo' and 'quit' (or Ctrl-C) work at your prompt. The game is saved as a
    record at the end.

    Example: niwa play lotus --p0 human --p1 mcts:iters=5000
    """
    from niwa.ext.registry import get_game, parse_position, parse_variant_options
    from niwa.solver.agents import parse_spec

    info = get_game(game)
    if position:
        state = parse_position(position)
        if state.game_name != info.name:
            raise UserError(f"--position is a {state.game_name} position, not {info.name}")
    else:
        state = info.new(seed=seed, **parse_variant_options(variants))
    specs = [p0, p1, p2, p3][: state.num_players]
    for seat, spec in enumerate(specs):
        if spec is None:
            raise UserError(f"this game has {state.num_players} players: give --p{seat}")
        parse_spec(spec)        # unknown agents fail here, before the board is drawn
    if record_path and not no_record:
        _writable_record(record_path)   # before the game: a record nowhere to go is lost
    try:
        result = play_game(state, specs, seed=seed)
    except KeyboardInterrupt:
        click.echo("\nbye")
        return
    if not no_record:
        import time

        path = record_path or f"niwa-play-{info.name}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
        try:
            save_record(result, specs, seed, path)
        except OSError as e:
            raise UserError(f"cannot save the game record to {path}: "
                            f"{e.strerror or type(e).__name__}") from None
        click.echo(f"game record saved to {path} (niwa replay {path})")
