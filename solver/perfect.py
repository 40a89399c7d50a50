"""The `perfect` agent: plays from df-pn proofs (niwa.solver.proof) where it can prove.

Each move it proves the position within `time` seconds, continuing in one table kept for
the whole game (positions proven on earlier moves are answered at once). A proven win:
it plays a proving move. A proven loss: the move whose refutation cost the most work,
the one a fallible opponent is likeliest to get wrong. No proof in time: the `fallback`
agent (MCTS with the game's tuned defaults unless told otherwise) chooses.

>>> from niwa.ext.lotus import LotusState
>>> agent = PerfectAgent(time=1.0, tt_mb=16)
>>> s = LotusState(towers=1, lane=1, shared=3, trampoline_at=3)
>>> agent.step(s, 0) in s.legal_actions(), agent.analysis().algo
(True, 'proof')
"""

from __future__ import annotations

from niwa.solver.agents import Agent, AgentError


class PerfectAgent(Agent):
    name = "perfect"

    def __init__(self, seed=None, **params):
        super().__init__(seed, **params)
        self.time = params.get("time", 1.0)
        self.tt_mb = params.get("tt_mb", 256.0)
        self.fallback_spec = params.get("fallback", "mcts")
        if self.time <= 0 or self.tt_mb <= 0:
            raise AgentError("agent 'perfect': time and tt_mb should be positive")
        if self.fallback_spec.split(":")[0].strip().lower() == "perfect":
            raise AgentError("agent 'perfect': its fallback cannot be perfect itself")
        self.seed = seed
        self.searcher = None
        self.fallback = None
        self.refusal = None     # why the proof search cannot play this game (then: fallback)

    def step(self, state, player):
        from niwa.solver.solve import proof_refusal, proof_to_search_result

        actions = state.legal_actions(player)
        if len(actions) == 1:
            return actions[0]
        if self.refusal is None:
            self.refusal = proof_refusal(state) or ""
        if not self.refusal:
            table = None
            if self.params.get("tables"):
                from niwa.solver.agents import _tables_for
                from niwa.solver.tables import solve_from_table

                table = _tables_for(state)
                if table is not None and table.index(state) >= 0:
                    # inside the table: its move (the fastest win, or the slowest loss)
                    self._last = solve_from_table(state, table)
                    return self._last.best
            if self.searcher is None:
                from niwa.solver.proof import ProofSearch

                self.searcher = ProofSearch(tt_mb=self.tt_mb, tables=table)
            # Only the PV's first move is wanted: a proving move (win) or the loser's move
            # with the largest refutation (loss), both read from the table. Playing the PV
            # out to the end (and valuing every root move) could cost more than the proof
            # (3M nodes a move on towers 3..1), so the follow-up gets a tenth of the time.
            proof = self.searcher.solve(state, time_limit=self.time, root_values=False,
                                        followup_time_limit=0.1 * self.time)
            result = proof_to_search_result(state, proof)
            self._last = result
            if proof.proven and result.best in actions:
                return result.best
        return self._fallback().step(state, player)

    def _fallback(self):
        from niwa.solver.agents import make_agent

        if self.fallback is None:
            self.fallback = make_agent(self.fallback_spec, seed=self.seed)
        return self.fallback

    def observe(self, state, action):
        if self.fallback is not None:
            self.fallback.observe(state, action)

    def analysis(self):
        if self.fallback is not None and self._last is not None and not self._last.proven:
            return self.fallback.analysis() or self._last
        return self._last

    def reset(self):
        if self.searcher is not None:
            self.searcher.clear()
        if self.fallback is not None:
            self.fallback.reset()
        self.refusal = None
        self._last = None

