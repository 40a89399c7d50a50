"""Search one position for its value with the searcher that suits it: what `niwa solve`
asks, without any command-line concerns.

>>> from niwa.ext.lotus import LotusState
>>> r = solve_position(LotusState(towers=1, lane=1, shared=3, trampoline_at=3), depth=40)
>>> r.algo, r.proven
('alphabeta', True)
"""

from __future__ import annotations

import dataclasses

from niwa.ext.errors import NiwaError
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


def solve_by_proof(state, time_s=None, tt_mb=256, searcher=None, tables=None):
    """The df-pn proof of `state` within `time_s` seconds (default 10): (SearchResult,
    ProofResult). Once proven, the follow-up that values every root move and plays the
    PV out may take as long again (it re-searches only what the table lost). `tables`: a
    loaded endgame table the proof takes exact values from."""
    from niwa.solver.proof import ProofSearch

    budget = 10.0 if time_s is None else time_s
    searcher = searcher or ProofSearch(tt_mb=tt_mb, tables=tables)
    proof = searcher.solve(state, time_limit=budget, followup_time_limit=budget)
    return proof_to_search_result(state, proof), proof


def solve_position(state, algo="auto", time_s=None, depth=None, iters=None, seed=0,
                   tt_bits=22, round_only=False, tt_mb=256, tables=None,
                   fresh=False) -> SearchResult:
    """Search `state`: the value (expected return of `player`, in [0, 1]), proven, best,
    every root action, the principal variation and the search's figures.

    `algo`: proof (df-pn, two-player perfect-information win/loss games), alphabeta, mcts,
    or auto (proof where it applies, else alpha-beta unless something is hidden: then
    ISMCTS). A proof that does not finish in `time_s` hands the time it did not use to
    alpha-beta (or, with none left, reports the root's proof/disproof numbers): the
    result's `status` says why the value is an estimate. `tt_mb`: the proof table.
    `round_only`: open-hands alpha-beta of the rest of the current round only (the game's
    episode, State.episode()); the value is then the round's outcome as the game's
    evaluation at the round's end defines it, and the result's `episode` names the round.
    `tables`: endgame tables (niwa.solver.tables.resolve_tables: "auto" = the default
    folder, a folder, a loaded table, or None): a position inside them is answered from
    them at once (algo "tables"), and the proof search and MCTS take exact values there.
    A position whose value a shipped opening book or a certificate already proves
    (niwa.solver.known) is answered from it at once (algo "book" or "certificate") when
    the proof would be asked for; `fresh` proves it again instead."""
    from niwa.solver.alphabeta import AlphaBeta
    from niwa.solver.mcts import MCTS

    if state.is_terminal():
        raise SolveError("the position is over: nothing to solve")
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
        from niwa.solver.known import known_result

        known = known_result(state)
        if known is not None:
            return known
    if algo in ("auto", "proof"):
        refusal = proof_refusal(state) if depth is None and iters is None else \
            "a --depth or --iters budget asks for alpha-beta or MCTS"
        if refusal is None:
            return _proof_or_estimate(state, time_s, tt_mb, tt_bits, table)
        if algo == "proof":
            raise SolveError(refusal)
        algo = "mcts" if has_hidden_information(state) else "alphabeta"
    if algo == "alphabeta":
        ab = AlphaBeta(state.num_players, tt_bits=tt_bits)
        limit = 10.0 if time_s is None and depth is None else (time_s or 0.0)
        r = ab.search(state, depth=depth or 200, time_limit=limit, root_values=True,
                      episode=round_only)
        if r.value is None:
            raise SolveError("no search iteration finished in time: give more --time")
        return r
    tuned = mcts_settings(state, {})
    tree = MCTS(state.num_players, seed=seed, ismcts=has_hidden_information(state),
                max_nodes=4_000_000, c=tuned["c"], playout=tuned["playout"],
                cutoff=tuned["cutoff"], tables=table)
    if iters is None and time_s is None:
        iters = 100_000
    return tree.search(state, iterations=iters or 0, time_limit=time_s or 0.0)



def _proof_or_estimate(state, time_s, tt_mb, tt_bits, table=None) -> SearchResult:
    """The proof in 80% of the budget or, when it does not finish, alpha-beta's estimate
    in the rest (the proof's own figures kept in `status` and `proof_numbers`)."""
    from niwa.solver.alphabeta import AlphaBeta

    budget = 10.0 if time_s is None else time_s
    result, proof = solve_by_proof(state, 0.8 * budget, tt_mb, tables=table)
    if proof.proven:
        return result
    why = (f"not proven in {proof.time_s:.1f} s ({proof.status}): {proof.nodes:,} nodes, "
           f"table {proof.tt_fill:.1%} full, root pn={proof.root_pn} dn={proof.root_dn}")
    estimate = AlphaBeta(state.num_players, tt_bits=tt_bits).search(
        state, depth=200, time_limit=max(0.2 * budget, 0.05), root_values=True)
    if estimate.value is None:
        return dataclasses.replace(result, status=why)
    return dataclasses.replace(
        estimate, algo="proof+alphabeta", status=why, table_warning=proof.table_warning,
        proof_numbers=(proof.root_pn, proof.root_dn))


def solve_with_certificate(state, path, time_s=None, tt_mb=256, tables=None,
                           progress=False):
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
    searcher = ProofSearch(tt_mb=tt_mb, tables=table)
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
