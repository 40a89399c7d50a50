"""One verdict logic for every claim a report makes about a difference, defined once.

Model. A claim is about one quantity d (a difference of two rates, or a rate minus its
fair share), measured as an estimate with a 95% interval [low, high] (Newcombe or
Wilson, see stats.intervals), and a margin m > 0: the largest difference a designer
would call "no difference" (niwa analyse --margin, default 5 points). All numbers are
taken *as reported*: rounded to 0.1 points, so that a sentence can never say more than
its printed interval.

Derivation. Two questions, both read off the same interval:
- Equivalence (TOST, Schuirmann 1987): H0 |d| >= m is rejected at level alpha = 0.025
  per side when the 95% interval lies inside (-m, +m). This is the only route to "no
  difference" ("equivalent", or for strength ladders "converged").
- Difference: H0 d = 0 is rejected at level 0.05 (two-sided) when the interval excludes
  0 ("different"; for ladders "moving").
When both hold (a real difference smaller than the margin), the margin decides:
"equivalent", and the sentence says the difference is real but small; that way one
quantity gets exactly one word. When neither holds, the verdict is "undecided", with
the games needed to decide: the interval's half-width shrinks as 1/sqrt(n), and it must
shrink to max(m - |d|, |d|) (inside the margin, or clear of 0, whichever comes first if
the estimate stays where it is).

Because every verdict here is a function of (low, high, margin) only, two sentences about
the same interval cannot disagree, and no sentence can contradict the interval it
prints; p-values are reported in the tables, never used for a verdict.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

EQUIVALENT, DIFFERENT, UNDECIDED = "equivalent", "different", "undecided"
DEFAULT_MARGIN = 0.05


def as_points(x: float) -> float:
    """A rate difference in points, rounded as reports print it (no -0.0).

    >>> as_points(0.04449), as_points(-0.00001)
    (4.4, 0.0)
    """
    return round(100 * x, 1) + 0.0


def fmt_points(x: float) -> str:
    """'+4.4', '-2.0', '+0.0'.

    >>> fmt_points(0.0444), fmt_points(-0.02), fmt_points(-0.00001)
    ('+4.4', '-2.0', '+0.0')
    """
    return f"{as_points(x):+.1f}"


def classify(low: float, high: float, margin: float = DEFAULT_MARGIN) -> str:
    """The verdict on a 95% interval [low, high] of a difference, against +-margin.

    >>> classify(-0.029, 0.041)         # inside +-5 points
    'equivalent'
    >>> classify(0.01, 0.04)            # real but inside the margin
    'equivalent'
    >>> classify(0.038, 0.377)          # excludes 0, wider than the margin
    'different'
    >>> classify(-0.125, 0.221)         # contains 0 and reaches past the margin
    'undecided'
    >>> classify(float("nan"), 0.1)
    'undecided'
    """
    if margin <= 0:
        raise ValueError(f"margin must be positive, got {margin}")
    if math.isnan(low) or math.isnan(high):
        return UNDECIDED
    lo, hi, m = as_points(low), as_points(high), as_points(margin)
    if -m < lo and hi < m:
        return EQUIVALENT
    if lo > 0 or hi < 0:
        return DIFFERENT
    return UNDECIDED


def excludes_zero(low: float, high: float) -> bool:
    """Whether the printed interval lies clear of 0.

    >>> excludes_zero(0.001, 0.2), excludes_zero(0.0004, 0.2)
    (True, False)
    """
    return as_points(low) > 0 or as_points(high) < 0


def games_needed(estimate: float, low: float, high: float, games: int,
                 margin: float = DEFAULT_MARGIN) -> int:
    """Games (per sample, as `games` counts them) after which an undecided interval would
    decide, if the estimate stayed put: the half-width ~ 1/sqrt(n) must fall below
    max(margin - |d|, |d|).

    >>> games_needed(0.0, -0.10, 0.10, 100)        # to +-5: half-width 10 -> 5 points
    400
    >>> games_needed(0.08, -0.02, 0.18, 100)       # |d| = 8 > 5: clear 0 first
    157
    >>> games_needed(-0.076, -0.141, 0.001, 144)   # on the edge: one more game at least
    145
    """
    half = (high - low) / 2
    if games <= 0 or not half > 0 or math.isnan(estimate):
        return 0
    target = max(margin - abs(estimate), abs(estimate))
    # at least one more: an undecided interval is not decided by the games it already has
    return max(games + 1, math.ceil(games * (half / target) ** 2))


@dataclass(frozen=True)
class Verdict:
    """One claim of a report: what it is about, the interval, and the word for it.

    `subject` names the thing measured (e.g. "rule=pro vs rule=basic at mcts:iters=100,
    seat 0's win rate"); claims with the same subject are the same quantity.
    """

    subject: str
    kind: str               # EQUIVALENT, DIFFERENT or UNDECIDED
    estimate: float
    low: float
    high: float
    margin: float
    games: int              # per sample, for games_needed
    needed: int             # games per sample to decide (0 unless undecided)

    @property
    def interval_text(self) -> str:
        return (f"{fmt_points(self.estimate)} points, 95% CI {fmt_points(self.low)} to "
                f"{fmt_points(self.high)}")

    @property
    def margin_text(self) -> str:
        return f"+-{as_points(self.margin):g} points"


def judge(subject: str, estimate: float, low: float, high: float, games: int,
          margin: float = DEFAULT_MARGIN) -> Verdict:
    """The verdict on one quantity.

    >>> v = judge("x", 0.03, -0.05, 0.11, 300)
    >>> v.kind, v.needed, v.interval_text
    ('undecided', 2134, '+3.0 points, 95% CI -5.0 to +11.0')
    """
    kind = classify(low, high, margin)
    needed = games_needed(estimate, low, high, games, margin) if kind == UNDECIDED else 0
    return Verdict(subject, kind, estimate, low, high, margin, games, needed)


# ---- the words for each kind, per kind of question --------------------------------------
@dataclass(frozen=True)
class Wording:
    """What the three kinds are called for one kind of question, and what its games are."""

    same: str               # EQUIVALENT: "equivalent", "fair", "converged"
    small: str              # a real difference inside the margin: "a real but small ..."
    differ: tuple[str, str]     # DIFFERENT, for a positive and for a negative estimate
    unit: str               # what games_needed counts
    reference: str = ""     # what the estimate is measured from, after the interval


CHANGE = Wording("equivalent", "change", ("different", "different"), "games per variant")
RUNG_CHANGE = Wording("equivalent", "change", ("different", "different"), "games per rung")
BALANCE = Wording("fair", "lean", ("seat 0 has an advantage", "seat 0 has a disadvantage"),
                  "decisive games", " from the fair share")
LADDER = Wording("converged", "drift", ("still moving", "still moving"), "games per rung")


def words(v: Verdict, wording: Wording = CHANGE) -> str:
    """The clause for a verdict, in the words of its kind of question.

    >>> words(judge("x", 0.03, 0.01, 0.049, 900))
    'equivalent within +-5 points (a real but small change: +3.0 points, 95% CI +1.0 to +4.9)'
    >>> words(judge("x", 0.2, 0.04, 0.38, 60))
    'different (+20.0 points, 95% CI +4.0 to +38.0)'
    >>> words(judge("x", 0.134, 0.104, 0.162, 1070), BALANCE)
    'seat 0 has an advantage (+13.4 points, 95% CI +10.4 to +16.2 from the fair share)'
    >>> words(judge("x", 0.0, -0.03, 0.03, 1000), BALANCE)
    'fair within +-5 points (+0.0 points, 95% CI -3.0 to +3.0 from the fair share)'
    >>> clause = words(judge("x", 0.033, -0.029, 0.096, 300), LADDER).split(" (")
    >>> clause[0]
    'undecided: more games needed, about 1077 games per rung in all'
    >>> clause[1]
    '+3.3 points, 95% CI -2.9 to +9.6; margin +-5 points)'
    """
    nums = v.interval_text + wording.reference
    if v.kind == EQUIVALENT:
        small = f"a real but small {wording.small}: " if excludes_zero(v.low, v.high) else ""
        return f"{wording.same} within {v.margin_text} ({small}{nums})"
    if v.kind == DIFFERENT:
        return f"{wording.differ[v.estimate < 0]} ({nums})"
    return (f"undecided: more games needed, about {v.needed} {wording.unit} in all "
            f"({nums}; margin {v.margin_text})")


def holm_note(v: Verdict, p_adjusted: float, tests: int) -> str:
    """What a "different" verdict owes to the number of tests: its interval is not
    adjusted for them, its p-value is (Holm), and when that p-value is 0.05 or more the
    sentence says so, so that the verdict and the tables' Holm column never disagree.

    >>> print(holm_note(judge("x", 0.104, 0.031, 0.185, 144), 0.062, 12).strip())
    (not significant after Holm's correction for 12 tests: adjusted p = 0.062, may be chance)
    >>> holm_note(judge("x", 0.104, 0.031, 0.185, 144), 0.004, 12)
    ''
    """
    if v.kind != DIFFERENT or tests < 2 or not p_adjusted >= 0.05:
        return ""
    return (f" (not significant after Holm's correction for {tests} tests: "
            f"adjusted p = {p_adjusted:.3f}, may be chance)")


# ---- reading a sentence back (for the consistency checks) --------------------------------
_INTERVAL = re.compile(r"([+-]\d+\.\d) points, 95% CI ([+-]\d+\.\d) to ([+-]\d+\.\d)")
_MARGIN = re.compile(r"\+-(\d+(?:\.\d+)?) points")
_WORDINGS = (CHANGE, RUNG_CHANGE, BALANCE, LADDER)
WORDS = {EQUIVALENT: tuple(dict.fromkeys(f"{w.same} within" for w in _WORDINGS)),
         DIFFERENT: tuple(dict.fromkeys(f"{d} (" for w in _WORDINGS for d in w.differ)),
         UNDECIDED: ("undecided:",)}


def claims_in(sentence: str, margin: float = DEFAULT_MARGIN) -> list[tuple[str, str]]:
    """(kind the words claim, kind the printed interval supports) for each verdict clause
    of a sentence; a consistent sentence has them equal. Independent of `judge`: it only
    reads the text.

    >>> claims_in("rule=pro: " + words(judge("x", 0.2, 0.04, 0.38, 60)))
    [('different', 'different')]
    >>> claims_in("rule=pro: no change (+20.0 points, 95% CI +4.0 to +38.0)")
    [('none', 'different')]
    """
    out = []
    for m in _INTERVAL.finditer(sentence):
        before = sentence[:m.start()]
        # the verdict words of this interval: the text since the previous interval
        previous = list(_INTERVAL.finditer(before))
        clause = before[previous[-1].end():] if previous else before
        said = [k for k, words in WORDS.items() if any(w in clause for w in words)]
        lo, hi = float(m.group(2)) / 100, float(m.group(3)) / 100
        out.append((said[-1] if len(said) == 1 else "none" if not said else "several",
                    classify(lo, hi, margin)))
    if any(float(x) != as_points(margin) for x in _MARGIN.findall(sentence)):
        out.append(("margin", "another margin than the run's"))
    return out
