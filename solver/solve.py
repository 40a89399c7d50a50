"""Search one position for its value with the searcher that suits it: what `niwa solve`
asks, without any command-line concerns.

>>> from niwa.ext.lotus import LotusState
>>> r = solve_position(LotusState(towers=1, lane=1, shared=3, trampoline_at=3), depth=40)
>>> r.algo, r.proven
('alphabeta', True)
"""

from __future__ import annotations

import dataclasses
import time

from niwa.ext.errors import NiwaError
from niwa.ext.game import PLAYER_CHANCE as CHANCE
from niwa.solver.agent_params import mcts_settings
from niwa.solver.results import ActionStat, SearchResult


class SolveError(NiwaError):
    """A position or a request that cannot be solved as asked."""


def has_hidden_information(state) -> bool:
    """True when some player's view differs from the full position."""
    return any(state.hides_from(p) for p in range(state.num_players))


def proof_refusal(state) -> str | None:
    """Why the df-pn proof search cannot decide `state` (None: it can): it needs two
    players, no chance, alternating moves and nothing hidden (the game's spec says so
    for the whole game, the position itself for this node)."""
    if state.num_players != 2:
        return f"proof search is for two players; this position has {state.num_players}"
    spec = state.spec
    traits = spec.traits if spec is not None else None
    if traits is not None and (traits.chance or traits.deals):
        return "proof search needs a deterministic game; this game has chance"
    if traits is not None and traits.simultaneous:
        return "proof search needs alternating moves; this game has simultaneous moves"
    if (traits is not None and traits.hidden_information) or has_hidden_information(state):
        return "proof search needs perfect information; this position hides something"
    return None


def proof_to_search_result(state, proof) -> SearchResult:
    """A ProofResult as the SearchResult `niwa solve` prints: every root move's proven
    value, the PV to the end of the game; an unproven root keeps value None."""
    actions = [ActionStat(m.action, m.name, m.value, proven=m.value is not None)
               for m in proof.moves]
    best = proof.pv_actions[0] if proof.pv_actions else None
    total_nodes = proof.nodes + proof.followup_nodes
    total_time = proof.time_s + proof.followup_time_s
    return SearchResult(
        algo="proof", value=proof.value, player=proof.player, proven=proof.proven,
        best=best, best_name=proof.pv[0] if proof.pv else None, actions=actions,
        pv=list(proof.pv), depth=len(proof.pv), nodes=total_nodes, time_s=total_time,
        nps=total_nodes / total_time if total_time > 0 else 0.0, tt_fill=proof.tt_fill,
        status=proof.status, table_warning=proof.table_warning,
        proof_numbers=(proof.root_pn, proof.root_dn))


def solve_by_proof(state, time_s=None, tt_mb=256, searcher=None, tables=None,
                   huge_pages=False):
    """The df-pn proof of `state` within `time_s` seconds (default 10): (SearchResult,
    ProofResult). Once proven, the follow-up that values every root move and plays the
    PV out may take as long again (it re-searches only what the table lost). `tables`: a
    loaded endgame table the proof takes exact values from. `huge_pages`: the table on
    2 MB pages (ProofSearch's)."""
    from niwa.solver.proof import ProofSearch

    budget = 10.0 if time_s is None else time_s
    searcher = searcher or ProofSearch(tt_mb=tt_mb, tables=tables, huge_pages=huge_pages)
    proof = searcher.solve(state, time_limit=budget, followup_time_limit=budget)
    return proof_to_search_result(state, proof), proof


def solve_position(state, algo="auto", time_s=None, depth=None, iters=None, seed=0,
                   tt_bits=22, round_only=False, tt_mb=256, tables=None,
                   fresh=False, huge_pages=False) -> SearchResult:
    """Search `state`: the value (expected return of `player`, in [0, 1]), proven, best,
    every root action, the principal variation and the search's figures.

    `algo`: proof (df-pn, two-player perfect-information win/draw/loss games), alphabeta, mcts,
    or auto (proof where it applies, else alpha-beta unless something is hidden: then
    ISMCTS). A proof that does not finish in `time_s` hands the time it did not use to
    alpha-beta (or, with none left, reports the root's proof/disproof numbers): the
    result's `status` says why the value is an estimate. `tt_mb`: the proof table
    (`huge_pages`: on 2 MB pages, for tables of gigabytes).
    `round_only`: open-hands alpha-beta of the rest of the current round only (the game's
    episode, State.episode()); the value is then the round's outcome as the game's
    evaluation at the round's end defines it, and the result's `episode` names the round.
    `tables`: endgame tables (niwa.solver.tables.resolve_tables: "auto" = the default
    folder, a folder, a loaded table, or None): a position inside them is answered from
    them at once (algo "tables"), and the proof search and MCTS take exact values there.
    A position whose value a shipped opening book or a certificate already proves
    (niwa.solver.known) is answered from it at once (algo "book" or "certificate") when
    the proof would be asked for; `fresh` proves it again instead.

    At a chance node (dice or a draw next) the value is the expectation over the chance
    outcomes of each outcome's value (see chance_expectation); `time_s` is always the whole
    time the call took."""
    t0 = time.perf_counter()
    r = _solve_position(state, algo, time_s, depth, iters, seed, tt_bits, round_only, tt_mb,
                        tables, fresh, huge_pages)
    elapsed = time.perf_counter() - t0
    if r.algo == "chance":
        return dataclasses.replace(r, time_s=elapsed, nps=r.nodes / elapsed if elapsed else 0.0)
    return dataclasses.replace(r, time_s=elapsed)


def _solve_position(state, algo, time_s, depth, iters, seed, tt_bits, round_only, tt_mb,
                    tables, fresh, huge_pages=False) -> SearchResult:
    from niwa.solver.alphabeta import AlphaBeta

    if state.is_terminal():
        raise SolveError("the position is over: nothing to solve")
    if state.current_player() == CHANCE and not round_only:
        return chance_expectation(state, algo, time_s, depth, iters, seed, tt_bits, tt_mb,
                                  tables, huge_pages)
    if round_only:
        if algo == "mcts":
            raise SolveError("--round is an exact open-hands search: use --algo alphabeta")
        if state.episode() == 0:
            raise SolveError(f"--round: {state.game_name} has no rounds")
        algo = "alphabeta"
    table = None
    if tables is not None and not round_only:
        from niwa.solver.tables import resolve_tables, solve_from_table

        table = resolve_tables(state, tables)
        if table is not None and algo in ("auto", "proof") and depth is None and \
                iters is None and table.index(state) >= 0:
            return solve_from_table(state, table)
    if not fresh and not round_only and algo in ("auto", "proof") and depth is None and \
            iters is None:
        from niwa.solver.known import known_answer

        # (its known moves too, which a proof passes over below)
        known, moves = known_answer(state)
        if known is not None:
            return known
    else:
        moves = []
    if algo in ("auto", "proof"):
        refusal = proof_refusal(state) if depth is None and iters is None else \
            "a --depth or --iters budget asks for alpha-beta or MCTS"
        if refusal is None:
            from niwa.solver.known import with_known_moves

            # the moves already known (a proof still open knows some, known_answer above
            # found them): the search passes them over
            return with_known_moves(state, _proof_or_estimate(
                state, time_s, tt_mb, tt_bits, table, huge_pages, moves), moves)
        if algo == "proof":
            raise SolveError(refusal)
        chosen = algo = "mcts" if has_hidden_information(state) else "alphabeta"
    else:
        chosen = None
    if algo == "alphabeta":
        ab = AlphaBeta(state.num_players, tt_bits=tt_bits)
        limit = 10.0 if time_s is None and depth is None else (time_s or 0.0)
        t0 = time.perf_counter()
        r = ab.search(state, depth=depth or 200, time_limit=limit, root_values=True,
                      episode=round_only)
        if r.value is None and chosen and not round_only and depth is None:
            # auto chose alpha-beta and it finished no iteration: MCTS values every move
            # in what is left of the time (at least a tenth of it)
            rest = max(limit - (time.perf_counter() - t0), 0.1 * limit, 0.05)
            r = dataclasses.replace(_mcts(state, rest, None, seed, table),
                                    status="alpha-beta finished no iteration in time: "
                                           "MCTS's estimate")
        if r.value is None:
            raise SolveError("no search iteration finished in time: give more --time")
        return r
    return _mcts(state, time_s, iters, seed, table)


def _mcts(state, time_s, iters, seed, table=None) -> SearchResult:
    from niwa.solver.mcts import MCTS

    tuned = mcts_settings(state, {})
    tree = MCTS(state.num_players, seed=seed, ismcts=has_hidden_information(state),
                max_nodes=4_000_000, c=tuned["c"], playout=tuned["playout"],
                cutoff=tuned["cutoff"], tables=table)
    if iters is None and time_s is None:
        iters = 100_000
    return tree.search(state, iterations=iters or 0, time_limit=time_s or 0.0)


def _value_of(r: SearchResult, pov: int, num_players: int) -> float | None:
    """A search result's value for seat `pov` (None if it has none for that seat)."""
    if r.values is not None and r.values[pov] is not None:
        return r.values[pov]
    if r.value is None:
        return None
    if r.player == pov:
        return r.value
    # two seats whose returns sum to 1 (win/loss, or 0.5 each for a draw)
    return 1.0 - r.value if num_players == 2 else None


def chance_expectation(state, algo="auto", time_s=None, depth=None, iters=None, seed=0,
                       tt_bits=22, tt_mb=256, tables=None, huge_pages=False) -> SearchResult:
    """The value of a chance node: sum over its outcomes of probability x the outcome's
    value for seat `player` (the seat that moves after the first outcome, else seat 0).

    Each outcome is searched with `algo` in an equal share of `time_s` (default 10 s): a
    finished position or a proof is exact, alpha-beta that finishes is exact, else its
    estimate; an outcome that is itself a chance node, or where alpha-beta finishes no
    iteration, or with more than two seats when the searcher reports another seat's value,
    is estimated by MCTS. The result is proven only if every outcome is; its `status`
    names the methods used, each action row is one outcome (value for `player`)."""
    from niwa.solver.alphabeta import AlphaBeta
    from niwa.solver.results import ActionStat

    outcomes = state.chance_outcomes()
    if not outcomes:
        raise SolveError("a chance node without outcomes")
    first = state.child(outcomes[0][0])
    pov = first.current_player() if first.current_player() >= 0 else 0
    budget = 10.0 if time_s is None else time_s
    share = max(budget / len(outcomes), 0.01)
    rows, total, proven, methods, nodes = [], 0.0, True, set(), 0
    for outcome, p in outcomes:
        child = state.child(outcome)
        name = state.action_to_string(outcome)
        if child.is_terminal():
            v, exact, method = child.returns()[pov], True, "end of game"
        else:
            r = None
            tries = [algo] + (["alphabeta"] if algo in ("auto", "proof") else [])
            while r is None and tries and child.current_player() != CHANCE:
                try:
                    r = _solve_position(child, tries.pop(0), share, depth, iters, seed,
                                        tt_bits, False, tt_mb, tables, fresh=False,
                                        huge_pages=huge_pages)
                except NiwaError:     # e.g. the proof met a chance node further down
                    r = None
                if r is not None and _value_of(r, pov, state.num_players) is None \
                        and r.algo == "alphabeta" and r.value is not None:
                    r = AlphaBeta(state.num_players, tt_bits=tt_bits).search(
                        child, depth=depth or 200, time_limit=share, player=pov)
            if r is None or _value_of(r, pov, state.num_players) is None:
                r = _mcts(child, share, None if iters is None else iters, seed)
            v, exact, method = _value_of(r, pov, state.num_players), r.proven, r.algo
            nodes += r.nodes
        if v is None:
            raise SolveError(f"chance outcome {name}: no value for seat {pov} in time; give "
                             f"more --time")
        rows.append(ActionStat(outcome, f"{name} (p={p:.4g})", v, proven=exact))
        total += p * v
        proven = proven and exact
        methods.add(method)
    status = (f"chance node: expectation over {len(outcomes)} outcomes "
              f"({'exact' if proven else 'estimate'}; by {', '.join(sorted(methods))})")
    return SearchResult(algo="chance", value=total, player=pov, proven=proven, actions=rows,
                        nodes=nodes, status=status)



def _proof_or_estimate(state, time_s, tt_mb, tt_bits, table=None,
                       huge_pages=False, known_moves=()) -> SearchResult:
    """The proof in 80% of the budget or, when it does not finish, alpha-beta's estimate
    in the rest (the proof's own figures kept in `status` and `proof_numbers`, with the
    move the unfinished proof leans to: its most-proving move, which `perfect` plays,
    among the moves not in `known_moves`, known to lose)."""
    from niwa.solver.alphabeta import AlphaBeta
    from niwa.solver.proof import ProofSearch
    from niwa.solver.proof_moves import most_proving_move

    budget = 10.0 if time_s is None else time_s
    searcher = ProofSearch(tt_mb=tt_mb, tables=table, huge_pages=huge_pages)
    result, proof = solve_by_proof(state, 0.8 * budget, searcher=searcher)
    if proof.proven:
        return result
    lean = most_proving_move(searcher, state, avoid={m.action for m in known_moves})
    why = (f"not proven in {proof.time_s:.1f} s ({proof.status}): {proof.nodes:,} nodes, "
           f"table {proof.tt_fill:.1%} full, root pn={proof.root_pn} dn={proof.root_dn}, "
           f"leaning to {state.action_to_string(lean)}")
    rest = max(0.2 * budget, 0.05)
    estimate = AlphaBeta(state.num_players, tt_bits=tt_bits).search(
        state, depth=200, time_limit=rest, root_values=True)
    algo = "proof+alphabeta"
    if estimate.value is None or not estimate.actions:
        # alpha-beta finished no iteration: MCTS gives every move a value in the same time
        estimate, algo = _mcts(state, rest, None, 0, table), "proof+mcts"
    return dataclasses.replace(
        estimate, algo=algo, status=why, table_warning=proof.table_warning,
        proof_numbers=(proof.root_pn, proof.root_dn), nodes=proof.nodes + estimate.nodes)


def solve_with_certificate(state, path, time_s=None, tt_mb=256, tables=None,
                           progress=False, huge_pages=False):
    """Prove `state` with df-pn (as solve_by_proof, with `tables` as in solve_position),
    then write its certificate (niwa.solver.certificate) to `path`: (SearchResult,
    Certificate). `time_s` bounds the proof, the follow-up and each re-proof of an entry
    the table lost while the solution tree is read off."""
    from niwa.solver.certificate import extract_certificate
    from niwa.solver.proof import ProofSearch

    if state.is_terminal():
        raise SolveError("the position is over: nothing to solve")
    refusal = proof_refusal(state)
    if refusal is not None:
        raise SolveError(refusal)
    table = None
    if tables is not None:
        from niwa.solver.tables import resolve_tables

        table = resolve_tables(state, tables)
    searcher = ProofSearch(tt_mb=tt_mb, tables=table, huge_pages=huge_pages)
    result, proof = solve_by_proof(state, time_s, tt_mb, searcher=searcher)
    if not proof.proven:
        raise SolveError(f"not proven in {proof.time_s:.1f} s ({proof.status}): no "
                         f"certificate written; give more --time or --tt-mb")
    budget = 10.0 if time_s is None else time_s
    certificate = extract_certificate(searcher, state, tables=table, time_limit=budget,
                                      progress=progress)
    certificate.info.update(proof_nodes=int(proof.nodes), proof_s=round(proof.time_s, 2),
                            tt_mb=float(tt_mb))
    certificate.save(path)
    return result, certificate
