"""Checks that any niwa game can run in its own tests, like numpy.testing.

`check_contract(spec)` plays seeded random games and checks, at every state, what the game
contract (niwa.ext.game) promises: action ids in bounds, clone independence, hash and
notation consistency, chance probabilities, returns, statistics and length bounds (and
that `spec.new(seed=...)` is reproducible).
`check_lockstep(spec, variant, seed)` plays one seeded game in the engine and in the
game's reference rules (its oracle, `spec.reference`) side by side and compares legal
actions, chance outcomes, notations, terminal states and returns at every step.

Both raise AssertionError naming the game, variant, seed, ply and position of the first
disagreement, so they work under pytest as plain calls:

>>> from niwa.ext.registry import get_game
>>> report = check_contract(get_game("lotus"), [{"towers": 2}], seeds=range(2))
>>> report.games, report.kinds >= {"decision", "terminal"}
(2, True)
>>> check_lockstep(get_game("lotus"), {"towers": 2}, seed=3) > 0
True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from niwa.ext.errors import VariantError
from niwa.ext.game import PLAYER_CHANCE, PLAYER_SIMULTANEOUS, PLAYER_TERMINAL
from niwa.ext.spec import GameSpec

__all__ = ["ContractReport", "check_contract", "check_lockstep", "contract_variants",
           "random_step"]

CHANCE, SIMULTANEOUS, TERMINAL = PLAYER_CHANCE, PLAYER_SIMULTANEOUS, PLAYER_TERMINAL
EPS = 1e-9


class _Where:
    """Where a check runs, for messages: game, variant, seed, ply and position."""

    def __init__(self, game: str, variant, seed):
        self.game, self.variant, self.seed = game, variant, seed
        self.ply, self.position = 0, ""

    def fail(self, what: str):
        raise AssertionError(f"{self.game} {self.variant} seed {self.seed} ply {self.ply}: "
                             f"{what}\n  at {self.position}")

    def check(self, ok, what: str):
        if not ok:
            self.fail(what() if callable(what) else what)


def _weighted(outcomes, rng: random.Random) -> int:
    """A chance outcome drawn by probability (ids sorted first, so the draw does not
    depend on the order the game lists them in)."""
    probs = dict(outcomes)
    ids = sorted(probs)
    return rng.choices(ids, [probs[a] for a in ids])[0]


def random_step(state, rng: random.Random, choose=None, choose_outcome=None):
    """Apply one seeded random step to an engine or oracle state and return it: an action,
    a chance outcome (by probability unless `choose_outcome(outcomes, rng)` says) or, at a
    simultaneous node, the list of every player's action. `choose(legal, rng)` picks
    decisions (default uniform)."""
    p = state.current_player()
    step = _choose_step(p, _options(state, p), rng, choose, choose_outcome)
    if p == SIMULTANEOUS:
        state.apply_joint(step)
    else:
        state.apply(step)
    return step


def _options(state, p):
    """What a step chooses from: the legal actions, the chance outcomes, or at a
    simultaneous node each player's legal actions."""
    if p == SIMULTANEOUS:
        return [state.legal_actions(q) for q in range(state.num_players)]
    if p == CHANCE:
        return state.chance_outcomes()
    return state.legal_actions()


def _choose_step(p, options, rng, choose, choose_outcome):
    if p == SIMULTANEOUS:
        return [(choose or _uniform)(legal, rng) if legal else -1 for legal in options]
    if p == CHANCE:
        return (choose_outcome or _weighted)(options, rng)
    return (choose or _uniform)(options, rng)


def _uniform(legal, rng: random.Random) -> int:
    return rng.choice(legal)


# ---- the contract ---------------------------------------------------------------------
@dataclass
class ContractReport:
    """What check_contract covered: games and states checked, node kinds seen, the
    longest game."""

    games: int = 0
    states: int = 0
    longest: int = 0
    kinds: set = field(default_factory=set)


def contract_variants(spec: GameSpec) -> list[dict]:
    """The defaults, then each option set to its first and last value one at a time
    (combinations the game refuses are skipped)."""
    out = [{}]
    for option in spec.options:
        choices = list(option.choices)
        for value in dict.fromkeys([choices[0], choices[-1]]):
            if value == option.default:
                continue
            try:
                spec.parse_variant({option.key: value})
            except VariantError:
                continue
            out.append({option.key: value})
    return out


def check_contract(spec: GameSpec, variants: Iterable[Mapping] | None = None,
                   seeds: Iterable[int] = range(4), *, deep_every: int = 1,
                   max_plies: int | None = None) -> ContractReport:
    """Play one seeded random game per variant and seed (`spec.new(seed=...)`) and check
    the contract at every state; the costlier checks (notation round trip, clone
    independence, action names, evaluation, hidden information) every `deep_every` plies.
    `max_plies` stops long games early (still checking each state reached)."""
    report = ContractReport()
    for variant in (contract_variants(spec) if variants is None else variants):
        for seed in seeds:
            _contract_game(spec, dict(variant), seed, deep_every, max_plies, report)
    return report


def _contract_game(spec, variant, seed, deep_every, max_plies, report):
    where = _Where(spec.name, variant, seed)
    rng = random.Random(seed)
    state = spec.new(seed=seed, **variant)
    where.position = state.to_notation()
    where.check(spec.new(seed=seed, **variant).to_notation() == where.position,
                "spec.new(seed=...) does not give the same position twice")
    full = dict(state.variant)
    where.check(all(k in spec.variants for k in full),
                lambda: f"state.variant {full} has keys the spec does not declare")
    bound = spec.num_distinct_actions(full)
    longest = spec.max_game_length(full)
    hashes: dict[str, int] = {}
    start, text = state.clone(), state.to_notation()
    plies = start.random_playout(seed)
    where.position = text
    where.check(state.to_notation() == text, "a random playout on a clone changed the original")
    where.check(start.is_terminal(), "random_playout() did not end the game")
    where.check(plies <= longest, f"random_playout() took {plies} plies; "
                                  f"max_game_length is {longest}")
    while True:
        where.position = state.to_notation()
        deep = deep_every > 0 and where.ply % deep_every == 0
        kind = _check_state(spec, state, where, bound, hashes, deep)
        report.states += 1
        report.kinds.add(kind)
        if kind == "terminal" or (max_plies is not None and where.ply >= max_plies):
            break
        where.check(where.ply < longest, f"the game is longer than max_game_length {longest}")
        before = state.clone() if deep else None
        step = random_step(state, rng)
        if deep:
            where.check(before.to_notation() == where.position and before.clone().hash()
                        == hashes[where.position],
                                f"applying {step!r} to a state changed a clone made before")
        where.ply += 1
    report.games += 1
    report.longest = max(report.longest, where.ply)


def _check_state(spec, state, where, bound, hashes, deep) -> str:
    n = state.num_players
    text = where.position
    p = state.current_player()
    where.check(p in (CHANCE, SIMULTANEOUS, TERMINAL) or 0 <= p < n,
                f"current_player() is {p}; expected a seat or CHANCE/SIMULTANEOUS/TERMINAL")
    where.check(state.is_terminal() == (p == TERMINAL), "is_terminal() disagrees with "
                                                         "current_player()")
    where.check(state.is_chance_node() == (p == CHANCE), "is_chance_node() disagrees")
    where.check(state.is_simultaneous_node() == (p == SIMULTANEOUS),
                "is_simultaneous_node() disagrees")
    where.check(state.game_name == spec.name, f"game_name is {state.game_name!r}")
    where.check(text.split(";")[0].split()[:1] == [spec.name],
                f"the notation does not begin with the game name {spec.name!r}")
    h = state.hash()
    where.check(hashes.setdefault(text, h) == h, "equal notations with different hashes")
    if deep:
        back = spec.from_notation(text)
        where.check(back.to_notation() == text,
                    lambda: f"notation does not round-trip: read back as {back.to_notation()}")
        where.check(back.hash() == h, "the position read back from its notation hashes "
                                      "differently")
        twin = state.clone()
        where.check(twin.to_notation() == text and twin.hash() == h,
                    "clone() differs from the original")
        for q in range(n):
            info = state.information_state(q)
            where.check(isinstance(info, str), f"information_state({q}) is not a string")
            if spec.traits.hidden_information:
                view = state.resample_hidden(q, where.ply + 1)
                where.check(view.information_state(q) == info,
                            f"resample_hidden({q}) changed what player {q} knows")
            if p != TERMINAL:
                value = state.evaluate(q)
                where.check(-EPS <= value <= 1 + EPS, f"evaluate({q}) = {value} is not in [0, 1]")
        where.check(state.to_notation() == text and state.hash() == h,
                    "reading the state (clone, evaluate, resample_hidden) changed it")
    if p == TERMINAL:
        _check_terminal(spec, state, where)
        return "terminal"
    if p == CHANCE:
        outcomes = state.chance_outcomes()
        ids = [a for a, _ in outcomes]
        _check_ids(ids, bound, "chance outcome", where)
        where.check(all(prob > 0 for _, prob in outcomes), "a chance outcome has probability <= 0")
        total = sum(prob for _, prob in outcomes)
        where.check(abs(total - 1) < 1e-9, f"chance probabilities sum to {total}, not 1")
        where.check(state.legal_actions() == ids, "legal_actions() at a chance node is not "
                                                  "the outcome ids")
        if deep:
            where.check(state.perft(1) == len(ids), "perft(1) is not the number of outcomes")
        return "chance"
    if p == SIMULTANEOUS:
        where.check(spec.simultaneous(dict(state.variant)), "a simultaneous node in a variant "
                                                            "the spec says has none")
        combos = 1
        for q in range(n):
            mine = state.legal_actions(q)
            _check_ids(mine, bound, f"player {q}'s action", where, allow_empty=True)
            combos *= len(mine)
            if deep:
                _check_names(state, mine, q, where)
        where.check(combos > 0, "a simultaneous node where a player has no action")
        if deep:
            where.check(state.perft(1) == combos, "perft(1) is not the number of joint actions")
        return "simultaneous"
    legal = state.legal_actions()
    _check_ids(legal, bound, "legal action", where)
    where.check(state.legal_actions(p) == legal, f"legal_actions({p}) differs from "
                                                 f"legal_actions() for the mover {p}")
    where.check(all(state.legal_actions(q) == [] for q in range(n) if q != p),
                "a player who is not to move has legal actions")
    if deep:
        _check_names(state, legal, None, where)
        where.check(state.perft(1) == len(legal), "perft(1) is not the number of legal actions")
    return "decision"


def _check_ids(ids, bound, what, where, allow_empty=False):
    where.check(ids or allow_empty, f"no {what}s at a node that needs one")
    where.check(len(set(ids)) == len(ids), lambda: f"duplicate {what}s: {ids}")
    bad = [a for a in ids if not (isinstance(a, int) and 0 <= a < bound)]
    where.check(not bad, lambda: f"{what} ids {bad} are not in 0..{bound - 1} "
                                 f"(num_distinct_actions {bound})")


def _check_names(state, actions, player, where):
    names = [state.action_to_string(a, player) for a in actions]
    where.check(len(set(names)) == len(names), lambda: f"action names are not distinct: {names}")
    for a, name in zip(actions, names, strict=True):
        back = state.string_to_action(name, player) if player is not None \
            else state.string_to_action(name)
        where.check(back == a, f"string_to_action({name!r}) gives {back}, not {a}")


def _check_terminal(spec, state, where):
    n = state.num_players
    r = state.returns()
    where.check(len(r) == n, f"returns() has {len(r)} values for {n} players")
    where.check(all(-EPS <= x <= 1 + EPS for x in r), f"returns {r} are not in [0, 1]")
    if n > 1:
        where.check(abs(sum(r) - 1) < 1e-6, f"returns {r} do not sum to 1")
    best = max(r)
    w = state.winner()
    where.check(w == (r.index(best) if r.count(best) == 1 else None) or n == 1,
                f"winner() {w} disagrees with returns {r}")
    stats = state.stats()
    declared = {f.name: f for f in spec.stats}
    where.check(set(stats) == set(declared),
                lambda: f"stats() keys {sorted(stats)} differ from the spec's "
                        f"{sorted(declared)}")
    for name, value in stats.items():
        if declared[name].per_player:
            where.check(isinstance(value, list | tuple) and len(value) == n,
                        f"per-player stat {name!r} is not one value per player: {value!r}")


# ---- engine against oracle ------------------------------------------------------------
def check_lockstep(spec: GameSpec, variant: Mapping, seed: int, *,
                   choose: Callable | None = None, choose_outcome: Callable | None = None,
                   notation: bool = True, roundtrip_every: int = 1,
                   observe: Callable | None = None, at_end: Callable | None = None) -> int:
    """Play one seeded random game in the engine (`spec.new(**variant)`) and the oracle
    (`spec.load_reference().initial(**variant)`) side by side; return its plies.

    At every step: the same current player and terminal flag, the same legal actions (as
    sets), the same chance outcomes and probabilities, the same notation (`notation`), the
    engine's notation read back to the same text and hash every `roundtrip_every` plies
    (0: never); at the end, the same returns. Steps are drawn by `random_step` from
    random.Random(seed) on the engine's lists, so a seed fixes the game.
    `observe(engine, oracle, step)` runs before each step and `at_end(engine, oracle)` at
    the end, for a game's own comparisons (score breakdowns and the like).
    """
    where = _Where(spec.name, dict(variant), seed)
    rng = random.Random(seed)
    eng = spec.new(**variant)
    orc = spec.load_reference().initial(**variant)
    while True:
        p = eng.current_player()
        if notation or roundtrip_every:
            text = where.position = eng.to_notation()
        if p != orc.current_player():
            where.fail(f"current player: engine {p}, oracle {orc.current_player()}")
        where.check(eng.is_terminal() == orc.is_terminal(), "terminal: engine and oracle differ")
        if notation:
            where.check(text == orc.to_notation(),
                        lambda: f"notation: oracle has {orc.to_notation()}")
        if roundtrip_every and where.ply % roundtrip_every == 0:
            back = spec.from_notation(text)
            where.check(back.to_notation() == text and back.hash() == eng.hash(),
                        "the engine's notation does not read back to the same text and hash")
        if p == TERMINAL:
            mine, theirs = eng.returns(), orc.returns()
            where.check(len(mine) == len(theirs)
                        and all(abs(a - b) <= EPS for a, b in zip(mine, theirs, strict=True)),
                        f"returns: engine {mine}, oracle {theirs}")
            if at_end is not None:
                at_end(eng, orc)
            return where.ply
        options = _options(eng, p)
        if p == SIMULTANEOUS:
            for q, mine in enumerate(options):
                theirs = orc.legal_actions(q)
                if sorted(mine) != sorted(theirs):
                    where.fail(f"player {q}'s actions: engine {sorted(mine)}, "
                               f"oracle {sorted(theirs)}")
        elif p == CHANCE:
            mine, theirs = dict(options), dict(orc.chance_outcomes())
            if mine.keys() != theirs.keys():
                where.fail(f"chance outcomes: engine {sorted(mine)}, oracle {sorted(theirs)}")
            where.check(all(abs(mine[a] - theirs[a]) < 1e-12 for a in mine),
                        "chance probabilities differ")
            where.check(abs(sum(mine.values()) - 1) < 1e-9, "chance probabilities do not sum to 1")
        else:
            theirs = orc.legal_actions()
            if sorted(options) != sorted(theirs):
                where.fail(f"legal actions: engine {sorted(options)}, oracle {sorted(theirs)}")
        step = _choose_step(p, options, rng, choose, choose_outcome)
        if observe is not None:
            observe(eng, orc, step)
        if p == SIMULTANEOUS:
            eng.apply_joint(step)
            orc.apply_joint(step)
        else:
            eng.apply(step)
            orc.apply(step, check=False)
        where.ply += 1

