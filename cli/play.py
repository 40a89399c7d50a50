"""`niwa play`: play a game in the terminal, people and bots in any seats."""

from __future__ import annotations

import click

from niwa.cli.common import UserError, user_errors, variant_option
from niwa.ext.errors import IllegalActionError
from niwa.ext.registry import sample_outcome

HELP = "type a move's name or id; 'undo' takes back your last move, 'quit' (or Ctrl-C) leaves"


def register(main: click.Group) -> None:
    main.add_command(play_cmd)


def _move_list(state, player):
    return [(a, state.action_to_string(a, player)) for a in state.legal_actions(player)]


def _reasoning(agent) -> str:
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
    if info.pv:
        parts.append("line " + " ".join(info.pv[:6]))
    return " (" + ", ".join(parts) + ")" if parts else ""


class _Undo(Exception):
    pass


class _Quit(Exception):
    pass


def _ask_human(state, player, echo, read):
    moves = _move_list(state, player)
    echo(f"Player {player}, your move. Legal moves:")
    for a, name in moves:
        echo(f"  {a:>5}  {name}")
    while True:
        try:
            text = read(f"player {player}> ")
        except EOFError:
            raise _Quit() from None
        text = text.strip()
        if text in ("quit", "exit", "q"):
            raise _Quit()
        if text == "undo":
            raise _Undo()
        if text in ("help", "?", ""):
            echo(HELP)
            continue
        from niwa.solver.agents import parse_human_action

        try:
            return parse_human_action(state, player, text)
        except IllegalActionError as e:
            echo(str(e))


def board_for(state, viewer):
    """What `viewer` may see: the board, unless it would show hidden data (an opponent's
    hand); then the game's own render for that player if it has one, else the one-line
    information state."""
    if viewer is None:
        return state.render()
    from niwa.solver.agents import hides_something_from

    if not hides_something_from(state, viewer):
        return state.render()
    try:
        return state.render(player=viewer)
    except TypeError:
        return (f"(the board would show hidden cards; player {viewer} sees:)\n"
                + state.information_state(viewer))


def play_game(state, specs, seed=0, echo=click.echo, read=input, show_board=True):
    """Play from `state` with one agent spec per seat; returns the final state (or None if
    a person quit). Human seats are prompted through `read`."""
    from niwa.ext.game import Rng
    from niwa.solver.agents import make_agent

    n = state.num_players
    agents = [None if spec == "human" else make_agent(spec, seed + 7919 * seat)
              for seat, spec in enumerate(specs)]
    rng = Rng(seed)
    history = []    # states before each human decision, for undo
    humans = [q for q in range(n) if agents[q] is None]

    def viewer():
        """The human whose eyes the board is shown to (None: no human, show everything)."""
        if not humans:
            return None
        p = state.current_player()
        return p if p in humans else humans[0]

    while not state.is_terminal():
        if show_board:
            echo("")
            echo(board_for(state, viewer()))
        player = state.current_player()
        try:
            if state.is_chance_node():
                a = sample_outcome(state.chance_outcomes(), rng)
                echo(f"chance: {state.action_to_string(a)}")
                state.apply(a)
                continue
            if state.is_simultaneous_node():
                joint = []
                seats = [q for q in range(n) if state.legal_actions(q)]
                if any(agents[q] is None for q in seats):
                    history.append(state.clone())
                for q in range(n):
                    if q not in seats:
                        joint.append(-1)
                    elif agents[q] is None:
                        joint.append(_ask_human(state, q, echo, read))
                    else:
                        joint.append(agents[q].step(state.clone(), q))
                names = ", ".join(f"player {q}: {state.action_to_string(a, q)}"
                                  for q, a in enumerate(joint) if a >= 0)
                echo(f"revealed: {names}")
                state.apply_joint(joint)
                continue
            if agents[player] is None:
                history.append(state.clone())
                a = _ask_human(state, player, echo, read)
            else:
                a = agents[player].step(state.clone(), player)
                echo(f"player {player} ({specs[player]}) plays "
                     f"{state.action_to_string(a)}{_reasoning(agents[player])}")
            state.apply(a)
        except _Undo:
            history.pop()       # the snapshot taken for this very prompt
            if not history:
                echo("nothing to undo")
                continue
            state = history.pop()
            # bots keep no stale tree: their reuse finds the position again or starts anew
            echo("undone")
        except _Quit:
            echo("bye")
            return None
    if show_board:
        echo("")
        echo(state.render())
    echo("final returns: " + ", ".join(f"player {q}: {r:g}" for q, r in enumerate(state.returns())))
    return state


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
@user_errors
def play_cmd(game, p0, p1, p2, p3, position, variants, seed):
    """Play GAME in the terminal: the board after each move, legal moves with ids and
    names, bots' moves with their reasoning; 'undo' and Ctrl-C work at your prompt.

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
    try:
        play_game(state, specs, seed=seed)
    except KeyboardInterrupt:
        click.echo("\nbye")
