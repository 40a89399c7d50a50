"""Decide two-player Lotus with the df-pn proof search and write the perfect-play table.

    python bench/lotus_proof.py                          # towers 2..1 and 3..1, all rules
    python bench/lotus_proof.py --full --tt-mb 8192      # also the full game (towers 4..1)
    python bench/lotus_proof.py --only 4:basic:optional --time-limit 3600 --tt-mb 8192

Every case is the standard board (lanes of 3, 11 shared spaces, trampoline at 8), two
players, from the initial position. Each finished case is written to the CSV at once (rows
of other cases already there are kept), so long runs can be split and resumed.
Columns: towers, rule, trampoline, value for the first player (1 = White wins with perfect
play, 0 = Black wins, empty if unproven), White's winning first moves, nodes (positions
expanded by the proof), time_s, table entries used / capacity, status (proven, or why it
stopped and the root's proof/disproof numbers), the follow-up nodes that valued every first
move and played out the principal variation, and that variation. An unproven case lists
each first move's value as far as the table has it (? = open) and, in first_move_work, the
expansions spent below it.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

from niwa.ext.lotus import LotusState
from niwa.solver.proof import ProofSearch
from niwa.solver.proof_result import MoveValue

COLUMNS = ["towers", "rule", "trampoline", "value_first_player", "winning_first_moves",
           "first_move_values", "nodes", "time_s", "tt_entries", "tt_capacity", "tt_mb", "status",
           "followup_nodes", "followup_time_s", "table_warning", "pv_plies", "pv",
           "first_move_work"]
RULES = [(r, t) for r in ("basic", "pro") for t in ("optional", "mandatory")]
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "docs" / "lotus-perfect-play.csv"


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
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for key in sorted(rows, key=lambda k: order.get(k, 99)):
            w.writerow(rows[key])
    tmp.replace(path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
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


if __name__ == "__main__":
    sys.exit(main())
