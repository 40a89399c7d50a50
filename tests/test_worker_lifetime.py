"""Workers and engines die with their tournament: killed (even by SIGKILL, even while a
worker is deep in a native search) or interrupted, a run leaves no process behind
(niwa.solver.lifetime, analysis.arena.executors)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from niwa.solver import lifetime

ROOT = Path(__file__).resolve().parent.parent
PYTHON = shlex.quote(sys.executable)
linux_only = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

STUCK_ENGINE = """
import os, subprocess, sys, time
def note(name):
    open(os.path.join({folder!r}, name), "w").close()
note(f"engine-{{os.getpid()}}.pid")
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
note(f"child-{{child.pid}}.pid")
for line in sys.stdin:
    if line.startswith("niwa-engine"):
        print("id name stuck", flush=True); print("games *", flush=True)
        print("ok", flush=True)
    elif line.startswith("go"):
        note(f"go-{{os.getpid()}}.pid")
        time.sleep(120)
    elif line.startswith("quit"):
        break
"""


def stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def alive(pid: int) -> bool:
    fields = stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat(int(entry))
            if fields is not None and fields[1] == str(pid) and fields[0] not in ("Z", "X"):
                out.append(int(entry))
    return out


def noted(folder: Path, prefix: str) -> list[int]:
    return [int(p.name.split("-")[1].split(".")[0]) for p in folder.glob(f"{prefix}-*.pid")]


def wait_until(condition, within: float) -> bool:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def interrupts_as_from_a_terminal():
    """A `preexec_fn`: SIGINT at its default and unblocked, as a shell gives a command run
    in the foreground, whatever the test runner inherited (a runner started in the
    background of a script has SIGINT ignored, and a child inherits that across exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def interrupts_as_from_a_background_script():
    """A `preexec_fn`: SIGINT ignored, as a non-interactive shell leaves it for `cmd &`
    (POSIX), and blocked too, as a careless parent may leave it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


@pytest.fixture
def run_with_stuck_players(tmp_path, request):
    """A `niwa tournament` subprocess whose two workers are stuck: one inside a native
    MCTS search of a hundred million iterations, one waiting on an engine that sleeps
    in `go` (and has started a child of its own). Yields (tournament process, every pid
    that must die with it); kills whatever is left afterwards. Started with SIGINT as a
    terminal gives it, or as `request.param` (a preexec_fn) sets it."""
    folder = tmp_path / "engines"
    folder.mkdir()
    script = tmp_path / "stuck_engine.py"
    script.write_text(textwrap.dedent(STUCK_ENGINE.format(folder=str(folder))))
    proc = subprocess.Popen(
        [sys.executable, "-m", "niwa.cli.main", "tournament", "lotus", "--agents",
         "mcts:iters=100000000", f"engine:cmd={PYTHON} {shlex.quote(str(script))}",
         "--games", "2", "--workers", "2", "--out", str(tmp_path / "run")],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=getattr(request, "param", interrupts_as_from_a_terminal))
    watched: list[int] = []
    try:
        ready = wait_until(lambda: noted(folder, "go") and len(children(proc.pid)) >= 2, 60)
        assert ready, "the run never got both workers stuck"
        time.sleep(0.5)         # the MCTS worker is deep in its search by now
        workers = children(proc.pid)
        reapers_and_engines = [c for w in workers for c in children(w)]
        assert len(workers) == 2 and len(reapers_and_engines) >= 3   # a reaper each, an engine
        watched = [*workers, *reapers_and_engines, *noted(folder, "engine"),
                   *noted(folder, "child")]
        assert set(noted(folder, "go")) <= set(reapers_and_engines)
        yield proc, watched
    finally:
        for pid in [proc.pid, *watched, *noted(folder, "engine"), *noted(folder, "child")]:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        proc.wait(timeout=10)


@linux_only
def test_killing_the_tournament_kills_its_workers_and_engines(run_with_stuck_players):
    proc, watched = run_with_stuck_players
    proc.kill()
    proc.wait(timeout=10)
    assert wait_until(lambda: not any(alive(p) for p in watched), 5), \
        [p for p in watched if alive(p)]


def _signal_masks(pid: int) -> str:
    """The process's ignored and blocked signal masks, for a failure message."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            return " ".join(line.strip() for line in f if line.startswith(("SigIgn", "SigBlk")))
    except OSError:
        return "(no /proc status)"


# Run both ways: as from a terminal, and started with SIGINT ignored and blocked (a
# script's background job, e.g. a CI run started with `&`, where this check once hung:
# niwa now takes SIGINT back at start, see niwa.cli.main.run).
@linux_only
@pytest.mark.parametrize("run_with_stuck_players",
                         [interrupts_as_from_a_terminal,
                          interrupts_as_from_a_background_script],
                         ids=["from-a-terminal", "sigint-ignored-and-blocked"], indirect=True)
def test_an_interrupted_tournament_leaves_no_process(run_with_stuck_players):
    proc, watched = run_with_stuck_players
    proc.send_signal(signal.SIGUSR1)        # where it sits: every thread's stack on stderr
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"no exit 60 s after SIGINT; {_signal_masks(proc.pid)}")
    err = proc.stderr.read().decode()
    assert code == 130, err[-2000:]
    assert "most recent call first" in err and "executors.py" in err, err[-2000:]
    assert err.rstrip().endswith("niwa tournament --resume --out "
                                 + shlex.quote(str(Path(proc.args[-1])))), err[-2000:]
    assert wait_until(lambda: not any(alive(p) for p in watched), 5), \
        [p for p in watched if alive(p)]


def test_without_prctl_a_watcher_thread_ends_the_orphan(monkeypatch, tmp_path):
    """The portable fallback: a child whose parent dies exits within a second or so."""
    marker = tmp_path / "child.pid"
    code = textwrap.dedent(f"""
        import os, sys, time
        from niwa.solver import lifetime
        lifetime._PRCTL = None
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            assert lifetime.die_with_parent(parent) == "watch"
            open({str(marker)!r}, "w").write(str(os.getpid()))
            time.sleep(60)
            os._exit(0)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        assert wait_until(lambda: marker.exists() and marker.read_text(), 30)
        child = int(marker.read_text())
        proc.kill()
        proc.wait(timeout=10)
        assert wait_until(lambda: not alive(child), 3 * lifetime.WATCH_INTERVAL_S + 2)
    finally:
        proc.kill()
        if marker.exists() and marker.read_text():
            try:
                os.kill(int(marker.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_reaper_kills_the_groups_of_a_process_that_died(tmp_path):
    """A process started an engine group, mirrored it, and was SIGKILLed: its reaper
    ends the group."""
    marker = tmp_path / "group.pid"
    code = textwrap.dedent(f"""
        import multiprocessing, subprocess, sys, time
        from niwa.solver import lifetime
        shared = multiprocessing.RawArray("d", 4)
        lifetime.mirror_groups(shared)
        lifetime.start_reaper(shared)
        engine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                  start_new_session=True)
        lifetime.register_group(engine.pid)
        open({str(marker)!r}, "w").write(str(engine.pid))
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        assert wait_until(lambda: marker.exists() and marker.read_text(), 30)
        group = int(marker.read_text())
        assert alive(group)
        proc.kill()
        proc.wait(timeout=10)
        assert wait_until(lambda: not alive(group), 3)
    finally:
        proc.kill()
        if marker.exists() and marker.read_text():
            try:
                os.killpg(int(marker.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_forked_child_does_not_inherit_the_groups_to_kill():
    """A worker forked while its parent runs an engine must not kill that engine when
    it ends (its list starts empty)."""
    lifetime.register_group(2**30)        # no such group: nothing is killed
    try:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(write, str(lifetime.live_groups()).encode())
            os._exit(0)
        os.waitpid(pid, 0)
        assert os.read(read, 100) == b"[]"
        assert 2**30 in lifetime.live_groups()
    finally:
        lifetime.unregister_group(2**30)


BAR_LOCK_SCENARIO = """
import multiprocessing as mp, os, sys, threading
from tqdm import tqdm
from niwa.solver.lifetime import own_bar_lock

def die_holding_the_lock():
    if sys.argv[1] == "own":
        own_bar_lock()
    tqdm.get_lock().acquire()
    os._exit(0)

tqdm.get_lock()         # (the parent's default lock exists before the fork, as in a run)
child = mp.get_context("fork").Process(target=die_holding_the_lock)
child.start()
child.join(10)
bar = threading.Thread(target=lambda: tqdm(disable=True).close(), daemon=True)
bar.start()
bar.join(5)
print("hung" if bar.is_alive() else "went on", flush=True)
os._exit(0)
"""


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="the shared bar lock comes with fork")
@pytest.mark.parametrize("own_lock", [True, False])
def test_a_worker_killed_holding_the_bar_lock_does_not_block_the_parent(own_lock):
    """A forked worker that dies while it holds tqdm's lock (killed mid-job, making a bar):
    with its own lock (lifetime.own_bar_lock, as every local worker and certification
    helper takes at its start) the parent's next bar goes on; with tqdm's default lock,
    shared across the fork, the parent would wait forever (shown in a process of its own,
    whose stuck thread dies with it)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", BAR_LOCK_SCENARIO,
                           "own" if own_lock else "default"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == ("went on" if own_lock else "hung"), done.stderr
