"""Reading the one-line position notations: the steps every game's parser shares.

A notation is ';'-separated parts; the first is the header (the game name, then the
variant as key=value words), each other part starts with its own word. Every number is
checked where it is read (plain ASCII digits, within the range the game gives it), so
nothing out of range reaches an engine's C fields. Every failure is one NotationError
that names the offending part and what was expected.

>>> from niwa.ext.registry import get_game
>>> read_header("lotus players=3", get_game("lotus"))["players"]
3
>>> integer("12", "goal W", 0, 20)
12
>>> parse_multiset(["GW*2", "T"], ("T", "GW"), "deck", 10)
[1, 2]
"""

from __future__ import annotations

import re

from niwa.ext.errors import NotationError, VariantError

# A count or coordinate as the notation writes it: an optional minus and ASCII digits
# (int() alone would also take '+1', '1_0', ' 1' and non-ASCII digits). The length cap
# keeps conversion cheap; the range check that follows gives the real bound.
_INTEGER = re.compile(r"-?[0-9]{1,18}")


def split_parts(text: str, game: str, count: int | None, names: str) -> list[str]:
    """The stripped ';'-separated parts of `text`; with `count`, exactly that many.
    `names` lists the parts for the message, e.g. 'header; track; start; goal; turn'."""
    parts = [part.strip() for part in text.strip().split(";")]
    if count is not None and len(parts) != count:
        raise NotationError(f"{game} notation needs {count} ';'-separated parts ({names}), "
                            f"got {len(parts)}")
    return parts


def read_header(part: str, spec) -> dict:
    """The full, checked variant of a header like 'lotus players=3 rule=pro', read by the
    game's spec; a key given twice is refused."""
    words = part.split()
    if not words or words[0] != spec.name:
        raise NotationError(f"{spec.name} notation must begin with {spec.name!r}, "
                            f"got {part[:20]!r}")
    given = key_values(words[1:], "header", normalise=lambda key: key.replace("-", "_"))
    try:
        return spec.parse_variant(given)
    except VariantError as e:
        raise NotationError(str(e)) from None


def section(parts: list[str], index: int, word: str) -> str:
    """The text of part `index` after its leading `word` ('' if nothing follows)."""
    words = parts[index].split(None, 1)
    if not words or words[0] != word:
        raise NotationError(f"part {index + 1} must start with {word!r}, "
                            f"got {parts[index][:20]!r}")
    return words[1].strip() if len(words) > 1 else ""


def key_values(tokens, where: str, normalise=None) -> dict[str, str]:
    """['a=1', 'b=x'] -> {'a': '1', 'b': 'x'}; a key given twice is refused (which one
    would be meant?)."""
    out = {}
    for token in tokens:
        if "=" not in token:
            raise NotationError(f"{where} item {token!r} should be key=value")
        key, value = token.split("=", 1)
        if normalise is not None:
            key = normalise(key)
        if key in out:
            raise NotationError(f"{where}: {key!r} is given twice "
                                f"({key}={out[key]}, {key}={value})")
        out[key] = value
    return out


def integer(text: str, where: str, lo: int, hi: int) -> int:
    """`text` as an integer in lo..hi, or a NotationError naming `where`."""
    if not _INTEGER.fullmatch(text):
        raise NotationError(f"{where}: {text[:24]!r} is not an integer; expected {lo}..{hi}")
    value = int(text)
    if not lo <= value <= hi:
        raise NotationError(f"{where} {value} is out of range {lo}..{hi}")
    return value


def format_multiset(counts, names) -> str:
    """[1, 2, 0] with names (T, GW, GL) -> 'T GW*2'; '-' when empty."""
    tokens = [names[i] + (f"*{k}" if k > 1 else "") for i, k in enumerate(counts) if k]
    return " ".join(tokens) or "-"


def parse_multiset(tokens, names, where: str, most: int) -> list[int]:
    """['T', 'GW*2'] -> counts by index of `names`; '-' is empty. A name may repeat (its
    counts add up) but no count, nor any name's total, may pass `most`."""
    counts = [0] * len(names)
    if list(tokens) == ["-"]:
        return counts
    for token in tokens:
        name, star, k = token.partition("*")
        if name not in names:
            raise NotationError(f"{where}: unknown card {name!r}; cards are {' '.join(names)}")
        index = names.index(name)
        counts[index] += integer(k, f"{where} count in {token!r}", 1, most) if star else 1
        if counts[index] > most:
            raise NotationError(f"{where}: {counts[index]} of {name} is more than {most}")
    return counts
