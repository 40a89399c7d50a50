#!/usr/bin/env python3
"""Fault-injection audit of the niwa command line: does bad input always end in one
`Error:` line and exit status 2, never a traceback, a hang, a wrong answer, a lost record
or a process left behind? (README.md beside this file: question, method, results.)

    python bench/audit/run.py                  # a seeded sample of every class, ~15 min
    python bench/audit/run.py --sample 1       # every one of the ~5,000 cases
    python bench/audit/run.py --quick          # a small sample of each class, ~3 min
    python bench/audit/run.py --classes options,moves --out /tmp/audit
    python bench/audit/run.py --only 'files/table-payload-flip-3' --keep   # one case again

Every case is generated from --seed, so a run is repeatable; each runs `niwa ...` as its
own process (runner.py), is judged (runner.judge plus the class's own answer check) and
lands in results/counts.csv (class x outcome) and results/failures.csv (one row per
failing case, with the command that reproduces it).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from runner import FAILURES, OUTCOMES, Runner, judge  # noqa: E402

CLASSES = ("options", "moves", "files", "engines", "kills")
# a fifth of the option, move and file cases (about 1,000 of 5,000) and every engine and
# kill case: ~15 min on one loaded core; --sample 1 runs all of them
DEFAULT_SAMPLE = "0.2,engines=1,kills=1"
CONFIRM_EACH = 3    # failures per class and outcome rerun in exec mode (the rest: "fork")


@dataclass
class Case:
    """One generated input: the command line (with {placeholders} for the fixtures and
    {case} for its own folder), optional stdin, and how to judge it."""

    cls: str
    name: str
    argv: list
    stdin: str | None = None
    timeout: float = 20.0
    long_ok: bool = False
    env: dict = field(default_factory=dict)
    setup: object = None        # setup(case_dir, fixtures) before the run
    check: object = None        # check(result, case_dir, fixtures) -> (outcome, detail) | None
    run: object = None          # a custom run(ctx, case_dir) -> (outcome, detail, command)

    @property
    def id(self):
        return f"{self.cls}/{self.name}"


class Context:
    """What the cases share: the runner, the fixture folder and its files."""

    def __init__(self, runner: Runner, root: Path, quick: bool, seed: int):
        self.runner, self.root, self.quick, self.seed = runner, root, quick, seed
        self.fixtures: dict[str, str] = {"python": sys.executable, "engines": str(HERE / "engines")}

    def fill(self, argv, case_dir):
        values = dict(self.fixtures, case=str(case_dir))
        known = re.compile(r"\{(" + "|".join(map(re.escape, values)) + r")\}")
        return [known.sub(lambda m: values[m.group(1)], a) for a in argv]

    def cli(self, argv, cwd, **kw):
        return self.runner.run(argv, str(cwd), **kw)


# ---------------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small sample of every class (~3 min)")
    parser.add_argument("--sample", default=None,
                        help="run this seeded fraction of each class's cases; CLASS=F "
                             "overrides it for one class; 1 = every case (default: "
                             f"{DEFAULT_SAMPLE}; with --quick: 1)")
    parser.add_argument("--classes", default=",".join(CLASSES),
                        help=f"comma-separated subset of {','.join(CLASSES)}")
    parser.add_argument("--out", default=str(HERE / "results"), help="folder of the CSVs")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--mode", choices=("fork", "exec"), default="fork",
                        help="how each case's process starts (runner.py); failures are "
                             "always rerun with exec")
    parser.add_argument("--only", default=None, help="run the cases whose id contains this")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--no-confirm", action="store_true",
                        help="do not rerun the failures in exec mode")
    args = parser.parse_args(argv)
    default_sample = "1" if args.quick else DEFAULT_SAMPLE
    if args.sample is None:
        args.sample = default_sample
    classes = [c.strip() for c in args.classes.split(",") if c.strip()]
    unknown = set(classes) - set(CLASSES)
    if unknown:
        parser.error(f"unknown classes {sorted(unknown)}; choose from {CLASSES}")

    import tqdm as tqdm_module

    tqdm_module.tqdm.monitor_interval = 0      # no monitor thread in a process that forks
    root = Path(tempfile.mkdtemp(prefix="niwa-audit-"))
    hermetic_env(root)
    runner = Runner(args.mode, str(root / "scratch"))
    ctx = Context(runner, root, args.quick, args.seed)
    rows, failures, details = [], [], []
    t_start = time.monotonic()
    try:
        import generators

        needs = generators.fixtures_needed(classes)
        print(f"building fixtures: {', '.join(sorted(needs)) or 'none'}", file=sys.stderr)
        generators.build_fixtures(ctx, needs)
        cases = []
        for cls in classes:
            made = generators.make(cls, ctx, random.Random(f"{args.seed}-{cls}"))
            share = sample_share(args.sample, cls)
            if share < 1:
                made = random.Random(f"{args.seed}-{cls}-sample").sample(
                    made, max(1, round(len(made) * share)))
            cases += [c for c in made if args.only is None or args.only in c.id]
        confirmed = Counter()
        bar = tqdm_module.tqdm(cases, unit="case", desc="audit", dynamic_ncols=True)
        for case in bar:
            outcome, detail, command = run_case(ctx, case, args.keep)
            exec_outcome = "exec" if args.mode == "exec" or case.run is not None else "not rerun"
            confirm = outcome in FAILURES and not args.no_confirm and args.mode != "exec" \
                and case.run is None and confirmed[(case.cls, outcome)] < CONFIRM_EACH
            if confirm:
                confirmed[(case.cls, outcome)] += 1
                again, detail2, _ = run_case(ctx, case, args.keep, mode="exec")
                detail = f"{detail} [exec: {again}]"
                exec_outcome = again
                if again not in FAILURES:
                    outcome, detail = "ok", f"only under fork ({outcome}: {detail}); exec: {detail2}"
            rows.append((case.cls, outcome))
            details.append({"case": case.id, "outcome": outcome,
                            "detail": detail.replace("\n", " ")[:300]})
            if outcome in FAILURES:
                failures.append({"class": case.cls, "case": case.id, "outcome": outcome,
                                 "exec": exec_outcome,
                                 "detail": detail.replace("\n", " ")[:400],
                                 "command": command,
                                 "rerun": f"python bench/audit/run.py --only {shlex.quote(case.id)} "
                                          f"--classes {case.cls} --keep"
                                          + (" --quick" if args.quick else "")
                                          + (f" --sample {args.sample}"
                                             if args.sample != default_sample else "")
                                          + (f" --seed {args.seed}" if args.seed != 2026 else "")})
                bar.write(f"{outcome:>20}  {case.id}: {detail[:150]}")
        bar.close()
    finally:
        from runner import collect_orphans

        left = collect_orphans(0.5)
        if left:
            print(f"warning: {len(left)} stray process(es) killed at the end", file=sys.stderr)
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    write_results(Path(args.out), rows, failures, classes, time.monotonic() - t_start, args)
    if any(c == "kills" for c, _ in rows):     # when each kill came, for the record
        with open(Path(args.out) / "kills.csv", "w", newline="") as f:
            w = csv.DictWriter(f, ["case", "outcome", "detail"])
            w.writeheader()
            w.writerows(d for d in details if d["case"].startswith("kills/"))
    return 0


def sample_share(text: str, cls: str) -> float:
    """The fraction of class `cls` that --sample asks for ("0.2,kills=0.5")."""
    share = 1.0
    for part in text.split(","):
        key, _, value = part.rpartition("=")
        if key in ("", cls):
            share = float(value)
    return share


def hermetic_env(root: Path) -> None:
    """Like the test suite: no NIWA_* of the user, no user caches."""
    for key in [k for k in os.environ if k.startswith("NIWA_")]:
        del os.environ[key]
    for sub in ("home", "cache", "tables", "books", "certificates"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    os.environ.update(HOME=str(root / "home"), XDG_CACHE_HOME=str(root / "cache"),
                      NIWA_TABLES=str(root / "tables"), NIWA_BOOKS=str(root / "books"),
                      NIWA_CERTIFICATES=str(root / "certificates"), PYTHONHASHSEED="0",
                      MPLBACKEND="Agg")


def run_case(ctx: Context, case: Case, keep: bool, mode=None):
    case_dir = ctx.root / "cases" / case.id.replace("/", "__")
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    try:
        if case.run is not None:
            return case.run(ctx, case_dir)
        if case.setup is not None:
            case.setup(case_dir, ctx)
        argv = ctx.fill(case.argv, case_dir)
        env = {k: ctx.fill([v], case_dir)[0] for k, v in case.env.items()}
        stdin_file = None
        if case.stdin is not None:
            stdin_file = str(case_dir / "stdin.txt")
            Path(stdin_file).write_text(case.stdin, encoding="utf-8", errors="surrogateescape")
        res = ctx.cli(argv, case_dir, stdin_text=case.stdin, timeout=case.timeout,
                      env=env, mode=mode)
        outcome, detail = judge(res, long_ok=case.long_ok)
        if outcome == "ok" and case.check is not None:
            checked = case.check(res, case_dir, ctx)
            if checked is not None:
                outcome, detail = checked
        return outcome, detail, ctx.runner.command_text(argv, str(case_dir), stdin_file,
                                                        env or None)
    finally:
        if not keep:
            shutil.rmtree(case_dir, ignore_errors=True)


def write_results(out: Path, rows, failures, classes, seconds, args) -> None:
    out.mkdir(parents=True, exist_ok=True)
    counts = Counter(rows)
    with open(out / "counts.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["class", "cases", *OUTCOMES])
        for cls in classes:
            n = sum(v for (c, _), v in counts.items() if c == cls)
            w.writerow([cls, n, *(counts[(cls, o)] for o in OUTCOMES)])
        w.writerow(["all", len(rows), *(sum(counts[(c, o)] for c in classes) for o in OUTCOMES)])
    with open(out / "failures.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["class", "case", "outcome", "exec", "detail", "command", "rerun"])
        w.writeheader()
        w.writerows(failures)
    meta = {"seconds": round(seconds, 1), "quick": args.quick, "sample": args.sample,
            "seed": args.seed,
            "mode": args.mode, "classes": classes, "cases": len(rows),
            "failures": len(failures)}
    (out / "run.json").write_text(json.dumps(meta, indent=2) + "\n")
    print((out / "counts.csv").read_text(), end="")
    print(f"{len(rows)} cases, {len(failures)} failing, {seconds:.0f} s -> {out}")


def sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


if __name__ == "__main__":
    sys.exit(main())
