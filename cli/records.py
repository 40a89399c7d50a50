"""Commands on game records (games.jsonl, niwa play's saves): replay and review."""

from __future__ import annotations

import csv
import os

import click

from niwa.cli.common import user_errors


def register(main: click.Group) -> None:
    main.add_command(replay_cmd)
    main.add_command(review_cmd)


def _seat_text(record) -> str:
    return ", ".join(f"seat {q}: {s.agent} ({r:g})"
                     for q, (s, r) in enumerate(zip(record.seats, record.result, strict=True)))


def _value(v) -> str:
    return "" if v is None else f"{v:.3f}"


def _ply_text(record, ply: int) -> str:
    from niwa.analysis.arena.game_record import CHANCE, JOINT

    move = record.moves[ply]
    if move.by == CHANCE:
        return f"chance: {move.move}"
    if move.by == JOINT:
        return "joint: " + ", ".join(f"seat {q} {m}" for q, m in enumerate(move.move) if m)
    return f"seat {move.by}: {move.move}"


def _event_text(record) -> str:
    """Where the game was played, in parentheses: '(tournament game_id 4, round 2,
    opening 3)' ('' when the record says nothing)."""
    parts = [f"{k} {record.event[k]}" for k in ("game_id", "round", "table", "cell")
             if k in record.event]
    if record.opening:
        parts.append(f"opening {record.opening['id']}")
    return f" ({', '.join(parts)})" if parts else ""


def _timing(move) -> str:
    """'  [0.021 s, clock 58.979 s]': the mover's time and its clock after the move."""
    parts = []
    if move.time is not None:
        parts.append(f"{move.time:.3f} s")
    clocks = move.clock if isinstance(move.clock, list) else [move.clock]
    shown = [f"{c:.3f}" for c in clocks if c is not None]
    if shown:
        parts.append(f"clock {' '.join(shown)} s")
    return f"  [{', '.join(parts)}]" if parts else ""


@click.command("replay")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--game", "number", type=int, default=None,
              help="Which game of FILE (1 = the first line); needed when it holds several.")
@click.option("--ply", type=int, default=None,
              help="Show the position after this many plies (0 = the start; default: the end).")
@click.option("--moves/--no-moves", "list_moves", default=True, show_default=True,
              help="List the moves played up to that position.")
@user_errors
def replay_cmd(file, number, ply, list_moves):
    """Show a position of a recorded game (a games.jsonl line or a `niwa play` save): the
    board, its notation and the moves that led there. The record holds every chance
    outcome (Haru's hidden draws, Bonsai's deck), so the position is exact.

    Example: niwa replay tournament-haru/games.jsonl --game 3 --ply 20
    """
    from niwa.analysis.arena.game_record import read_game

    record = read_game(file, number)
    total = len(record.moves)
    ply = total if ply is None else ply
    state = record.replay(ply)
    click.echo(f"game {number or 1}{_event_text(record)}: {record.game}, "
               f"{_seat_text(record)}; {record.termination}, {total} plies"
               + (f" ({record.forfeit['message']})" if record.forfeit else ""))
    book = (record.opening or {}).get("plies", 0)
    if list_moves and ply:
        click.echo("moves:")
        for k in range(ply):
            click.echo(f"  {k + 1:>4}. {_ply_text(record, k)}{_timing(record.moves[k])}"
                       + ("  (opening)" if k < book else ""))
    click.echo(f"\nposition after ply {ply} of {total}:")
    click.echo(state.render())
    click.echo(state.to_notation())


@click.command("review")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--game", "number", type=int, default=None,
              help="Which game of FILE (1 = the first line); needed when it holds several.")
@click.option("--agent", "spec", default="alphabeta:depth=6", show_default=True,
              help="The searcher that judges each position (mcts:..., alphabeta:...).")
@click.option("--threshold", type=float, default=0.15, show_default=True,
              help="A move that loses more value than this (for its mover) is a mistake.")
@click.option("--prove-depth", type=int, default=40, show_default=True,
              help="Alpha-beta depth (plies) of the blunder proof of each mistake.")
@click.option("--prove-time", type=float, default=2.0, show_default=True,
              help="Seconds per blunder proof (0: no proofs).")
@click.option("--out", "out_prefix", default=None,
              help="Prefix of the CSV and PNG written (default: FILE's name + -gameN-review).")
@user_errors
def review_cmd(file, number, spec, threshold, prove_depth, prove_time, out_prefix):
    """Annotate a recorded game: a searcher's value of each move for its mover, mistakes
    (a drop beyond --threshold) and proven blunders (alpha-beta proves the position was won
    before the move and lost after it). Prints a table, writes a CSV and a PNG.

    Example: niwa review games.jsonl --game 2 --agent alphabeta:depth=8
    """
    from niwa.analysis.arena.game_record import read_game
    from niwa.analysis.arena.review import plot_review, review_game

    record = read_game(file, number)
    rows = review_game(record, spec, threshold=threshold, prove_depth=prove_depth,
                       prove_time=prove_time)
    if out_prefix is None:
        stem = os.path.splitext(file)[0]
        out_prefix = f"{stem}-game{number or 1}-review"
    click.echo(f"{'ply':>4}  {'by':<7} {'move':<18} {'before':>7} {'after':>7} "
               f"{'drop':>6}  verdict")
    for r in rows:
        click.echo(f"{r.ply:>4}  {r.by_text:<7} {r.move_text:<18} {_value(r.before):>7} "
                   f"{_value(r.after):>7} {_value(r.drop):>6}  {r.verdict}")
    with open(out_prefix + ".csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["ply", "by", "move", "value_before", "value_after", "drop", "verdict"])
        for r in rows:
            writer.writerow([r.ply, r.by_text, r.move_text, r.before, r.after, r.drop, r.verdict])
    plot_review(record, rows, out_prefix + ".png")
    mistakes = sum(r.verdict == "mistake" for r in rows)
    blunders = sum(r.verdict == "blunder" for r in rows)
    click.echo(f"\n{mistakes} mistake(s), {blunders} proven blunder(s); wrote {out_prefix}.csv "
               f"and {out_prefix}.png")
