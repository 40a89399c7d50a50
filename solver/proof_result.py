"""The answer of a proof search (niwa.solver.proof.ProofSearch.solve): plain values."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MoveValue:
    """One root move and its proven value for the player to move (1 / 0.5 / 0; None: not
    proven)."""

    action: int
    name: str
    value: float | None


@dataclass
class ProofResult:
    """What a proof search found about a position.

    `value` is the game value for the player to move at the root: 1.0 (a forced win),
    0.5 (a draw with best play), 0.0 (a forced loss), or None when the search stopped
    before proving any. When the root is proven, `moves` gives every root move's value
    (None only if its follow-up proof ran out of budget) and `pv` a principal variation
    to the end of the game: the winner (or drawer) plays a move keeping the value, the
    loser the move whose proof was the largest.
    `root_pn`/`root_dn` say how far an unproven search got (the proof and disproof numbers
    of the root: the fewer, the closer).
    """

    value: float | None
    proven: bool
    player: int
    status: str                     # "proven", "time limit" or "node limit"
    nodes: int                      # positions expanded by the proof itself
    time_s: float
    tt_entries: int                 # table entries in use at the end
    tt_capacity: int
    tt_mb: float
    root_pn: int
    root_dn: int
    moves: list[MoveValue] = field(default_factory=list)
    pv: list[str] = field(default_factory=list)
    pv_actions: list[int] = field(default_factory=list)
    followup_nodes: int = 0         # positions expanded to value the root moves and the PV
    followup_time_s: float = 0.0
    overwrites: int = 0             # table entries replaced by other positions
    overwritten_unproven: int = 0   # ... of which held unfinished work
    overwritten_big: int = 0        # ... of which held a large unfinished subtree
    deepest: int = 0                # deepest ply reached
    table_hits: int = 0             # positions answered by the endgame tables (ProofSearch(tables=))
    table_warning: str | None = None

    @property
    def tt_fill(self) -> float:
        return self.tt_entries / self.tt_capacity if self.tt_capacity else 0.0

    @property
    def winning_moves(self) -> list[str]:
        """Names of the root moves proven to win for the player to move."""
        return [m.name for m in self.moves if m.value == 1.0]

    def summary(self) -> str:
        head = {1.0: "win", 0.5: "draw", 0.0: "loss", None: "unproven"}[self.value]
        text = (f"{head} for player {self.player} ({self.status}): {self.nodes:,} nodes in "
                f"{self.time_s:.2f} s, table {self.tt_entries:,}/{self.tt_capacity:,} entries "
                f"({100 * self.tt_fill:.1f}%)")
        if not self.proven:
            text += f", root pn={self.root_pn} dn={self.root_dn}"
        if self.table_warning:
            text += f"; {self.table_warning}"
        return text
