"""How many parts a split certification of a finished two-level proof will make, and how
many of them are saved already: the top of the solution tree walked as `niwa proof extract
--split N` walks it (the winner's moves read off the jobs' proofs), stopping at the first
position N plies down with the loser to move (a part) or at a part already in the folder.

    python count_parts.py CHECKPOINT --parts OUT/parts [--split 4] [--ledger LEDGER]

Prints one JSON line: parts to make, parts saved that the walk meets, the winner's
positions at the top that no job decides (the extraction proves their moves itself, so
parts below them are not counted: the count is a floor) and the top positions walked.
Only reads the checkpoint and the parts' headers: safe beside a running certification.

A yardstick of progress, since a part's size is only known once it is made: the nodes of
the proven jobs below each part the walk meets (the first time a job's path reaches one),
and the share of them below the parts saved. `--csv FILE` writes one row a part (its
root, saved or not, proven job nodes, all job nodes), largest first.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))        # bench/, for campaign.py
from campaign import guarded  # noqa: E402


def count_parts(checkpoint, parts_dir, split: int, ledger=None, csv=None) -> dict:
    from niwa.solver.certificate import (
        CertificateError,
        _JobProofs,
        _part_roots,
        ledger_parts,
        part_headers,
    )
    from niwa.solver.proof_tree import look_at_checkpoint, proven_jobs

    tree, _ = look_at_checkpoint(checkpoint)
    root = tree.root_state
    jobs = _JobProofs(*proven_jobs(checkpoint, root))
    value = jobs.value(root)
    if value is None:
        raise CertificateError(f"the jobs of {checkpoint} do not decide the root: nothing "
                               f"to certify yet")
    mover = root.current_player()
    winner = mover if value == 1 else 1 - mover
    headers = part_headers(Path(parts_dir)) if Path(parts_dir).is_dir() else []
    if ledger is not None and Path(ledger).is_file():
        headers += ledger_parts(ledger)     # (checked parts whose files may be gone)
    saved = _part_roots(headers, root, winner)
    to_make, met, open_winner, seen = set(), set(), 0, set()
    roots = {}      # (symmetric key, mover) -> the part's root, as the walk meets it
    stack = [(root, 0)]
    while stack:
        s, depth = stack.pop()
        key = s.hash()
        if key in seen:
            continue
        seen.add(key)
        if s.current_player() == winner:
            move = jobs.winning_move(s, winner)
            if move is None:
                open_winner += 1
                continue
            moves = [move]
        else:
            moves = s.legal_actions()
        for a in moves:
            child = s.child(a)
            if child.is_terminal():
                continue
            is_saved = child.hash() in saved
            if is_saved:
                met.add(child.symmetric_hash())     # (a part and its mirror: one file)
            elif depth + 1 >= split and child.current_player() != winner:
                to_make.add(child.symmetric_hash())     # a position and its mirror: one part
            else:
                stack.append((child, depth + 1))
                continue
            roots.setdefault((child.symmetric_hash(), child.current_player()),
                             (child, is_saved))
    rows = _job_nodes_below(checkpoint, root, roots)
    if csv is not None:
        import pandas as pd

        pd.DataFrame(rows).to_csv(csv, index=False)
    below = sum(r["proven_job_nodes"] for r in rows)
    below_saved = sum(r["proven_job_nodes"] for r in rows if r["saved"])
    return {"split": split, "parts_to_make": len(to_make), "saved_parts_met": len(met),
            "winner_positions_not_decided_by_jobs": open_winner, "top_positions": len(seen),
            "proven_job_nodes_below_parts": below,
            "share_below_saved_parts": round(below_saved / below, 4) if below else None}


def _job_nodes_below(checkpoint, root, roots: dict) -> list[dict]:
    """One row for each part root in `roots`: the nodes of the jobs whose path goes
    through it (proven jobs, and all), largest first."""
    from niwa.solver.proof_tree import read_rows

    nodes = {key: [0, 0] for key in roots}
    for row in read_rows(checkpoint):
        state = root.clone()
        for a in row["path"]:
            state.apply(a)
            key = (state.symmetric_hash(), state.current_player())
            if key in nodes:
                proven = int(row["pn"]) == 0 or int(row["dn"]) == 0
                nodes[key][0] += int(row["nodes"]) if proven else 0
                nodes[key][1] += int(row["nodes"])
                break
    rows = [{"root": roots[key][0].to_notation(), "saved": roots[key][1],
             "proven_job_nodes": n[0], "job_nodes": n[1]} for key, n in nodes.items()]
    return sorted(rows, key=lambda r: (-r["proven_job_nodes"], r["root"]))


def parts_arguments(description: str, csv: str) -> argparse.ArgumentParser:
    """The arguments of a look at a split certification: the checkpoint, its parts folder,
    its ledger and a CSV (`csv`: what a row of it is)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("checkpoint")
    p.add_argument("--parts", required=True, help="the certification's parts folder")
    p.add_argument("--ledger", default=None,
                   help="a check ledger whose parts count as saved (files kept or not)")
    p.add_argument("--csv", default=None, help=f"write one row {csv} to this CSV")
    return p


def main(argv=None) -> int:
    p = parts_arguments(__doc__.splitlines()[0], "a part met")
    p.add_argument("--split", type=int, default=4, choices=range(1, 100), metavar="N")
    a = p.parse_args(argv)
    print(json.dumps(count_parts(a.checkpoint, a.parts, a.split, a.ledger, a.csv)))
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main))
