"""`niwa tables`: build, list and probe endgame tables (docs/endgame-tables.md)."""

from __future__ import annotations

import json

import click

from niwa.cli.common import (
    Number,
    UserError,
    executor_for,
    executor_options,
    load_position,
    progress_option,
    user_errors,
    variant_option,
)

DIR_HELP = "Tables folder (default: $NIWA_TABLES, else ~/.cache/niwa/tables)."


def register(main: click.Group) -> None:
    main.add_command(tables_cmd)


@click.group("tables")
def tables_cmd():
    """Endgame tables: every position with at most K stones a player outside the goal,
    solved exactly (2-player Lotus). `niwa solve` and the proof search use them."""


@tables_cmd.command("build")
@click.argument("game")
@click.option("--stones", "-k", "stones", type=Number(int, 1, 10), required=True,
              help="At most this many stones per player outside the goal.")
@variant_option
@executor_options(
    "Processes that solve a level's classes at once (default: 1, this process; with dask: "
    "the cluster's threads).",
    "Where the classes are solved: local processes or a Dask scheduler.")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help=DIR_HELP)
@click.option("--force", is_flag=True, help="Rebuild a table that exists already.")
@progress_option
@user_errors
def build_cmd(game, stones, variants, workers, executor, directory, force, progress):
    """Build the table of GAME (lotus) for --stones K and the variant (-v KEY=VALUE).

    \b
    Example:
      niwa tables build lotus --stones 3
      niwa tables build lotus --stones 2 -v rule=pro -v lane=2 -v shared=6 --workers 2
    \b
    --workers 1 (the default with the local executor) solves in this process; more
    workers, or --executor dask://HOST:PORT, solve the classes of each level in parallel
    (the table is the same either way).
    """
    from niwa.ext.registry import parse_variant_options
    from niwa.solver.tables import (
        GAMES,
        build_table,
        make_index,
        table_name,
        tables_dir,
        writable_folder,
    )

    if game.lower() not in GAMES:
        raise UserError(f"endgame tables exist for {', '.join(GAMES)} only, not {game!r}")
    variant = parse_variant_options(variants)
    # what build_table would refuse, refused before the line below: one error line only
    index = make_index(variant, stones)
    folder = tables_dir(directory)
    writable_folder(folder)
    existing = folder / f"{table_name(dict(index.variant), stones)}.json"
    if not force and existing.exists():
        raise UserError(f"{existing} exists already (--force rebuilds it)")
    with executor_for(executor, workers) as ex:
        click.echo(f"lotus k={stones} {variant or 'default variant'}: "
                   f"{ex.describe() if ex else 'this process'} -> {folder}", err=True)
        header = build_table(variant, stones, folder, executor=ex, progress=progress,
                             force=force)
    c = header["counts"]
    click.echo(f"{header['payload']}: {header['positions']:,} positions "
               f"({c['wins']:,} wins, {c['losses']:,} losses for the player to move; longest "
               f"win {c['longest_win']} plies, loss {c['longest_loss']}), "
               f"{header['payload_bytes'] / 1e6:.1f} MB, built in {header['build']['seconds']:.1f} s,"
               f" sha256 {header['payload_sha256'][:16]}...")


@tables_cmd.command("info")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help=DIR_HELP)
@click.option("--verify/--no-verify", default=True, show_default=True,
              help="Check every table's checksum (reads each file once).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per table.")
@user_errors
def info_cmd(directory, verify, as_json):
    """List the tables built in the folder: variant, stones, size, checksum."""

    from niwa.solver.tables import list_tables, payload_check, tables_dir

    folder = tables_dir(directory)
    entries = list_tables(folder)
    if not entries and not as_json:
        click.echo(f"no tables in {folder} (build one: niwa tables build lotus --stones 3)")
        return
    bad = 0
    for path, header, problem in entries:
        check = None
        if header is not None and verify:
            check = payload_check(path, header)
            bad += check != "ok"
        if problem is not None:
            bad += 1
        if as_json:
            click.echo(json.dumps({"path": str(path), "problem": problem, "checksum": check,
                                   **(header or {})}))
        elif header is None:
            click.echo(f"{path.name}: {problem}")
        else:
            v = header["variant"]
            click.echo(f"{path.stem}: {header['game']} k={header['stones']} rule={v['rule']} "
                       f"trampoline={v['trampoline']} lane={v['lane']} shared={v['shared']} "
                       f"trampoline_at={v['trampoline_at']} towers={v['towers']}; "
                       f"{header['positions']:,} positions, "
                       f"{header['payload_bytes'] / 1e6:.1f} MB, built in "
                       f"{header['build']['seconds']:.1f} s; checksum {check or 'not checked'}")
    if bad:
        raise UserError(f"{bad} table(s) in {folder} are damaged (see above): rebuild them "
                        f"with niwa tables build ... --force")


@tables_cmd.command("probe")
@click.argument("position")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help=DIR_HELP)
@click.option("--json", "as_json", is_flag=True, help="The answer as one JSON object.")
@user_errors
def probe_cmd(position, directory, as_json):
    """POSITION's value from the tables: the player to move wins or loses, in how many
    plies, and every move's outcome."""
    import warnings

    from niwa.solver.tables import TableWarning, find_table, table_move_values, table_value

    state = load_position(position)
    if state.is_terminal():
        raise UserError("the position is over: nothing to probe")
    with warnings.catch_warnings(record=True) as skipped:
        warnings.simplefilter("always", TableWarning)
        table = find_table(state, directory)
    if table is None:
        # a damaged table skipped on the way is the likely reason: said in the one line
        reason = f"; {skipped[0].message}" if skipped else ""
        raise UserError("no table for this game and variant in the tables folder "
                        f"(niwa tables info lists them){reason}")
    for w in skipped:
        warnings.warn(w.message, w.category, stacklevel=1)
    root = table_value(table, state)
    if root is None:
        raise UserError(f"the position is outside the table (k={table.k}: at most {table.k} "
                        f"stones a player outside the goal, pro opening over)")
    moves = table_move_values(table, state)
    if as_json:
        click.echo(json.dumps({"value": root[0], "plies": root[1], "player": state.current_player(),
                               "k": table.k, "moves": [{"move": n, "value": v, "plies": p}
                                                       for n, v, p in moves]}))
        return
    click.echo(f"player {state.current_player()} to move {'wins' if root[0] else 'loses'} in "
               f"{root[1]} plies (table k={table.k})")
    for name, value, plies in moves:
        click.echo(f"  {name:<16} {'win ' if value else 'loss'} in {plies}")
