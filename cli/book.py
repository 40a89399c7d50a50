"""`niwa book`: opening books read off df-pn proofs, for the `perfect` agent (logic in
niwa.solver.book)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from niwa.cli.common import (
    Number,
    UserError,
    creatable_file,
    huge_pages_option,
    progress_option,
    user_errors,
    variant_option,
    warn_small_pages,
)


def register(main: click.Group) -> None:
    main.add_command(book_group)


@click.group("book")
def book_group():
    """Opening books: the proven winner's moves to a fixed depth, read off a proof of the
    whole game, so that `perfect` needs no live proof early in the game. Books live in
    $NIWA_BOOKS, else ~/.cache/niwa/books/ (then those shipped with niwa)."""


def _variant(game, variants):
    from niwa.ext.registry import get_game, parse_variant_options
    from niwa.solver.book import canonical_variant

    get_game(game)      # an unknown game: NiwaError, one line
    return canonical_variant(game, parse_variant_options(variants))


@book_group.command("build")
@click.argument("game")
@variant_option
@click.option("--plies", type=Number(int, 1, 200), default=8, show_default=True,
              help="Depth of the book in plies from the start.")
@click.option("--max-work", type=Number(int, 1, 10**12), default=None,
              help="Go on past --plies while a position's proof took more than this many "
                   "expansions (what a live proof could not redo within a move's time).")
@click.option("--tt-mb", "tt_mb", type=Number(float, 1, 1 << 20, unit="MB"), default=4096,
              show_default=True, help="Proof table in MB (full Lotus needs about 6000).")
@click.option("--time", "time_s", type=Number(float, 0, 86_400.0), default=0.0,
              help="Seconds for the proof of the start (and each re-proof); 0 = no limit.")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Book file (default: the books folder, named after game and variant).")
@progress_option
@huge_pages_option
@user_errors
def build_cmd(game, variants, plies, max_work, tt_mb, time_s, out, progress, huge_pages):
    """Prove GAME's start and write the winner's moves to --plies as a book.

    \b
    Example (full Lotus, ~10 minutes and ~6 GB):
      niwa book build lotus --plies 8 --max-work 20000 --tt-mb 8192
    """
    import sys

    from niwa.solver.book import book_name, books_dir, build_book

    variant = _variant(game, variants)
    path = out or str(books_dir() / book_name(game, variant))
    creatable_file(path)
    if huge_pages:
        warn_small_pages()
    click.echo(f"proving {game} {variant} with a {tt_mb:g} MB table, then walking "
               f"{plies} plies -> {path}", err=True)
    try:
        book = build_book(game, variant, plies=plies, tt_mb=tt_mb, time_limit=time_s,
                          max_work=max_work, huge_pages=huge_pages,
                          progress=sys.stderr.isatty() if progress is None else progress)
    except MemoryError as e:
        raise UserError(str(e)) from None
    _save(book, path)


@book_group.command("from-certificate")
@click.argument("certificate", type=click.Path(dir_okay=False))
@click.option("--plies", type=Number(int, 1, 200), default=8, show_default=True,
              help="Depth of the book in plies from the start.")
@click.option("--max-nodes", type=Number(int, 1, 10**12), default=None,
              help="Go on past --plies while the certificate's tree below a position has "
                   "more than this many positions (what a live proof could not redo).")
@click.option("--parts", "parts_dir", type=click.Path(file_okay=False, exists=True),
              default=None,
              help="Where the certificates it stops at (its parts) are, found by sha256 "
                   "(default: the certificate's own folder).")
@click.option("--missing-parts", is_flag=True,
              help="A part whose file is not in the folder ends its lines there (the book "
                   "says how many) instead of refusing: for a certification kept by its "
                   "check ledger, whose earlier parts are gone.")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Book file (default: the books folder, named after game and variant).")
@user_errors
def from_certificate_cmd(certificate, plies, max_nodes, parts_dir, missing_parts, out):
    """Write the book of a proof CERTIFICATE whose root is its game's start (nothing is
    proved again; the certificate is verified against its checksum, not re-checked: run
    `niwa proof check` for that).

    \b
    Example:
      niwa book from-certificate lotus-pro-mandatory.npz --plies 8 --max-nodes 2000
    """
    from niwa.solver.book import book_from_certificate, book_name, books_dir
    from niwa.solver.certificate import certificate_folder, load_certificate

    cert = load_certificate(certificate)
    parts = certificate_folder(parts_dir or Path(certificate).parent) if cert.parts else None
    if missing_parts and max_nodes is not None:
        raise UserError("--missing-parts and --max-nodes contradict each other (the sizes "
                        "are counted in the parts)")
    book = book_from_certificate(cert, plies=plies, max_nodes=max_nodes, parts=parts,
                                 missing_parts=missing_parts)
    path = out or str(books_dir() / book_name(book.game, book.variant))
    creatable_file(path)
    _save(book, path)


@book_group.command("add-won")
@click.argument("book_file", metavar="BOOK", type=click.Path(dir_okay=False, exists=True))
@click.option("--ledger", "ledger_file", type=click.Path(dir_okay=False, exists=True),
              required=True,
              help="The check ledger of the certification the book was read off.")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Book file (default: BOOK itself).")
@user_errors
def add_won_cmd(book_file, ledger_file, out):
    """Give BOOK the positions its winner is known to win below its plies: the roots of
    every part its certification's check LEDGER holds checked (by symmetric hash). Past
    the book's own moves, `perfect` and `best` then play a move whose every line reaches
    one of them, or a won end, within 3 plies, before proving live.

    \b
    Example:
      niwa book add-won lotus-906ba65df765640e.npz --ledger pro-mandatory-ledger.jsonl
    """
    from niwa.solver.book import add_won_positions, load_book

    book = add_won_positions(load_book(book_file), ledger_file)
    path = out or book_file
    creatable_file(path)
    _save(book, path)


def _save(book, path) -> None:
    """Write the book and print its header as one JSON line."""
    try:
        book.save(path)
    except OSError as e:
        raise UserError(f"cannot write the book {path}: {e.strerror or e}") from None
    click.echo(json.dumps({"path": str(path), **book.meta(), "sha256": book.sha256},
                          sort_keys=True))


@book_group.command("info")
@click.argument("where")
@variant_option
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object (path, meta, sha256) instead of readable lines.")
@user_errors
def info_cmd(where, variants, as_json):
    """Check a book (its checksum) and print what it holds. WHERE is a book file, or a game
    (with --variant) to find its book."""
    from pathlib import Path

    from niwa.solver.book import book_name, books_dir, find_book, load_book

    try:
        is_file = Path(where).is_file()
    except OSError:         # a name too long to be a file: then it is taken as a game's
        is_file = False
    if is_file:
        path = Path(where)
    else:
        variant = _variant(where, variants)
        path = find_book(where, variant)
        if path is None:
            raise UserError(f"no book for {where} {variant}: expected "
                            f"{books_dir() / book_name(where, variant)} (niwa book build)")
    book = load_book(path)       # a checksum that does not match is an error here
    if as_json:
        click.echo(json.dumps({"path": str(path), **book.meta(), "sha256": book.sha256},
                              sort_keys=True))
        return
    meta = book.meta()
    variant = " ".join(f"{k}={v}" for k, v in sorted(meta["variant"].items())) or "(default)"
    winner = "none proven" if meta["winner"] is None else f"seat {meta['winner']}"
    click.echo(f"book {path}")
    click.echo(f"  game      {meta['game']} {variant}")
    click.echo(f"  plies     {meta['plies']} (positions up to this depth)")
    click.echo(f"  entries   {meta['entries']}")
    click.echo(f"  winner    {winner}")
    if meta.get("won"):
        click.echo(f"  won       {meta['won']} (positions the winner is known to win, "
                   f"below the book's plies)")
    for key in sorted(set(meta) - {"format", "game", "variant", "plies", "winner",
                                   "entries", "won"}):
        click.echo(f"  {key:<9} {meta[key]}")
    click.echo(f"  sha256    {book.sha256} (checksum ok)")


@book_group.command("upgrade")
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the upgraded book here (default: replace PATH).")
@user_errors
def upgrade_cmd(path, out):
    """Rewrite a book of an older format (niwa-book-1) in the current one, after checking
    its checksum; its moves are kept as they are."""
    from niwa.solver.book import load_book, upgrade_book

    if out:
        creatable_file(out)
    try:
        written = upgrade_book(path, out)
    except OSError as e:
        raise UserError(f"cannot write {out or path}: {e.strerror or e}") from None
    book = load_book(written)
    click.echo(json.dumps({"path": str(written), **book.meta(), "sha256": book.sha256},
                          sort_keys=True))
