"""How much of a split certification is made, and an estimate of the whole: read off the
plans of its cut tops (PartPlan, kept in the cuts file before a cut part's parts are
made), the parts saved (their files and the check ledger) and nothing else, so it is safe
beside a running certification.

    python progress.py CHECKPOINT --parts OUT/parts --cuts CUTS [--ledger LEDGER] [--csv F]

Model. The certificate is a tree of parts: the top (the root's walk down to --split) stops
at the parts its plan lists; a part cut for --max-part-positions is a small top over the
parts its own plan lists. Each part has one of three states:
  - saved: its size is known exactly, the positions of its file and of every part it
    reaches (each part counted once);
  - planned, not saved: the positions of its top (from its plan) plus its parts' sizes;
  - neither (not started, or being made uncut, or started before plans were kept): its size
    is estimated as the mean size of its siblings saved since their parent's plan was
    made (the parts are made in the order the walk meets them, so those are the first
    ones, a sample of them all if that order is not tied to size; if there are none yet,
    of all its saved siblings); a parent none of whose parts is saved takes the mean of the
    saved parts of that level over all parents. A planned sibling's own estimate is left
    out of that mean: in a first version it was not, and the estimate of the planned part
    on the path being made, itself mostly fill, was multiplied by its siblings' count at
    each level down a chain of cuts (218 billion positions from a chain five deep).
The estimate is only as good as the number of sizes known at each level: the JSON line
reports those counts beside it. And the saved siblings are a sample of the order only if
they were made in it: a part saved earlier under another parent (a transposition) is met
anywhere in the list. On full pro/mandatory a top-level part cut 24 plies down has 49,262
parts below its top; its first 39 saved were scattered over the list (positions 0 to
32,251 of it), median 2,164 and mean 622K positions, and the estimate of the whole moved
from 0.7 to 17 billion positions within the hour that cut was made. Hence the sample
of the parts made since the plan (plans keep when they were made since then).

At the top, the parts made whole first are the small ones (a big one is cut, and whole
only when all its parts are), so the fill of its unknown parts from its saved ones alone
leans low: the JSON line also gives the estimate with the planned parts' own estimates in
the top's fill (`estimated_total_with_planned_in_top_fill`), which may lean high.

Saved parts that no plan reaches (made before the plans were kept, under winner's moves
chosen again since, or by a helper's walk) are counted apart.

Prints one JSON line; `--csv FILE` writes one row a part of the top (the root's plan): its
key, state and size (known, or estimated), largest first.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))        # bench/, for campaign.py
sys.path.insert(0, str(HERE))                   # for count_parts.py
from campaign import guarded  # noqa: E402


def saved_parts(parts_dir, ledger=None) -> dict:
    """sha256 -> (root, positions, the sha256 of the parts it stops at, when it was made
    or "" if not known), from the part files' headers and the ledger's rows (a part
    checked whose file is gone)."""
    from niwa.solver.certificate import CertificateError, CheckLedger, _header_meta

    out = {}
    if ledger is not None and Path(ledger).is_file():
        for row in CheckLedger(ledger).rows.values():
            if "root" in row:
                out[row["sha256"]] = (row["root"], int(row["nodes"]),
                                      sorted({sha for _, (sha, _) in row["refs"]}), "")
    for path in sorted(Path(parts_dir).glob("*.npz")) if Path(parts_dir).is_dir() else []:
        try:
            meta = _header_meta(path)
        except CertificateError:
            continue
        out[meta["sha256"]] = (meta["root"], int(meta["nodes"]),
                               sorted({p["sha256"] for p in meta.get("parts", [])}),
                               str(meta.get("made", "")))
    return out


def progress(checkpoint, parts_dir, cuts, ledger=None, csv=None) -> dict:
    from niwa.ext.registry import parse_position
    from niwa.solver.certificate import CertificateError, PartCuts
    from niwa.solver.proof_tree import look_at_checkpoint

    tree, _ = look_at_checkpoint(checkpoint)
    root = tree.root_state
    saved = saved_parts(parts_dir, ledger)
    key_of = {sha: parse_position(r).symmetric_hash() for sha, (r, *_) in saved.items()}
    by_key = {}
    for sha in saved:
        by_key.setdefault(key_of[sha], sha)
    plans = PartCuts(cuts).plans()      # symmetric key -> the first plan (the one walked)
    top = plans.get(root.symmetric_hash())
    if top is None:
        raise CertificateError(f"{cuts} holds no plan of the top of {checkpoint}: start "
                               f"its split certification once (with this niwa)")

    placed: set = set()     # the saved parts the tree reaches, each counted once

    def whole(sha) -> int:
        """The positions of `sha` and the parts it reaches that no part met before did."""
        new: set = set()
        stack = [sha]
        while stack:
            s = stack.pop()
            if s in new or s in placed or s not in saved:
                continue
            new.add(s)
            stack.extend(saved[s][2])
        placed.update(new)
        return sum(saved[s][1] for s in new)

    # the tree the plans and the saved parts describe: key -> (state, level, children)
    nodes, order, size = {}, [], {}
    stack = [(root.symmetric_hash(), 0)]
    while stack:
        key, level = stack.pop()
        if key in nodes:
            continue
        if key in by_key and key != root.symmetric_hash():
            nodes[key] = ("saved", level, [])
            size[key] = float(whole(by_key[key]))       # (in walk order: see whole)
        elif key in plans:
            children = plans[key].children
            nodes[key] = ("planned", level, children)
            stack.extend((c, level + 1) for c in reversed(children))
        else:
            nodes[key] = ("unknown", level, [])
        order.append(key)
    known_at = defaultdict(list)       # level -> the sizes of the saved parts there
    for key, (state, level, _) in nodes.items():
        if state == "saved":
            known_at[level].append(size[key])
    def in_order(parent, children) -> list:
        """The sizes the fill of `parent`'s unknown parts stands on: its saved parts made
        since its plan (in the walk's order), else all its saved parts."""
        saved_ones = [c for c in children if nodes[c][0] == "saved"]
        since = plans[parent].planned
        ordered = [c for c in saved_ones if since and saved[by_key[c]][3] >= since]
        return [size[c] for c in ordered or saved_ones]

    fill = {}       # planned key -> the size each of its unknown parts is taken to have
    for key in reversed(order):         # children before parents
        state, level, children = nodes[key]
        if state == "planned":
            # (a part met under two parents is counted under the first one only)
            mine = [c for c in children if nodes[c][1] == level + 1]
            known = in_order(key, mine)
            fill[key] = statistics.fmean(known) if known else \
                statistics.fmean(known_at[level + 1]) if known_at[level + 1] else None
            size[key] = plans[key].positions + sum(
                size[c] if nodes[c][0] != "unknown" else fill[key] or 0.0 for c in mine)
        elif state == "unknown":
            size[key] = None        # its parent's mean stands for it

    saved_positions = sum(n for _, n, *_ in saved.values())
    placed_positions = sum(saved[s][1] for s in placed)
    counts = defaultdict(lambda: defaultdict(int))
    for state, level, _ in nodes.values():
        counts[level][state] += 1
    estimate = size[root.symmetric_hash()]
    rows = []
    top_children, top_fill = top.children, fill[root.symmetric_hash()]
    # the same at the top with the planned parts' estimates in its fill: the parts made
    # whole first are the small ones (a big one is cut, and whole only once all its parts
    # are), so a fill of the saved ones alone leans low; one with the planned ones' own
    # estimates, mostly fill themselves, may lean high. The two bracket the top's guess.
    mine = [c for c in top_children if nodes[c][1] == 1]
    planned_sizes = [size[c] for c in mine if nodes[c][0] == "planned"]
    with_planned = in_order(root.symmetric_hash(), mine) + planned_sizes
    fill_planned = statistics.fmean(with_planned) if with_planned else None
    unknown_top = sum(1 for c in mine if nodes[c][0] == "unknown")
    estimate_planned = estimate + unknown_top * ((fill_planned or 0.0) - (top_fill or 0.0))
    for c in top_children:
        state = nodes[c][0]
        rows.append({"key": f"{c:016x}", "state": state,
                     "size": round(size[c] if state != "unknown" else top_fill or 0)})
    if csv is not None:
        import pandas as pd

        pd.DataFrame(rows).sort_values("size", ascending=False).to_csv(csv, index=False)
    return {"parts_saved": len(saved), "positions_saved": saved_positions,
            "positions_placed_by_plans": placed_positions,
            "positions_saved_no_plan_reaches": saved_positions - placed_positions,
            "estimated_total_positions": round(estimate),
            "estimated_total_with_planned_in_top_fill": round(estimate_planned),
            "made_share": round(placed_positions / estimate, 4) if estimate else None,
            "top_parts": len(top_children),
            "top_parts_by_state": {s: sum(1 for c in top_children if nodes[c][0] == s)
                                   for s in ("saved", "planned", "unknown")},
            # what the top's fill stands on: the sizes of its saved parts (their mean is
            # each unknown one's), and the estimates of those being made, left out of it
            "top_saved_mean": round(top_fill) if top_fill is not None else None,
            "top_planned_estimates": [round(size[c]) for c in top_children
                                      if nodes[c][0] == "planned"],
            "parts_by_level": {lvl: dict(c) for lvl, c in sorted(counts.items())}}


def main(argv=None) -> int:
    from count_parts import parts_arguments

    p = parts_arguments(__doc__.splitlines()[0], "a part of the top")
    p.add_argument("--cuts", required=True, help="the cuts file, with the plans")
    a = p.parse_args(argv)
    print(json.dumps(progress(a.checkpoint, a.parts, a.cuts, a.ledger, a.csv)))
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main))
