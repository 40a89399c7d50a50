"""A session's figures of a split certification, for its entry in sessions.md: the parts
made since START (their headers' "made", "extract_s" and sizes), the checks since START
(the run's part-checks.csv), made per window, the ledger's totals and the parts not in it
yet. Only reads, so it is safe beside a running certification.

    python session_figs.py START --parts OUT/parts --checks OUT/part-checks.csv \
        --ledger LEDGER [--window START/END ...]

START and the windows' ends are UTC times as the parts record them (2026-12-05T23:30).
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from datetime import datetime
from pathlib import Path

from niwa.solver.certificate import CheckLedger, _header_meta


def part_metas(parts: Path) -> list[dict]:
    """The headers of the parts in `parts`, oldest first (a part being renamed into place
    is skipped: it is counted at the next look)."""
    out = []
    for path in parts.glob("*.npz"):
        try:
            meta = _header_meta(path)
        except Exception:   # noqa: BLE001 - a file being written is not a finding
            continue
        out.append(meta)
    return sorted(out, key=lambda m: str(m.get("made", "")))


def checks_since(rows: Path, start: str) -> list[dict]:
    """The rows of the checks that ended at or after `start` (their figures parsed)."""
    if not rows.is_file():
        return []
    with rows.open(newline="") as f:
        found = [r for r in csv.DictReader(f) if r.get("utc", "") >= start]
    for r in found:
        r["figures"] = json.loads(r["figures"]) if r.get("figures") else {}
    return found


def describe_made(made: list[dict]) -> dict:
    sizes = [int(m["nodes"]) for m in made]
    return {"parts": len(made), "positions": sum(sizes),
            "median": statistics.median(sizes) if sizes else 0,
            "mean": round(statistics.fmean(sizes)) if sizes else 0,
            "largest": max(sizes, default=0),
            "extract_s": round(sum(float(m.get("extract_s", 0)) for m in made))}


def window(made: list[dict], span: str) -> dict:
    """Parts and positions made in START/END, and positions a second of the window."""
    start, end = span.split("/")
    inside = [m for m in made if start <= m["made"] < end]
    seconds = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    positions = sum(int(m["nodes"]) for m in inside)
    return {"window": span, "parts": len(inside), "positions": positions,
            "positions_per_s": round(positions / seconds) if seconds > 0 else None}


def describe_checks(checks: list[dict]) -> dict:
    figures = [c["figures"] for c in checks if c["figures"]]
    time_s = sum(float(f.get("time_s", 0)) for f in figures)
    positions = sum(int(f.get("nodes", 0)) for f in figures)
    return {"checks": len(checks), "mirrored": sum(bool(f.get("mirror")) for f in figures),
            "positions": positions,
            "leaf_positions": sum(int(f.get("leaf_positions", 0)) for f in figures),
            "time_s": round(time_s),
            "positions_per_s": round(positions / time_s) if time_s else None,
            "peak_rss_mb": max((float(c.get("peak_rss_mb") or 0) for c in checks),
                               default=0)}


def describe_ledger(path: Path, metas: list[dict]) -> dict:
    """The ledger's totals, and the parts in the folder it does not have yet (at their
    root): the checkers' backlog."""
    rows = CheckLedger(path).rows
    parts = {sha: int(row.get("nodes", 0)) for (sha, mirror), row in rows.items()
             if not mirror}
    waiting = [m for m in metas if m["sha256"] not in parts]
    return {"lines": len(rows), "parts": len(parts), "positions": sum(parts.values()),
            "mirror_lines": sum(1 for (_, mirror) in rows if mirror),
            "unchecked_parts": len(waiting),
            "unchecked_positions": sum(int(m["nodes"]) for m in waiting)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("start")
    ap.add_argument("--parts", type=Path, required=True)
    ap.add_argument("--checks", type=Path, required=True)
    ap.add_argument("--ledger", type=Path, required=True)
    ap.add_argument("--window", action="append", default=[])
    args = ap.parse_args(argv)
    metas = part_metas(args.parts)      # (read once: the ledger's backlog needs them all)
    made = [m for m in metas if str(m.get("made", "")) >= args.start]
    out = {"made": describe_made(made),
           "windows": [window(made, span) for span in args.window],
           "checked": describe_checks(checks_since(args.checks, args.start)),
           "ledger": describe_ledger(args.ledger, metas)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
