"""A two-agent match summarised the way cutechess-cli and fastchess print it: the Elo
difference with its 95% error margin, and the likelihood of superiority (LOS)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from niwa.analysis.stats.ratings import Z95, los_from_counts, score_to_elo


@dataclass(frozen=True)
class MatchSummary:
    wins: int
    draws: int
    losses: int
    elo: float          # +-inf when every game went one way
    margin: float       # half the 95% interval in Elo (inf when unbounded)
    los: float          # in [0, 1]

    def line(self) -> str:
        """'Elo difference 52.3 ± 40.1, LOS 99.5% (W-D-L 30-10-10)'."""
        if math.isinf(self.elo):
            elo = f"{'+' if self.elo > 0 else '-'}inf (every game went one way)"
        else:
            margin = "inf" if math.isinf(self.margin) else f"{self.margin:.1f}"
            elo = f"{self.elo:+.1f} ± {margin}"
        return (f"Elo difference {elo}, LOS {100 * self.los:.1f}% "
                f"(W-D-L {self.wins}-{self.draws}-{self.losses})")


def match_summary(wins: int, draws: int, losses: int) -> MatchSummary:
    """The first agent's Elo difference over the second from its W-D-L (the score's
    normal approximation with the observed per-game variance, as fastchess computes it);
    LOS from wins and losses only (draws cancel)."""
    n = wins + draws + losses
    if n == 0:
        return MatchSummary(0, 0, 0, 0.0, math.inf, 0.5)
    score = (wins + 0.5 * draws) / n
    los = los_from_counts(wins, losses)
    if score in (0.0, 1.0):
        return MatchSummary(wins, draws, losses, math.copysign(math.inf, score - 0.5),
                            math.inf, los)
    variance = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2
                + losses * score ** 2) / n
    half = Z95 * math.sqrt(variance / n)
    low, high = score - half, score + half
    margin = (math.inf if low <= 0 or high >= 1
              else (score_to_elo(high) - score_to_elo(low)) / 2)
    return MatchSummary(wins, draws, losses, score_to_elo(score), margin, los)
