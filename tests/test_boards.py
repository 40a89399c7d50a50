"""Readable boards: the Bonsai picture has x and y labels and every card code is explained
(the game's legend, `niwa play`'s help, the rules page); `niwa play` shows a board once per
turn (a draw is one line, not a new board) and again before a person's decision."""

import re
from pathlib import Path

from niwa.cli.play import play_game
from niwa.ext.bonsai import CARD_HELP, CARDS
from niwa.ext.registry import get_game

DOCS = Path(__file__).resolve().parents[1] / "docs"


def bonsai_midgame(seed=3, plies=80):
    import random

    rng = random.Random(seed)
    state = get_game("bonsai").new(seed=seed)
    for _ in range(plies):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.apply(state.chance_outcomes()[0][0])
        else:
            state.apply(rng.choice(state.legal_actions()))
    return state


def test_bonsai_picture_has_x_and_y_labels_under_the_cells():
    state = bonsai_midgame()
    lines = state.render().splitlines()
    axes = [k for k, x in enumerate(lines) if re.fullmatch(r"\s+x(\s+-?\d+)+", x)]
    assert len(axes) == state.num_players
    for k in axes:
        labels = [int(t) for t in lines[k].split()[1:]]
        assert labels == list(range(labels[0], labels[-1] + 1)) and -2 in labels
        assert lines[k - 1].strip().startswith("+-")
        pot_row = next(x for x in lines[:k] if x.strip().startswith("0 |"))
        # the bud (0, 0) is the W of the pot row, right above the label 0
        bud = pot_row.index("W")
        zero = re.search(r"(?<![-\d])0(?!\d)", lines[k].split("x", 1)[1])
        assert zero and len(lines[k].split("x", 1)[0]) + 1 + zero.start() == bud
    assert any(x.strip() == "y |" for x in lines)


def test_every_card_code_is_explained_in_the_legend_and_the_rules_page():
    legend = get_game("bonsai").legend
    for code in CARDS:
        assert re.search(rf"\b{code}\b", legend), code
    assert set(CARD_HELP) == set(CARDS)
    page = (DOCS / "rules" / "bonsai.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([A-Z]+)` \| ([^|]+?) \|", page, flags=re.M))
    assert rows == CARD_HELP


def scripted(answers):
    answers = list(answers)
    return lambda prompt: answers.pop(0) if answers else "quit"


def boards(lines, header):
    return [k for k, x in enumerate(lines) if x.startswith(header)]


def test_haru_board_once_per_turn_not_after_every_draw():
    out = []
    play_game(get_game("haru").new(seed=1), ["random", "random"], seed=1, echo=out.append)
    lines = "\n".join(out).splitlines()
    shown = boards(lines, "Haru Ichiban ")
    turns = [re.search(r"round (\d+), turn (\d+)", lines[k + 10]).groups()
             for k in shown[:-1]]                  # the last one is the final position
    assert len(turns) == len(set(turns)) > 3        # one board per turn
    draws = [k for k, x in enumerate(lines) if x.startswith("chance: draw")]
    moves = [k for k, x in enumerate(lines) if x.startswith(("player ", "revealed: "))]
    assert len(draws) > len(shown) and len(moves) > 2 * len(shown)


def test_a_person_sees_the_board_before_each_of_their_decisions():
    out = []
    play_game(get_game("haru").new(seed=2), ["human", "random"], seed=2, echo=out.append,
              read=scripted(["1"] * 12))
    lines = "\n".join(out).splitlines()
    prompts = [k for k, x in enumerate(lines) if x.startswith("Player 0, your move")]
    assert len(prompts) >= 3
    shown = boards(lines, "Haru Ichiban ")
    for k in prompts:       # a board since the person's last decision (or the start)
        before = [b for b in shown if b < k]
        last_prompt = max([p for p in prompts if p < k], default=-1)
        assert before and before[-1] > last_prompt


def test_bonsai_play_prints_the_legend_once_and_on_help():
    out = []
    play_game(get_game("bonsai").new(seed=1), ["human", "random"], seed=1, echo=out.append,
              read=scripted(["help", "1", "1", "quit"]))
    text = "\n".join(out)
    assert text.count("Card codes (market, cards, deck):") == 2      # start and 'help'
    assert "'help' shows this" in text
    assert re.search(r"^\s+x\s+-2\s+-1\s+0\s+1\s+2\s+3", text, flags=re.M)


def test_after_an_undo_the_position_taken_back_to_is_shown_again():
    out = []
    play_game(get_game("lotus").new(seed=0), ["human", "greedy"], seed=0, echo=out.append,
              read=scripted(["1", "undo", "quit"]))
    lines = "\n".join(out).splitlines()
    k = lines.index("undone")
    assert lines[k + 1] == "" and lines[k + 2].startswith("Lotus, 2 players")
