"""Review a recorded game with a searcher: the value of each move for its mover, mistakes,
and proven blunders.

For every ply where one seat moved, the searcher looks at the position before the move
with every root action valued (alpha-beta's exact-window root values; MCTS's action
means): `before` is the best action's value for the mover, `after` the value of the move
played, `drop` their difference. A drop beyond the threshold is a *mistake*. A mistake is
a *proven blunder* when an alpha-beta proof (to `prove_depth` plies, `prove_time` seconds)
shows the position before was won for the mover and the move played loses. Chance and
joint (simultaneous) moves are listed without a verdict. The search sees the full recorded
position (open hands: a review knows how the hidden draws fell).
"""

from __future__ import annotations

from dataclasses import dataclass

from niwa.analysis.arena.game_record import CHANCE, JOINT, GameRecord
from niwa.ext.errors import NiwaError

WIN, LOSS = 1.0 - 1e-9, 1e-9


@dataclass
class ReviewRow:
    ply: int                    # 1-based
    by: int | str               # seat, "chance" or "joint"
    move: str | list[str]
    before: float | None = None     # best value for the mover before the move
    after: float | None = None      # value of the move played, for the mover
    verdict: str = ""               # "", "mistake" or "blunder"

    @property
    def drop(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return max(0.0, self.before - self.after)

    @property
    def by_text(self) -> str:
        return f"seat {self.by}" if isinstance(self.by, int) else str(self.by)

    @property
    def move_text(self) -> str:
        return "+".join(m for m in self.move if m) if isinstance(self.move, list) else self.move


def _get(result, name):
    """A search result's field, whether the searcher returns a dict or a SearchResult."""
    return result.get(name) if isinstance(result, dict) else getattr(result, name, None)


class _Judge:
    """A searcher built from an agent spec, asked for every root action's value."""

    def __init__(self, spec: str, num_players: int, seed: int = 0):
        from niwa.solver.agent_spec import AgentSpec

        parsed = AgentSpec.parse(spec)
        self.name, self.params = parsed.name, parsed.params
        if self.name not in ("alphabeta", "mcts", "ismcts"):
            raise NiwaError(f"review needs a searcher (alphabeta:... or mcts:...), not "
                            f"{self.name!r}")
        self.num_players, self.seed = num_players, seed

    def action_values(self, state, player: int) -> dict[int, float]:
        """{action: value for `player`} of the root actions the search valued."""
        if self.name == "alphabeta":
            time_limit = float(self.params.get("time", 0.0))
            depth = int(self.params.get("depth", 64 if time_limit else 6))
            return alphabeta_values(state, player, depth, time_limit,
                                    int(self.params.get("tt", 20)))[0]
        from niwa.solver.agent_params import mcts_settings
        from niwa.solver.mcts import MCTS

        tuned = mcts_settings(state, self.params)
        tree = MCTS(self.num_players, seed=self.seed, ismcts=False, c=tuned["c"],
                    playout=tuned["playout"], cutoff=tuned["cutoff"])
        time_limit = float(self.params.get("time", 0.0))
        iters = int(self.params.get("iters", 0 if time_limit else 2000))
        r = tree.search(state, iterations=iters, time_limit=time_limit)
        return {_get(a, "action"): _get(a, "value") for a in _get(r, "actions") or []
                if _get(a, "value") is not None and isinstance(_get(a, "action"), int)}


def alphabeta_values(state, player: int, depth: int, time_limit: float, tt_bits: int = 20):
    """({action: exact-window value for player}, proven) from one alpha-beta search."""
    from niwa.solver.alphabeta import AlphaBeta

    r = AlphaBeta(state.num_players, tt_bits=tt_bits).search(
        state, depth=depth, time_limit=time_limit, player=player, root_values=True)
    values = {_get(a, "action"): _get(a, "value") for a in _get(r, "actions") or []}
    return values, bool(_get(r, "proven")) and _get(r, "value") is not None


def review_game(record: GameRecord, spec: str, *, threshold: float = 0.15,
                prove_depth: int = 40, prove_time: float = 2.0, seed: int = 0
                ) -> list[ReviewRow]:
    """One ReviewRow per ply of `record` (see the module docstring)."""
    judge = None
    rows = []
    for ply, state in record.positions():
        if ply == len(record.moves):
            break
        move = record.moves[ply]
        row = ReviewRow(ply + 1, move.by, move.move)
        rows.append(row)
        if move.by in (CHANCE, JOINT):
            continue
        judge = judge or _Judge(spec, state.num_players, seed)
        played = state.string_to_action(move.move)
        values = judge.action_values(state, move.by)
        if not values:
            continue
        row.before = max(values.values())
        row.after = values.get(played)
        if row.drop is not None and row.drop > threshold:
            row.verdict = "mistake"
            if prove_time > 0 and _proven_blunder(state, move.by, played, prove_depth,
                                                  prove_time):
                row.verdict = "blunder"
    return rows


def _proven_blunder(state, player: int, played: int, depth: int, time_limit: float) -> bool:
    values, proven = alphabeta_values(state, player, depth, time_limit, 22)
    if not proven or played not in values:
        return False
    return max(values.values()) >= WIN and values[played] <= LOSS


def plot_review(record: GameRecord, rows: list[ReviewRow], path: str) -> None:
    """The mover's value before each of its moves, by seat, mistakes and blunders marked
    (PNG, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    for seat, info in enumerate(record.seats):
        pts = [(r.ply, r.before) for r in rows if r.by == seat and r.before is not None]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker=".", lw=1, label=f"seat {seat}: {info.agent}")
    for verdict, colour, marker in (("mistake", "goldenrod", "v"), ("blunder", "red", "X")):
        pts = [(r.ply, r.after) for r in rows if r.verdict == verdict and r.after is not None]
        if pts:
            ax.scatter(*zip(*pts, strict=True), color=colour, marker=marker, s=70, zorder=3,
                       edgecolors="black", label=f"{verdict} (value after it)")
    ax.set_xlabel("ply")
    ax.set_ylabel("value for the mover (before its move)")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"{record.game}: review")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
