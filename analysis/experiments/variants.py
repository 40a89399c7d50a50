"""Rule-variant experiments: play every combination of varied settings, measure, compare.

An *experiment* is a game, settings to vary (`rule=basic,pro`), the players (self-play with
one agent spec, a lineup of specs, or a sweep of strengths) and a number of games. It is cut
into *cells*, one per combination of varied settings (and per strength): each cell is an
ordinary tournament configuration (arena.schedule), and the experiment is the cells'
schedules one after the other, fed to the same run engine as a tournament (arena.runner),
so it is parallel, resumable and reproducible in the same way. All cells share one
log, games.csv: game_id = cell * 1,000,000 + the game's index in its cell's schedule, and a
`cell` column names the cell. Because a cell's schedule only grows at its end when more
games are asked for, `--resume --games N` can also extend a finished experiment.

Each cell has its own seed, derived from the experiment seed and the cell's label: cells are
independent samples, which is what the two-sample tests of experiments.findings assume.

Per-cell metrics are in experiments.metrics, the comparisons between cells and the
verdicts in experiments.findings.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
from dataclasses import dataclass, field

import pandas as pd

from niwa.analysis.arena.executors import LocalExecutor
from niwa.analysis.arena.games_csv import csv_columns, holds_games
from niwa.analysis.arena.games_jsonl import RecordedGameLog
from niwa.analysis.arena.openings import load_suite, parse_openings
from niwa.analysis.arena.run_record import (
    end_run,
    option_flag,
    read_record,
    refuse_untrusted_programs,
    require_folder_and_game,
    start_run,
    write_record,
)
from niwa.analysis.arena.runner import RunResult, run_schedule
from niwa.analysis.arena.schedule import (
    MAX_SEED,
    Schedule,
    TournamentConfig,
    derive_seed,
    identity_digest,
    tables_for,
)
from niwa.analysis.arena.tournament import make_config
from niwa.analysis.experiments import plots, report
from niwa.analysis.experiments.findings import Summary, summarise
from niwa.analysis.experiments.strength import ladder, proven_values, rate_rungs, rating_pairs
from niwa.analysis.stats.verdicts import DEFAULT_MARGIN
from niwa.ext.errors import NiwaError
from niwa.ext.registry import get_game
from niwa.solver.agent_spec import AgentSpec, check_for_game, make_agent
from niwa.solver.protocol import check_engines

STRIDE = 1_000_000          # game ids per cell in the shared games.csv
# where the rating games of a strength sweep are played: under each (two-player) variant,
# so that every variant has its own Elo per rung, or under the first variant only
# (cheaper by a factor of the number of variants; the rungs' Elo then stands for them in
# every variant, which holds only if the rule change does not change who is stronger)
RATE_UNDER = ("each", "first")
GAMES_CSV, META_JSON = "games.csv", "analysis.json"
VARIANTS_CSV, COMPARISONS_CSV, TRENDS_CSV = "variants.csv", "comparisons.csv", "strengths.csv"
LADDER_CSV, PROVEN_JSON = "strength_ladder.csv", "proven.json"


# the type of each field of a saved experiment (analysis.json), and its name for a message
_RECORD_TYPES = {
    "game": (str, "a text"), "vary": (list, "a list"), "players": ((int, type(None)),
                                                                  "a whole number or null"),
    "agents": (list, "a list"), "strengths": (list, "a list"), "games": (int, "a whole number"),
    "top_games": (int, "a whole number"), "rate_games": (int, "a whole number"),
    "rate_under": (str, "a text"), "seed": (int, "a whole number"),
    "max_plies": ((int, type(None)), "a whole number or null"), "house": (list, "a list"),
    "openings": ((dict, type(None)), "an object or null")}


class AnalysisError(NiwaError):
    """An experiment that cannot be set up, resumed or analysed (one-line message)."""


# ---- the experiment --------------------------------------------------------------------
@dataclass
class Experiment:
    """Everything that fixes the games (the resume identity), plus the number of games."""

    game: str
    vary: list = field(default_factory=list)        # [[key, [value, ...]], ...] as given
    players: int | None = None                      # --players (a fixed setting)
    agents: list = field(default_factory=lambda: ["random"])  # one spec = self-play
    strengths: list = field(default_factory=list)   # self-play specs to sweep
    games: int = 1000                               # per cell
    top_games: int = 0      # per cell at the strongest rung of a sweep (0: games)
    rate_games: int = 0     # games between neighbouring strengths, to measure their Elo
    rate_under: str = "each"    # the variants the rating games are played under (RATE_UNDER)
    seed: int = 1
    max_plies: int | None = None
    house: list = field(default_factory=list)       # --house MODULE:CLASS (experiments.house)
    openings: dict | None = None    # an opening suite (arena.openings) for every cell

    @classmethod
    def from_record(cls, d: dict) -> Experiment:
        """The experiment of an analysis.json; a record written before rating games were
        played under every variant rated the rungs under the first variant only. A field
        of the wrong type (a record damaged or edited by hand) raises TypeError naming it.

        >>> Experiment.from_record({"game": "lotus", "games": None})
        Traceback (most recent call last):
        ...
        TypeError: experiment field 'games' is None, not a whole number
        """
        for key, value in d.items():
            kinds = _RECORD_TYPES.get(key)
            if kinds is not None and (not isinstance(value, kinds[0])
                                      or isinstance(value, bool)):
                shown = value if isinstance(value, int | float | None) else str(value)[:40]
                raise TypeError(f"experiment field {key!r} is {shown!r}, not {kinds[1]}")
        return cls(**{"rate_under": "first", **d})

    def identity(self) -> dict:
        """What must match on --resume (the numbers of games may change: they only extend;
        top_games is left out too, and rate_under, which only adds rating cells after the
        others (check_out_dir refuses going back to "first"), and house and openings when
        unused, so records written before they existed still match)."""
        d = dataclasses.asdict(self)
        d.pop("games")
        d.pop("top_games")
        d.pop("rate_under")
        for unused in ("house", "openings"):
            if not d[unused]:
                d.pop(unused)
        return d

    @property
    def compared(self) -> list:
        """--vary, plus the pseudo-setting `rules` (engine, then each house class) when
        house rules are in the run: what the cells and the comparisons range over."""
        from niwa.analysis.experiments.house import ENGINE, RULES_KEY

        if not self.house:
            return self.vary
        return [*self.vary, [RULES_KEY, [ENGINE, *(h.rpartition(":")[2] for h in self.house)]]]

    def games_for(self, strength: str | None) -> int:
        """Games per variant at this strength: top_games at the strongest rung, if set."""
        if self.top_games and self.strengths and strength == self.strengths[-1]:
            return self.top_games
        return self.games


@dataclass
class Cell:
    index: int
    settings: dict          # the varied settings, as given
    variant: dict           # the full variant the games are played with
    players: int
    strength: str | None    # the self-play spec of a strength sweep
    config: TournamentConfig
    games: int              # scheduled (--games rounded up to whole rounds)
    rating: bool = False    # games between two strengths, for their Elo (not a variant)

    @property
    def variant_label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.settings.items()) or "default"

    @property
    def label(self) -> str:
        if self.rating:
            return f"rating: {' vs '.join(self.config.agents)} under {self.variant_label}"
        return self.variant_label + (f" ({self.strength})" if self.strength else "")


def parse_vary(items, game: str, spell=option_flag) -> list:
    """['rule=basic,pro'] -> [['rule', ['basic', 'pro']]], keys checked against the game."""
    info = get_game(game)
    out, seen = [], set()
    for item in items:
        key, eq, values = item.partition("=")
        key = key.strip().replace("-", "_")
        vals = [v.strip() for v in values.split(",") if v.strip()]
        if not eq or not key or not vals:
            raise AnalysisError(f"{spell('vary')} {item!r} should be KEY=V1,V2,... "
                                f"(e.g. rule=basic,pro)")
        if key not in info.variants:
            raise AnalysisError(f"{spell('vary')} {key}: {info.name} has no setting {key!r}; settings: "
                                f"{', '.join(info.variants)}")
        if key in seen:
            raise AnalysisError(f"{spell('vary')} {key} is given twice; list all its values "
                                f"once")
        if len(set(vals)) != len(vals):
            raise AnalysisError(f"{spell('vary')} {item!r} repeats a value")
        seen.add(key)
        out.append([key, vals])
    return out


def parse_strengths(items, spell=option_flag) -> list[str]:
    """['mcts:iters=100,1000'] -> ['mcts:iters=100', 'mcts:iters=1000'].

    In `NAME:KEY=V1,V2,...,OTHER=X` (a sweep, not itself an agent spec), a bare value
    continues the list of the key before it; at most one key may list several values.
    Several --strengths are concatenated. Each spec of the sweep is checked as an AgentSpec.
    """
    specs, seen = [], set()
    for item in items:
        name, colon, rest = item.strip().partition(":")
        params: list[list] = []
        for tok in filter(None, (t.strip() for t in rest.split(","))):
            if "=" in tok:
                k, _, v = tok.partition("=")
                params.append([k.strip(), [v.strip()]])
            elif params:
                params[-1][1].append(tok)
            else:
                raise AnalysisError(f"{spell('strengths')} {item!r} should be NAME:KEY=V1,V2,... "
                                    "(e.g. mcts:iters=100,1000,10000)")
        swept = [p for p in params if len(p[1]) > 1]
        if len(swept) > 1:
            raise AnalysisError(f"{spell('strengths')} {item!r} lists several values for more "
                                "than one parameter; sweep one parameter at a time")
        combos = swept[0][1] if swept else [None]
        for value in combos:
            parts = [f"{k}={value if len(vs) > 1 else vs[0]}" for k, vs in params]
            spec = name.strip() + (":" + ",".join(parts) if colon and parts else "")
            parsed = AgentSpec.parse(spec)      # unknown agent or bad parameter: AgentError
            if parsed in seen:
                raise AnalysisError(f"{spell('strengths')} lists {spec!r} twice")
            seen.add(parsed)
            specs.append(spec)
    return specs


def plan_cells(exp: Experiment, spell=option_flag) -> tuple[list[Cell], list[str]]:
    """The cells of an experiment (strength-major, then settings in --vary order) and notes
    for the user. Raises a one-line NiwaError on any bad setting, agent or count, naming
    the option as `spell` spells it (the command's flag by default)."""
    info = get_game(exp.game)
    if not 1 <= exp.games <= STRIDE:
        raise AnalysisError(f"{spell('games')} must be at least 1 and at most {STRIDE}, "
                            f"got {exp.games}")
    if not 0 <= exp.top_games <= STRIDE:
        raise AnalysisError(f"{spell('top_games')} must be at least 1 and at most {STRIDE}, "
                            f"got {exp.top_games}")   # (0 in the record: as --games)
    if exp.top_games and len(exp.strengths) < 2:
        raise AnalysisError(f"{spell('top_games')} sets the games at the strongest of several "
                            f"{spell('strengths')}; give a ladder of at least two")
    if not 0 <= exp.seed <= MAX_SEED:
        raise AnalysisError(f"{spell('seed')} must be at least 0 and at most {MAX_SEED}, "
                            f"got {exp.seed}")
    if exp.max_plies is not None and exp.max_plies < 1:
        raise AnalysisError(f"max_plies must be at least 1, got {exp.max_plies}")
    if exp.players is not None and any(k == "players" for k, _ in exp.vary):
        raise AnalysisError(f"give {spell('players')} or {spell('vary')} players=..., not both")
    if exp.strengths and len(exp.agents) > 1:
        raise AnalysisError(f"{spell('strengths')} sweeps self-play; it cannot be combined "
                            f"with {spell('agents')}")
    from niwa.analysis.experiments import house

    games_of = {house.ENGINE: info}
    for text in exp.house:
        name, cls_name = house.register_house(info.name, text)
        if cls_name in games_of:
            raise AnalysisError(f"{spell('house')} names the class {cls_name} twice")
        games_of[cls_name] = get_game(name)
    keys = [k for k, _ in exp.compared]
    combos = list(itertools.product(*[vals for _, vals in exp.compared])) or [()]
    lineups = [(s, None) for s in exp.strengths] or [(None, exp.agents)]
    cells, notes, rounded = [], [], set()
    for strength, lineup in lineups:
        for combo in combos:
            settings = dict(zip(keys, combo, strict=True))
            variant = {k: v for k, v in settings.items() if k != house.RULES_KEY}
            plays = games_of[settings.get(house.RULES_KEY, house.ENGINE)]
            if exp.players is not None and "players" in info.variants:
                variant["players"] = exp.players
            state = plays.new(seed=0, **variant)          # VariantError on a bad value
            n = state.num_players
            if exp.players is not None and n != exp.players:
                raise AnalysisError(f"{info.name} is a {n}-player game; {spell('players')} "
                                    f"must be {n}")
            specs = [strength] * n if strength else (list(lineup) * n if len(lineup) == 1
                                                     else list(lineup))
            index = len(cells)
            label = " ".join(f"{k}={v}" for k, v in settings.items()) + "|" + " ".join(specs)
            seed = derive_seed(exp.seed, "cell", label)
            wanted = exp.games_for(strength)
            if n >= 2:
                per_round = len(tables_for(len(specs), n, "round-robin")) * math.factorial(n)
                rounds = math.ceil(wanted / per_round)
                config, _ = make_config(plays.name, specs, variant=variant, rounds=rounds,
                                        seed=seed, max_plies=exp.max_plies,
                                        openings=exp.openings, spell=spell)
            else:       # solo: the tournament runner plays it, its schedule is ours
                if len(specs) != 1:
                    raise AnalysisError(f"a solo game takes one agent ({spell('agent')} SPEC)")
                make_agent(specs[0], seed=0)
                check_for_game(specs[0], state)
                names = check_engines(specs, plays.name)    # as make_config does
                per_round, rounds = 1, wanted
                config = TournamentConfig(game=plays.name, agents=specs, players=1,
                                          variant=dict(state.variant), rounds=rounds,
                                          seed=seed, max_plies=exp.max_plies,
                                          openings=load_suite(exp.openings, info.name,
                                                              dict(state.variant))
                                          if exp.openings else None, names=names or None)
            if rounds * per_round != wanted:
                rounded.add((wanted, per_round, rounds * per_round))
            if rounds * per_round > STRIDE:
                raise AnalysisError(f"at most {STRIDE} games per variant, not {rounds * per_round}")
            cells.append(Cell(index, settings, dict(state.variant), n, strength, config,
                              rounds * per_round))
    for wanted, per_round, total in sorted(rounded):
        option = spell("top_games" if exp.top_games and wanted == exp.top_games else "games")
        notes.append(f"{option} {wanted} rounded up to {total} per variant so that every "
                     f"seat order is played equally often (rounds of {per_round} games)")
    return cells + rating_cells(exp, cells, notes, spell), notes


def rating_cells(exp: Experiment, cells: list[Cell], notes: list[str],
                 spell=option_flag) -> list[Cell]:
    """The rating matches of a strength sweep (experiments.strength): each strength
    against the next, seats swapped, under each two-player variant (`rate_under` "each")
    or the first variant only ("first"); after every analysis cell, first variant first.

    The first variant's matches keep the seeds (and cell numbers) they had when only it
    was rated, so a run rated under the first variant grows into one rated under each."""
    if not exp.rate_games or len(exp.strengths) < 2:
        return []
    if exp.rate_games < 0 or exp.rate_games > STRIDE:
        raise AnalysisError(f"{spell('rate_games')} must be at least 0 and at most {STRIDE}, "
                            f"got {exp.rate_games}")
    if exp.rate_under not in RATE_UNDER:
        raise AnalysisError(f"{spell('rate_under')} must be one of {', '.join(RATE_UNDER)}, "
                            f"got {exp.rate_under!r}")
    # one cell per variant: the weakest rung's, which carries the game and the variant
    by_variant: dict[str, Cell] = {}
    for c in cells:
        by_variant.setdefault(c.variant_label, c)
    bases = list(by_variant.values())
    if exp.rate_under == "first":
        bases = bases[:1]
    rated = [b for b in bases if b.players == 2]
    if len(rated) < len(bases):
        skipped = ", ".join(b.variant_label for b in bases if b.players != 2)
        notes.append(f"Elo of the strengths not measured under {skipped}: rating games are "
                     "two-player only; the strengths are placed in the order given"
                     + (" there" if rated else ""))
    out = []
    rounds = math.ceil(exp.rate_games / 2)
    for base in rated:
        for a, b in rating_pairs(exp.strengths):
            seed = derive_seed(exp.seed, "rate", f"{a}|{b}" if base is bases[0]
                               else f"{base.variant_label}|{a}|{b}")
            config, _ = make_config(base.config.game, [a, b], variant=base.variant,
                                    rounds=rounds, seed=seed, max_plies=exp.max_plies,
                                    openings=exp.openings)
            out.append(Cell(len(cells) + len(out), base.settings, base.variant, 2, None,
                            config, 2 * rounds, rating=True))
    return out


def cell_schedule(cell: Cell) -> Schedule:
    """The cell's games with their experiment-wide ids (cell * STRIDE + index in the cell)."""
    return Schedule(cell.config, first_id=cell.index * STRIDE, extra=(("cell", cell.index),))


class ExperimentSchedule:
    """Every cell's schedule, one after the other (lazily, like each cell's)."""

    def __init__(self, cells: list[Cell]):
        self.cells = cells
        self.parts = [cell_schedule(c) for c in cells]

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def __iter__(self):
        return itertools.chain.from_iterable(self.parts)

    def includes(self, game_id: int) -> bool:
        cell = game_id // STRIDE
        return 0 <= cell < len(self.parts) and self.parts[cell].includes(game_id)

    def id_ranges(self) -> list[tuple[int, int]]:
        return [r for part in self.parts for r in part.id_ranges()]

    def task_for(self, game_id: int):
        return self.parts[game_id // STRIDE].task_for(game_id)

    def check_row(self, game_id: int, row: dict) -> str | None:
        """What in a row contradicts the experiment: its cell, its variant, and everything
        the cell's schedule fixes when the cell still schedules that game (a cell's games
        beyond --games stay in the log)."""
        cell = game_id // STRIDE
        if not 0 <= cell < len(self.cells):
            return f"belongs to no cell of this experiment (cells 0-{len(self.cells) - 1})"
        if row.get("variant") != _variant_text(self.cells[cell]):
            return (f"variant is {row.get('variant')!r}, cell {cell} plays "
                    f"{_variant_text(self.cells[cell])!r}")
        part = self.parts[cell]
        return part.check_row(game_id, row) if part.includes(game_id) else None


# ---- running ---------------------------------------------------------------------------
def load_saved(out_dir: str) -> dict | None:
    """The record in out_dir (None if there is none); a record edited by hand (its seed,
    say) no longer matches its identity digest and is refused."""
    path = os.path.join(out_dir, META_JSON)

    def checked(meta):
        exp = Experiment.from_record(meta["experiment"])
        digest = meta.get("identity_digest")
        if digest is not None and digest != identity_digest(exp.identity()):
            raise AnalysisError(
                f"{path}: the experiment was edited (it no longer matches its "
                "identity_digest); restore it, or start a new experiment in another --out")
        return meta

    return read_record(path, checked, AnalysisError, "analysis")


def saved_experiment(out_dir: str) -> Experiment | None:
    meta = load_saved(out_dir)
    return Experiment.from_record(meta["experiment"]) if meta else None


def experiment_from_options(game: str | None, *, vary, lineup: list[str], strengths,
                            games: int, players: int | None, seed: int, given: set[str],
                            out_dir: str | None, resume: bool,
                            rate_games: int | None = None,
                            top_games: int | None = None, house=(),
                            openings: str | None = None,
                            rate_under: str | None = None,
                            trust_engines: bool = False, spell=option_flag) -> Experiment:
    """The experiment of the command-line options; with `resume`, the one saved in out_dir
    with the options given again (`given` names the typed ones) replacing its settings.
    Saved agents that start a program (engine:cmd=...) and saved house rules are refused
    unless `trust_engines` (run_record.refuse_untrusted_programs)."""
    saved = None
    if resume:
        saved = saved_experiment(out_dir)
        if saved is None and not game:
            raise AnalysisError(f"nothing to resume in {out_dir}: no analysis.json there")
    if saved is not None:
        refuse_untrusted_programs(
            os.path.join(out_dir, META_JSON),
            [*(saved.agents if not lineup else ()), *(saved.strengths if not strengths else ())],
            saved.house if not house else (),
            again="--agent/--agents/--strengths, as saved", error=AnalysisError,
            trust=trust_engines)
    game = game or saved.game
    return Experiment(
        game=game,
        vary=parse_vary(vary, game, spell) if vary or not saved else saved.vary,
        players=players if "players" in given or not saved else saved.players,
        agents=lineup or (saved.agents if saved else ["random"]),
        strengths=(parse_strengths(strengths, spell) if strengths or not saved
                   else saved.strengths),
        games=games if "games" in given or not saved else saved.games,
        top_games=(top_games if top_games is not None or not saved else saved.top_games) or 0,
        seed=seed if "seed" in given or not saved else saved.seed,
        max_plies=saved.max_plies if saved else None,
        openings=(load_suite(parse_openings(openings), None, {}) if openings
                  else saved.openings if saved else None),
        rate_games=(rate_games if rate_games is not None or not saved else saved.rate_games) or 0,
        rate_under=rate_under or (saved.rate_under if saved else "each"),
        house=list(house) if house or not saved else saved.house)


MAX_PROOF_TIME = 3600.0                 # seconds (--proof-time)
MARGIN_POINTS = (0.1, 50.0)             # the range of --margin, in points


def setup_experiment(game: str | None, *, vary=(), lineup=(), strengths=(),
                     games: int | None = None, players: int | None = None,
                     seed: int | None = None, out_dir: str | None = None,
                     resume: bool = False, rate_games: int | None = None,
                     top_games: int | None = None, rate_under: str | None = None,
                     house=(), openings: str | None = None, trust_engines: bool = False,
                     proof_time: float = 10.0, margin: float = 100 * DEFAULT_MARGIN,
                     default_out=None, spell=option_flag
                     ) -> tuple[Experiment, tuple[list[Cell], list[str]], str]:
    """Everything `niwa analyse` and niwa.analyse() do before the first game: check the
    options, build the experiment (experiment_from_options; `games`, `players` and `seed`
    left at None are not given: the defaults, or the saved ones on resume), plan its
    cells and check the output folder (`default_out(game)` when out_dir is None). Each
    problem is one AnalysisError, naming the options as `spell` spells them (the command's
    flags by default). `margin` is in points, as --margin. Returns (exp, plan, out_dir)."""
    require_folder_and_game(resume, out_dir, game, what="the experiment",
                            example="niwa analyse lotus --vary rule=basic,pro",
                            error=AnalysisError, spell=spell)
    if rate_under is not None and rate_under not in RATE_UNDER:
        raise AnalysisError(f"{spell('rate_under')} must be one of {', '.join(RATE_UNDER)}, "
                            f"got {rate_under!r}")
    if not strengths and not resume:
        for name, value, what in (
                ("rate_games", rate_games, "it measures their Elo"),
                ("rate_under", rate_under, "it says where their rating games are played"),
                ("top_games", top_games, "it sets the games at the strongest")):
            if value is not None:
                raise AnalysisError(f"{spell(name)} applies to the rungs of "
                                    f"{spell('strengths')} ({what}); give "
                                    f"{spell('strengths')} too")
    if not 0 <= proof_time <= MAX_PROOF_TIME:        # also refuses nan
        raise AnalysisError(f"{spell('proof_time')} must be between 0 and "
                            f"{MAX_PROOF_TIME:g} seconds, got {proof_time}")
    low, high = MARGIN_POINTS
    if not low <= margin <= high:
        raise AnalysisError(f"{spell('margin')} must be between {low:g} and {high:g} points, "
                            f"got {margin}")
    given = {name for name, value in (("players", players), ("games", games),
                                      ("seed", seed)) if value is not None}
    games = 1000 if games is None else games
    if rate_games is None and strengths:
        rate_games = max(20, games // 2)
    exp = experiment_from_options(
        game, vary=list(vary), lineup=list(lineup), strengths=list(strengths), games=games,
        players=players, seed=1 if seed is None else seed, given=given, out_dir=out_dir,
        resume=resume, rate_games=rate_games, top_games=top_games, house=list(house),
        openings=openings, rate_under=rate_under, trust_engines=trust_engines, spell=spell)
    plan = plan_cells(exp, spell)   # every bad setting or agent fails here, in one line
    out_dir = out_dir or default_out(exp.game)
    check_out_dir(exp, out_dir, resume)
    return exp, plan, out_dir


def check_out_dir(exp: Experiment, out_dir: str, resume: bool) -> dict | None:
    meta = load_saved(out_dir)
    games_path = os.path.join(out_dir, GAMES_CSV)
    if resume:
        # --resume into a folder without a record (a run killed before it wrote anything)
        # starts the experiment: the same command can be repeated until it ends
        if meta is None:
            if holds_games(games_path):
                raise AnalysisError(f"{games_path} holds games but "
                                    f"{os.path.join(out_dir, META_JSON)} does not exist: "
                                    "cannot tell which experiment it is")
            return None
        saved = Experiment.from_record(meta["experiment"])
        if saved.rate_under == "each" and exp.rate_under == "first" and saved.rate_games:
            raise AnalysisError(f"{out_dir} rates the strengths under each variant; it cannot "
                                "go back to --rate-under first (resume without it, or "
                                "choose another --out)")
        old, new = saved.identity(), exp.identity()
        for k in old:
            if old[k] != new[k]:
                raise AnalysisError(f"{out_dir} holds a different experiment: {k} is {old[k]!r} "
                                    f"there, {new[k]!r} here (resume with the same options, "
                                    "or choose another --out)")
    elif meta is not None or holds_games(games_path):
        raise AnalysisError(f"{out_dir} already holds an experiment; pass --resume to continue "
                            "it, or choose another --out")
    return meta


def game_columns(cells: list[Cell]) -> list[str]:
    return csv_columns(max(c.players for c in cells)) + ["cell"]


def run_experiment(exp: Experiment, cells: list[Cell], out_dir: str, executor=None,
                   resume: bool = False, progress: bool | None = None,
                   command: str = "", on_bad_rows: str = "stop") -> RunResult:
    """Play every cell's missing games into out_dir/games.csv (the arena's runner, log and
    executors; one pool for all cells, so no cell waits for another's stragglers).

    The record (analysis.json) is written before the first byte of games.csv, so a kill
    at any moment leaves a folder that --resume finishes. KeyboardInterrupt propagates
    after the log is closed: every finished game is kept.
    """
    executor = executor or LocalExecutor()
    meta = check_out_dir(exp, out_dir, resume) or {}
    os.makedirs(out_dir, exist_ok=True)
    schedule = ExperimentSchedule(cells)
    games_path = os.path.join(out_dir, GAMES_CSV)

    def open_log():
        return RecordedGameLog(games_path, game_columns(cells), schedule.check_row,
                               on_bad_rows)

    log = open_log() if os.path.exists(games_path) else None
    meta.update({"experiment": dataclasses.asdict(exp),
                 "identity_digest": identity_digest(exp.identity()),
                 "command": meta.get("command", command),
                 "cells": [{"cell": c.index, "label": c.label, "games": c.games,
                            "config": c.config.identity()} for c in cells],
                 "status": "running"})
    run = start_run(meta, command, executor, len(log.done) if log else 0)
    if log is not None and log.dropped:
        run["dropped_rows"] = log.dropped[:20]
    write_record(os.path.join(out_dir, META_JSON), meta)
    log = log or open_log()
    result = run_schedule(schedule, log, executor, desc=exp.game, progress=progress)
    end_run(run, result.played_now)
    if result.notes:
        run["record_notes"] = result.notes
    meta["status"] = "finished" if result.recorded == len(schedule) else "interrupted"
    write_record(os.path.join(out_dir, META_JSON), meta)
    if result.interrupted:
        raise KeyboardInterrupt
    return result



def _variant_text(cell: Cell) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(cell.config.variant.items()))


def read_games(out_dir: str, cells: list[Cell]) -> pd.DataFrame:
    """The scheduled games of games.csv (text columns; `cell` and `game_id` as ints)."""
    df = pd.read_csv(os.path.join(out_dir, GAMES_CSV), dtype=str, keep_default_na=False)
    df["game_id"] = df["game_id"].astype(int)
    df["cell"] = df["cell"].astype(int)
    wanted = (df["cell"] < len(cells)) & (
        df["game_id"] % STRIDE < df["cell"].map(lambda i: cells[i].games if i < len(cells) else 0))
    return df[wanted].sort_values("game_id").reset_index(drop=True)


# ---- the whole analysis ----------------------------------------------------------------
def write_tables(summary: Summary, out_dir: str) -> list[str]:
    written = []
    pd.DataFrame(summary.metrics).to_csv(os.path.join(out_dir, VARIANTS_CSV), index=False)
    written.append(VARIANTS_CSV)
    if summary.comparisons:
        pd.DataFrame(summary.comparisons).to_csv(os.path.join(out_dir, COMPARISONS_CSV),
                                                 index=False)
        written.append(COMPARISONS_CSV)
    if summary.trends:
        pd.DataFrame(summary.trends).to_csv(os.path.join(out_dir, TRENDS_CSV), index=False)
        written.append(TRENDS_CSV)
    if summary.ladder:
        pd.DataFrame(summary.ladder).to_csv(os.path.join(out_dir, LADDER_CSV), index=False)
        written.append(LADDER_CSV)
    return written


def add_ladder(summary: Summary, rating_games: pd.DataFrame, out_dir: str,
               proof_time: float, rating_cells: list[Cell] = ()) -> None:
    """The strength ladder (experiments.strength): Elo from the rating games, convergence,
    and the proven value of each variant (searched for `proof_time` s once, then cached in
    out_dir; 0 = not searched)."""
    exp = summary.experiment
    path = os.path.join(out_dir, PROVEN_JSON)
    try:
        with open(path, encoding="utf-8") as f:
            proven = json.load(f)
    except (OSError, ValueError):
        proven = proven_values(exp.game, summary.cells, proof_time) if proof_time \
            else {}
        if proof_time:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(proven, f, indent=1)
    ratings = rungs_elo(exp, summary.cells, rating_games, rating_cells)
    summary.ladder, judged = ladder(summary.metrics, summary.cells, ratings, proven,
                                    summary.margin)
    summary.ladder_verdicts = [text for _, text in judged]
    summary.claims += judged
    summary.ratings = rating_provenance(
        exp, rating_cells, proof_time,
        lambda c: int((rating_games["cell"] == c.index).sum()) if len(rating_games) else 0)
    summary.ratings["proof_cached"] = proof_time and os.path.exists(path)


def rungs_elo(exp: Experiment, cells: list[Cell], rating_games: pd.DataFrame,
              rating_cells: list[Cell]) -> dict:
    """Each variant's Elo per rung (variant label -> strength.rate_rungs table or None):
    from the rating games played under that variant, or, when they were played under the
    first variant only, that variant's table for every variant."""
    under: dict[str, list[int]] = {}
    for c in rating_cells:
        under.setdefault(c.variant_label, []).append(c.index)
    tables = {label: rate_rungs(exp.strengths,
                                rating_games[rating_games["cell"].isin(idx)]
                                if len(rating_games) else rating_games)
              for label, idx in under.items()}
    labels = list(dict.fromkeys(c.variant_label for c in cells))
    if exp.rate_under == "first" and tables:
        only = next(iter(tables.values()))
        return dict.fromkeys(labels, only)
    return {label: tables.get(label) for label in labels}


def rating_provenance(exp: Experiment, rating_cells: list[Cell], proof_time: float,
                      recorded) -> dict:
    """How the rungs were rated, for the report: the rating games recorded
    (`recorded(cell)`), the variants they were played under, whether the first variant's
    stand for every variant, and the matches (agents, variant, scheduled, recorded)."""
    return {"games": sum(recorded(c) for c in rating_cells), "proof_time": proof_time,
            "under": exp.rate_under,
            "variants": list(dict.fromkeys(c.variant_label for c in rating_cells)),
            "pairs": [(" vs ".join(c.config.agents), c.variant_label, c.games, recorded(c))
                      for c in rating_cells]}


@dataclass
class AnalysisOutcome:
    summary: Summary | None
    run: RunResult
    files: list[str]


def analyse(exp: Experiment, out_dir: str, executor=None, resume: bool = False,
            progress: bool | None = None, command: str = "",
            plan: tuple[list[Cell], list[str]] | None = None,
            on_bad_rows: str = "stop", proof_time: float = 10.0,
            margin: float = DEFAULT_MARGIN) -> AnalysisOutcome:
    """Plan (unless `plan` is given), play or finish, measure, plot and report an
    experiment into out_dir."""
    all_cells, notes = plan or plan_cells(exp)
    run = run_experiment(exp, all_cells, out_dir, executor, resume, progress, command,
                         on_bad_rows)
    games = read_games(out_dir, all_cells)
    cells = [c for c in all_cells if not c.rating]
    ours = games["cell"] < len(cells)
    if not ours.any():
        return AnalysisOutcome(None, run, [GAMES_CSV])
    summary = summarise(exp, cells, games[ours].reset_index(drop=True), margin)
    if exp.strengths:
        add_ladder(summary, games[~ours], out_dir, proof_time,
                   [c for c in all_cells if c.rating])
    files = [GAMES_CSV, *write_tables(summary, out_dir)]
    files += plots.write_plots(summary, out_dir)
    exact = report.exact_results(exp, out_dir, cells, proof_time)
    # the report shows the command that started the experiment, and any that continued it
    runs = (load_saved(out_dir) or {}).get("runs", [])
    commands = list(dict.fromkeys(r.get("command", "") for i, r in enumerate(runs)
                                  if r.get("command") and (i == 0 or r.get("games_played"))))
    command = commands[0] if commands else command
    counts = report.GameCounts.of_run(summary, all_cells, out_dir)
    report.write_report(summary, out_dir, plots=files, notes=notes, command=command,
                        exact=exact, counts=counts, history=commands[1:],
                        proof_time=proof_time)
    files += [report.REPORT_MD, report.write_html(out_dir)]
    return AnalysisOutcome(summary, run, files)


__all__ = ["AnalysisError", "Experiment", "Cell", "analyse", "plan_cells",
           "parse_vary", "parse_strengths", "run_experiment", "summarise"]


# ---- a report from the tables alone ----------------------------------------------------
def _typed(row: dict) -> dict:
    """A variants.csv row back to numbers (pandas reads ints as floats once a NaN is in a
    column; counts must be ints for the tests)."""
    out = {}
    for k, v in row.items():
        if isinstance(v, float) and v.is_integer() and (k.startswith(("wins_", "games"))
                                                        or k in ("decisive", "draws",
                                                                 "forfeits", "capped",
                                                                 "players", "cell")):
            v = int(v)
        out[k] = "" if isinstance(v, float) and math.isnan(v) and k in ("strength",) else v
    return out


def rebuild_report(out_dir: str, margin: float = DEFAULT_MARGIN,
                   proof_time: float | None = None) -> Summary:
    """Rewrite report.md and report.html of a finished experiment from its tables
    (analysis.json, variants.csv, comparisons.csv, strength_ladder.csv, proven.json,
    exact.csv), without its games.csv: every verdict needs only the counts per seat per
    cell, which variants.csv holds; game-length tests are taken from comparisons.csv and
    the plots that need the games are kept as they are."""
    import json

    from niwa.analysis.experiments import report, strength
    from niwa.analysis.experiments.findings import conclude

    meta = load_saved(out_dir)
    if meta is None:
        raise AnalysisError(f"{out_dir}: no {META_JSON} to rebuild a report from")
    exp = Experiment.from_record(meta["experiment"])
    all_cells, notes = plan_cells(exp)
    cells = [c for c in all_cells if not c.rating]
    table = pd.read_csv(os.path.join(out_dir, VARIANTS_CSV))
    metrics = [_typed(r) for r in table.to_dict("records")]
    if [m["label"] for m in metrics] != [c.label for c in cells]:
        raise AnalysisError(f"{out_dir}: {VARIANTS_CSV} does not hold the experiment's cells")
    for m in metrics:
        m["strength"] = m["strength"] if isinstance(m["strength"], str) else ""
    lengths = {}
    path = os.path.join(out_dir, COMPARISONS_CSV)
    if os.path.exists(path):
        for r in pd.read_csv(path).to_dict("records"):
            lengths[(r["baseline"], r["variant"])] = {
                k: r[k] for k in ("length_p", "length_rank_biserial") if k in r}
    summary = conclude(exp, cells, metrics, pd.DataFrame(), margin, lengths=lengths)
    runs = meta.get("runs", [])
    if proof_time is None:      # the last --proof-time given, as the record holds it
        proof_time = 10.0
        for r in runs:
            found = [w for w in (r.get("command") or "").split("--proof-time ")[1:]]
            if found:
                proof_time = float(found[-1].split()[0])
    if exp.strengths:
        ladder_path = os.path.join(out_dir, LADDER_CSV)
        rows = pd.read_csv(ladder_path) if os.path.exists(ladder_path) else None
        ratings = {}
        if rows is not None:
            for label, part in rows.groupby("variant", sort=False):
                if part["elo"].notna().any():
                    ratings[label] = part[["strength", "elo", "elo_low", "elo_high"]] \
                        .reset_index(drop=True)
        try:
            with open(os.path.join(out_dir, PROVEN_JSON), encoding="utf-8") as f:
                proven = json.load(f)
        except OSError:
            proven = {}
        summary.ladder, judged = strength.ladder(metrics, cells, ratings, proven, margin)
        summary.ladder_verdicts = [text for _, text in judged]
        summary.claims += judged
    # a finished run played every scheduled rating game (games.csv is not shipped)
    finished = meta.get("status") == "finished"
    if exp.strengths:
        summary.ratings = rating_provenance(exp, [c for c in all_cells if c.rating],
                                            proof_time, lambda c: c.games if finished else 0)
    counts = report.GameCounts.of_cells(
        all_cells, lambda c: (c.games if finished else 0) if c.rating
        else int(metrics[c.index]["games"]), 0, exp.rate_under == "first")
    counts.file_rows = counts.recorded       # games.csv is not shipped with the tables
    counts.from_tables = True
    exact = None
    if os.path.exists(os.path.join(out_dir, report.EXACT_CSV)):
        exact = pd.read_csv(os.path.join(out_dir, report.EXACT_CSV), dtype=str,
                            keep_default_na=False)
    commands = list(dict.fromkeys(r.get("command", "") for i, r in enumerate(runs)
                                  if r.get("command") and (i == 0 or r.get("games_played"))))
    from niwa.analysis.experiments import plots

    plots.plot_seat_win_rates(metrics, os.path.join(out_dir, plots.SEAT_WIN_RATES),
                              f"{exp.game}: win rate by seat (dashed: fair share)")
    plots.plot_advantage_vs_strength(
        metrics, os.path.join(out_dir, plots.ADVANTAGE_VS_STRENGTH),
        f"{exp.game}: first-player advantage vs strength",
        {(r["variant"], r["strength"]): r["elo"] for r in summary.ladder},
        {r["variant"]: r["proven_seat0"] for r in summary.ladder}, margin)
    plots_there = [f for f in os.listdir(out_dir) if f.endswith(".png")]
    report.write_report(summary, out_dir, plots=plots_there, notes=notes,
                        command=commands[0] if commands else meta.get("command", ""),
                        exact=exact, counts=counts, history=commands[1:],
                        proof_time=proof_time)
    report.write_html(out_dir)
    return summary
