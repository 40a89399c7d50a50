"""What each built-in agent's parameters are: declared once, here, as plain data.

Each parameter is `name: (type, default, help)`; the registry (niwa.solver.agent_registry)
lists these tables, the agent spec (niwa.solver.agent_spec) checks values against them,
and the searchers read their defaults from them: `MCTS_DEFAULTS` is what `solver.mcts.MCTS`
takes when not told otherwise, and what `niwa agents` prints.

A number parameter is also bounded by what it means (`RANGES`), and a few text
parameters take one of a fixed set of words (`CHOICES`).

>>> MCTS_DEFAULTS["c"], MCTS_DEFAULTS["playout"]
(1.4, 'random')
>>> RANGES["gamma"]
(0.0, 1.0, True)
"""

from __future__ import annotations

MCTS_PARAMS = {
    "iters": (int, 2000, "iterations per move (default 2000 unless time is given)"),
    "time": (float, 0.0, "seconds per move, e.g. time=1s"),
    "cpu": (bool, False, "time= counts the search thread's CPU seconds, not wall-clock "
                         "seconds (fair budgets on a loaded machine)"),
    "c": (float, 1.4, "UCT exploration constant"),
    "playout": (str, "random", "random | heuristic (the game's own policy, else guided by its "
                               "evaluation) | greedy (epsilon-greedy on the evaluation)"),
    "eps": (float, 0.1, "greedy playouts: share of uniformly random moves"),
    "cutoff": (int, -1, "stop playouts after this many plies and use the evaluation"),
    "minimax": (float, 0.0, "implicit minimax backups: weight of the evaluation's max^n "
                            "value in selection (0 = off)"),
    "bias": (float, 0.0, "progressive bias: weight of the evaluation, fading as 1/visits"),
    "solver": (bool, True, "MCTS-Solver: back up proven wins/losses"),
    "sim": (str, "ucb", "simultaneous nodes: ucb | rm (regret matching) | exp3"),
    "gamma": (float, 0.1, "exploration of rm / exp3"),
    "nodes": (int, 1_000_000, "node cap (memory bound)"),
    "reuse": (bool, True, "keep the tree between moves"),
}
# the defaults alone: solver.mcts.MCTS's keyword defaults are these values
MCTS_DEFAULTS = {key: default for key, (_, default, _) in MCTS_PARAMS.items()}

TABLES_HELP = ("exact values from the endgame tables of the variant in $NIWA_TABLES "
               "(else ~/.cache/niwa/tables), if built")

# MCTS's exact moves (solver.exact_moves), for games the df-pn proof search can decide
# (two players, deterministic, alternating, perfect information); ignored in other games
EXACT_PARAMS = {
    "tables": (bool, False, TABLES_HELP + ": at the leaves, and the table's move when the "
                            "position is inside it"),
    "book": (str, "none", "opening book (two-player proof games): auto (the variant's book, "
                          "from `niwa book build` or the package), none, or a book file's "
                          "path; its move is played for the seat the book wins"),
    "proof": (float, 0.0, "share of the move's time budget (time= or the clock; none "
                          "under iters= alone) given first to a df-pn proof attempt "
                          "(two-player proof games; 0 = off): a proven win plays a proving "
                          "move, a proven loss the hardest-to-refute one, else MCTS "
                          "searches for the rest of the budget"),
    "proof_mb": (float, 256.0, "proof table in MB (one per process and size, shared with "
                               "`perfect`, kept across moves and games of the same variant)"),
}

ISMCTS_PARAMS = {k: v for k, v in MCTS_PARAMS.items() if k != "solver"}

ALPHABETA_PARAMS = {
    "depth": (int, 8, "plies (default 8, or as deep as time allows)"),
    "time": (float, 0.0, "seconds per move, e.g. time=1s"),
    "tt": (int, 20, "log2 of the transposition-table entries"),
    "dets": (int, 1, "determinizations when something is hidden"),
}

BEST_PARAMS = {
    "time": (float, 0.0, "seconds per move, e.g. time=0.05"),
    "iters": (int, 0, "iterations per move (MCTS-based best agents)"),
}

PERFECT_PARAMS = {
    "time": (float, 1.0, "seconds of proof search per move (its follow-up a tenth more)"),
    "cpu": MCTS_PARAMS["cpu"],
    "tt_mb": (float, 256.0, "proof table in MB, one per process and size, kept across "
                            "moves and games of the same variant"),
    "lean": (bool, True, "no proof in time: play the unfinished proof's most-proving "
                         "move (smallest proof number); lean=false asks the fallback"),
    "fallback": (str, "mcts", "the agent that moves where proofs cannot decide the game, "
                              "and when no proof is found in time with lean=false (one "
                              "parameter at most: fallback=mcts:iters=500)"),
    # on by default: with the tables built, perfect wins every game it should (README)
    "tables": (bool, True, TABLES_HELP),
    "book": (str, "auto", "opening book: auto (the variant's book from `niwa book "
                          "build` or the package), none, or a book file's path"),
}

CHOICES = {"playout": ("random", "heuristic", "greedy"), "sim": ("ucb", "rm", "exp3")}
# what each number means bounds it (low, high, low excluded?): a value outside could only
# hang a searcher (time=inf, nan), overflow its C types (iters=1e20) or mean nothing (c=-1)
RANGES = {
    "iters": (1, 10**9, False),         # ~an hour of MCTS at the fastest playouts
    "time": (0.0, 86_400.0, False),     # seconds per move; 0 = no time budget
    "c": (0.0, 100.0, False),
    "cutoff": (-1, 10**6, False),       # -1 = play out to the end
    "gamma": (0.0, 1.0, True),
    "eps": (0.0, 1.0, False),
    "minimax": (0.0, 1.0, False),
    "proof": (0.0, 0.9, False),         # share of the budget; MCTS keeps at least a tenth
    "proof_mb": (1.0, 65_536.0, False),
    "bias": (0.0, 100.0, False),
    "nodes": (2, 10**9, False),
    "depth": (1, 500, False),
    "tt": (10, 28, False),              # as `niwa solve --tt`: 2^28 entries of 24 bytes
    "dets": (1, 10_000, False),
}
INT64 = 2**63 - 1       # any other integer parameter of a registered agent fits a C long long


def game_mcts_defaults(state) -> dict:
    """The MCTS settings a game tunes for itself (its spec's mcts_defaults), e.g. a
    smaller exploration constant where playout results are close together; none for
    games outside the registry (the test toys)."""
    spec = state.spec
    return dict(spec.mcts_defaults) if spec is not None else {}


def mcts_settings(state, params: dict) -> dict:
    """Every MCTS setting for a search of `state`: the given values over the game's
    defaults over the generic defaults."""
    return {**MCTS_DEFAULTS, **game_mcts_defaults(state), **params}
