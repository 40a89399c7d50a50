"""`niwa solve POSITION --checkpoint DIR`: the two-level proof search
(niwa.solver.proof_tree), parallel and resumable; `--status` reads a checkpoint."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass

import click

from niwa.cli.common import UserError, load_position, warn_small_pages


@dataclass(frozen=True)
class ProofRun:
    """What `niwa solve --checkpoint DIR` was asked to run, as given (None: not given)."""
    directory: str
    position: str | None = None
    workers: int | None = None
    executor: str | None = None
    job_nodes: int | None = None
    transpositions: bool | None = None
    tt_mb: float = 1024
    tables: str | None = "auto"         # a folder, "auto", or None for none
    time_s: float | None = None
    as_json: bool = False
    certificate_file: str | None = None
    focus: tuple = ()
    huge_pages: bool = False
    certify_jobs: bool = False
    certify_budget: float | None = None
    steer_only: bool = False
    max_tree_nodes: int | None = None
    set_plies: int | None = None
    set_every: int | None = None
    keep_proven: int | None = None


def checkpoint_status(directory, as_json: bool, transpositions=None, depth=None) -> None:
    """Print where a checkpointed proof stands (its finished jobs replayed; nothing runs;
    `transpositions` given: replayed into that kind of tree, the checkpoint untouched;
    `depth`: also its open positions down to that many plies)."""
    from niwa.solver.proof_sets import first_moves_once
    from niwa.solver.proof_tree import kept_header, line_text, look_at_checkpoint, number_text

    tree, r = look_at_checkpoint(directory, transpositions=transpositions)
    below = tree.open_positions(depth) if depth else []
    once = first_moves_once(tree)
    if as_json:
        out = _json(r, tree)
        out["first_numbers_once"] = {k: list(v) for k, v in once.items()}
        out["focus"] = tree.saved_focus
        out["last_run"] = tree.saved_run
        out["auto_focus"] = None if tree.auto_line is None else \
            line_text(tree.root_state, tree.auto_line)
        if depth:
            out["open_positions"] = [{"line": line, "pn": pn, "dn": dn, "jobs": jobs}
                                     for line, pn, dn, jobs in below]
        click.echo(json.dumps(out))
        return
    click.echo(f"position {tree.notation}")
    click.echo(r.summary())
    open_moves = [f"{k} pn {number_text(pn, thousands=True)} dn {number_text(dn, thousands=True)}"
                  for k, (pn, dn) in r.first_numbers.items() if pn != 0 and dn != 0]
    if open_moves:
        click.echo(f"open first moves (for player {r.player}): " + ", ".join(open_moves))
        # the tree sums a transposed position once per path: these count each leaf once
        click.echo("the same, each leaf counted once (proof sets): " + ", ".join(
            f"{k} pn {number_text(pn, thousands=True)} dn {number_text(dn, thousands=True)}"
            for k, (pn, dn) in once.items()))
    if depth:
        click.echo(f"open positions 2 to {depth} plies down (for player {r.player}, by dn): "
                   f"{len(below) or 'none'}")
        if below:
            rows = [(line, number_text(pn, thousands=True), number_text(dn, thousands=True),
                     f"{jobs:,}") for line, pn, dn, jobs in sorted(below, key=lambda b: b[2])]
            wide = [max(len(row[i]) for row in rows + [("line", "pn", "dn", "jobs")])
                    for i in range(4)]
            for row in [("line", "pn", "dn", "jobs"), *rows]:
                click.echo("  " + row[0].ljust(wide[0]) + "".join(
                    "  " + cell.rjust(w) for cell, w in zip(row[1:], wide[1:], strict=True)))
    run = tree.saved_run
    if run:
        shared = f", one {run['shared_mb']:g} MB table shared" if run.get("shared_mb") else \
            f", {run.get('tt_mb', 0):g} MB table per worker"
        click.echo(f"last session: from {run.get('started_utc', '?')}, {run.get('executor')}, "
                   f"{run.get('workers')} worker(s){shared}"
                   f"{' on huge pages' if run.get('huge_pages') else ''}, tables "
                   f"{run.get('tables') or 'none'}"
                   f"{', jobs certified' if run.get('certify_jobs') else ''}"
                   f"{_budget_text(run.get('certify_budget_s'))}"
                   f"{_set_text(run)}")
    if tree.job_certificates:
        kept = tree.job_certificates_kept()
        where = f"{directory}/parts"
        click.echo(f"job certificates: {tree.job_certificates:,}, "
                   + (f"in {where} (the proof's certificate stops at them)"
                      if kept == tree.job_certificates else
                      f"{f'{kept:,}' if kept else 'none'} of them in {where} ("
                      f"{'the others are ' if kept else ''}kept elsewhere: copy "
                      f"them there before the proof's certificate is written)"))
    if tree.saved_focus and not r.proven:
        click.echo(f"focus (at the last snapshot of the run): {tree.saved_focus}")
    if tree.saved_set_choice and not r.proven:
        click.echo(f"proof-set numbers chose (at the last snapshot): {tree.saved_set_choice}")
    if tree.auto_line is not None and not r.proven:
        click.echo(f"--focus auto chose {line_text(tree.root_state, tree.auto_line)} "
                   "(a resumed --focus auto goes on with it while it is open)")
    click.echo(f"checkpoint {directory}: {r.jobs:,} finished jobs, {len(r.workers)} worker "
               f"process{'es' * (len(r.workers) != 1)} so far, a top tree of "
               f"{'positions' if tree.transpositions else 'move paths'}"
               f"{f', {r.torn_lines} torn last line dropped' if r.torn_lines else ''}")
    kept = kept_header(directory)
    if kept is not None:
        click.echo(f"kept proofs: {kept.get('rows', 0):,} positions in proven.npy "
                   f"(written {kept.get('written_utc', '?')}), loaded by the next session")


def write_history(directory, csv_file, as_json: bool, transpositions=None,
                  depth: int = 1) -> None:
    """Write a checkpoint's history (niwa.solver.proof_history) to `csv_file` and its plot
    beside it (the same name with .png), then say what was written."""
    from pathlib import Path

    from niwa.solver.proof_history import checkpoint_history, plot_history

    csv_path = Path(csv_file)
    png_path = csv_path.with_suffix(".png")
    if png_path == csv_path:
        raise UserError(f"--history {csv_file}: give the CSV's name; the plot goes beside it "
                        "with .png")
    folder = csv_path.resolve().parent
    if not folder.is_dir():
        raise UserError(f"--history: no folder {folder}")
    frame = checkpoint_history(directory, transpositions=transpositions,
                               progress=sys.stderr.isatty(), depth=depth)
    try:
        frame.to_csv(csv_path, index=False, float_format="%.15g")
        if len(frame):
            plot_history(frame, png_path)
    except OSError as e:
        raise UserError(f"--history: cannot write {e.filename or csv_path}: {e.strerror}") \
            from None
    plot = str(png_path) if len(frame) else None
    if as_json:
        click.echo(json.dumps({"history": str(csv_path), "plot": plot, "jobs": len(frame)}))
    else:
        click.echo(f"history of {len(frame):,} jobs -> {csv_path}"
                   f"{f' and {plot}' if plot else ' (no finished job: no plot)'}")


def _json(r, tree) -> dict:
    return {"position": tree.notation, "value": r.value, "proven": r.proven,
            "player": r.player, "root_pn": r.root_pn, "root_dn": r.root_dn,
            "first_moves": r.first_moves,
            "first_numbers": {k: list(v) for k, v in r.first_numbers.items()},
            "jobs": r.jobs, "nodes": r.nodes,
            "cpu_s": round(r.cpu_s, 3), "wall_s": round(r.wall_s, 3),
            "answer_s": None if r.answer_s is None else round(r.answer_s, 3),
            "tree_nodes": r.tree_nodes, "max_tree_nodes": r.max_tree_nodes,
            "status": r.status,
            "transpositions": tree.transpositions,
            "kept_proofs_loaded": tree.proven_loaded, "kept_proofs_saved": tree.proven_saved,
            "job_certificates": tree.job_certificates,
            "job_certificates_kept": tree.job_certificates_kept()}


def _set_text(run: dict) -> str:
    """', N plies chosen by proof-set numbers (C choices, S CPU s)' for a session that
    used --set-plies, else ''."""
    if not run.get("set_plies"):
        return ""
    return (f", {run['set_plies']} plies chosen by proof-set numbers "
            f"{_every_text(run.get('set_every') or 1)} ({run.get('set_choices', 0):,} "
            f"choices, {run.get('set_cpu_s', 0):g} CPU s)")


def _every_text(every: int) -> str:
    """How often a session works out its proof-set choice, in words."""
    return "for every job" if every == 1 else f"every {every} jobs"


def _budget_text(seconds) -> str:
    """' (within N s a job)' or ' (no time limit)': the certification budget a session
    ran with, if its settings recorded one ('' otherwise)."""
    if seconds is None:
        return ""
    return " (no time limit)" if not seconds else f" (within {seconds:g} s a job)"


def _steer(run: ProofRun) -> None:
    """`niwa solve --checkpoint DIR --focus ...` while a proof runs there: the new focus
    is handed to it (proof_tree.steer_checkpoint); nothing else can change mid-run."""
    from niwa.cli.common import given_on_command_line
    from niwa.solver.proof_tree import steer_checkpoint

    others = [name for name, on in (
        ("POSITION", bool(run.position)), ("--workers", run.workers is not None),
        ("--executor", run.executor is not None), ("--job-nodes", run.job_nodes is not None),
        ("--transpositions", run.transpositions is not None),
        ("--tt-mb", given_on_command_line("tt_mb")),
        ("--tables", given_on_command_line("tables_dir") or given_on_command_line("no_tables")),
        ("--time", run.time_s is not None),
        ("--certificate", run.certificate_file is not None),
        ("--huge-pages", run.huge_pages), ("--certify-jobs", run.certify_jobs),
        ("--max-tree-nodes", run.max_tree_nodes is not None),
        ("--set-plies", run.set_plies is not None),
        ("--keep-proven", run.keep_proven is not None)) if on]
    if others:
        raise UserError(f"checkpoint {run.directory} is in use by a running proof: --focus "
                        f"alone steers it, {others[0]} cannot change while it runs")
    text = steer_checkpoint(run.directory, run.focus)
    if run.as_json:
        click.echo(json.dumps({"checkpoint": str(run.directory), "focus": text,
                               "steered": True}))
    else:
        click.echo(f"the proof running on {run.directory} takes the focus {text} within "
                   f"seconds (its table kept)")


def checkpointed_solve(run: ProofRun) -> None:
    """Start or resume the two-level proof of `run.position` in `run.directory` (and once
    it is proven, write its certificate to `run.certificate_file` if given). `certify_jobs`:
    each job that proves its position certifies it in its worker (JobCertifier), within
    `certify_budget` seconds a job if given (0: no limit). `steer_only` (--steer): hand
    `focus` to the proof running there, and never start one. `keep_proven`: at a stop, keep
    up to so many of the table's largest proofs for the next session (ProofTree's)."""
    from niwa.solver.certificate import JobCertifier
    from niwa.solver.proof_tree import checkpoint_in_use, open_checkpoint

    directory = run.directory
    state = load_position(run.position) if run.position else None
    certify = None
    if run.certify_jobs:
        certify = JobCertifier() if run.certify_budget is None else \
            JobCertifier(time_budget=run.certify_budget)
    settings = {"tt_mb": run.tt_mb, "tables": run.tables, "transpositions": run.transpositions,
                "huge_pages": run.huge_pages, "focus": tuple(run.focus), "certify": certify}
    for key in ("job_nodes", "max_tree_nodes", "keep_proven"):
        if getattr(run, key) is not None:
            settings[key] = getattr(run, key)
    if run.set_plies:
        settings["set_plies"] = run.set_plies
        if run.set_every is not None:
            settings["set_every"] = run.set_every
    if run.steer_only and not checkpoint_in_use(directory):
        # --focus alone on an idle checkpoint would start a run there: --steer refuses
        raise UserError(f"no proof is running on {directory}: --steer only steers a running "
                        f"proof (leave it out to start one)")
    if run.focus and checkpoint_in_use(directory):
        # a proof is running there: --focus alone steers it (its table kept)
        _steer(run)
        return
    if run.certify_jobs:
        from pathlib import Path

        from niwa.solver.proof_tree import read_meta

        game = state.game_name if state is not None else \
            read_meta(directory)["position"].split()[0] \
            if (Path(directory) / "meta.json").is_file() else "lotus"
        if game != "lotus":
            raise UserError(f"--certify-jobs: certificates are checked with Lotus's "
                            f"reference rules; {game} has no checker")
    ex = _executor(run.executor, run.workers)   # a bad --executor before any folder is made
    try:
        tree = open_checkpoint(directory, state, **settings)
    except BaseException:
        if hasattr(ex, "close"):
            ex.close()
        raise
    if tree.jobs_replayed:
        click.echo(f"resuming {directory}: {tree.jobs_replayed:,} finished jobs replayed",
                   err=True)
    workers = int(getattr(ex, "workers", 1) or 1)
    shared = getattr(ex, "name", "") == "local" and workers > 1
    table = (f"one {run.tt_mb * workers:g} MB table shared by the workers" if shared else
             f"{run.tt_mb:g} MB table per worker") + \
        (" on huge pages" if run.huge_pages else "")
    if run.huge_pages:
        warn_small_pages(shared)
    focus = f", jobs below {tree.focus_text()} first" if tree.focus else ""
    if tree.set_plies:
        focus += (f", {tree.set_plies} plies below {'it' if tree.focus else 'the root'} "
                  f"chosen by proof-set numbers {_every_text(tree.set_every)}")
    click.echo(f"two-level proof, {ex.describe()}, jobs of {tree.job_nodes:,} nodes, "
               f"{table}{focus} -> {directory}", err=True)
    last = [0.0]

    steered = [0]

    def progress(t, row):
        if t.steered != steered[0]:
            steered[0] = t.steered
            click.echo(f"steered: jobs below {t.focus_text() or 'the root (no focus)'} first",
                       err=True)
        if time.monotonic() - last[0] >= 30:
            last[0] = time.monotonic()
            click.echo(t.result().summary(), err=True)

    try:
        r = tree.run(ex, time_limit=run.time_s or 0.0, progress=progress)
    finally:
        tree.close()
        if hasattr(ex, "close"):
            ex.close()
        if tree.proven_loaded or tree.proven_saved:
            click.echo(f"kept proofs: {tree.proven_loaded:,} loaded at the start, "
                       f"{tree.proven_saved:,} saved in {directory}/proven.npy", err=True)
    out = _json(r, tree)
    certificate_file = run.certificate_file
    if certificate_file is not None and r.proven:
        out["certificate"] = _write_certificate(directory, certificate_file, run.tt_mb,
                                                run.tables)
    if run.as_json:
        click.echo(json.dumps(out))
    else:
        click.echo(r.summary())
        c = out.get("certificate")
        if c:
            click.echo(f"certificate {c['path']}: {c['nodes']:,} positions, {c['edges']:,} "
                       f"moves, {c['bytes']:,} bytes, sha256 {c['sha256'][:16]}..., read off "
                       f"the proof in {c['extract_s']} s (check it: niwa proof check "
                       f"{c['path']})")
    sys.stdout.flush()
    if certificate_file is not None and not r.proven:
        raise UserError(f"the proof is not finished ({r.status}): no certificate written "
                        f"(the progress is kept in {directory}; run again to go on)")


def _write_certificate(directory, path, tt_mb, tables) -> dict:
    """Write the certificate of the finished proof in `directory` to `path`."""
    import os

    from niwa.solver.certificate import certificate_from_checkpoint

    cert = certificate_from_checkpoint(directory, tt_mb=tt_mb, tables=tables,
                                       progress=sys.stderr.isatty(),
                                       parts_out=os.path.dirname(os.path.abspath(path)))
    cert.save(path)
    return {"path": str(path), "nodes": cert.nodes, "edges": cert.edges,
            "bytes": os.path.getsize(path), "sha256": cert.sha256,
            "extract_s": cert.info.get("extract_s")}


def _executor(spec, workers):
    from niwa.analysis.arena.executors import make_executor
    from niwa.analysis.arena.schedule import TournamentError
    from niwa.solver.proof_tree import InProcessExecutor

    if (spec or "local").strip() == "local" and (workers or 1) == 1:
        return InProcessExecutor()
    try:
        return make_executor(spec, workers)
    except TournamentError as e:
        raise UserError(str(e)) from None
