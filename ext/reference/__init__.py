"""Plain-Python reference rules (the oracles), one module per game, written straight from
the rules pages: short and obvious rather than fast.

The tests check every engine against its reference (differential and property tests,
pinned perft counts), and `niwa bench` times the engines against them; a game's spec names
its reference module (`GameSpec.reference`), so a plugin game can ship one too.
Every oracle module offers `initial(**variant)` returning a state with the methods
current_player(), legal_actions(), apply(a), clone(), is_terminal(), returns(),
chance_outcomes() and to_notation() (same notation as the engine), plus
`random_playout(state, rng)` (rng: random.Random) returning the number of actions.
"""

import itertools

_TERMINAL, _SIMULTANEOUS = -4, -2


def perft(state, depth):
    """Action sequences of length `depth` from an oracle state, counted the engines' way:
    a chance outcome is one action, a simultaneous node one step per joint action."""
    if depth == 0:
        return 1
    player = state.current_player()
    if player == _TERMINAL:
        return 0
    if player == _SIMULTANEOUS:
        steps = [list(joint) for joint in
                 itertools.product(*(state.legal_actions(p) for p in range(len(state.returns()))))]
    else:
        steps = state.legal_actions()
    if depth == 1:
        return len(steps)
    total = 0
    for step in steps:
        child = state.clone()
        if player == _SIMULTANEOUS:
            child.apply_joint(step)
        else:
            child.apply(step, check=False)
        total += perft(child, depth - 1)
    return total
