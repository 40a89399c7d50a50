"""The finishing order of a played game: each seat's place (1 = first, ties share the
average of the places they span, so 1st and a tie for 2nd-3rd give 1, 2.5, 2.5).

Players are ordered by their result (the game's returns, so the winner is always first),
then by the game's declared placement score (`GameSpec.placement`, e.g. Bonsai's final
points), higher first. A forfeit places the forfeiter last and the others tied above it;
a capped or unfinished game places everyone tied (as its shared result says).

>>> places([1.0, 0.0, 0.0], [30.0, 12.0, 44.0])
[1.0, 3.0, 2.0]
>>> places([0.0, 0.0, 0.0, 1.0])
[3.0, 3.0, 3.0, 1.0]
"""

from __future__ import annotations

from niwa.analysis.stats.placement import places


def finish(result, spec) -> tuple[list[float], list[float] | None]:
    """(places, placement scores or None) of a GameResult; `spec` is the game's GameSpec
    (or None for a game outside the registry)."""
    n = len(result.results)
    if result.error_seat is not None:
        return places([0.0 if s == result.error_seat else 1.0 for s in range(n)]), None
    scores = None
    if spec is not None and spec.placement is not None and result.state is not None:
        try:
            scores = [float(x) for x in spec.placement(result.state)]
        except Exception:   # a placement score is a bonus; never lose a game over it
            scores = None
    if result.capped or result.quit:
        return places([0.0] * n), scores
    return places(result.results, scores), scores


def finish_columns(result, spec) -> dict:
    """The games.csv columns `place_<seat>` and `points_<seat>` (empty when unknown)."""
    where, scores = finish(result, spec)
    n = len(where)
    return {**{f"place_{s}": repr(where[s]) for s in range(n)},
            **{f"points_{s}": "" if scores is None else repr(round(scores[s], 6))
               for s in range(n)}}


def finish_column_names(n_players: int) -> list[str]:
    return [f"place_{s}" for s in range(n_players)] + [f"points_{s}" for s in range(n_players)]


def added_later(column: str) -> bool:
    """Columns that logs written before clocks and placements lack (a resume adds them)."""
    return column in ("termination", "opening") or column.startswith(("place_", "points_"))
