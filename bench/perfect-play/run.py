"""Two-player Lotus played perfectly: proofs of who wins, opening books, and the `perfect`
agent checked in play. Everything through niwa's Python API (solver.proof, solver.solve,
solver.book, the game loop); results go to results/ beside this file.

    python bench/perfect-play/run.py proofs                  # towers 2..1 and 3..1, every rule
    python bench/perfect-play/run.py proofs --only 4:pro:optional --time-limit 600 \
        --tt-mb 8192 --slice 60                              # results/proof-4-pro-*.log
    python bench/perfect-play/run.py checkpoint pro-rule/checkpoint-pro-mandatory \
        --out docs/lotus-perfect-play.csv                    # a two-level proof's row
    python bench/perfect-play/run.py solve --tt-mb 8000 --time 900   # results/solve-lotus-full.json
    python bench/perfect-play/run.py book --plies 8 --max-work 1000 --tt-mb 8192 \
        --out /tmp/lotus.npz                                 # results/books-build.txt
    python bench/perfect-play/run.py book-depth --plies 8 10 12 14 16 --games 3 --time 20 \
        --tt-mb 1024 --out book-depth-random.csv
    python bench/perfect-play/run.py seat --perfect perfect:time=1,tt_mb=512 \
        --opponents mcts:time=0.05 --games 50 --seat 1 --out agent-seat1
    python bench/perfect-play/run.py paired --case pm-seat1 lean/pm-seat1-lean \
        lean/pm-seat1-fallback --out lean/lean-vs-fallback.csv

`proofs`: decide each case from the initial position with the df-pn proof search and write
the perfect-play table (one row per towers:rule:trampoline; rows of other cases kept, so
long runs split and resume). `solve`: the full standard game (what `niwa solve lotus`
does), as JSON. `book`: prove the start and write the winner's moves as an opening book
(what `niwa book build` does). `book-depth`: how hard a live proof is D plies in (picks a
book's depth). `seat`: `perfect` in one fixed seat against other agents. `paired`: two
`seat` runs with the same seed (the same deals and opponents' seeds, game by game) compared
game by game: wins of each, and McNemar's exact test on the games only one of them won.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import json
import random
import sys
import time
from pathlib import Path

from tqdm import tqdm

from niwa.analysis.arena.game_loop import play
from niwa.ext.game import Rng
from niwa.ext.lotus import LotusState
from niwa.ext.registry import get_game, parse_variant_options
from niwa.solver.agents import make_agent
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_result import MoveValue

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from campaign import command_line, guarded  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
PROOFS_HELP = """Decide two-player Lotus with the df-pn proof search and write the perfect-play table.

Every case is the standard board (lanes of 3, 11 shared spaces, trampoline at 8), two
players, from the initial position. Each finished case is written to the CSV at once (rows
of other cases already there are kept), so long runs can be split and resumed.
Columns: towers, rule, trampoline, value for the first player (1 = White wins with perfect
play, 0 = Black wins, empty if unproven), White's winning first moves, nodes (positions
expanded by the proof), time_s, table entries used / capacity, status (proven, or why it
stopped and the root's proof/disproof numbers), the follow-up nodes that valued every first
move and played out the principal variation, and that variation. An unproven case lists
each first move's value as far as the table has it (? = open) and, in first_move_work, the
expansions spent below it. The certificate columns come from the shipped certificates'
measurements (certificate_columns): its path, positions, bytes and check seconds."""
SEAT_HELP = """`perfect` in one fixed seat against other agents: does the proven winner win every game?

`niwa tournament` seats every agent in every seat equally often; here `perfect` keeps the
seat given (1 = Black, the proven winner of two-player Lotus) so that every game tests the
claim. Agents are built per game from their specs, as a tournament worker builds them (so
the proof table kept per process is exercised across games). Game g against opponent k
uses agent seeds derived from (--seed, k, g). Writes games.csv (one row per game: result,
plies, seconds, where perfect's moves came from: book / proof / fallback / forced, its
slowest move), summary.csv (per opponent) and sources.png."""
BOOK_DEPTH_HELP = """How hard is a live proof D plies into full Lotus? Picks the depth of an opening book.

Plays `--games` seeded games to each depth: both sides random, or with --book the book's
winner from the book and the other side random (the lines `perfect` meets). Then proves
the position with a fresh table within --time seconds and records nodes, seconds and
whether it finished. Writes a CSV (--out) and prints a summary per depth."""


# ---- proofs -----------------------------------------------------------------------------
COLUMNS = ["towers", "rule", "trampoline", "value_first_player", "winning_first_moves",
           "first_move_values", "nodes", "time_s", "tt_entries", "tt_capacity", "tt_mb", "status",
           "followup_nodes", "followup_time_s", "table_warning", "pv_plies", "pv",
           "first_move_work", "certificate", "certificate_positions", "certificate_bytes",
           "certificate_check_s"]
RULES = [(r, t) for r in ("basic", "pro") for t in ("optional", "mandatory")]


def case_key(towers, rule, trampoline) -> str:
    return f"{towers}:{rule}:{trampoline}"


def solve_case(towers: int, rule: str, trampoline: str, tt_mb: float, time_limit: float,
               max_nodes: int, symmetry: str, huge_pages: bool = False, slice_s: float = 0.0,
               followup_s: float | None = None) -> dict:
    """Solve one case. With `slice_s` the proof runs in slices of that many seconds (the
    table carries over, so each slice continues the last) and logs the root's proof and
    disproof numbers after each: how far a long run got."""
    state = LotusState(towers=towers, rule=rule, trampoline=trampoline)
    search = ProofSearch(tt_mb=tt_mb, symmetry=None if symmetry == "none" else "auto",
                         huge_pages=huge_pages)
    nodes, spent, t0 = 0, 0.0, time.time()
    while True:
        budget = time_limit - spent if time_limit > 0 else 0.0
        if slice_s > 0 and (budget <= 0 or budget > slice_s):
            budget = slice_s
        r = search.solve(state, time_limit=budget, max_nodes=max_nodes - nodes if max_nodes else 0,
                         followup_time_limit=followup_s)
        nodes += r.nodes
        spent += r.time_s
        if slice_s > 0:
            print(f"    {time.time() - t0:7.0f} s: {nodes:,} nodes, root pn={r.root_pn} "
                  f"dn={r.root_dn}, table {r.tt_entries:,} ({100 * r.tt_fill:.0f}%)"
                  f"{'; ' + r.table_warning if r.table_warning else ''}", file=sys.stderr, flush=True)
        if r.proven or (time_limit > 0 and spent >= time_limit - 0.5) or \
                (max_nodes and nodes >= max_nodes) or slice_s <= 0:
            break
    status = "proven" if r.proven else (
        f"unproven ({r.status} after {nodes:,} nodes; root pn={r.root_pn} dn={r.root_dn})")
    first = r.moves
    work = ""
    if not r.proven:
        # how far each first move got: its value if the table has it proven, and the
        # expansions spent below it
        first, parts = [], []
        for a in state.legal_actions():
            child = state.child(a)
            v = search.known_value(child, state.current_player())
            first.append(MoveValue(a, state.action_to_string(a), None if v is None else float(v)))
            parts.append(f"{state.action_to_string(a)}={search.subtree_work(child)}")
        work = " ".join(parts)
    return {
        "towers": towers, "rule": rule, "trampoline": trampoline,
        "value_first_player": "" if r.value is None else int(r.value),
        "winning_first_moves": " ".join(r.winning_moves),
        "first_move_values": " ".join(f"{m.name}={'?' if m.value is None else int(m.value)}"
                                      for m in first),
        "first_move_work": work,
        "nodes": nodes, "time_s": round(spent, 2), "tt_entries": r.tt_entries,
        "tt_capacity": r.tt_capacity, "tt_mb": tt_mb, "status": status,
        "followup_nodes": r.followup_nodes, "followup_time_s": round(r.followup_time_s, 2),
        "table_warning": r.table_warning or "", "pv_plies": len(r.pv), "pv": " ".join(r.pv),
    }


# the shipped certificates' figures: whole certificates (certificates/run.py) and those in
# parts carried by a check ledger (pro-rule/certify.py: its "check" step of the whole)
WHOLE_CERTIFICATES = HERE / "certificates" / "results.csv"
CERTIFIED_IN_PARTS = HERE / "pro-rule" / "results" / "certificates.csv"
PARTS_CERTIFICATE_HOME = "bench/perfect-play/pro-rule/certification"


def certificate_columns() -> dict[str, dict]:
    """case key -> the certificate columns of the case's shipped certificate: its path in
    the repository, the positions its check met (a part met twice counted twice), its
    file's bytes (a certificate in parts: the top's, the parts being in its check ledger)
    and the seconds of that check."""
    out = {}
    for row in _csv_rows(WHOLE_CERTIFICATES):
        out[case_key(row["towers"], row["rule"], row["trampoline"])] = {
            "certificate": f"bench/perfect-play/certificates/{row['name']}",
            "certificate_positions": row["cert_nodes"],
            "certificate_bytes": row["bytes"], "certificate_check_s": row["check_s"]}
    for row in _csv_rows(CERTIFIED_IN_PARTS):
        if not row["step"].startswith("check (") and row["step"] != "check":
            continue
        figures = json.loads(row["figures"] or "{}")
        variant = figures.get("variant", {})
        if not figures.get("valid") or figures.get("line") or \
                figures.get("root") != LotusState(**variant).to_notation():
            continue        # (a certificate of one line, not of the start)
        out[case_key(variant["towers"], variant["rule"], variant["trampoline"])] = {
            "certificate": f"{PARTS_CERTIFICATE_HOME}/{row['name']}.npz",
            "certificate_positions": figures["nodes"] + figures.get("part_nodes", 0),
            "certificate_bytes": figures["bytes"], "certificate_check_s": row["wall_s"]}
    return out


def _csv_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def read_rows(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    with path.open(newline="") as f:
        return {case_key(row["towers"], row["rule"], row["trampoline"]): row
                for row in csv.DictReader(f)}


def write_rows(path: Path, rows: dict[str, dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    order = {case_key(t, r, tr): i for i, (t, (r, tr)) in
             enumerate((t, rt) for t in (2, 3, 4) for rt in RULES)}
    certified = certificate_columns()
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for key in sorted(rows, key=lambda k: order.get(k, 99)):
            w.writerow({**rows[key], **certified.get(key, {})})
    tmp.replace(path)


def proofs_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="run.py proofs", description=PROOFS_HELP)
    p.add_argument("--out", type=Path, default=RESULTS / "proofs.csv",
                   help="the table (default results/proofs.csv; the published one is "
                        "docs/lotus-perfect-play.csv)")
    p.add_argument("--tt-mb", type=float, default=4096, help="table size in MB (default 4096)")
    p.add_argument("--time-limit", type=float, default=1800, help="seconds per case (0 = none)")
    p.add_argument("--max-nodes", type=int, default=0, help="expansions per case (0 = none)")
    p.add_argument("--full", action="store_true", help="also the full game, towers 4..1 basic/optional")
    p.add_argument("--only", nargs="*", help="cases as TOWERS:RULE:TRAMPOLINE, e.g. 3:pro:optional")
    p.add_argument("--symmetry", choices=("auto", "none"), default="auto")
    p.add_argument("--huge-pages", action="store_true", help="ask for 2 MB pages for the table")
    p.add_argument("--slice", type=float, default=0.0,
                   help="prove in slices of this many seconds, logging progress after each")
    p.add_argument("--followup-time", type=float, default=None,
                   help="seconds for valuing the first moves and the PV (default: --time-limit)")
    args = p.parse_args(argv)
    cases = [(t, r, tr) for t in (2, 3) for r, tr in RULES]
    if args.full:
        cases.append((4, "basic", "optional"))
    if args.only:
        wanted = set(args.only)
        cases = [(int(k.split(":")[0]), *k.split(":")[1:]) for k in args.only] if not \
            wanted <= {case_key(*c) for c in cases} else [c for c in cases if case_key(*c) in wanted]
    rows = read_rows(args.out)
    for towers, rule, trampoline in cases:
        t0 = time.time()
        print(f"towers {towers}..1 {rule}/{trampoline} ...", file=sys.stderr, flush=True)
        row = solve_case(towers, rule, trampoline, args.tt_mb, args.time_limit, args.max_nodes,
                         args.symmetry, args.huge_pages, args.slice, args.followup_time)
        rows[case_key(towers, rule, trampoline)] = {k: str(v) for k, v in row.items()}
        write_rows(args.out, rows)
        value = row["value_first_player"]
        print(f"  value {'?' if value == '' else value} winning {row['winning_first_moves'] or '-'}"
              f" nodes {row['nodes']:,} {row['time_s']} s, table {row['tt_entries']:,}; "
              f"{row['status']} (wall {time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    return 0


def checkpoint_row(directory, looked=None) -> dict:
    """The perfect-play table's row of a two-level proof (niwa solve --checkpoint), read off
    its checkpoint: the value when proven, else each first move decided so far; nodes and
    CPU seconds of all its sessions; the root's proof numbers in the status."""
    from niwa.solver.proof_tree import look_at_checkpoint, number_text

    tree, r = looked or look_at_checkpoint(directory)
    state = tree.root_state
    if state.game_name != "lotus" or state.num_players != 2:
        raise SystemExit(f"{directory}: not a two-player Lotus proof")
    variant = state.variant
    towers = int(variant.get("towers", 4))
    first_player = None if r.value is None else (r.value if r.player == 0 else 1.0 - r.value)
    decided = sum(v is not None for v in r.first_moves.values())
    numbers = " ".join(f"{m}={number_text(pn)}/{number_text(dn)}"
                       for m, (pn, dn) in r.first_numbers.items())
    status = "proven (two-level search)" if r.proven else (
        f"unproven (two-level search, resumable: {r.jobs:,} jobs, {r.nodes:,} nodes; root "
        f"pn={number_text(r.root_pn)} dn={number_text(r.root_dn)}; {decided} of "
        f"{len(r.first_moves)} first moves decided)")
    return {
        "towers": towers, "rule": variant.get("rule", "basic"),
        "trampoline": variant.get("trampoline", "optional"),
        "value_first_player": "" if first_player is None else int(first_player),
        "winning_first_moves": " ".join(m for m, v in r.first_moves.items() if v == 1.0),
        "first_move_values": " ".join(f"{m}={'?' if v is None else int(v)}"
                                      for m, v in r.first_moves.items()),
        "nodes": r.nodes, "time_s": round(r.cpu_s, 1), "tt_entries": "", "tt_capacity": "",
        # (each session chose its own table size: none stands for the proof)
        "tt_mb": "", "status": status, "followup_nodes": 0, "followup_time_s": 0.0,
        "table_warning": "", "pv_plies": 0, "pv": "",
        # each first move's proof/disproof numbers (pn/dn for the first player) in the
        # two-level tree: how far from decided it is
        "first_move_work": numbers,
    }


def checkpoint_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="run.py checkpoint", description=(
        "Write a two-level proof's row of the perfect-play table from its checkpoint "
        "(niwa solve --checkpoint DIR): the value, or the first moves decided so far."))
    p.add_argument("checkpoint", type=Path)
    p.add_argument("--out", type=Path, default=RESULTS / "proofs.csv",
                   help="the table (default results/proofs.csv; the published one is "
                        "docs/lotus-perfect-play.csv)")
    p.add_argument("--record", action="store_true",
                   help="also put the proof's record into the shipped "
                        "solver/books/proofs.json, from which niwa solve answers at once "
                        "(of a proof still open: the positions of its decided first moves)")
    p.add_argument("--certificate", default=None,
                   help="with --record: the file name of the proof's checked certificate")
    p.add_argument("--move-certificate", action="append", default=[], metavar="MOVE=FILE",
                   help="with --record of an open proof: the checked certificate of the "
                        "position a decided first move (or line) leads to (repeatable)")
    p.add_argument("--certificates-dir", type=Path,
                   default=HERE / "pro-rule" / "certification",
                   help="with --move-certificate: where those certificates are (each of a "
                        "won position gives the record its winning move)")
    p.add_argument("--record-plies", type=int, default=1,
                   help="with --record: also record the positions the top tree has "
                        "decided down to this many plies (2: the two-stone openings)")
    args = p.parse_args(argv)
    from niwa.solver.proof_tree import look_at_checkpoint

    looked = look_at_checkpoint(args.checkpoint)      # (a replay of every job: once)
    if args.record:
        from niwa.solver.known import add_proof_record, proof_record

        if any("=" not in m for m in args.move_certificate):
            p.error("--move-certificate takes MOVE=FILE")
        record = proof_record(args.checkpoint, args.certificate, looked,
                              open_proof=not looked[1].proven,
                              certificates=dict(m.split("=", 1)
                                                for m in args.move_certificate),
                              plies=args.record_plies,
                              certificate_dir=args.certificates_dir)
        print(f"record written: {add_proof_record(record)}", file=sys.stderr)
    row = checkpoint_row(args.checkpoint, looked)
    rows = read_rows(args.out)
    rows[case_key(row["towers"], row["rule"], row["trampoline"])] = \
        {k: str(v) for k, v in row.items()}
    write_rows(args.out, rows)
    print(f"{row['towers']}:{row['rule']}:{row['trampoline']}: {row['first_move_values']}; "
          f"{row['status']}", file=sys.stderr)
    return 0


# ---- solve and book ---------------------------------------------------------------------
def solve_main(argv=None) -> int:
    """The full standard game (towers 4..1, basic rule, optional trampoline by default),
    decided by the proof search, as JSON: what `niwa solve lotus --json` reports."""
    from niwa.solver.solve import solve_position

    p = argparse.ArgumentParser(prog="run.py solve", description=solve_main.__doc__)
    p.add_argument("--variant", "-v", nargs="*", default=[], help="KEY=VALUE ...")
    p.add_argument("--tt-mb", type=float, default=8000, help="proof table in MB (default 8000)")
    p.add_argument("--time", type=float, default=900, help="seconds of search (default 900)")
    p.add_argument("--out", type=Path, default=Path("solve-lotus-full.json"),
                   help="JSON file (relative: under results/; default solve-lotus-full.json)")
    args = p.parse_args(argv)
    if args.time <= 0 or args.tt_mb < 1:
        p.error("--time must be positive and --tt-mb at least 1")
    state = LotusState(**parse_variant_options(args.variant))
    r = solve_position(state, "proof", args.time, tt_mb=args.tt_mb)
    full = dataclasses.asdict(r)
    report = {"value": r.value, "proven": r.proven, "best": r.best_name,
              "actions": [{k: v for k, v in a.items() if v is not None or k == "value"}
                          for a in full["actions"]],
              "pv": list(r.pv), "nodes": r.nodes, "time_s": r.time_s,
              "position": state.to_notation(), "status": r.status}
    out = args.out if args.out.is_absolute() else RESULTS / args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report) + "\n")
    print(f"{'proven' if r.proven else 'not proven'}: value {r.value} for the first player, "
          f"{r.nodes:,} nodes in {r.time_s:.1f} s -> {out}")
    return 0


def book_main(argv=None) -> int:
    """Prove the start and write the winner's moves as an opening book (what `niwa book
    build` does); prints the book's figures as JSON and appends them to
    results/books-build.txt."""
    from niwa.solver.book import build_book

    p = argparse.ArgumentParser(prog="run.py book", description=book_main.__doc__)
    p.add_argument("--variant", "-v", nargs="*", default=[], help="KEY=VALUE ...")
    p.add_argument("--plies", type=int, default=8)
    p.add_argument("--max-work", type=int, default=1000)
    p.add_argument("--tt-mb", type=float, default=8192)
    p.add_argument("--time", type=float, default=0.0, help="seconds per proof (0 = none)")
    p.add_argument("--out", type=Path, required=True, help="the book file (.npz)")
    p.add_argument("--log", type=Path, default=Path("books-build.txt"),
                   help="where the figures are appended (relative: under results/)")
    args = p.parse_args(argv)
    book = build_book("lotus", parse_variant_options(args.variant), plies=args.plies,
                      tt_mb=args.tt_mb, time_limit=args.time, max_work=args.max_work,
                      progress=sys.stderr.isatty())
    book.save(args.out)
    line = json.dumps({"path": str(args.out), **book.meta(), "sha256": book.sha256},
                      sort_keys=True)
    print(line)
    log = args.log if args.log.is_absolute() else RESULTS / args.log
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a", encoding="utf-8") as f:
        f.write(f"\n$ {command_line(__file__, ['book', *(sys.argv[2:] if argv is None else argv)])}"
                f"\n{line}\n")
    return 0


# ---- book depth -------------------------------------------------------------------------
def line_to(plies: int, seed: int, variant: dict, book=None):
    rng = random.Random(seed)
    s = LotusState(**variant)
    for _ in range(plies):
        if s.is_terminal():
            break
        legal = s.legal_actions()
        move = book.lookup(s) if book is not None and s.current_player() == book.winner \
            else None
        s.apply(move if move in legal else rng.choice(legal))
    return s


def book_depth_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="run.py book-depth", description=BOOK_DEPTH_HELP)
    p.add_argument("--plies", type=int, nargs="+", default=[8, 10, 12, 14, 16])
    p.add_argument("--games", type=int, default=3)
    p.add_argument("--time", type=float, default=20.0)
    p.add_argument("--tt-mb", type=float, default=1024)
    p.add_argument("--rule", default="basic")
    p.add_argument("--trampoline", default="optional")
    p.add_argument("--book", default=None, help="a book file: its winner plays from it")
    p.add_argument("--leaves", type=int, default=0,
                   help="prove this many positions just past --book (seeded sample) instead")
    p.add_argument("--out", type=Path, default=None,
                   help="CSV of every position (relative: under results/)")
    args = p.parse_args(argv)
    if args.out is not None and not args.out.is_absolute():
        args.out = RESULTS / args.out
    book = None
    if args.book:
        from niwa.solver.book import load_book
        book = load_book(args.book)
    variant = dict(rule=args.rule, trampoline=args.trampoline)
    search = ProofSearch(tt_mb=args.tt_mb)
    rows = []
    if args.leaves:
        from niwa.solver.book import book_leaves
        leaves = book_leaves(book)
        random.Random(1).shuffle(leaves)
        for i, (s, ply) in enumerate(leaves[:args.leaves]):
            search.clear()
            r = search.solve(s, time_limit=args.time, root_values=False, pv=False)
            rows.append({"plies": ply, "game": i, "mover": r.player,
                         "proven": r.proven, "value": "" if r.value is None else int(r.value),
                         "nodes": r.nodes, "time_s": round(r.time_s, 2),
                         "position": s.to_notation()})
        args.plies = sorted({r["plies"] for r in rows})
        print(f"{len(leaves)} leaves; proved {len(rows)} with a fresh table each", file=sys.stderr)
    for plies in args.plies if not args.leaves else []:
        for g in range(args.games):
            s = line_to(plies, 1000 * plies + g, variant, book)
            if s.is_terminal():
                continue
            search.clear()
            r = search.solve(s, time_limit=args.time, root_values=False, pv=False)
            rows.append({"plies": plies, "game": g, "mover": r.player, "proven": r.proven,
                         "value": "" if r.value is None else int(r.value), "nodes": r.nodes,
                         "time_s": round(r.time_s, 2), "position": s.to_notation()})
            print(f"ply {plies} game {g}: {'proven' if r.proven else 'open'} "
                  f"{r.nodes:,} nodes {r.time_s:.2f} s", file=sys.stderr, flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    for plies in args.plies:
        mine = [r for r in rows if r["plies"] == plies]
        done = [r for r in mine if r["proven"]]
        print(f"ply {plies}: {len(done)}/{len(mine)} proven within {args.time:g} s; max "
              f"{max((r['time_s'] for r in mine), default=0):.2f} s, "
              f"{max((r['nodes'] for r in mine), default=0):,} nodes")
    return 0


# ---- perfect in a fixed seat ------------------------------------------------------------
SOURCES = ("book", "proof", "lean", "fallback", "forced")


def seed_of(*parts) -> int:
    return int.from_bytes(hashlib.blake2b(repr(parts).encode(), digest_size=8).digest(),
                          "little") >> 1


class Timed:
    """Wraps an agent to record how long each of its moves took."""

    def __init__(self, agent):
        self.agent, self.times = agent, []

    def step(self, state, player):
        t = time.perf_counter()
        a = self.agent.step(state, player)
        self.times.append(time.perf_counter() - t)
        return a

    def __getattr__(self, name):
        return getattr(self.agent, name)


def seat_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="run.py seat", description=SEAT_HELP)
    p.add_argument("--game", default="lotus")
    p.add_argument("--variant", "-v", nargs="*", default=[], help="KEY=VALUE ...")
    p.add_argument("--perfect", default="perfect:time=1,tt_mb=512")
    p.add_argument("--opponents", nargs="+", default=["mcts:time=0.05"])
    p.add_argument("--games", type=int, default=50, help="games per opponent")
    p.add_argument("--seat", type=int, default=1, help="perfect's seat")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, required=True,
                   help="results folder (relative: under results/, e.g. agent-seat1)")
    args = p.parse_args(argv)
    if args.games < 1 or args.seat not in (0, 1):
        p.error("--games must be at least 1 and --seat 0 or 1")
    args.out = args.out if args.out.is_absolute() else RESULTS / args.out
    variant = parse_variant_options(args.variant)
    spec = get_game(args.game)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    limit = float(args.perfect.split("time=")[1].split(",")[0]) + 0.5 \
        if "time=" in args.perfect else None
    bar = tqdm(total=args.games * len(args.opponents), desc="games", unit=" game")
    for k, opp in enumerate(args.opponents):
        for g in range(args.games):
            perfect = Timed(make_agent(args.perfect, seed=seed_of(args.seed, k, g, "perfect")))
            opponent = make_agent(opp, seed=seed_of(args.seed, k, g, "opponent"))
            agents = [opponent, perfect] if args.seat == 1 else [perfect, opponent]
            for a in agents:
                a.reset()
            t = time.perf_counter()
            r = play(spec.new(seed=seed_of(args.seed, k, g, "deal"), **variant), agents,
                     chance_rng=Rng(seed_of(args.seed, k, g, "chance")))
            row = {"opponent": opp, "game": g, "seat": args.seat,
                   "result": r.results[args.seat], "plies": len(r.actions),
                   "seconds": round(time.perf_counter() - t, 2),
                   **{s: perfect.sources.get(s, 0) for s in SOURCES},
                   "perfect_moves": len(perfect.times),
                   "slowest_move_s": round(max(perfect.times, default=0.0), 3),
                   "over_limit": sum(x > limit for x in perfect.times) if limit else 0}
            rows.append(row)
            bar.update()
            bar.set_postfix(won=sum(x["result"] == 1.0 for x in rows), of=len(rows))
    bar.close()
    with (args.out / "games.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    summary = []
    for opp in args.opponents:
        mine = [r for r in rows if r["opponent"] == opp]
        summary.append({
            "opponent": opp, "seat": args.seat, "games": len(mine),
            "wins": sum(r["result"] == 1.0 for r in mine),
            "mean_seconds_per_game": round(sum(r["seconds"] for r in mine) / len(mine), 2),
            **{s: sum(r[s] for r in mine) for s in SOURCES},
            "slowest_move_s": max(r["slowest_move_s"] for r in mine),
            "moves_over_limit": sum(r["over_limit"] for r in mine)})
    with (args.out / "summary.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0]))
        w.writeheader()
        w.writerows(summary)
    (args.out / "command.json").write_text(json.dumps(
        {"command": command_line(__file__, ["seat", *(sys.argv[2:] if argv is None else argv)]),
         "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1))
    plot(summary, args.out / "sources.png")
    for s in summary:
        print(json.dumps(s))
    return 0


def plot(summary, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    bottom = [0] * len(summary)
    for s in SOURCES:
        vals = [row[s] for row in summary]
        ax.bar([row["opponent"] for row in summary], vals, bottom=bottom, label=s)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    for i, row in enumerate(summary):
        ax.text(i, bottom[i], f"won {row['wins']}/{row['games']}", ha="center", va="bottom")
    ax.set_ylabel("perfect's moves")
    ax.set_title(f"where perfect's moves came from (seat {summary[0]['seat']})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---- two seat runs compared game by game ------------------------------------------------
PAIRED_HELP = """Compare pairs of `seat` runs made with the same --seed, game by game.

Game g against opponent k has the same deal and the same opponent seed in both runs, so
the runs differ only in `perfect`'s settings (and in what the machine's load did to its
time-limited moves). Model: each game pair is one trial; under "no difference" a game that
exactly one run won is equally likely to be either's, so the count of the first run's
lone wins among the discordant games is Binomial(discordant, 1/2) (McNemar's exact test;
Fay 2010, "Two-sided exact tests and matching confidence intervals for discrete data", R
Journal 2(1)). One CSV row per case and opponent, plus the case's total; a PNG of wins."""


def paired_rows(case, dir_a, dir_b):
    """Rows comparing two seat runs' games.csv (paired on opponent and game number)."""
    from scipy.stats import binomtest

    def games(folder):
        with (folder / "games.csv").open() as f:
            return {(r["opponent"], int(r["game"])): float(r["result"]) == 1.0
                    for r in csv.DictReader(f)}

    def shown(folder):      # under results/: as the --case arguments name it
        return str(folder.relative_to(RESULTS) if folder.is_relative_to(RESULTS) else folder)

    a, b = games(dir_a), games(dir_b)
    if a.keys() != b.keys():
        raise SystemExit(f"paired: {dir_a} and {dir_b} hold different games")
    rows = []
    opponents = list(dict.fromkeys(k[0] for k in a))
    for opp in [*opponents, "all"]:
        keys = [k for k in a if opp in ("all", k[0])]
        only_a = sum(a[k] and not b[k] for k in keys)
        only_b = sum(b[k] and not a[k] for k in keys)
        p = binomtest(only_a, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0
        rows.append({"case": case, "opponent": opp, "games": len(keys),
                     "wins_a": sum(a[k] for k in keys), "wins_b": sum(b[k] for k in keys),
                     "only_a": only_a, "only_b": only_b, "mcnemar_p": float(f"{p:.3g}"),
                     "a": shown(dir_a), "b": shown(dir_b)})
    return rows


def paired_main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="run.py paired", description=PAIRED_HELP)
    p.add_argument("--case", nargs=3, action="append", required=True,
                   metavar=("NAME", "RUN_A", "RUN_B"),
                   help="a case's name and its two seat folders (relative: under results/)")
    p.add_argument("--labels", nargs=2, default=["a", "b"], help="names of runs A and B")
    p.add_argument("--out", type=Path, required=True, help="CSV (relative: under results/)")
    args = p.parse_args(argv)
    out = args.out if args.out.is_absolute() else RESULTS / args.out
    rows = []
    for name, run_a, run_b in args.case:
        dirs = [Path(d) if Path(d).is_absolute() else RESULTS / d for d in (run_a, run_b)]
        rows += paired_rows(name, *dirs)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot_paired([r for r in rows if r["opponent"] == "all"], args.labels,
                out.with_suffix(".png"))
    for r in rows:
        print(json.dumps(r))
    return 0


def plot_paired(totals, labels, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 1.0 + 0.6 * len(totals)))
    y = range(len(totals))
    for i, (key, label) in enumerate(zip(("wins_a", "wins_b"), labels, strict=True)):
        ax.barh([j + (i - 0.5) * 0.4 for j in y],
                [100.0 * r[key] / r["games"] for r in totals], height=0.4, label=label)
    ax.set_yticks(list(y), [f"{r['case']} ({r['games']} games, p = {r['mcnemar_p']:.2g})"
                            for r in totals])
    ax.invert_yaxis()
    ax.set_xlabel("games perfect won (%)")
    ax.set_xlim(50, 100)
    ax.set_title("paired seat runs (McNemar's exact p)")
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


COMMANDS = {"proofs": proofs_main, "checkpoint": checkpoint_main, "solve": solve_main,
            "book": book_main, "book-depth": book_depth_main, "seat": seat_main,
            "paired": paired_main}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in COMMANDS:
        ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "),
                                     epilog="Each command has its own --help.")
        ap.add_argument("command", choices=list(COMMANDS))
        ap.parse_args(argv[:1] or ["--help"])
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(guarded(main))
