"""niwa: a game-AI toolkit for Lotus, Haru Ichiban and Bonsai, from Python.

The main objects, importable from here (each loaded on first use, so `import niwa` and
`import niwa.ext.lotus` stay light):

games      load_game(name) -> GameSpec, games(), parse_position(text) -> a State
agents     AgentSpec (the spec value), make_agent(spec, seed), describe_agents(),
           register_agent(name, factory, params, help), Agent (to write your own)
solving    solve(state, ...) -> SearchResult
play       tournament(game, agents, ...) -> TournamentOutcome (standings, pairs, ratings)
analysis   analyse(game, vary=..., ...) -> AnalysisOutcome (the variant findings)
errors     NiwaError (every one-line error niwa raises), AgentError

>>> import niwa
>>> lotus = niwa.load_game("lotus")
>>> state = lotus.new(seed=1)
>>> state.spec is lotus, state.hides_from(0)
(True, False)
>>> spec = niwa.AgentSpec.parse("mcts:iters=50,c=1.4")
>>> agent = niwa.make_agent(spec, seed=1)
>>> agent.step(state, state.current_player()) in state.legal_actions()
True
>>> niwa.solve(niwa.parse_position("lotus towers=1 lane=1 shared=3 trampoline_at=3"),
...            algo="proof").proven
True

A tournament or an experiment writes its folder as the CLI does (`out_dir`, a fresh
temporary folder when not given) and returns its tables:

>>> import tempfile
>>> out = niwa.tournament("lotus", ["random", "greedy"], games=2, variant={"towers": 1},
...                       out_dir=tempfile.mkdtemp(), workers=1)
>>> sorted(out.tables.standings["agent"])
['greedy', 'random']
"""

from __future__ import annotations

import importlib

__all__ = [
    "Agent", "AgentError", "AgentSpec", "GameSpec", "NiwaError", "analyse", "describe_agents",
    "games", "load_game", "make_agent", "parse_position", "register_agent", "solve",
    "tournament",
]

# name -> (module, attribute): imported when first asked for (PEP 562)
_LAZY = {
    "Agent": ("niwa.solver.agent_base", "Agent"),
    "AgentError": ("niwa.solver.agent_base", "AgentError"),
    "AgentSpec": ("niwa.solver.agent_spec", "AgentSpec"),
    "GameSpec": ("niwa.ext.spec", "GameSpec"),
    "NiwaError": ("niwa.ext.errors", "NiwaError"),
    "describe_agents": ("niwa.solver.agent_registry", "describe_agents"),
    "games": ("niwa.ext.registry", "games"),
    "load_game": ("niwa.ext.registry", "get_game"),
    "make_agent": ("niwa.solver.agent_spec", "make_agent"),
    "parse_position": ("niwa.ext.registry", "parse_position"),
    "register_agent": ("niwa.solver.agent_registry", "register_agent"),
    "solve": ("niwa.solver.solve", "solve_position"),
}


def __getattr__(name: str):
    if name in _LAZY:
        module, attribute = _LAZY[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value         # the next lookup does not come here
        return value
    raise AttributeError(f"module 'niwa' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


def tournament(game: str | None, agents=(), *, games: int | None = None,
               rounds: int | None = None, variant: dict | None = None,
               players: int | None = None, fmt: str | None = None, seed: int | None = None,
               max_plies: int | None = None, move_time: float | None = None,
               time_control: str | None = None, time_margin: float | None = None,
               sprt: str | None = None, openings: str | None = None,
               out_dir: str | None = None, workers: int | None = None, resume: bool = False,
               trust_engines: bool = False, progress: bool = False):
    """Play a tournament as `niwa tournament` does and return its TournamentOutcome:
    `.tables.standings` (a DataFrame: agent, Elo with its interval, score...),
    `.tables.pairs`, `.meta` (tournament.json) and `.out_dir`, where games.csv, the game
    records and the tables are written. `agents` are spec texts or AgentSpecs; the other
    options are the command's (`variant` as a dict, `time_control` as `--tc`). Bad options
    raise one-line NiwaErrors before any game is played.

    fmt: "round-robin" (default) or "gauntlet" (--format); seed: default 1 (--seed).
    time_margin: slack (s) over an agent's own time= budget before it forfeits, default 0.5 (--time-margin).
    openings: FILE, "suite:NAME" or "random:plies=N": each round's opening, seats swapped (--openings).
    resume: finish or grow out_dir's tournament; what is left at None is as saved (--resume).
    trust_engines: on resume, start saved engine agents (engine:cmd=...) not given again (--trust-engines).
    """
    import tempfile

    from niwa.analysis.arena.executors import LocalExecutor
    from niwa.analysis.arena.tournament import check_out_dir, resume_or_make_config, run_tournament

    options = {"games": games, "rounds": rounds, "players": players, "fmt": fmt,
               "seed": seed, "max_plies": max_plies, "move_time": move_time,
               "time_control": time_control, "time_margin": time_margin, "sprt": sprt,
               "openings": openings}
    given = {name for name, value in options.items() if value is not None}
    defaults = {"fmt": "round-robin", "seed": 1, "time_margin": 0.5}    # the command's
    options.update({k: v for k, v in defaults.items() if options[k] is None})
    config, _ = resume_or_make_config(game, [str(a) for a in agents], given=given,
                                      out_dir=out_dir, resume=resume,
                                      trust_engines=trust_engines, variant=variant,
                                      spell=str, **options)
    out_dir = out_dir or tempfile.mkdtemp(prefix=f"niwa-tournament-{config.game}-")
    check_out_dir(config, out_dir, resume)
    return run_tournament(config, out_dir, executor=LocalExecutor(workers), resume=resume,
                          progress=progress, command="niwa.tournament()")


def analyse(game: str | None, *, vary=(), agents=None, strengths=(),
            games: int | None = None, top_games: int | None = None,
            rate_games: int | None = None, rate_under: str | None = None,
            players: int | None = None, seed: int | None = None, out_dir: str | None = None,
            workers: int | None = None, resume: bool = False, trust_engines: bool = False,
            progress: bool = False):
    """Analyse rule variants as `niwa analyse` does and return its AnalysisOutcome:
    `.summary` (metrics per variant, comparisons, trends and their verdicts) and `.files`
    written in `out_dir`. `vary` is a list of "KEY=V1,V2" texts, `agents` one spec
    (self-play) or a lineup (default: random self-play), `strengths` the command's sweeps
    ("mcts:iters=100,1000"); `games` (1000) and `seed` (1) as the command's options.

    With `strengths`, rating games between neighbouring rungs measure their Elo:
    `rate_games` per pair (default max(20, games // 2)) under `rate_under` "each"
    two-player variant (the default: every variant its own Elo per rung) or the "first"
    only (cheaper; its Elo then stands for every variant).

    `resume` continues the experiment in `out_dir` (`game` may be None): what is not given
    again is the saved setting. An agent the saved record names that starts a program
    (engine:cmd=...), or a saved house rule, is refused in one line unless it is given
    again or `trust_engines` is true (the command's --trust-engines: only for a folder
    you trust).

    >>> import tempfile, niwa
    >>> out = niwa.analyse("lotus", vary=["towers=1,2"], strengths=["mcts:iters=4,8"],
    ...                    games=2, rate_games=2, rate_under="first",
    ...                    out_dir=tempfile.mkdtemp(), workers=1)
    >>> out.summary.ratings["under"], [v for _, v, _, _ in out.summary.ratings["pairs"]]
    ('first', ['towers=1'])
    """
    import tempfile

    from niwa.analysis.arena.executors import LocalExecutor
    from niwa.analysis.experiments.variants import (
        RATE_UNDER,
        AnalysisError,
        check_out_dir,
        experiment_from_options,
        plan_cells,
    )
    from niwa.analysis.experiments.variants import (
        analyse as run_analysis,
    )

    if rate_under is not None and rate_under not in RATE_UNDER:
        raise AnalysisError(f"rate_under must be one of {', '.join(RATE_UNDER)}, "
                            f"got {rate_under!r}")
    for name, value in (("rate_games", rate_games), ("rate_under", rate_under),
                        ("top_games", top_games)):
        if value is not None and not strengths and not resume:
            raise AnalysisError(f"{name} applies to the rungs of strengths; give strengths "
                                f"too")
    if resume and not out_dir:
        raise AnalysisError("resume needs out_dir (the folder of the experiment)")
    given = {name for name, value in (("players", players), ("games", games),
                                      ("seed", seed)) if value is not None}
    games = 1000 if games is None else games
    if rate_games is None and strengths:
        rate_games = max(20, games // 2)
    lineup = [] if agents is None else [str(agents)] if isinstance(agents, str) \
        else [str(a) for a in agents]
    exp = experiment_from_options(
        game, vary=list(vary), lineup=lineup, strengths=list(strengths), games=games,
        players=players, seed=1 if seed is None else seed, given=given, out_dir=out_dir,
        resume=resume, rate_games=rate_games, top_games=top_games, rate_under=rate_under,
        trust_engines=trust_engines)
    plan = plan_cells(exp)
    out_dir = out_dir or tempfile.mkdtemp(prefix=f"niwa-analysis-{exp.game}-")
    check_out_dir(exp, out_dir, resume)
    return run_analysis(exp, out_dir, executor=LocalExecutor(workers), resume=resume,
                        progress=progress, command="niwa.analyse()", plan=plan)
