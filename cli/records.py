"""Commands on game records (games.jsonl, niwa play's saves): replay and review."""

from __future__ import annotations

import csv
import os

import click

from niwa.cli.common import progress_option, user_errors


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
              help="The searcher that values positions no table or proof decides "
                   "(alphabeta:..., mcts:...).")
@click.option("--threshold", type=float, default=None,
              help="A searcher's drop beyond this is a mistake (default: the calibrated "
                   "0.54; see docs/game-records.md).")
@click.option("--inaccuracy", type=float, default=None,
              help="A searcher's drop beyond this is an inaccuracy (default: the calibrated "
                   "0.35, or --threshold if lower).")
@click.option("--prove-time", type=float, default=0.25, show_default=True,
              help="Seconds of df-pn proof per position (two-player Lotus; 0: no proofs).")
@click.option("--prove-depth", type=int, default=40, show_default=True,
              help="Ignored (kept for older scripts): the proof is df-pn, which needs no depth.")
@click.option("--tables", "tables_dir", default=None,
              help="Endgame tables folder (default: $NIWA_TABLES or ~/.cache/niwa/tables).")
@click.option("--no-tables", is_flag=True, help="Use no endgame tables.")
@click.option("--known/--no-known", default=True, show_default=True,
              help="Take the values a shipped opening book, a certificate or a proof record "
                   "already proves (source known: the full game's openings).")
@click.option("--out", "out_prefix", default=None,
              help="Prefix of the CSV and PNG written (default: FILE's name + -gameN-review).")
@progress_option
@user_errors
def review_cmd(file, number, spec, threshold, inaccuracy, prove_time, prove_depth, tables_dir,
               no_tables, known, out_prefix, progress):
    """Annotate a recorded game: every position's value for the seat to move (exact where
    an endgame table or a proof decides it, else the searcher's), each move's drop for its
    mover, and verdicts: forced, inaccuracy, mistake, blunder (a proven value lost).
    Prints each row as it is computed, writes a CSV (row by row) and a PNG of the value
    over the game.

    Example: niwa review games.jsonl --game 2 --agent alphabeta:depth=8
    """
    import sys

    from tqdm import tqdm

    from niwa.analysis.arena.game_record import read_game
    from niwa.analysis.arena.review import (
        INACCURACY_DROP,
        MISTAKE_DROP,
        VERDICTS,
        plot_review,
        review_rows,
    )
    from niwa.ext.errors import NiwaError

    record = read_game(file, number)
    mistake = MISTAKE_DROP if threshold is None else threshold
    if inaccuracy is None:
        inaccuracy = min(INACCURACY_DROP, mistake)
    tables = None if no_tables else (tables_dir or "auto")
    rows_iter = review_rows(record, spec, mistake=mistake, inaccuracy=inaccuracy,
                            tables=tables, prove_time=prove_time, known=known)
    if out_prefix is None:
        stem = os.path.splitext(file)[0]
        out_prefix = f"{stem}-game{number or 1}-review"
    try:
        f = open(out_prefix + ".csv", "w", newline="", encoding="utf-8")
    except OSError as e:
        raise NiwaError(f"cannot write {out_prefix}.csv: {e.strerror}") from None
    n = len(record.seats)
    relation = ("after = 1 - the next row's before when the other seat moves next"
                if n == 2 else "before and after its move")
    click.echo(f"{record.game}, {_seat_text(record)}; {len(record.moves)} plies")
    click.echo(f"values: for the seat that moves in the row ({relation}); sources: table "
               f"(endgame tables), known (a book, certificate or proof record), proof "
               f"(df-pn, {prove_time:g} s a position, or a search to the end), end (game "
               f"over), search ({spec}); a>b = before from a, after "
               f"from b. Verdicts: forced; inaccuracy (drop > {inaccuracy:g}) and mistake "
               f"(> {mistake:g}) by the searcher's drop; blunder = a proven value lost")
    header = (f"{'ply':>4}  {'by':<7} {'move':<18} {'before':>7} {'after':>7} "
              f"{'drop':>6}  {'source':<13} verdict")
    click.echo(header)
    rows = []
    bar = tqdm(total=len(record.moves), unit="ply", desc="review", file=sys.stderr,
               disable=(not sys.stderr.isatty()) if progress is None else not progress)
    try:
        with f:
            writer = csv.writer(f)
            writer.writerow(["ply", "by", "move", "value_before", "value_after",
                             "source_before", "source_after", "drop", "drop_basis", "verdict"])
            f.flush()
            for r in rows_iter:
                rows.append(r)
                line = (f"{r.ply:>4}  {r.by_text:<7} {r.move_text:<18} {_value(r.before):>7} "
                        f"{_value(r.after):>7} {_value(r.drop):>6}  {r.source_text:<13} "
                        f"{r.verdict}")
                with bar.external_write_mode():
                    click.echo(line)
                writer.writerow([r.ply, r.by_text, r.move_text, _csv(r.before), _csv(r.after),
                                 r.source_before, r.source_after, _csv(r.drop), r.drop_basis,
                                 r.verdict])
                f.flush()
                bar.update(1)
    finally:
        bar.close()
    plot_review(record, rows, out_prefix + ".png")
    counts = ", ".join(f"{sum(r.verdict == v for r in rows)} {v}" for v in VERDICTS)
    click.echo(f"\n{counts}; wrote {out_prefix}.csv and {out_prefix}.png")


def _csv(v) -> str:
    return "" if v is None else f"{v:.6g}"
