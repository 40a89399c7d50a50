"""Does `--focus auto` cost nodes where the tree's own choice works? Towers 3..1, pro rule,
both trampoline settings, one worker (its node counts are the same on every run), jobs of
4M nodes, a 2 GB table, no endgame tables: with no focus, `--focus auto` and
`--focus auto:3`. One `niwa solve --checkpoint` each, in a fresh folder under --scratch;
the rows go to results/focus-auto.csv.

    python focus_auto.py [--scratch /tmp/niwa-focus]
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
COLUMNS = ["trampoline", "focus", "value_first_player", "jobs", "nodes", "cpu_s", "utc"]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scratch", default="/tmp/niwa-focus")
    a = p.parse_args(argv)
    rows = []
    for trampoline in ("mandatory", "optional"):
        for focus in ("none", "auto", "auto:3"):
            folder = Path(a.scratch) / f"{trampoline}-{focus.replace(':', '')}"
            shutil.rmtree(folder, ignore_errors=True)
            cmd = ["niwa", "solve", f"lotus towers=3 rule=pro trampoline={trampoline}",
                   "--checkpoint", str(folder), "--workers", "1", "--job-nodes", "4000000",
                   "--tt-mb", "2048", "--no-tables", "--json"]
            cmd += [] if focus == "none" else ["--focus", focus]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            rows.append({"trampoline": trampoline, "focus": focus,
                         "value_first_player": r["value"], "jobs": r["jobs"],
                         "nodes": r["nodes"], "cpu_s": round(r["cpu_s"], 1),
                         "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
            print(json.dumps(rows[-1]), flush=True)
    out = HERE / "results" / "focus-auto.csv"
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
