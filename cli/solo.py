"""`niwa solve --deck-known`: solo Bonsai with the deck order known ("could this game have
been won?"); the search is niwa.solver.solo."""

from __future__ import annotations

import dataclasses
import json

import click

from niwa.cli.common import UserError, load_position


def _position(position, record_file, game_number, ply, deck_cards, deck_seed):
    """(state with its deck order, final position of a record or None, source tags)."""
    from niwa.solver import solo

    sources = [name for name, on in (("--record", record_file), ("--deck", deck_cards is not None),
                                     ("--deck-seed", deck_seed is not None)) if on]
    if len(sources) > 1:
        raise UserError(f"give one deck source, not {' and '.join(sources)}")
    if record_file:
        from niwa.analysis.arena.game_record import read_game

        if position:
            raise UserError("--record gives the position: leave POSITION out")
        record = read_game(record_file, game_number)
        state, final = solo.from_record(record, ply)
        return state, final, {"record": record_file, "game": game_number or 1, "ply": ply,
                              "deal_seed": record.deal_seed}
    if game_number is not None or ply:
        raise UserError("--game and --ply go with --record")
    if not position:
        raise UserError("give a POSITION (with --deck, --deck-seed or a 'deck order'), or "
                        "--record FILE")
    state = load_position(position)
    if deck_cards is not None:
        return solo.with_deck(state, deck_cards.replace(",", " ").split()), None, \
            {"deck": "given"}
    if deck_seed is not None:
        return solo.with_deck_seed(state, deck_seed), None, {"deck_seed": deck_seed}
    solo.check_solo(state)
    if solo.deck_order(state) is None:
        raise UserError("the position's deck order is not known: give --deck, --deck-seed "
                        "or --record (or 'deck order ...' in the notation)")
    return state, None, {"deck": "position"}


def _echo_line(title: str, names: list[str]) -> None:
    from niwa.solver.solo import turns_of

    click.echo(f"{title} (turn by turn):" if names else f"{title}: -")
    for k, turn in enumerate(turns_of(names), 1):
        click.echo(f"  {k:>3}. {', '.join(turn)}")


def solve_solo_cmd(position, record_file, game_number, ply, deck_cards, deck_seed, time_s,
                   node_limit, tt_bits, seed, as_json) -> None:
    from niwa.solver.solo import solve_solo

    state, final, source = _position(position, record_file, game_number, ply, deck_cards,
                                     deck_seed)
    if time_s is None and node_limit is None:
        time_s = 10.0
    r = solve_solo(state, time_s=time_s, nodes=node_limit, tt_bits=min(tt_bits, 26),
                   seed=seed, source=source, final=final)
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(r)))
        return
    kind = "exact" if r.exact else "best found"
    click.echo(f"best score   {r.best_score} ({kind}); upper bound {r.upper_bound}"
               f"{' (= best: proven optimal)' if r.exact else ' (proven)'}")
    if r.win == "yes":
        how = "exact" if r.winning_exact else "best found"
        click.echo(f"win possible yes: a line claims all 3 colours with {r.best_winning_score} "
                   f">= {r.threshold} points ({how}"
                   + (f", bound {r.winning_upper_bound}" if not r.winning_exact else "") + ")")
    elif r.win == "no":
        click.echo(f"win possible no (proven): no line claims all 3 colours with >= "
                   f"{r.threshold} points")
    else:
        click.echo(f"win possible unknown: no winning line found, and the bound on one "
                   f"({r.winning_upper_bound}) does not rule it out (give more --time)")
    if r.obtained is not None:
        verdict = ("it was won" if r.obtained_won else
                   "it could have been won" if r.win == "yes" else
                   "it could not have been won" if r.win == "no" else "unknown whether it "
                   "could have been won")
        click.echo(f"the game    scored {r.obtained} ({'won' if r.obtained_won else 'lost'}); "
                   f"{verdict}; the deal allowed {r.best_score}"
                   f"{'' if r.exact else '+'} (at most {r.upper_bound})")
    click.echo(f"search       nodes {r.nodes:,}  time {r.time_s:.3f}s  playouts' best "
               f"{r.incumbent_score}  root bound {r.start_bound}")
    click.echo(f"deck         {' '.join(r.deck) or '-'}")
    _echo_line("best line", r.best_line)
    if r.win == "yes" and r.winning_line != r.best_line:
        _echo_line("winning line", r.winning_line)
