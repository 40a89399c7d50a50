"""Running one `niwa` command line as a separate process and judging what it did.

Two ways to start the process:
  exec  `niwa ARGS` (the installed console script) through subprocess: exactly what a
        user runs, but each case pays Python's start-up and niwa's imports (a second or
        more on a loaded machine);
  fork  a child forked from this process, which has imported niwa.cli.main already, calls
        `main(ARGS)` with its own stdin/stdout/stderr files, session and environment, then
        runs the exit handlers and leaves with Click's exit status (an uncaught exception
        prints its traceback and exits 1, as the interpreter would). Ten to fifty times
        faster; every failure found this way is rerun in exec mode before it is reported.

Every process gets its own session (so a timeout kills its whole group) and an address
space limit (MEMORY_LIMIT: a request for a terabyte table must fail, not swap the machine).
This process is made a child subreaper (prctl PR_SET_CHILD_SUBREAPER): any process a case
leaves behind is re-parented here, so "orphans" are exactly this process's children that
are still alive after the case's own process has exited (and a grace period).
"""

from __future__ import annotations

import atexit
import ctypes
import io
import os
import re
import resource
import shlex
import shutil
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field

MEMORY_LIMIT = 3 << 30          # bytes of address space per case process
ORPHAN_GRACE = 1.5              # seconds a case's descendants get to exit after it did
KILL_GRACE = 3.0                # the same after the harness SIGKILLs the command itself

PRELOAD = ("niwa.cli.main", "numpy", "niwa.solver.agents", "niwa.solver.solve",
           "niwa.solver.tables", "niwa.solver.book", "niwa.analysis.arena.tournament",
           "niwa.analysis.experiments.variants", "matplotlib")

OUTCOMES = ("ok", "ok-long", "traceback", "bad exit", "not one line", "hang",
            "silent wrong answer", "record lost", "orphan")
FAILURES = OUTCOMES[2:]


@dataclass
class Result:
    argv: list
    rc: int | None
    out: str
    err: str
    seconds: float
    timed_out: bool = False
    killed: bool = False           # SIGKILLed on purpose (a kill point)
    orphans: list = field(default_factory=list)     # [(pid, command line)]


def _set_subreaper() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)      # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):   # pragma: no cover - not Linux
        pass


def _limit_memory() -> None:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ValueError, OSError):
        pass


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, state) of every process we can see."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2:].split()
        table[int(name)] = (int(rest[1]), rest[0])
    return table


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()[:200]
    except OSError:
        return "?"


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _descendants(root: int, table) -> list[int]:
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        kids = [q for q, (pp, _) in table.items() if pp == p]
        out += kids
        todo += kids
    return out


def collect_orphans(grace: float, exclude=()) -> list[tuple[int, str]]:
    """This process's live children (other than `exclude`) after up to `grace` seconds:
    what the last case left behind. They and their descendants are killed."""
    me = os.getpid()
    deadline = time.monotonic() + grace
    while True:
        _reap()
        table = _proc_table()
        kids = [p for p, (pp, st) in table.items() if pp == me and st != "Z" and p not in exclude]
        if not kids or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    orphans = [(p, _cmdline(p)) for p in kids]
    for p in kids:
        for q in [p, *_descendants(p, table)]:
            try:
                os.kill(q, signal.SIGKILL)
            except OSError:
                pass
    if kids:
        time.sleep(0.05)
        _reap()
    return orphans


class Runner:
    """Starts `niwa ARGS` (mode "exec" or "fork"), waits with a timeout, returns a Result."""

    def __init__(self, mode: str, scratch: str):
        self.mode, self.scratch = mode, scratch
        os.makedirs(scratch, exist_ok=True)
        _set_subreaper()
        bindir = os.path.dirname(sys.executable)
        self.niwa = shutil.which("niwa", path=bindir) or shutil.which("niwa") or "niwa"
        import importlib

        for module in PRELOAD:      # imported once here, not in every forked child
            try:
                importlib.import_module(module)
            except ImportError:
                pass

    def command_text(self, argv, cwd=None, stdin_file=None, env=None) -> str:
        """The shell command a person can paste to run the case again."""
        text = shlex.join(["niwa", *argv])
        if env:
            text = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + text
        if stdin_file:
            text += f" < {shlex.quote(stdin_file)}"
        return f"cd {shlex.quote(cwd)} && {text}" if cwd else text

    def run(self, argv, cwd, stdin_text=None, timeout=30.0, kill_after=None, env=None,
            mode=None) -> Result:
        mode = mode or self.mode
        out_path = os.path.join(self.scratch, "stdout")
        err_path = os.path.join(self.scratch, "stderr")
        in_path = os.devnull
        if stdin_text is not None:
            in_path = os.path.join(self.scratch, "stdin")
            with open(in_path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(stdin_text)
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env["COLUMNS"] = "100"
        t0 = time.monotonic()
        if mode == "exec":
            import subprocess

            with open(in_path, "rb") as fi, open(out_path, "wb") as fo, open(err_path, "wb") as fe:
                proc = subprocess.Popen([self.niwa, *argv], cwd=cwd, stdin=fi, stdout=fo,
                                        stderr=fe, env=full_env, start_new_session=True,
                                        preexec_fn=_limit_memory)
            pid = proc.pid
        else:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(argv, cwd, in_path, out_path, err_path, full_env)
        status, timed_out, killed = None, False, False
        delay = 0.002
        while status is None:
            wpid, st = os.waitpid(pid, os.WNOHANG)
            if wpid:
                status = st
                break
            elapsed = time.monotonic() - t0
            if kill_after is not None and not killed and elapsed >= kill_after:
                _kill(pid, group=False)
                killed = True
            if elapsed >= timeout and not timed_out:
                _kill(pid, group=True)
                timed_out = True
            time.sleep(delay)
            delay = min(delay * 1.5, 0.05)
        seconds = time.monotonic() - t0
        rc = os.waitstatus_to_exitcode(status)
        if timed_out:       # the whole group is gone already; collect its strays too
            _kill(pid, group=True)
        orphans = collect_orphans(KILL_GRACE if killed else ORPHAN_GRACE)
        with open(out_path, encoding="utf-8", errors="replace") as f:
            out = f.read()
        with open(err_path, encoding="utf-8", errors="replace") as f:
            err = f.read()
        return Result(list(argv), rc, out, err, seconds, timed_out, killed and not timed_out,
                      orphans)


def _kill(pid: int, group: bool) -> None:
    try:
        if group:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def _child(argv, cwd, in_path, out_path, err_path, env) -> None:
    """The forked case process: set up like a fresh `niwa ARGS`, run main, exit."""
    code = 1
    try:
        os.setsid()
        _limit_memory()
        os.chdir(cwd)
        fi = os.open(in_path, os.O_RDONLY)
        fo = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        fe = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for src, dst in ((fi, 0), (fo, 1), (fe, 2)):
            os.dup2(src, dst)
            os.close(src)
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(open(0, "rb", closefd=False),
                                                     encoding="utf-8", errors="strict")
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(open(1, "wb", closefd=False),
                                                       encoding="utf-8", errors="strict")
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(open(2, "wb", closefd=False),
                                                       encoding="utf-8",
                                                       errors="backslashreplace",
                                                       line_buffering=True)
        os.environ.clear()
        os.environ.update(env)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGALRM):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.argv = ["niwa", *argv]
        from niwa.cli.main import main

        try:
            main.main(args=list(argv), prog_name="niwa")
            code = 0
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        try:
            threading._shutdown()       # the interpreter joins non-daemon threads at exit
        except Exception:
            pass
        try:
            atexit._run_exitfuncs()
        except Exception:
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    except BaseException:
        try:
            os.write(2, traceback.format_exc().encode())
        except Exception:
            pass
    finally:
        os._exit(code)


# ---- judging ---------------------------------------------------------------------------
_BAR = re.compile(r"\d%\||\[\d+:\d\d[<,\]]|\d+it/s|it/s\]")


def stderr_lines(err: str) -> list[str]:
    """The lines a person reads on stderr: tqdm bars and blank lines left out."""
    lines = re.split(r"[\r\n]+", err)
    return [line for line in lines if line.strip() and not _BAR.search(line)]


def judge(res: Result, long_ok: bool = False) -> tuple[str, str]:
    """(outcome, detail) by the process-level rules; callers add their own answer checks
    (silent wrong answer, record lost) for the cases judged "ok" here."""
    lines = stderr_lines(res.err)
    last = lines[-1][:160] if lines else ""
    if res.timed_out:
        if long_ok:
            return "ok-long", f"still working after {res.seconds:.0f} s (a long run asked for)"
        return "hang", f"no exit within {res.seconds:.0f} s; stderr: {last}"
    if "Traceback (most recent call last)" in res.err:
        return "traceback", last
    if res.killed:
        return ("orphan", _orphans_text(res)) if res.orphans else ("ok", "killed")
    if res.rc not in (0, 2):
        return "bad exit", f"exit {res.rc}; stderr: {last}"
    if res.rc == 2 and (len(lines) != 1 or not lines[0].startswith("Error: ")):
        return "not one line", f"{len(lines)} stderr lines: " + " | ".join(
            line[:100] for line in lines[:4])
    if res.orphans:
        return "orphan", _orphans_text(res)
    return "ok", f"exit {res.rc}" + (f": {last}" if res.rc else "")


def _orphans_text(res: Result) -> str:
    return f"{len(res.orphans)} process(es) left: " + "; ".join(
        f"{pid} {cmd[:80]}" for pid, cmd in res.orphans[:3])
