"""Plain-Python reference rules, one module per game, written straight from rules/*.md.

Installed as `niwa.oracle` so that `niwa bench` can time them next to the engines.
Every oracle module offers `initial(**variant)` returning a state with the methods
current_player(), legal_actions(), apply(a), clone(), is_terminal(), returns(),
chance_outcomes() and to_notation() (same notation as the engine), plus
`random_playout(state, rng)` (rng: random.Random) returning the number of actions.
"""
