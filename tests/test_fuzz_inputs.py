"""Mutation fuzzing of position notation and the commands that read it (issue 13).

Valid notations of all three games (from seeded random games) are mutated by character
edits, token swaps and numbers swapped for values near the C type limits. The parser must
either refuse the text with a one-line NiwaError or return a state whose notation
round-trips; anything else (OverflowError, IndexError, ...) is a bug. Seeded, so a
failure names the exact input that reproduces it.
"""

import random
import re

import pytest
from click.testing import CliRunner

from niwa.cli.main import main
from niwa.ext.errors import NiwaError
from niwa.ext.registry import get_game, parse_position

# Variants whose positions are mutated, with how many seeded games each contributes.
VARIANTS = {
    "lotus": [{}, {"players": 3, "rule": "pro"}, {"players": 4, "lane": 2, "shared": 6,
                                                   "trampoline_at": 5}],
    "haru": [{}, {"view": "turn", "target": 3}],
    "bonsai": [{}, {"players": 1}, {"players": 3, "tokonoma": "on"}, {"players": 4}],
}
MUTANTS_PER_GAME = 2000
CLI_CASES = 300

# Numbers near the limits of the C types, and words that int() or float() might accept.
AWKWARD_NUMBERS = ["2147483647", "2147483648", "-2147483649", "4294967295", "4294967296",
                   "9223372036854775807", "9223372036854775808", "18446744073709551616",
                   "1" + "0" * 30, "-1", "0", "-0", "+1", "1_0", "nan", "inf", "-inf",
                   "1e309", "99999999999999999999", "\u0663", "0x10", " 1"]
EDIT_CHARS = "0123456789;:=,*/{}-?. abcdefgwxyzWLFRBYUTGMHPDop\t\u0663"


def _play_randomly(state, plies, rng):
    for _ in range(plies):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.apply(rng.choice([a for a, _ in state.chance_outcomes()]))
        elif state.is_simultaneous_node():
            state.apply_joint([rng.choice(state.legal_actions(q))
                               for q in range(state.num_players)])
        else:
            state.apply(rng.choice(state.legal_actions()))
    return state


def seed_positions(game, rng):
    """Notations along seeded random games of several variants of `game`."""
    spec = get_game(game)
    out = []
    for variant in VARIANTS[game]:
        for seed in range(4):
            state = spec.new(seed=seed, **variant)
            out.append(state.to_notation())
            for _ in range(3):
                _play_randomly(state, rng.randrange(1, 40), rng)
                out.append(state.to_notation())
                if state.is_terminal():
                    break
            if game == "bonsai" and not state.is_terminal():
                state.resample_hidden(0, seed)          # a known deck order
                out.append(state.to_notation())
    return out


def mutate(text, rng):
    """One to three random edits of `text`."""
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        kind = rng.randrange(6)
        numbers = list(re.finditer(r"\d+", text))
        if kind <= 1 and numbers:
            m = rng.choice(numbers)
            text = text[:m.start()] + rng.choice(AWKWARD_NUMBERS) + text[m.end():]
        elif kind == 2 and text:
            i = rng.randrange(len(text))
            edit = rng.randrange(3)
            ch = rng.choice(EDIT_CHARS)
            text = (text[:i] + ch + text[i + 1:] if edit == 0 else
                    text[:i] + ch + text[i:] if edit == 1 else text[:i] + text[i + 1:])
        elif kind == 3:
            words = text.split(" ")
            i, j = rng.randrange(len(words)), rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
            text = " ".join(words)
        elif kind == 4:
            words = text.split(" ")
            i = rng.randrange(len(words))
            words.insert(rng.randrange(len(words) + 1), words[i])  # a repeated token
            text = " ".join(words)
        else:
            parts = text.split(";")
            i = rng.randrange(len(parts))
            if rng.random() < 0.5:
                del parts[i]
            else:
                parts.insert(rng.randrange(len(parts) + 1), parts[i])
            text = ";".join(parts)
    return text


def splice(text, other, rng):
    """`text` with one or two of its parts (or one word of a part) taken from `other`:
    plausible pieces in the wrong company, the likeliest way to an impossible position."""
    parts, donor = text.split("; "), other.split("; ")
    common = min(len(parts), len(donor))
    if common < 2:
        return text
    for _ in range(rng.choice((1, 1, 2))):
        i = rng.randrange(1, common)
        parts[i] = donor[i]
    if rng.random() < 0.3:
        i = rng.randrange(1, common)
        words = parts[i].split(" ")
        words[rng.randrange(len(words))] = rng.choice(donor[i].split(" "))
        parts[i] = " ".join(words)
    return "; ".join(parts)


def check_parse(text, rng=None):
    """Refused with one line, or accepted as a state whose notation round-trips."""
    try:
        state = parse_position(text)
    except NiwaError as e:
        message = str(e)
        assert message and "\n" not in message, (text, message)
        return False
    notation = state.to_notation()
    assert parse_position(notation).to_notation() == notation, text
    state.render()
    if rng is not None:
        # an accepted position must be a possible one: play on from it, and every
        # position reached must be accepted too
        for ply in range(200):
            if state.is_terminal():
                break
            _play_randomly(state, 1, rng)
            try:
                parse_position(state.to_notation())
            except NiwaError as e:
                raise AssertionError(f"{text!r} was accepted, but {ply + 1} plies later "
                                     f"{state.to_notation()!r} is refused: {e}") from None
    return True


@pytest.mark.parametrize("game", ["lotus", "haru", "bonsai"])
def test_mutated_notation_is_refused_in_one_line_or_round_trips(game):
    rng = random.Random(f"fuzz-{game}")
    seeds = seed_positions(game, rng)
    for text in seeds:
        assert check_parse(text), text
    accepted = 0
    for _ in range(MUTANTS_PER_GAME):
        text = rng.choice(seeds)
        if rng.random() < 0.4:
            text = splice(text, rng.choice(seeds), rng)
        if rng.random() < 0.8:
            text = mutate(text, rng)
        accepted += check_parse(text, rng)
    assert 0 < accepted < MUTANTS_PER_GAME      # the mutations do break things, not all


@pytest.mark.parametrize("text", [
    ";", ";;;;;;;;", "", "   ", "lotus players=3 players=4",
    "haru figures=best croak=random new_round=keep target=5 view=simultaneous; pond "
    "o.o.o/.oyD./oo.oo/.oor./o.o.o; flowers -; frogs Y:c2 R:d4; score Y:0 R:0; round "
    "2147483648 turn 1; phase draw; hands Y:- R:-; piles Y:{1,2,3,4,5,6,7,8} "
    "R:{1,2,3,4,5,6,7,8}",
    "lotus players=2 players=3; track -; start WWWW WWW WW W BBBB BBB BB B; goal W:0 B:0; "
    "turn W",
])
def test_known_crashers_are_refused_in_one_line(text):
    assert not check_parse(text)


@pytest.mark.parametrize("old,new", [
    ("T*3", "T*4294967296"), ("p0 tree -", "p0 tree L0,2147483648"),
    ("p0 tree -", "p0 tree W0,1e3"), ("turns=0", "turns=0 turns=1"), ("turns=0", "turns=nan"),
    ("supply W1", "supply W9223372036854775808"), ("turn p0", "turn p-1"),
])
def test_bonsai_numbers_out_of_range_are_refused_in_one_line(old, new):
    text = get_game("bonsai").new(seed=1).to_notation()
    assert old in text
    assert not check_parse(text.replace(old, new, 1))


LOTUS_PRO = "lotus players=2 rule=pro trampoline=optional"
HARU_START = ("haru figures=best croak=random new_round=keep target=5 view=simultaneous; "
              "pond o.o.o/.oyD./oo.oo/.oor./o.o.o; flowers -; frogs Y:c2 R:d4; score Y:0 R:0; "
              "round 1 turn 1; phase draw; hands Y:- R:-; piles Y:{1,2,3,4,5,6,7,8} "
              "R:{1,2,3,4,5,6,7,8}")


@pytest.mark.parametrize("text", [
    # found by reading the parsers while splitting them: impossible positions once accepted
    f"{LOTUS_PRO}; track -; start WWW WWW WW W BBBB BBB BB B; goal W:1 B:0; turn W opening=first",
    f"{LOTUS_PRO}; track 5:W; start WWW WWW WW BBBB BBB BB B; goal W:1 B:0; turn W "
    "opening=second",
    f"{LOTUS_PRO}; track -; start WWWW WWW WW W BBBB BBB BB B; goal W:0 B:0; turn WB",
    f"{LOTUS_PRO}; track -; start WWWW WWW WW W BBBB BBB BB B; goal WB:0 B:0; turn W",
    f"{LOTUS_PRO}; track -; start WWWW WWW WW W BBBB BBB BB B {'W ' * 256}; goal W:0 B:0; "
    "turn W",
    f"{LOTUS_PRO}; track -; start WWWW WWW WW W BBBB BBB BB B; goal W:0 B:0; turn W "
    "opening=first opening=first",
    HARU_START.replace("score Y:0", "score YR:0"),
    HARU_START.replace("score Y:0", "score :0"),
    HARU_START.replace("target=5", "target=5 target=6"),
    HARU_START.replace("target=5", "target=5 new-round=reset"),
    HARU_START.replace("score Y:0", "score Y:+0"),
])
def test_impossible_or_ambiguous_positions_are_refused(text):
    assert not check_parse(text)


def _one_error_line(result):
    assert result.exit_code in (0, 2), (result.exit_code, result.output, result.exception)
    if result.exit_code == 2:
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.output


@pytest.mark.parametrize("args", [
    ["show", ";"], ["show", ";;;;;;;;"], ["perft", "lotus", "--depth", "-1"],
    ["perft", "lotus", "--depth", "99999999999999999999"], ["perft", "lotus", "--depth", "x"],
    ["new", "lotus", "-v", "players=3", "-v", "players=4"],
    ["new", "lotus", "-v", "players=1e309"], ["new", "lotus", "-v", "players=nan"],
    ["new", "lotus", "-v", "players=inf"], ["new", "lotus", "-v", "players=99999999999999999999"],
    ["new", "lotus", "--players", "99999999999999999999"],
    ["new", "lotus", "--players", "3", "-v", "players=4"],
    ["new", "lotus", "-v", "new-round=keep"], ["new", "haru", "-v", "new-round=keep",
                                                "-v", "new_round=reset"], ["new", "bonsai", "--seed", "-1"],
    ["new", "haru", "--seed", "99999999999999999999"],
])
def test_cli_edge_cases_fail_in_one_line(args):
    result = CliRunner().invoke(main, args)
    _one_error_line(result)
    assert result.exit_code == 2 or args[0] == "new" and "--seed" in args


def test_cli_commands_on_mutated_positions():
    rng = random.Random("fuzz-cli")
    seeds = [n for game in VARIANTS for n in seed_positions(game, rng)[::3]]
    runner = CliRunner()
    codes = set()
    for _ in range(CLI_CASES):
        text = mutate(rng.choice(seeds), rng) if rng.random() < 0.8 else rng.choice(seeds)
        command = rng.choice([["show"], ["show", "--json"], ["moves"], ["score"],
                              ["perft", "--depth", rng.choice(["0", "1", "-1", "2147483648"])]])
        result = runner.invoke(main, [command[0], text, *command[1:]])
        _one_error_line(result)
        codes.add(result.exit_code)
    assert codes == {0, 2}
