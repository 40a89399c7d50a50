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
import os

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
               out_dir: str | None = None, workers: int | None = None,
               executor: str = "local", resume: bool = False,
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
    executor: "local" (default), "dask://HOST:PORT" or "tls://HOST:PORT": where games run (--executor).
    """
    import tempfile

    from niwa.analysis.arena.executors import make_executor
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
    if out_dir:
        check_out_dir(config, out_dir, resume)
    ex = make_executor(executor, workers, spell=str)      # a bad spec or scheduler: before any folder
    out_dir = out_dir or tempfile.mkdtemp(prefix=f"niwa-tournament-{config.game}-")
    return run_tournament(config, out_dir, executor=ex, resume=resume,
                          progress=progress, command="niwa.tournament()")


def analyse(game: str | None, *, vary=(), agents=None, strengths=(), house=(),
            games: int | None = None, top_games: int | None = None,
            rate_games: int | None = None, rate_under: str | None = None,
            players: int | None = None, seed: int | None = None,
            openings: str | None = None, proof_time: float = 10.0, margin: float = 5.0,
            out_dir: str | None = None, workers: int | None = None, executor: str = "local",
            resume: bool = False, trust_engines: bool = False, progress: bool = False):
    """Analyse rule variants as `niwa analyse` does and return its AnalysisOutcome:
    `.summary` (metrics per variant, comparisons, trends and their verdicts) and `.files`
    written in `out_dir`. `vary` is a list of "KEY=V1,V2" texts, `agents` one spec
    (self-play) or a lineup (default: random self-play), `strengths` the command's sweeps
    ("mcts:iters=100,1000"); `games` (1000) and `seed` (1) as the command's options.

    house: "MODULE:CLASS" texts, house rules played beside the engine as rules=CLASS (--house).
    openings: FILE, "suite:NAME" or "random:plies=N": each round's opening, every variant (--openings).
    proof_time: seconds df-pn gets per two-player variant beside the strengths; 0 = none (--proof-time).
    margin: points of seat-0 win rate within which a verdict may say "equivalent", default 5 (--margin).
    executor: "local" (default), "dask://HOST:PORT" or "tls://HOST:PORT": where games run (--executor).

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

    from niwa.analysis.arena.executors import make_executor
    from niwa.analysis.experiments.variants import analyse as run_analysis
    from niwa.analysis.experiments.variants import setup_experiment

    lineup = [] if agents is None else [str(agents)] if isinstance(agents, str) \
        else [str(a) for a in agents]
    if isinstance(house, str):
        house = [house]
    made = []           # the temporary folder, if one is made: removed again if unused

    def temporary_folder(name):
        made.append(tempfile.mkdtemp(prefix=f"niwa-analysis-{name}-"))
        return made[-1]

    exp, plan, out_dir = setup_experiment(
        game, vary=vary, lineup=lineup, strengths=strengths, games=games, players=players,
        seed=seed, out_dir=out_dir, resume=resume, rate_games=rate_games,
        top_games=top_games, rate_under=rate_under, house=house, openings=openings,
        trust_engines=trust_engines, proof_time=proof_time, margin=margin,
        default_out=temporary_folder, spell=str)
    try:
        ex = make_executor(executor, workers, spell=str)
    except Exception:
        for folder in made:
            if not os.listdir(folder):
                os.rmdir(folder)
        raise
    return run_analysis(exp, out_dir, executor=ex, resume=resume, progress=progress,
                        command="niwa.analyse()", plan=plan, proof_time=proof_time,
                        margin=margin / 100)
