"""Does a checker whose leaf memo lasts pay? Parts checked side by side, in one run: as
commands of --batch parts each (a fresh leaf memo a command, as certify.py's checkers did
until the nineteenth session) and through one long-lived `niwa proof check -` (as they do
now). Both run at once, so the machine's load falls on both alike; the ratio is the figure.

    python check_stream.py PARTS_LIST --parts DIR [--tables DIR] [--batch 16]

PARTS_LIST: part files, one a line, in the order the extraction made them. One row a
way and a batch of parts (positions, check seconds, leaf positions searched) goes into
results/check-stream.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from certify import niwa_command  # noqa: E402 (the `niwa` beside this Python)

OUT = HERE / "results" / "check-stream.csv"
COLUMNS = ["utc", "way", "batch", "parts", "positions", "check_s", "positions_per_s",
           "leaf_positions", "table_leaves", "wall_s"]


def run_both(paths: list[str], options: list[str], batch: int) -> dict[str, list[dict]]:
    """The figures of each part's check, for each way, both ways running at once."""
    import threading

    base = [niwa_command(), "proof", "check", "--json", "--no-progress", *options]
    t0 = time.monotonic()
    stream = subprocess.Popen([*base, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    stream.stdin.write("".join(p + "\n" for p in paths))
    stream.stdin.close()
    streamed, walls = [], {}

    def read_stream() -> None:      # (beside the commands: its wall is its own)
        streamed.extend(json.loads(line) for line in stream.stdout if line.startswith("{"))
        walls["stream"] = time.monotonic() - t0

    reader = threading.Thread(target=read_stream)
    reader.start()
    commands = []
    for k in range(0, len(paths), batch):
        out = subprocess.run([*base, *paths[k:k + batch]], capture_output=True, text=True,
                             check=True).stdout
        commands += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    walls["commands"] = time.monotonic() - t0
    reader.join()
    if stream.wait() != 0:
        sys.exit("check_stream.py: the long-lived check failed")
    return {"commands": (commands, walls["commands"]), "stream": (streamed, walls["stream"])}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("parts_list", type=Path)
    p.add_argument("--parts", required=True, help="the folder of the parts they stop at")
    p.add_argument("--tables", default=None, help="the table that orders the leaf search")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--leaf-memo", default="15000000")
    p.add_argument("--out", type=Path, default=OUT)
    a = p.parse_args(argv)
    paths = [line.strip() for line in a.parts_list.read_text().splitlines() if line.strip()]
    options = ["--parts", a.parts, "--leaf-budget", "1000000000", "--leaf-memo", a.leaf_memo,
               *(["--tables", a.tables] if a.tables else [])]
    results = run_both(paths, options, a.batch)
    a.out.parent.mkdir(exist_ok=True)
    new = not a.out.exists()
    utc = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(a.out, "a", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        if new:
            w.writeheader()
        for way, (figures, wall) in results.items():
            for k in range(0, len(figures), a.batch):
                chunk = figures[k:k + a.batch]
                positions = sum(x["nodes"] for x in chunk)
                seconds = sum(x["time_s"] for x in chunk)
                row = {"utc": utc, "way": way, "batch": k // a.batch + 1,
                       "parts": len(chunk), "positions": positions,
                       "check_s": round(seconds, 1),
                       "positions_per_s": round(positions / seconds) if seconds else "",
                       "leaf_positions": sum(x["leaf_positions"] for x in chunk),
                       "table_leaves": sum(x["table_leaves"] for x in chunk),
                       "wall_s": round(wall, 1)}
                w.writerow(row)
                print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
