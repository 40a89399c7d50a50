"""`niwa solve`: search one position (or a batch) with the df-pn proof search, alpha-beta
or MCTS and report."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import sys

import click

from niwa.cli.common import (
    SEED,
    Number,
    UserError,
    check_writable,
    huge_pages_option,
    load_position,
    user_errors,
    warn_small_pages,
)
from niwa.ext.errors import NiwaError
from niwa.solver.solve import solve_position

MAX_MOVE_SECONDS = 86_400.0     # a day of search: the longest budget that means anything
MAX_ITERATIONS = 10**9          # about an hour of MCTS at the fastest playouts

JSON_KEYS = ("value", "proven", "best", "actions", "pv", "nodes", "time_s", "nps")
# and "source": "tables" (an endgame table answered), "book", "certificate" or "record"
# (a known result: "status" says which file; a book's or certificate's checksum verified,
# a record's certificate checked or not yet), "known moves" (the known results one move
# down decide it: "status" says which) or "search"
KNOWN_SOURCES = ("tables", "book", "certificate", "record", "known moves")


def register(main: click.Group) -> None:
    main.add_command(solve_cmd)


def _mixed_strategy(state, r):
    """The root's mixed strategy as printed: alpha-beta's rows named, MCTS's as reported."""
    if r.strategy:
        return [(state.action_to_string(a, r.player), p)
                for a, p in zip(r.strategy["rows"], r.strategy["row_strategy"], strict=True)]
    return r.strategies


def _value_text(state, r) -> str:
    who = f"player {r.player}"
    if r.value is None:
        return f"value unknown for {who}, the player to move"
    kind = "proven" if r.proven else "estimate"
    if r.algo == "chance":
        return (f"chance moves next: value {r.value:.4f} ({'exact' if r.proven else 'estimate'})"
                f" = expected return of {who} over the chance outcomes (1 = win, 0 = loss)")
    if r.episode is not None:
        return (f"value {r.value:.4f} ({kind}) = value of the rest of round {r.episode} "
                f"for {who} (open hands): the game's evaluation when the round ends (Haru: "
                f"0.5 + 0.35 x score lead / target), or 1 = win, 0 = loss if the game ends")
    return (f"value {r.value:.4f} ({kind}) = expected return of {who}, the player to move "
            f"(1 = win, 0 = loss)")


def print_report(state, r) -> None:
    click.echo(_value_text(state, r))
    if r.episode is not None:
        pass    # a round's value of 1 or 0 is a won or lost game: said by the line above
    elif r.proven and r.value >= 1 - 1e-9:
        click.echo(f"{'proven win' if state.num_players > 1 else 'proven success'} "
                   f"for player {r.player}: winning line {' '.join(r.pv) or '-'}")
    elif r.proven and r.value <= 1e-9:
        click.echo(f"proven loss for player {r.player}")
    elif r.proven and abs(r.value - 0.5) < 1e-9 and r.algo == "proof":
        click.echo(f"proven draw for player {r.player}: drawing line {' '.join(r.pv) or '-'}")
    if r.algo == "chance":
        click.echo(r.status)
    elif r.status and not r.proven:
        estimate = ("no estimate: the root's proof (pn) and disproof (dn) numbers say how "
                    "near each answer the proof got" if r.algo == "proof" else
                    "alpha-beta's estimate in the time left" if r.algo == "proof+alphabeta"
                    else f"{r.algo.split('+')[-1].upper()}'s estimate in the time left"
                    if r.algo in ("proof+mcts", "mcts", "ismcts") else "an estimate")
        click.echo(f"{r.status}; the value is {estimate}")
    if r.table_warning:
        click.echo(f"proof table: {r.table_warning}")
    if r.algo == "tables":
        click.echo(f"source tables ({r.status})")
    elif r.algo in KNOWN_SOURCES:
        click.echo(f"source {r.status}; --fresh proves it again")
    click.echo(f"best   {r.best_name or '-'}")
    click.echo(f"algo   {r.algo}")
    if r.actions:
        click.echo("chance outcomes (value for player "
                   f"{r.player}):" if r.algo == "chance" else "actions:")
        for a in r.actions:
            value = "-" if a.value is None else f"{a.value:.4f}"
            extra = f"  visits {a.visits:>8} ({a.share:.1%})" if a.visits is not None else ""
            exact = "" if a.proven is None or r.proven else \
                ("  exact" if a.proven else "  estimate")
            click.echo(f"  {a.name:<16} {value}{extra}{exact}")
    strategy = _mixed_strategy(state, r)
    if strategy:
        click.echo(f"mixed strategy of player {r.player}: {strategy_text(strategy)}")
    click.echo(f"pv     {' '.join(r.pv) or '-'}")
    click.echo(f"depth {r.depth}  nodes {r.nodes:,}  nodes/s {r.nps:,.0f}  "
               f"time {r.time_s:.3f}s  tt fill {r.tt_fill:.2%}")


def _solo_record(record_file, game_number) -> bool:
    from niwa.analysis.arena.game_record import read_game

    start = read_game(record_file, game_number).start_state()
    return start.game_name == "bonsai" and start.num_players == 1


def _recorded_position(record_file, game_number, ply):
    """The position after `ply` plies of game `game_number` of a record (any game)."""
    from niwa.analysis.arena.game_record import read_game

    return read_game(record_file, game_number).replay(ply)


def strategy_text(strategy) -> str:
    """'Y4 60%, Y5 40%': alpha-beta's named rows played with positive probability, most
    likely first (MCTS's per-seat rows are shown as reported)."""
    if all(isinstance(row, tuple | list) and len(row) == 2 and isinstance(row[0], str)
           for row in strategy):
        shown = [f"{name} {p:.0%}" for name, p in sorted(strategy, key=lambda t: -t[1])
                 if p > 5e-4]
        return ", ".join(shown) or "-"
    return str(strategy)


def json_report(state, r) -> dict:
    """The documented keys of the result; `best` is the action's name, and each action
    carries only the figures its searcher reports (alpha-beta: no visits)."""
    full = dataclasses.asdict(r)
    out = {k: full[k] for k in JSON_KEYS}
    out["best"] = r.best_name
    out["source"] = r.algo if r.algo in KNOWN_SOURCES else "search"
    if r.algo in KNOWN_SOURCES[1:]:
        out["status"] = r.status
    out["actions"] = [{k: v for k, v in a.items() if v is not None or k == "value"}
                      for a in full["actions"]]
    if r.algo == "chance":
        out["chance"] = True
        out["player"] = r.player
        out["status"] = r.status
    elif r.status and (not r.proven or r.table_warning):
        out["status"] = r.status
        out["table_warning"] = r.table_warning
        out["proof_numbers"] = r.proof_numbers
    if r.episode is not None:
        out["round"] = r.episode
        out["strategy"] = _mixed_strategy(state, r)
    return out


@click.command("solve")
@click.argument("position", required=False)
@click.option("--algo", type=click.Choice(["auto", "proof", "alphabeta", "mcts"]),
              default="auto", show_default=True,
              help="auto: the df-pn proof search where it applies (two players, no chance, "
                   "alternating moves, nothing hidden; unless --depth/--iters is given), "
                   "else alpha-beta unless something is hidden (then ISMCTS). A proof that "
                   "does not finish in 80% of --time leaves the rest to alpha-beta's "
                   "estimate. alphabeta on "
                   "a position with hidden parts searches it with everything open (Haru "
                   "open-hands analysis: draws by expectation, each simultaneous choice "
                   "solved as a matrix game, the mixed strategy printed).")
@click.option("--time", "time_s", type=Number(float, 0.001, MAX_MOVE_SECONDS), default=None,
              help="Seconds of search (default 10 s for the proof, and for alpha-beta when "
                   "--depth is not given).")
@click.option("--depth", type=Number(int, 1, 500), default=None,
              help="Alpha-beta plies (iterative deepening stops earlier when proven); with "
                   "--checkpoint DIR --status, also list the proof's open positions down to "
                   "that many plies (where --focus can send the work); with --history, also "
                   "follow those positions.")
@click.option("--iters", type=Number(int, 1, MAX_ITERATIONS), default=None,
              help="MCTS iterations (default 100000 when --time is not given).")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="MCTS seed (--deck-known: the seed of its playouts).")
@click.option("--tt", "tt_bits", type=Number(int, 10, 28), default=22, show_default=True,
              help="Alpha-beta transposition table: 2^TT entries of 24 bytes.")
@click.option("--tt-mb", "tt_mb", type=Number(float, 1, 1 << 20, unit="MB"), default=256, show_default=True,
              help="Proof-search table in MB (24 bytes an entry); the full standard "
                   "Lotus game needs about 6000.")
@click.option("--round", "round_only", is_flag=True,
              help="Search only the rest of the current round (Haru), hands open: the value "
                   "is the value of the rest of the round, exact when proven; each "
                   "simultaneous choice is solved as a matrix game (mixed strategy printed).")
@click.option("--deck-known", "deck_known", is_flag=True,
              help="Solo Bonsai with the deck order known: the best final score the deal "
                   "allows and whether the solo win was possible (branch and bound: exact "
                   "when it completes, else the best found and a proven upper bound). The "
                   "deck comes from --record, --deck, --deck-seed or the position's own "
                   "'deck order' (each of those implies --deck-known).")
@click.option("--moves", "move_list", default=None, metavar='"M1 M2 ..."',
              help="Solve the position after these moves from POSITION (notation as `niwa "
                   "moves` prints it, or ids), e.g. niwa solve lotus --moves \"W1-a1 B1-a1\".")
@click.option("--record", "record_file", type=click.Path(dir_okay=False), default=None,
              help="A recorded game (games.jsonl or a niwa play save): solve the position "
                   "after --ply plies of --game. A solo Bonsai record implies --deck-known: "
                   "its reveals give the deck order, and its score is compared.")
@click.option("--game", "game_number", type=Number(int, 1, 10**9), default=None,
              help="--record: which game of FILE (1 = the first line).")
@click.option("--ply", type=Number(int, 0, 10**6), default=0, show_default=True,
              help="--record: search from the position after this many plies.")
@click.option("--deck", "deck_cards", default=None, metavar="'CARD CARD ...'",
              help="--deck-known: the unseen cards of POSITION in the order they will be "
                   "revealed (card names as in the notation).")
@click.option("--deck-seed", type=SEED, default=None,
              help="--deck-known: shuffle POSITION's unseen deck with this seed (a position "
                   "before the goal draw, e.g. 'bonsai players=1', is dealt from it too).")
@click.option("--nodes", "node_limit", type=Number(int, 1, 10**15), default=None,
              help="--deck-known: node budget (with --time, whichever comes first; "
                   "without --time the answer is the same on any machine). Default: "
                   "--time 10.")
@click.option("--tables", "tables_dir", type=click.Path(file_okay=False), default=None,
              help="Endgame tables folder (default: $NIWA_TABLES, else "
                   "~/.cache/niwa/tables): a position inside a table is answered from it "
                   "at once, and the proof search and MCTS take exact values from it.")
@click.option("--no-tables", is_flag=True, help="Do not use endgame tables.")
@click.option("--fresh", is_flag=True,
              help="Prove the position again even when a shipped opening book or a "
                   "certificate already proves its value (otherwise answered at once, "
                   "saying where from).")
@click.option("--certificate", "certificate_file", type=click.Path(dir_okay=False),
              default=None,
              help="After the df-pn proof, write its solution tree to FILE (a certificate "
                   "that `niwa proof check FILE` verifies with the reference rules).")
@click.option("--checkpoint", "checkpoint_dir", type=click.Path(file_okay=False), default=None,
              help="Prove POSITION with the two-level proof search (a proof-number tree "
                   "over df-pn jobs), saving every finished job to DIR; run it again to "
                   "resume after a stop or a kill, also on another machine (POSITION may "
                   "then be left out). --time bounds this session; default: until proven.")
@click.option("--status", "show_status", is_flag=True,
              help="--checkpoint: print the checkpoint's progress (root pn/dn, first moves "
                   "decided, jobs, nodes, CPU) and exit.")
@click.option("--history", "history_file", type=click.Path(dir_okay=False), default=None,
              help="--checkpoint: replay its job log and write where the proof stood after "
                   "every job (root and first moves' proof numbers, nodes, CPU) to FILE "
                   "(CSV), with a plot beside it (FILE's name with .png); only reads the "
                   "checkpoint.")
@click.option("--workers", type=Number(int, 1, 4096), default=None,
              help="--checkpoint: worker processes (default 1: in this process).")
@click.option("--executor", default=None, metavar="local|dask://HOST:PORT",
              help="--checkpoint: where the jobs run, as for `niwa tournament`.")
@click.option("--job-nodes", "job_nodes", type=Number(int, 1, 10**12), default=None,
              help="--checkpoint: df-pn expansions per job (default 2,000,000; a new "
                   "checkpoint only: a resumed one keeps its own).")
@click.option("--transpositions/--no-transpositions", "transpositions", default=None,
              help="--checkpoint: one top-tree node per position under the game's symmetry "
                   "(mirror first moves and transposed paths share their jobs; the default "
                   "of a new checkpoint) or one per path of moves (checkpoints made before "
                   "it). Given on a resume, the checkpoint is switched over for good.")
@click.option("--focus", "focus", multiple=True, metavar="MOVES",
              help="--checkpoint: send this session's jobs below this first move, or the "
                   "position a line of moves from the root reaches ('W2-a2 W4-4'), until it "
                   "is decided, then go on as usual: to settle one position early. Repeat "
                   "for several, taken in order. 'auto' (or 'auto:PLIES'): the open "
                   "position 2 (PLIES) plies down nearest to being decided, one after "
                   "another. Changes the order of the work, never a value. Given alone "
                   "while a proof runs on the checkpoint, it steers that run (its table "
                   "kept).")
@click.option("--steer", "steer_only", is_flag=True,
              help="--checkpoint with --focus: only steer the proof running on DIR; with no "
                   "run there it is an error, never the start of a new run.")
@click.option("--max-tree-nodes", "max_tree_nodes", type=Number(int, 1, 10**8), default=None,
              help="--checkpoint: the most nodes the top tree may hold (default 50,000, "
                   "about 1 KB each); at the cap a leaf whose job did not finish is sent "
                   "again with twice the budget instead of being expanded. On a resume it "
                   "may only raise the checkpoint's.")
@click.option("--certify-jobs", "certify_jobs", is_flag=True,
              help="--checkpoint: each job that proves its position writes that position's "
                   "certificate at once, from its worker's table, into DIR/parts; the "
                   "proof's certificate then stops there instead of proving those "
                   "positions again (`niwa proof extract`). Lotus only.")
@click.option("--certify-budget", "certify_budget", type=Number(float, 0, 86400), default=None,
              help="--certify-jobs: the seconds one job's certification may take (default "
                   "30; 0 = no limit). A tree whose proof has left the worker's table is "
                   "proved again as it is read; past the budget it is given up (proved again "
                   "at the end) and the parts finished by then are kept.")
@click.option("--set-plies", "set_plies", type=Number(int, 0, 64), default=None,
              help="--checkpoint: choose the first N plies below the focus (the root "
                   "without one) by proof-set numbers, which count a leaf reached by "
                   "several move orders once where the tree's numbers count it on every "
                   "path; the tree's numbers choose below them (default 0: off). Changes the "
                   "order of the work, never a value.")
@click.option("--set-every", "set_every", type=Number(int, 1, 10**6), default=None,
              help="--set-plies: jobs between two proof-set choices (default 1: a fresh "
                   "choice for every job; each takes about 2 CPU s for a top tree of 80,000 "
                   "nodes, and a choice kept for 32 jobs cost 1.5x to 2.4x the nodes on "
                   "towers 3..1 pro/optional).")
@click.option("--keep-proven", "keep_proven", type=Number(int, 0, 10**9), default=None,
              help="--checkpoint: at a stop, keep up to N of the table's largest proofs in "
                   "DIR/proven.npy (24 bytes each), loaded into the next session's table so "
                   "that it does not prove them again (default 200,000; 0: none).")
@huge_pages_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per position.")
@click.option("--batch", type=click.File("r", encoding="utf-8", errors="replace"), default=None,
              help="Solve one position per line of FILE ('-' = stdin) and write CSV; a line "
                   "that fails is named in the error at the end ('line N: ...') and the batch goes on.")
@click.option("--out", type=click.File("w"), default="-", show_default=True,
              help="Where --batch writes its CSV.")
@user_errors
def solve_cmd(position, algo, time_s, depth, iters, seed, tt_bits, tt_mb, round_only,
              deck_known, move_list, record_file, game_number, ply, deck_cards, deck_seed, node_limit,
              tables_dir, no_tables, fresh, certificate_file, checkpoint_dir, show_status,
              history_file, workers, executor, job_nodes, transpositions, focus,
              steer_only, max_tree_nodes, certify_jobs, certify_budget, set_plies, set_every,
              keep_proven, huge_pages, as_json, batch, out):
    """Solve POSITION: its value, best action, every root action, principal variation.

    Values are expected returns in [0, 1] of the player to move (1 = win). "proven"
    means the search reached every end of the game below the root (no evaluation used).

    Example: niwa solve "lotus towers=2" --time 5
    """
    # a solo Bonsai record is searched with its deck known (its reveals give the order);
    # a record of any other game gives the position to solve
    deck_known = deck_known or deck_cards is not None or deck_seed is not None or \
        bool(record_file and _solo_record(record_file, game_number))
    if checkpoint_dir is not None or show_status or history_file is not None or \
            workers is not None or executor is not None or job_nodes is not None or \
            transpositions is not None or focus or certify_jobs or steer_only or \
            max_tree_nodes is not None or certify_budget is not None or \
            set_plies is not None or set_every is not None or keep_proven is not None:
        if no_tables and tables_dir:
            raise UserError("--tables and --no-tables contradict each other")
        from niwa.cli.solve_tree import ProofRun

        run = ProofRun(
            directory=checkpoint_dir, position=position, workers=workers, executor=executor,
            job_nodes=job_nodes, transpositions=transpositions, tt_mb=tt_mb,
            tables=None if no_tables else (tables_dir or "auto"), time_s=time_s,
            as_json=as_json, certificate_file=certificate_file, focus=tuple(focus),
            huge_pages=huge_pages, certify_jobs=certify_jobs, certify_budget=certify_budget,
            steer_only=steer_only, max_tree_nodes=max_tree_nodes, set_plies=set_plies,
            set_every=set_every, keep_proven=keep_proven)
        _two_level(run, show_status, history_file, status_depth=depth, given=[
            name for name, on in (
                ("--batch", batch is not None), ("--round", round_only),
                ("--moves (give the position's notation: niwa show POSITION --moves ...)",
                 move_list is not None),
                ("--depth", depth is not None and not show_status and history_file is None),
                ("--iters", iters is not None),
                ("--deck-known", deck_known), ("--algo", algo not in ("auto", "proof")),
                ("--nodes", node_limit is not None)) if on])
        return
    if deck_known:
        from niwa.cli.solo import solve_solo_cmd

        given = [name for name, on in (("--batch", batch is not None), ("--round", round_only),
                                       ("--moves", move_list is not None),
                                       ("--certificate", certificate_file is not None),
                                       ("--depth", depth is not None),
                                       ("--iters", iters is not None),
                                       ("--algo", algo != "auto")) if on]
        if given:
            raise UserError(f"{given[0]} does not go with --deck-known")
        if huge_pages:
            raise UserError("--huge-pages is for the df-pn proof table; --deck-known searches "
                            "with its own")
        solve_solo_cmd(position, record_file, game_number, ply, deck_cards, deck_seed,
                       time_s, node_limit, tt_bits, seed, as_json)
        return
    stray = [name for name, on in (("--game", game_number is not None and not record_file),
                                   ("--ply", ply and not record_file),
                                   ("--nodes", node_limit is not None)) if on]
    if stray:
        raise UserError(f"{stray[0]} goes with --record (--nodes with --deck-known)")
    if batch is None and not position and not record_file:
        raise UserError("give a POSITION, --record FILE or --batch FILE")
    if record_file and (position or batch is not None):
        raise UserError("--record gives the position: leave POSITION and --batch out")
    if move_list is not None and (batch is not None or record_file):
        raise UserError("--moves goes with one POSITION (--record: --ply; --batch: one "
                        "notation a line)")
    if no_tables and tables_dir:
        raise UserError("--tables and --no-tables contradict each other")
    tables = None if no_tables else (tables_dir or "auto")
    if huge_pages:
        if algo in ("alphabeta", "mcts") or round_only:
            raise UserError(f"--huge-pages is for the df-pn proof table; "
                            f"{'--round' if round_only else '--algo ' + algo} does not prove")
        warn_small_pages()
    if certificate_file is not None:
        _solve_with_certificate(position, certificate_file, algo, time_s, depth, iters,
                                round_only, batch, tt_mb, tables, as_json, huge_pages,
                                move_list)
        return
    if batch is not None:
        writer = csv.writer(out)
        writer.writerow(["position", "value", "proven", "best", "pv", "depth", "nodes",
                         "time_s", "nps", "tt_fill"])
        failures, solved = [], 0
        for number, line in enumerate(batch, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                state = load_position(line)
                r = solve_position(state, algo, time_s, depth, iters, seed, tt_bits,
                                   round_only, tt_mb, tables, fresh=fresh,
                                   huge_pages=huge_pages)
            except (NiwaError, click.ClickException) as e:
                # one bad line should not cost the rest of a long batch: say which, go on
                message = e.format_message() if isinstance(e, click.ClickException) else str(e)
                failures.append(f"line {number}: {(message.splitlines() or ['?'])[0]}")
                continue
            value = "" if r.value is None else f"{r.value:.6f}"
            writer.writerow([line, value, r.proven, r.best_name or "",
                             " ".join(r.pv), r.depth, r.nodes, f"{r.time_s:.4f}",
                             f"{r.nps:.0f}", f"{r.tt_fill:.6f}"])
            out.flush()
            solved += 1
        if failures:
            # one error line (the first few failures in it), as every other error
            shown = "; ".join(failures[:3]) + (f"; and {len(failures) - 3} more"
                                               if len(failures) > 3 else "")
            raise UserError(f"{len(failures)} of {len(failures) + solved} positions could not "
                            f"be solved ({shown}); the others are in the CSV")
        return
    state = _recorded_position(record_file, game_number, ply) if record_file else \
        _position_after(position, move_list)
    r = solve_position(state, algo, time_s, depth, iters, seed, tt_bits, round_only, tt_mb,
                       tables, fresh=fresh, huge_pages=huge_pages)
    if as_json:
        click.echo(json.dumps(json_report(state, r)))
    else:
        print_report(state, r)
    sys.stdout.flush()


def _position_after(position: str, move_list: str | None):
    """POSITION's state, after `move_list` (--moves) if given."""
    from niwa.analysis.arena.game_record import apply_move_list

    state = load_position(position)
    if move_list is not None:
        apply_move_list(state, move_list)
    return state


def _solve_with_certificate(position, path, algo, time_s, depth, iters, round_only, batch,
                            tt_mb, tables, as_json, huge_pages=False, move_list=None):
    """`niwa solve POS --certificate FILE`: a fresh df-pn proof, its certificate written."""
    from niwa.solver.solve import solve_with_certificate

    given = [name for name, on in (("--batch", batch is not None), ("--round", round_only),
                                   ("--depth", depth is not None),
                                   ("--iters", iters is not None),
                                   ("--algo " + algo, algo not in ("auto", "proof"))) if on]
    if given:
        raise UserError(f"{given[0]} does not go with --certificate (a certificate comes "
                        f"from the df-pn proof)")
    if not position:
        raise UserError("--certificate needs a POSITION")
    check_writable(path, "--certificate")
    state = _position_after(position, move_list)
    r, cert = solve_with_certificate(state, path, time_s, tt_mb, tables,
                                     progress=sys.stderr.isatty(), huge_pages=huge_pages)
    if as_json:
        out = json_report(state, r)
        out["certificate"] = {"path": str(path), "nodes": cert.nodes, "edges": cert.edges,
                              "sha256": cert.sha256}
        click.echo(json.dumps(out))
    else:
        print_report(state, r)
        click.echo(f"certificate {path}: {cert.nodes:,} positions, {cert.edges:,} moves, "
                   f"{os.path.getsize(path):,} bytes, sha256 {cert.sha256[:16]}... "
                   f"(check it: niwa proof check {path})")


def _two_level(run, show_status, history_file, status_depth=None, given=()) -> None:
    """--checkpoint (and its options): the two-level proof search (cli/solve_tree.py) of
    `run` (a ProofRun), or, with --status or --history, a look at its checkpoint."""
    from niwa.cli.solve_tree import checkpoint_status, checkpointed_solve, write_history

    if run.certify_budget is not None and not run.certify_jobs:
        raise UserError("--certify-budget goes with --certify-jobs")
    if run.set_every is not None and not run.set_plies:
        raise UserError("--set-every goes with --set-plies N (N at least 1)")

    if run.directory is None:
        raise UserError("--status, --history, --workers, --executor, --job-nodes, "
                        "--max-tree-nodes, --transpositions, --focus, --steer, "
                        "--keep-proven and --certify-jobs go with --checkpoint DIR")
    if run.steer_only and not run.focus:
        raise UserError("--steer needs --focus: the line (or 'auto') to steer the running "
                        "proof to")
    if given:
        raise UserError(f"{given[0]} does not go with --checkpoint")
    if show_status or history_file is not None:
        flag = "--status" if show_status else "--history"
        if run.position:
            raise UserError(f"{flag} reads the checkpoint only: leave out POSITION")
        if run.certificate_file is not None:
            raise UserError(f"{flag} reads the checkpoint only: leave out --certificate")
        for name, on in (("--focus", bool(run.focus)), ("--steer", run.steer_only),
                         ("--huge-pages", run.huge_pages),
                         ("--certify-jobs", run.certify_jobs),
                         ("--max-tree-nodes", run.max_tree_nodes is not None),
                         ("--set-plies", run.set_plies is not None),
                         ("--keep-proven", run.keep_proven is not None),
                         ("--workers", run.workers is not None),
                         ("--executor", run.executor is not None)):
            if on:
                raise UserError(f"{flag} reads the checkpoint only: {name} is for a run")
        if history_file is not None:
            write_history(run.directory, history_file, run.as_json and not show_status,
                          run.transpositions, status_depth or 1)
        if show_status:
            checkpoint_status(run.directory, run.as_json, run.transpositions, status_depth)
        return
    if run.certificate_file is not None:
        check_writable(run.certificate_file, "--certificate")
    checkpointed_solve(run)
