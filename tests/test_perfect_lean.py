"""`perfect:lean=true`: when no proof is found in time, the unfinished proof's most-proving
move (ProofSearch.child_numbers, proof_moves.most_proving_move) instead of the fallback."""

from __future__ import annotations

from niwa.cli.common import load_position
from niwa.solver.agents import make_agent
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_moves import most_proving_move

PN_MAX = 0xFFFFFFFE


def test_child_numbers_are_the_numbers_the_root_was_stored_with():
    # an unfinished df-pn stores the root's pn as its children's smallest and its dn as
    # their sum: reading the children back must give the same two numbers
    state = load_position("lotus towers=3")
    search = ProofSearch(tt_mb=64)
    r = search.solve(state, max_nodes=20_000, root_values=False, pv=False)
    assert not r.proven
    kids = search.child_numbers(state)
    assert sorted(a for a, _, _ in kids) == sorted(state.legal_actions())
    assert min(pn for _, pn, _ in kids) == r.root_pn
    assert min(sum(dn for _, _, dn in kids), PN_MAX) == r.root_dn
    assert most_proving_move(search, state) in [a for a, pn, _ in kids if pn == r.root_pn]


def test_after_a_proof_the_most_proving_move_of_the_winner_wins():
    state = load_position("lotus towers=2")     # seat 1 wins; seat 0 to move
    search = ProofSearch(tt_mb=16)
    assert search.solve(state, root_values=False, pv=False).value == 0.0
    reply = load_position("lotus towers=2")
    reply.apply(reply.legal_actions()[0])       # any first move: now the winner moves
    assert search.solve(reply, root_values=False, pv=False).value == 1.0
    move = most_proving_move(search, reply)
    child = reply.child(move)
    assert search.known_value(child, 1) == 1
    assert [pn for a, pn, _ in search.child_numbers(reply) if a == move] == [0]


def test_lean_perfect_plays_the_most_proving_move_without_its_fallback():
    agent = make_agent("perfect:time=0.02,tt_mb=16,tables=false,book=none,lean=true", seed=0)
    state = load_position("lotus")              # the full game: no proof in 0.02 s
    move = agent.step(state, 0)
    assert move in state.legal_actions()
    assert agent.sources["lean"] == 1 and agent.fallback is None
    result = agent.analysis()
    assert not result.proven and result.best == move and "most-proving" in result.status
    assert result.nodes > 0 and min(result.proof_numbers) > 0    # the proof's own figures
    # the same agent without lean asks its fallback
    plain = make_agent("perfect:time=0.02,tt_mb=16,tables=false,book=none,lean=false,"
                       "fallback=mcts:iters=20", seed=0)
    plain.step(load_position("lotus"), 0)
    assert plain.sources["fallback"] == 1 and plain.analysis().algo == "mcts"
    # lean is the default; the fallback still plays a game proofs cannot decide
    default = make_agent("perfect:time=0.02,tt_mb=16,tables=false,book=none,"
                         "fallback=mcts:iters=20", seed=0)
    default.step(load_position("lotus"), 0)
    assert default.sources["lean"] == 1 and default.fallback is None
    default.reset()                             # a new game: three players, no proofs
    three = load_position("lotus players=3")
    default.step(three, three.current_player())
    assert default.sources["fallback"] == 1 and default.analysis().algo != "proof"


def test_lean_perfect_passes_over_the_moves_known_to_lose(tmp_path, monkeypatch):
    """Pro/optional's open proof has refuted the first stone W3 (either lane): with no
    proof in time, `perfect` leans to another first stone; a move to a known loss for the
    opponent (a certificate's root) is played as a proven win."""
    from niwa.solver.certificate import extract_certificate
    from niwa.solver.known import known_moves

    start = load_position("lotus rule=pro")
    refuted = {m.action for m in known_moves(start)}
    assert {start.action_to_string(a) for a in refuted} >= {"W3-a3", "W3-b3"}
    agent = make_agent("perfect:time=0.02,tt_mb=16,tables=false,book=none", seed=0)
    move = agent.step(start, 0)
    assert move not in refuted and agent.sources["lean"] == 1
    assert "known to lose passed over" in agent.analysis().status
    # seat 1 to move in a won position no proof decides in a microsecond, the loser's
    # position after its winning reply certified
    small = load_position("lotus towers=2")
    after = small.child(small.legal_actions()[0])
    reply = ProofSearch(tt_mb=8).solve(after).pv_actions[0]
    extract_certificate(ProofSearch(tt_mb=8), after.child(reply)).save(tmp_path / "w.npz")
    monkeypatch.setenv("NIWA_CERTIFICATES", str(tmp_path))
    winner = make_agent("perfect:time=0.000001,tt_mb=16,tables=false,book=none", seed=0)
    assert winner.step(after, 1) == reply
    assert winner.sources["known"] == 1 and winner.analysis().proven
    # pro/optional's record gives the winner's certified move after W2-b2 pass (mirrored)
    mirrored = load_position("lotus rule=pro")
    for name in ("W2-b2", "pass"):
        mirrored.apply(mirrored.string_to_action(name))
    assert mirrored.action_to_string(winner.step(mirrored, 1)) == "B2-b2"
    assert winner.sources["known"] == 2 and "W2-a2 pass" in winner.analysis().status
