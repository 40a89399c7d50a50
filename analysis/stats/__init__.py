"""Pure statistics, each module stating its model at the top: intervals, tests between
samples, ratings (ML Elo with seat advantage, LOS), the SPRT and tournament standings.

The interval and test functions are re-exported here (`from niwa.analysis import stats`).
"""

from niwa.analysis.stats.intervals import (
    CONFIDENCE,
    binomial_p,
    newcombe_interval,
    wilson_interval,
)
from niwa.analysis.stats.tests import (
    LengthTest,
    TableTest,
    compare_lengths,
    compare_tables,
    describe,
    holm,
    seat_uniformity_p,
)

__all__ = ["CONFIDENCE", "LengthTest", "TableTest", "binomial_p", "compare_lengths",
           "compare_tables", "describe", "holm", "newcombe_interval", "seat_uniformity_p",
           "wilson_interval"]
