"""`niwa proof`: proof certificates, checked with the reference rules (logic in
niwa.solver.certificate)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import click

from niwa.cli.common import (
    Number,
    executor_for,
    executor_options,
    huge_pages_option,
    progress_option,
    user_errors,
)


def register(main: click.Group) -> None:
    main.add_command(proof_group)


@click.group("proof")
def proof_group():
    """Proof certificates: a proven result's solution tree (the winner's move at each of
    its positions, every reply of the loser, leaves where the game is over), written by
    `niwa solve POS --certificate FILE` and checked here without trusting the search."""


leaf_budget_option = click.option(
    "--leaf-budget", type=Number(int, 1, 10**9), default=2_000_000, show_default=True,
    help="Positions the checker may search to solve table leaves again.")


@proof_group.command("check")
@click.argument("certificates", nargs=-1, required=True, type=click.Path(dir_okay=True),
                metavar="CERTIFICATE...")
@leaf_budget_option
@click.option("--parts", "parts_dir", type=click.Path(file_okay=False, exists=True),
              default=None,
              help="Where the certificates it stops at (its parts) are, found by sha256; "
                   "each is checked too (default: the certificate's own folder).")
@executor_options(
    "Processes that check the parts at once, after the certificate itself (default: 1, "
    "this process; with dask: the cluster's threads).",
    "Where the parts are checked: local processes or a Dask scheduler (whose workers must "
    "see the part files at the same paths).")
@click.option("--tables", "tables_dir", default=None, metavar="DIR|auto",
              help="An endgame tables folder ('auto': the default one) whose values order "
                   "the moves tried when table leaves are solved again: far fewer "
                   "positions searched. Only an order: every value still comes from the "
                   "reference rules, so a wrong table costs time, never a wrong verdict "
                   "(default: no table).")
@click.option("--ledger", "ledger_file", type=click.Path(dir_okay=False), default=None,
              help="Record each part in FILE as it passes; a check given the same FILE "
                   "again takes those parts as checked, so a long check that stops "
                   "resumes where it was.")
@click.option("--mirror", is_flag=True,
              help="Check the claim for the lane mirror of its root instead (every move "
                   "mapped to its mirror move), as a part met in the mirror is checked: a "
                   "part checked alone into a --ledger, in both orientations, serves "
                   "wherever it is met.")
@click.option("--leaf-memo", "leaf_memo_entries", type=Number(int, 0, 10**10),
              default=10_000_000, show_default=True, metavar="ENTRIES",
              help="Keep the table leaves' values solved again from one certificate to the "
                   "next (and to the parts checked in this process), up to so many "
                   "positions (about 140 bytes each; 0: each certificate its own).")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object (a line for each certificate).")
@progress_option
@user_errors
def check_cmd(certificates, leaf_budget, parts_dir, workers, executor, tables_dir,
              ledger_file, mirror, leaf_memo_entries, as_json, progress):
    """Verify each CERTIFICATE with the plain-Python reference rules: every winner move
    legal, every loser reply present, every leaf a won end of the game (or a table
    position, solved again). Exit 0 if each proves its claim, else one line saying what
    is wrong and exit 2 (those before it are reported, and recorded in --ledger). Several
    certificates are checked one after the other, sharing what their table leaves' search
    found (--leaf-memo): the parts of one certification share much of their endgames.

    CERTIFICATE `-` reads the certificates from standard input instead, a path a line
    (`--mirror PATH`: that one's mirror claim), each checked as its line arrives, until
    the input ends: a long-lived checker whose leaf memo lasts (certify.py's).

    Example: niwa proof check bench/perfect-play/certificates/lotus-towers3-basic-optional.npz
    """
    from niwa.cli.common import UserError, check_writable
    from niwa.solver.certificate import CheckLedger, LeafMemo

    if "-" in certificates and len(certificates) > 1:
        raise UserError("CERTIFICATE '-' (read from standard input) comes alone")
    ledger = None
    if ledger_file is not None:
        check_writable(ledger_file, "--ledger")
        ledger = CheckLedger(ledger_file)
    memo = LeafMemo(leaf_memo_entries) if leaf_memo_entries else None
    folders: dict = {}      # parts folder -> its index, kept from one certificate to the next
    for certificate, mirrored in (_read_stdin(mirror) if certificates == ("-",) else
                                  ((c, mirror) for c in certificates)):
        _check_one(certificate, leaf_budget, parts_dir, workers, executor, tables_dir,
                   ledger and ledger.refresh(), mirrored, memo, as_json, progress, folders)


def _read_stdin(mirror: bool):
    """The (certificate path, mirrored) lines of standard input, each as it arrives."""
    import sys

    for line in iter(sys.stdin.readline, ""):       # (not `for line in`: it reads ahead)
        path = line.strip()
        if path.startswith("--mirror "):
            yield path[len("--mirror "):].strip(), True
        elif path:
            yield path, mirror


def _check_one(certificate, leaf_budget, parts_dir, workers, executor, tables_dir,
               ledger, mirror, memo, as_json, progress, folders):
    """check_cmd for one certificate (`ledger`: a CheckLedger or None; `folders`: the
    parts folders indexed for the certificates before, by path)."""
    import sys
    from pathlib import Path

    from niwa.solver.certificate import certificate_folder, check_certificate, load_certificate

    cert = load_certificate(certificate)
    parts = None
    if cert.parts:
        where = str(parts_dir or Path(certificate).parent)
        parts = folders.get(where) or folders.setdefault(where, certificate_folder(where))
    # (the executor checks the parts: a certificate without any needs none)
    with executor_for(executor, workers) if cert.parts else contextlib.nullcontext() as ex:
        report = check_certificate(cert, leaf_budget=leaf_budget, parts=parts, executor=ex,
                                   progress=sys.stderr.isatty() if progress is None
                                   else progress, tables=tables_dir, ledger=ledger,
                                   mirror=mirror, leaf_memo=memo)
    claim = (f"seat {cert.winner} wins ({'win' if cert.value == 1.0 else 'loss'} for the "
             f"player to move)")
    if as_json:
        click.echo(json.dumps({"certificate": str(certificate), "valid": True,
                               "game": cert.game, "variant": cert.variant, "root": cert.root,
                               "winner": cert.winner, "value": cert.value,
                               "bytes": os.path.getsize(certificate), "sha256": cert.sha256,
                               "nodes": report.nodes, "winner_nodes": report.winner_nodes,
                               "loser_nodes": report.loser_nodes, "edges": report.edges,
                               "game_over_leaves": report.game_over_leaves,
                               "table_leaves": report.table_leaves,
                               "leaf_positions": report.leaf_positions,
                               "part_leaves": report.part_leaves, "parts": report.parts,
                               "part_nodes": report.part_nodes,
                               "parts_checked_by": ex.describe() if ex else "this process",
                               "leaf_order": report.leaf_order or "none",
                               "parts_from_ledger": report.parts_from_ledger,
                               "mirror": mirror,
                               "time_s": round(report.time_s, 3)}, sort_keys=True))
        return
    click.echo(f"certificate {certificate} ({os.path.getsize(certificate):,} bytes, "
               f"checksum ok)")
    click.echo(f"root   {cert.root}")
    click.echo(f"claim  {claim}")
    click.echo(f"checked with the reference rules: {report.summary()}")
    click.echo("valid")


@proof_group.command("audit")
@click.argument("ledger", type=click.Path(dir_okay=False, exists=True))
@click.option("--sample", type=Number(int, 1, 10**7), default=50, show_default=True,
              help="How many of the ledger's parts to audit, drawn at random.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="The draw's seed: the same seed draws the same parts on any machine.")
@click.option("--nodes", "max_nodes", type=Number(int, 1, 10**13), default=20_000_000,
              show_default=True,
              help="df-pn nodes for each part's fresh proof (about 1M a second); one that "
                   "does not finish is left undecided. A budget in nodes, not seconds: the "
                   "same parts come out undecided on any machine.")
@click.option("--max-positions", type=Number(int, 1, 10**10), default=2_000_000,
              show_default=True,
              help="The largest certificate of a part the audit checks (the reference "
                   "checker takes about 30K positions a second); a larger one is left "
                   "undecided.")
@click.option("--tt-mb", type=Number(float, 1, 10**6), default=256, show_default=True,
              metavar="MB", help="Each fresh proof's df-pn table.")
@click.option("--tables", "tables_dir", default=None, metavar="DIR|auto",
              help="Endgame tables for the fresh proofs (their positions become table "
                   "leaves, which the checker solves again itself, the tables ordering its "
                   "moves; default: none, every leaf a game's end).")
@leaf_budget_option
@click.option("--retry-undecided", "retry_files", multiple=True,
              type=click.Path(dir_okay=False, exists=True), metavar="CSV",
              help="Audit only the parts of this draw that an earlier audit's CSV left "
                   "undecided, with this run's settings (more --nodes, --tables), into "
                   "another --out. Repeat it for a chain of retries, oldest first: a "
                   "part's row in a later CSV replaces its row in an earlier one.")
@executor_options(
    "Processes that audit parts at once (default: 1, this process; with dask: the "
    "cluster's threads); the rows come in the order parts finish.",
    "Where the parts are audited: local processes or a Dask scheduler.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
              help="A CSV with a row for each part as it is audited; given again with the "
                   "same ledger and seed, the audit resumes where it stopped (a larger "
                   "--sample audits more: its draw begins with the smaller one's).")
@progress_option
@user_errors
def audit_cmd(ledger, sample, seed, max_nodes, max_positions, tt_mb, tables_dir,
              leaf_budget, retry_files, workers, executor, out_file, progress):
    """Derive again a random sample of what a check LEDGER records: each drawn part's root
    is proved from nothing (a fresh df-pn table, no ledger, no parts), that proof's
    certificate checked with the reference rules, and the winner compared with the
    ledger's. Exit 0 if every part decided agrees, else one line naming the first that
    does not and exit 2. With no part wrong, it reports the one-sided 95% upper bound on
    the fraction of wrong parts among those small enough to audit (about 3 / decided).

    Example: niwa proof audit bench/perfect-play/pro-rule/certification/pro-mandatory-ledger.jsonl --sample 20
    """
    import sys

    from tqdm import tqdm

    from niwa.cli.common import UserError, check_writable
    from niwa.solver.audit import (
        AGREES,
        DISAGREES,
        UNDECIDED,
        append_row,
        audit_parts,
        draw_parts,
        read_rows,
        wrong_rate_bound,
    )

    parts = draw_parts(ledger, sample, seed)
    earlier = {}        # each part's latest row along the chain of earlier audits
    for retry_file in retry_files:
        if out_file is not None and Path(out_file).resolve() == Path(retry_file).resolve():
            raise UserError("--retry-undecided: give the new rows another --out file")
        retried = {row.sha256: row for row in read_rows(retry_file)}
        if set(retried) - {p.sha256 for p in parts}:
            raise UserError(f"--retry-undecided {retry_file} is not an audit of this draw "
                            f"(another ledger, --seed or --sample)")
        earlier.update(retried)
    if retry_files:
        parts = [p for p in parts if p.sha256 in earlier and earlier[p.sha256].verdict
                 == UNDECIDED]
    done = {}
    if out_file is not None:
        check_writable(out_file, "--out")
        done = {row.sha256: row for row in read_rows(out_file)}
        strangers = set(done) - {p.sha256 for p in parts}
        if strangers:
            raise UserError(f"--out {out_file} holds {len(strangers)} part(s) this draw does "
                            "not (another ledger or --seed, or a larger --sample): give "
                            "another file")
    rows = [done[p.sha256] for p in parts if p.sha256 in done]

    def agrees_or_stop(row) -> None:
        if row.verdict == DISAGREES:
            raise UserError(f"part {row.sha256[:16]} disagrees: the ledger says seat "
                            f"{row.ledger_winner} wins {row.root!r}, a fresh proof "
                            f"checked with the reference rules says seat {row.winner}")

    for row in [*rows, *earlier.values()]:      # (one found earlier stops this run too)
        agrees_or_stop(row)
    with executor_for(executor, workers) as ex, \
            tqdm(total=len(parts), initial=len(rows), desc="audit", unit="part",
                 disable=not (sys.stderr.isatty() if progress is None else progress)) as bar:
        for row in audit_parts([p for p in parts if p.sha256 not in done], ex,
                               max_nodes=max_nodes, tt_mb=tt_mb, tables=tables_dir,
                               max_positions=max_positions, leaf_budget=leaf_budget):
            rows.append(row)
            if out_file is not None:
                append_row(out_file, row)
            bar.update()
            agrees_or_stop(row)
    decided = sum(row.verdict == AGREES for row in rows)
    nodes = sum(row.proof_nodes for row in rows)
    positions = sum(row.certificate_positions for row in rows if row.verdict == AGREES)
    click.echo(f"audited {len(rows)} of the ledger's parts (seed {seed}): {decided} agree, "
               f"0 disagree, {len(rows) - decided} undecided; {nodes:,} df-pn nodes, "
               f"{positions:,} positions checked with the reference rules, "
               f"{sum(r.prove_s + r.check_s for r in rows):.1f} s")
    if retry_files:
        # the earlier audits' decided parts and this run's, one sample (none disagreed)
        decided += sum(row.verdict == AGREES for row in earlier.values())
        click.echo(f"with the earlier audit ({', '.join(retry_files)}): {decided} of the "
                   f"{len(earlier):,} parts agree, {len(earlier) - decided:,} undecided")
    if decided:
        click.echo(f"wrong parts among those of this size: at most "
                   f"{100 * wrong_rate_bound(0, decided):.2g}% (95%, one-sided)")


@proof_group.command("extract")
@click.argument("checkpoint", type=click.Path(file_okay=False))
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help="Where to write the certificate (.npz).")
@click.option("--move", default=None, metavar="MOVES",
              help="A first move, or a line of moves from the root ('W2-a2 W4-4'), whose "
                   "position the proof has decided (the root may still be open): the "
                   "certificate of that position.")
@click.option("--parts", "parts_dir", type=click.Path(file_okay=False), default=None,
              help="A folder of certificates (of decided positions, from --move) to stop at: "
                   "where the walk reaches one's root (or its lane mirror), the certificate "
                   "names it as a part instead of walking on (for proofs too big for one "
                   "file or session).")
@click.option("--split", type=Number(int, 1, 20), default=None, metavar="PLIES",
              help="With --parts DIR: certify every position PLIES plies down (or the "
                   "first below it with the loser to move) as a part of its own, saved in "
                   "DIR as it is made, then the top over them; parts already in DIR are "
                   "used, so a stopped run resumes.")
@click.option("--tt-mb", "tt_mb", type=Number(float, 1, 1 << 20, unit="MB"), default=1024,
              show_default=True, help="The table of the df-pn search that proves the jobs' "
                                      "positions again.")
@click.option("--tables", "tables_dir", type=click.Path(file_okay=False), default=None,
              help="Endgame tables (default: those the checkpoint's last session used).")
@click.option("--no-tables", is_flag=True, help="No endgame tables: every leaf a game's end.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@progress_option
@click.option("--workers", "-j", type=Number(int, 1, 256), default=1, show_default=True,
              help="With --split: processes that make the parts at once, sharing the --parts "
                   "folder and one table of --tt-mb times N MB (several runs of this "
                   "command, on one machine or several, share a folder the same way, each "
                   "with its own table).")
@click.option("--ledger", "ledger_file", type=click.Path(dir_okay=False), default=None,
              help="A check ledger (niwa proof check --ledger): the certificates it "
                   "recorded as passed are parts to stop at, their files kept or not, so "
                   "a certification carried between machines by its ledger alone makes "
                   "only what it lacks (check the result with the same --ledger).")
@click.option("--max-part-positions", type=Number(int, 0, 10**10), default=0,
              show_default=True,
              help="With --split: a part whose walk passes N positions is cut instead into "
                   "parts where that walk met 16 of the loser's positions (each saved as it "
                   "is made), "
                   "so that no part outlasts a session (0: no bound).")
@click.option("--cuts", "cuts_file", type=click.Path(dir_okay=False), default=None,
              help="With --max-part-positions: where the parts found too big and their "
                   "cut depths are kept (default: DIR/cuts.jsonl of --parts), so that a "
                   "run again cuts each at once instead of walking it to the bound first.")
@click.option("--keep-proofs", "keep_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR",
              help="Keep the costliest proofs of the df-pn table in DIR every "
                   "--keep-every seconds as parts are made, and load them at the start: a "
                   "certification stopped and run again proves little again.")
@click.option("--keep-every", "keep_every_s", type=Number(float, 0, 10**6),
              default=600, show_default=True,
              help="With --keep-proofs: how often the proofs are kept.")
@huge_pages_option
@user_errors
def extract_cmd(checkpoint, out_file, move, parts_dir, split, tt_mb, tables_dir, no_tables,
                as_json, progress, workers, ledger_file, max_part_positions, cuts_file,
                keep_dir, keep_every_s, huge_pages):
    """Write the certificate of the two-level proof in CHECKPOINT (niwa solve --checkpoint),
    or with --move of one position it has decided, reading the checkpoint only (so also
    beside the run that writes it). Check it with `niwa proof check`.

    Example: niwa proof extract runs/pro-mandatory --move W3-a3 --out w3.npz
    """
    import sys
    import time

    from niwa.cli.common import UserError, check_writable, warn_small_pages
    from niwa.solver.certificate import certificate_from_checkpoint

    if no_tables and tables_dir:
        raise UserError("--tables and --no-tables contradict each other")
    check_writable(out_file, "--out")
    tables = None if no_tables else (tables_dir or "checkpoint")
    t0 = time.perf_counter()
    if split is not None and parts_dir is None:
        raise UserError("--split needs --parts DIR (where the parts are saved)")
    if max_part_positions and split is None:
        raise UserError("--max-part-positions needs --split PLIES (parts to cut)")
    if cuts_file is not None and not max_part_positions:
        raise UserError("--cuts needs --max-part-positions N (the parts it cuts)")
    if cuts_file is not None:
        check_writable(cuts_file, "--cuts")
    if workers > 1 and split is None:
        raise UserError("--workers needs --split PLIES: the workers share the parts")
    if split is None and parts_dir is not None and not os.path.isdir(parts_dir):
        raise UserError(f"--parts: no folder {parts_dir}")
    if split is not None:       # (the folder is made if it is missing)
        check_writable(os.path.join(parts_dir, "part.npz") if os.path.isdir(parts_dir)
                       else parts_dir, "--parts")
    if keep_dir is not None:
        check_writable(os.path.join(keep_dir, "proven.npy") if os.path.isdir(keep_dir)
                       else keep_dir, "--keep-proofs")
    if ledger_file is not None and not os.path.isfile(ledger_file):
        raise UserError(f"--ledger: no file {ledger_file}")
    parts = () if parts_dir is None or split else _certificates_in(parts_dir)
    if huge_pages:
        warn_small_pages()
    cert = certificate_from_checkpoint(
        checkpoint, tt_mb=tt_mb, tables=tables, move=move, parts=parts, split=split or 0,
        parts_dir=parts_dir, huge_pages=huge_pages, workers=workers, ledger=ledger_file,
        max_part_positions=max_part_positions, cuts=cuts_file, keep_proofs=keep_dir,
        keep_every_s=keep_every_s,
        parts_out=parts_dir or os.path.dirname(os.path.abspath(out_file)),
        progress=sys.stderr.isatty() if progress is None else progress)
    cert.save(out_file)
    out = {"certificate": out_file, "root": cert.root, "line": cert.info.get("line"),
           "winner": cert.winner, "value": cert.value, "nodes": cert.nodes, "edges": cert.edges,
           "parts": len(cert.parts), "bytes": os.path.getsize(out_file), "sha256": cert.sha256,
           "extract_s": round(time.perf_counter() - t0, 2)}
    if as_json:
        click.echo(json.dumps(out, sort_keys=True))
        return
    what = f"the position after {out['line']}" if move else "the root"
    stops = f", stops at {len(cert.parts)} part certificates" if cert.parts else ""
    click.echo(f"certificate of {what}: seat {cert.winner} wins; {cert.nodes:,} positions, "
               f"{cert.edges:,} moves{stops}, {out['bytes']:,} bytes, sha256 "
               f"{cert.sha256[:16]}..., {out['extract_s']} s -> {out_file} (check it: niwa "
               f"proof check {out_file})")


def _certificates_in(folder) -> list:
    """Every certificate in `folder` (checksums verified), for --parts."""
    from pathlib import Path

    from niwa.cli.common import UserError
    from niwa.solver.certificate import load_certificate

    found = [load_certificate(p) for p in sorted(Path(folder).glob("*.npz"))]
    if not found:
        raise UserError(f"--parts: no certificate (.npz) in {folder}")
    return found


@proof_group.command("info")
@click.argument("certificate", type=click.Path(dir_okay=True))
@user_errors
def info_cmd(certificate):
    """Print a certificate's header after verifying its checksum (the proof itself is
    verified by `niwa proof check`)."""
    from niwa.solver.certificate import load_certificate

    cert = load_certificate(certificate)
    click.echo(json.dumps({**cert.meta(), "sha256": cert.sha256,
                           "bytes": os.path.getsize(certificate)}, sort_keys=True))
