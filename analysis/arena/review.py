"""Review a recorded game: the value of every position for the seat to move, each move's
drop in value for its mover, and verdicts (inaccuracy, mistake, proven blunder).

One perspective. Every position of the game gets one value per seat, computed once and
reused: a row's `before` is the position before the move for its mover, `after` the
position after it for the same mover, so for two players `after` of one row is
`1 - before` of the next row when the other seat moves next (the next row's mover).

Where a value comes from, best first (the row's `source_before` / `source_after`):
  end     the game is over: its returns;
  table   a Lotus endgame table (niwa.solver.tables) holds the position: exact;
  known   a shipped opening book, a certificate or a proof record already proves it,
          or its moves decide it (niwa.solver.known; the full game's openings): exact;
  proof   the df-pn proof search (solver/proof.pyx) decides it within `prove_time`
          seconds, or the judging alpha-beta searched every line to the end: exact;
  search  the judging searcher's estimate (alpha-beta's value, MCTS's root mean).
Exact values exist only for two players, no chance, nothing hidden (Lotus); Haru and
Bonsai positions are judged by the searcher with open hands (a review knows how the
hidden draws fell).

Verdicts, for a move of one seat (chance and joint plies get none):
  forced      one legal move, or every move leads to the same position: no drop, never
              flagged (its position takes the value of the one position it leads to);
  blunder     both values exact and the move changes the mover's value (win -> draw or
              loss, draw -> loss);
  mistake     otherwise, the searcher's drop (its value before minus after, both its own,
  inaccuracy  even where one side is exact) beyond MISTAKE_DROP / INACCURACY_DROP.
A move from a proven loss, or one that keeps a proven win, loses nothing. The thresholds
are calibrated on positions whose values are exact: bench/review-calibration/ (README.md
and results/) measures the default searcher's drops for moves that keep and moves that
lose the exact value, and picks each threshold for a stated false-flag rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from niwa.analysis.arena.game_record import CHANCE, JOINT, GameRecord
from niwa.ext.errors import NiwaError

# Calibrated on 1,665 value-keeping and 330 value-losing moves of Lotus positions whose
# values are exact (endgames inside the k = 3 tables, two small boards the proof search
# decides; bench/review-calibration/results/thresholds.csv) for the default searcher
# alphabeta:depth=6 (the mean of its last two depths): 0.96% of value-keeping moves drop
# by more than MISTAKE_DROP and 4.9% by more than INACCURACY_DROP; of value-losing moves
# 14% and 40% do (the searcher's drop alone separates them weakly: AUC 0.80).
MISTAKE_DROP = 0.54
INACCURACY_DROP = 0.35
DEFAULT_SEARCHER = "alphabeta:depth=6"
EXACT_SOURCES = ("end", "table", "known", "proof")
VERDICTS = ("forced", "inaccuracy", "mistake", "blunder")
EPS = 1e-9
BOUNDARY_EFFORT = 4.0       # proof budget, in --prove-time units, beside a proven position


@dataclass
class ReviewRow:
    ply: int                        # 1-based
    by: int | str                   # seat, "chance" or "joint"
    move: str | list[str]
    before: float | None = None     # the position before the move, for the mover
    after: float | None = None      # the position after it, for the same mover
    source_before: str = ""         # end / table / proof / search
    source_after: str = ""
    drop: float | None = None       # what the verdict compares (see drop_basis)
    drop_basis: str = ""            # "exact" (both values exact) or "search"
    verdict: str = ""               # "", forced, inaccuracy, mistake or blunder

    @property
    def by_text(self) -> str:
        return f"seat {self.by}" if isinstance(self.by, int) else str(self.by)

    @property
    def move_text(self) -> str:
        return "+".join(m for m in self.move if m) if isinstance(self.move, list) else self.move

    @property
    def source_text(self) -> str:
        """'table', or 'proof>search' when the two values come from different places."""
        if self.source_before == self.source_after:
            return self.source_before
        return f"{self.source_before}>{self.source_after}"


@dataclass
class PositionValue:
    """What is known of one position: exact values per seat and the searcher's."""

    exact: dict[int, float] | None = None
    exact_source: str = ""
    search: dict[int, float] = field(default_factory=dict)
    boundary_checked: bool = False

    def shown(self, seat: int) -> tuple[float | None, str]:
        if self.exact is not None:
            return self.exact[seat], self.exact_source
        return self.search.get(seat), "search" if seat in self.search else ""


def _get(result, name):
    """A search result's field, whether the searcher returns a dict or a SearchResult."""
    return result.get(name) if isinstance(result, dict) else getattr(result, name, None)


def exact_capable(state) -> bool:
    """Whether a value of `state` can be exact: two players, no chance, nothing hidden."""
    from niwa.solver.solve import proof_refusal

    return proof_refusal(state) is None


class Judge:
    """Values positions: exactly where a table or a proof decides, else with a searcher
    built from an agent spec (alphabeta:... or mcts:...)."""

    def __init__(self, spec: str, num_players: int, *, tables="auto", prove_time: float = 0.25,
                 seed: int = 0, known: bool = True):
        from niwa.solver.agent_spec import AgentSpec

        parsed = AgentSpec.parse(spec)
        self.name, self.params = parsed.name, parsed.params
        if self.name not in ("alphabeta", "mcts", "ismcts"):
            raise NiwaError(f"review needs a searcher (alphabeta:... or mcts:...), not "
                            f"{self.name!r}")
        if prove_time < 0:
            raise NiwaError(f"--prove-time must be >= 0, not {prove_time:g}")
        self.num_players, self.seed = num_players, seed
        self.tables, self.prove_time, self.known = tables, prove_time, known
        self._table, self._table_known, self._proof = None, False, None
        self._ab = None

    # ---- exact values ------------------------------------------------------------------
    def table_for(self, state):
        if not self._table_known:
            from niwa.solver.tables import resolve_tables

            self._table_known = True
            self._table = resolve_tables(state, self.tables) if self.tables else None
        return self._table

    def exact(self, state, effort: float = 1.0) -> tuple[dict[int, float], str] | None:
        """({seat: value}, source) when the game's end, a table, a known result or a proof
        (within `effort` times the proof budget) decides `state`."""
        if state.is_terminal():
            return {q: float(v) for q, v in enumerate(state.returns())}, "end"
        if not exact_capable(state):
            return None
        mover = state.current_player()
        table = self.table_for(state)
        if table is not None:
            from niwa.solver.tables import table_value

            known = table_value(table, state)
            if known is not None:
                return {mover: known[0], 1 - mover: 1.0 - known[0]}, "table"
        if self.known:
            from niwa.solver.known import known_answer

            # (the loser's positions of a book's tree are known through their moves: the
            # book holds the winner's positions only)
            found, _ = known_answer(state)
            if found is not None:
                return {mover: found.value, 1 - mover: 1.0 - found.value}, "known"
        if self.prove_time > 0:
            if self._proof is None:
                from niwa.solver.proof import ProofSearch

                self._proof = ProofSearch(tt_mb=64, tables=table)
            v = self._proof.prove_value(state, mover, time_limit=effort * self.prove_time)
            if v is not None:
                return {mover: float(v), 1 - mover: 1.0 - float(v)}, "proof"
        return None

    # ---- the searcher's values ---------------------------------------------------------
    def _fresh_ab(self):
        from niwa.solver.alphabeta import AlphaBeta

        if self._ab is None:
            self._ab = AlphaBeta(self.num_players, tt_bits=int(self.params.get("tt", 20)))
        self._ab.clear_tt()
        self._ab.clear_history()
        return self._ab

    def search(self, state, seat: int, seed: int = 0) -> tuple[dict[int, float], bool]:
        """({seat: value, ...} for `seat` and whatever seats the same search values,
        proven), the searcher's estimate of non-terminal `state`."""
        if state.is_terminal():
            return {q: float(v) for q, v in enumerate(state.returns())}, True
        if self.name == "alphabeta":
            deepest, previous, proven = self.alphabeta_depths(state, seat)
            # the evaluation swings with the parity of the depth (whose move it is at the
            # leaves); the mean of the last two depths cancels most of the swing
            # (bench/review-calibration measures both)
            v = deepest if previous is None else 0.5 * (deepest + previous)
            out = {seat: v}
            if self.num_players == 2:       # alpha-beta's two-player values sum to 1
                out[1 - seat] = 1.0 - v
            return out, proven
        from niwa.solver.agent_params import mcts_settings
        from niwa.solver.mcts import MCTS
        from niwa.solver.solve import has_hidden_information

        tuned = mcts_settings(state, self.params)
        tree = MCTS(self.num_players, seed=self.seed + seed, ismcts=has_hidden_information(state)
                    and self.name == "ismcts", c=tuned["c"], playout=tuned["playout"],
                    cutoff=tuned["cutoff"])
        time_limit = float(self.params.get("time", 0.0))
        iters = int(self.params.get("iters", 0 if time_limit else 2000))
        r = tree.search(state, iterations=iters, time_limit=time_limit)
        values = _get(r, "values")
        if values is not None:
            return {q: float(v) for q, v in enumerate(values) if v is not None}, False
        v = _get(r, "value")
        out = {} if v is None else {_get(r, "player"): float(v)}
        if v is not None and self.num_players == 2:
            out[1 - _get(r, "player")] = 1.0 - float(v)
        return out, False


    def alphabeta_depths(self, state, seat: int) -> tuple[float, float | None, bool]:
        """(value at the deepest depth reached, value one ply shallower or None, proven)
        for `seat`, each from a fresh table and history: a position's value must not
        depend on what was searched before it (a kept table changes it)."""
        time_limit = float(self.params.get("time", 0.0))
        depth = int(self.params.get("depth", 64 if time_limit else 6))
        r = self._fresh_ab().search(state, depth=depth, time_limit=time_limit, player=seat)
        v = _get(r, "value")
        if v is None:
            raise NiwaError("alphabeta: no search iteration finished in time; give it more "
                            "time")
        proven = bool(_get(r, "proven"))
        reached = int(_get(r, "depth") or depth)
        if proven or reached <= 1:
            return float(v), None, proven
        prev = _get(self._fresh_ab().search(state, depth=reached - 1, player=seat), "value")
        return float(v), None if prev is None else float(prev), proven


def is_forced(state) -> bool:
    """One legal move, or every legal move leads to the same position.

    >>> from niwa.ext.registry import parse_position
    >>> is_forced(parse_position("lotus"))
    False
    >>> is_forced(parse_position("lotus players=2 rule=basic trampoline=optional; "
    ...                          "track 12:W 13:B; start -; goal W:9 B:9; turn W"))
    True
    """
    legal = state.legal_actions()
    if len(legal) <= 1:
        return True
    first = state.child(legal[0]).to_notation()
    return all(state.child(a).to_notation() == first for a in legal[1:])


class _Positions:
    """The record's positions and their values, each computed once (lazily)."""

    def __init__(self, record: GameRecord, judge: Judge):
        self.states = [s for _, s in record.positions()]
        self.judge = judge
        self.values: dict[int, PositionValue] = {}
        self._forced: dict[int, bool] = {}

    def forced(self, k: int) -> bool:
        if k not in self._forced:
            s = self.states[k]
            self._forced[k] = (k + 1 < len(self.states) and not s.is_terminal()
                               and s.current_player() >= 0 and is_forced(s))
        return self._forced[k]

    def _resolve(self, k: int) -> int:
        while self.forced(k):
            k += 1
        return k

    def _first_look(self, k: int) -> PositionValue:
        """Position k's entry, with the ordinary attempt at an exact value made."""
        k = self._resolve(k)
        pv = self.values.get(k)
        if pv is None:
            pv = self.values[k] = PositionValue()
            found = self.judge.exact(self.states[k])
            if found is not None:
                pv.exact, pv.exact_source = found
        return pv

    def value(self, k: int) -> PositionValue:
        """Position k's values; a forced position shares the one it leads to. A position
        left unproven beside a proven one (before or after it) gets BOUNDARY_EFFORT times
        the proof budget: it is usually a proof just out of reach, and a move between a
        proven and an unproven value can only be judged by the searcher."""
        k = self._resolve(k)
        pv = self._first_look(k)
        if pv.exact is None and not pv.boundary_checked and self.judge.prove_time > 0:
            pv.boundary_checked = True
            neighbours = [j for j in (k - 1, k + 1) if 0 <= j < len(self.states)]
            if any(self._first_look(j).exact is not None for j in neighbours):
                found = self.judge.exact(self.states[k], effort=BOUNDARY_EFFORT)
                if found is not None:
                    pv.exact, pv.exact_source = found
        return pv

    def searched(self, k: int, seat: int) -> float | None:
        """The searcher's value of position k for `seat` (computed once per seat)."""
        k = self._resolve(k)
        pv = self.value(k)
        if seat not in pv.search:
            values, proven = self.judge.search(self.states[k], seat, seed=k)
            pv.search.update(values)
            if proven and pv.exact is None and exact_capable(self.states[k]):
                # alpha-beta searched every line to the end: an exact value
                pv.exact, pv.exact_source = dict(values), "proof"
        return pv.search.get(seat)

    def shown(self, k: int, seat: int) -> tuple[float | None, str]:
        """Position k's value for `seat` as a row shows it (exact first, else searched)."""
        pv = self.value(k)
        if pv.exact is None and seat not in pv.search:
            self.searched(k, seat)
            pv = self.value(k)
        return pv.shown(seat)


def review_rows(record: GameRecord, spec: str = DEFAULT_SEARCHER, *,
                mistake: float = MISTAKE_DROP, inaccuracy: float = INACCURACY_DROP,
                tables="auto", prove_time: float = 0.25, seed: int = 0, known: bool = True):
    """An iterator of one ReviewRow per ply of `record`, in order, each computed when it
    is asked for (see the module docstring); bad options raise NiwaError at the call.
    `tables`: "auto" (the default tables folder), a folder, a loaded table, or None;
    `prove_time`: seconds of df-pn proof per position (0: none); `known`: take the values
    a shipped book, a certificate or a proof record proves (source "known")."""
    if not 0 <= inaccuracy <= mistake:
        raise NiwaError(f"thresholds must satisfy 0 <= inaccuracy <= mistake, not "
                        f"{inaccuracy:g} and {mistake:g}")
    judge = Judge(spec, record.start_state().num_players, tables=tables,
                  prove_time=prove_time, seed=seed, known=known)
    # the checks above run at the call; the rows come one by one as they are asked for
    return _rows(record, _Positions(record, judge), mistake, inaccuracy)


def _rows(record: GameRecord, positions: _Positions, mistake: float, inaccuracy: float):
    for ply, move in enumerate(record.moves):
        row = ReviewRow(ply + 1, move.by, move.move)
        if move.by in (CHANCE, JOINT):
            yield row
            continue
        mover = move.by
        row.after, row.source_after = positions.shown(ply + 1, mover)
        if positions.forced(ply):
            row.before, row.source_before = row.after, row.source_after
            row.drop, row.drop_basis, row.verdict = 0.0, "forced", "forced"
            yield row
            continue
        row.before, row.source_before = positions.shown(ply, mover)
        _judge_row(row, positions, ply, mover, mistake, inaccuracy)
        yield row


def _judge_row(row: ReviewRow, positions: _Positions, ply: int, mover: int,
               mistake: float, inaccuracy: float) -> None:
    exact_before = row.source_before in EXACT_SOURCES
    exact_after = row.source_after in EXACT_SOURCES
    if exact_before and exact_after:
        row.drop, row.drop_basis = max(0.0, row.before - row.after), "exact"
        row.verdict = "blunder" if row.drop > EPS else ""
        return
    if (exact_before and row.before <= EPS) or (exact_after and row.after >= 1 - EPS):
        # from a proven loss nothing can be lost; a move that keeps a proven win loses nothing
        row.drop, row.drop_basis = 0.0, "exact"
        return
    before = positions.searched(ply, mover)
    after = positions.searched(ply + 1, mover)
    if before is None or after is None:
        return
    row.drop, row.drop_basis = max(0.0, before - after), "search"
    row.verdict = ("mistake" if row.drop > mistake else
                   "inaccuracy" if row.drop > inaccuracy else "")


def review_game(record: GameRecord, spec: str = DEFAULT_SEARCHER, **options) -> list[ReviewRow]:
    """Every ReviewRow of `record` (review_rows, collected)."""
    return list(review_rows(record, spec, **options))


def alphabeta_values(state, player: int, depth: int, time_limit: float, tt_bits: int = 20):
    """({action: exact-window value for player}, proven) from one alpha-beta search."""
    from niwa.solver.alphabeta import AlphaBeta

    r = AlphaBeta(state.num_players, tt_bits=tt_bits).search(
        state, depth=depth, time_limit=time_limit, player=player, root_values=True)
    values = {_get(a, "action"): _get(a, "value") for a in _get(r, "actions") or []}
    return values, bool(_get(r, "proven")) and _get(r, "value") is not None


def seat0_value(row: ReviewRow, num_players: int) -> float | None:
    """The value after the row's move for seat 0 (two players: 1 - the mover's value)."""
    if row.after is None or not isinstance(row.by, int):
        return None
    return row.after if row.by == 0 else (1.0 - row.after if num_players == 2 else None)


def plot_review(record: GameRecord, rows: list[ReviewRow], path: str) -> None:
    """The value over the game (PNG, Agg backend): for two players seat 0's value of the
    position after each seat's move; for more, each mover's value after its move. Exact
    values are filled markers, inaccuracies, mistakes and blunders marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(record.seats)
    fig, ax = plt.subplots(figsize=(9, 4))
    if n == 2:
        pts = [(r.ply, seat0_value(r, n)) for r in rows if seat0_value(r, n) is not None]
        if pts:
            ax.plot(*zip(*pts, strict=True), lw=1, color="0.4", label="value for seat 0")
        exact = [(r.ply, seat0_value(r, n)) for r in rows
                 if seat0_value(r, n) is not None and r.source_after in EXACT_SOURCES]
        if exact:
            ax.scatter(*zip(*exact, strict=True), s=12, color="black", zorder=2,
                       label="exact (table, proof, end)")
        ylabel = f"value for seat 0 ({record.seats[0].agent}) after the ply"
        marks = {r.ply: seat0_value(r, n) for r in rows}
    else:
        for seat, info in enumerate(record.seats):
            pts = [(r.ply, r.after) for r in rows if r.by == seat and r.after is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker=".", lw=1,
                        label=f"seat {seat}: {info.agent}")
        ylabel = "value for the mover after its move"
        marks = {r.ply: r.after for r in rows}
    for verdict, colour, marker in (("inaccuracy", "khaki", "o"), ("mistake", "orange", "v"),
                                    ("blunder", "red", "X")):
        pts = [(r.ply, marks[r.ply]) for r in rows
               if r.verdict == verdict and marks.get(r.ply) is not None]
        if pts:
            ax.scatter(*zip(*pts, strict=True), color=colour, marker=marker, s=70, zorder=3,
                       edgecolors="black", label=verdict)
    ax.set_xlabel("ply")
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"{record.game}: review ({'seat 0' if n == 2 else 'mover'}'s perspective)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
