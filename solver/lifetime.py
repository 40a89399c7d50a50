"""Processes that do not outlive the process that needs them.

Three guarantees, used by tournament workers (analysis.arena.executors) and external
engines (solver.protocol); the first and the last also by the helpers of a certification
(solver.certificate):

- A child dies with its parent: `die_with_parent` asks Linux to SIGKILL the calling
  process when its parent dies (prctl PR_SET_PDEATHSIG), which works even while the
  child is stuck in a long native search that never returns to Python; elsewhere a
  watcher thread polls os.getppid() (it needs the interpreter, so it is only a fallback).
- Engine process groups: every engine runs in its own session and process group, so
  that one signal (`kill_group`) ends the engine and anything it started. The groups a
  process has started and not yet ended are kept here (`register_group`), can be
  mirrored into shared memory (`mirror_groups`) for a parent that may have to kill this
  process and then its engines, and are all killed when the interpreter exits. A process
  that may die by SIGKILL (a worker) starts a `reaper` that ends the mirrored groups
  once it is gone, whoever killed it.
- A forked child takes a progress-bar lock of its own (`own_bar_lock`): tqdm's default
  lock holds a multiprocessing semaphore shared across the fork, so a child killed while
  it held it would leave the parent waiting at its next bar forever.

>>> mirrored_groups([3.0, 0.0, 4242.0, 0.0], offset=1)    # what a parent reads
[4242]
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
import time

WATCH_INTERVAL_S = 0.5      # how often the portable fallback looks at its parent
PR_SET_PDEATHSIG = 1        # <linux/prctl.h>
KILL = getattr(signal, "SIGKILL", signal.SIGTERM)


def _load_prctl():
    """libc's prctl, resolved once (before any fork that uses it in a preexec_fn)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                      ctypes.c_ulong]
    return prctl


_PRCTL = _load_prctl()


def set_parent_death_signal(sig: int = KILL) -> bool:
    """Ask the kernel to send `sig` to this process when its parent (the thread that
    forked it) ends; False where that is not available (not Linux)."""
    if _PRCTL is None:
        return False
    return _PRCTL(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0


def own_bar_lock() -> None:
    """Give this forked child a progress-bar lock of its own. tqdm's default lock holds a
    multiprocessing semaphore shared with the parent across the fork: a child killed while
    it held it (stopped mid-job while a certificate's bar was made) left the parent
    waiting at its next bar forever (a CI run hung so in
    test_workers_stop_at_the_job_certificates_in_the_folder)."""
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


def die_with_parent(parent_pid: int, before_exit=None) -> str:
    """Make the calling process die when `parent_pid` (its parent) dies, even after a
    SIGKILL of the parent. Returns how: "prctl" (the kernel kills us at once) or "watch"
    (a daemon thread polls os.getppid() and exits after calling `before_exit`).

    If the parent is already gone (it died before we could ask), exits at once."""
    how = "prctl" if set_parent_death_signal() else "watch"
    if os.getppid() != parent_pid:      # it died before the signal was armed
        _exit_now(before_exit)
    if how == "watch":
        def watch():
            while os.getppid() == parent_pid:
                time.sleep(WATCH_INTERVAL_S)
            _exit_now(before_exit)

        threading.Thread(target=watch, name="die-with-parent", daemon=True).start()
    return how


def _exit_now(before_exit) -> None:
    if before_exit is not None:
        with contextlib.suppress(Exception):
            before_exit()
    os._exit(1)


def child_dies_with_us():
    """A `preexec_fn` for subprocess.Popen: the child is killed when the thread that
    started it ends (Linux; elsewhere None, nothing to do). Only used from the main
    thread, whose end is the process's: a worker thread's end would kill the child."""
    if _PRCTL is None or threading.current_thread() is not threading.main_thread():
        return None
    parent = os.getpid()

    def arm():
        _PRCTL(PR_SET_PDEATHSIG, int(KILL), 0, 0, 0)
        if os.getppid() != parent:      # we were orphaned before the signal was armed
            os._exit(1)

    return arm


# ---- engine process groups -----------------------------------------------------------------
class _Groups:
    """The process groups this process started and has not ended, optionally mirrored
    into slots of a shared array (0 = empty slot) that another process can read."""

    def __init__(self):
        self.live: list[int] = []
        self.mirror = None
        self.offset = 0
        self.lock = threading.Lock()
        self.exit_hook = False

    def add(self, pgid: int) -> None:
        with self.lock:
            if pgid not in self.live:
                self.live.append(pgid)
            self._write()
            if not self.exit_hook:
                atexit.register(kill_groups)
                self.exit_hook = True

    def discard(self, pgid: int) -> None:
        with self.lock:
            if pgid in self.live:
                self.live.remove(pgid)
            self._write()

    def _write(self) -> None:
        if self.mirror is None:
            return
        slots = len(self.mirror) - self.offset
        kept = self.live[-slots:]       # the newest, if more than fit
        for i in range(slots):
            self.mirror[self.offset + i] = kept[i] if i < len(kept) else 0


    def forget(self) -> None:
        """In a forked child: the parent's groups are not ours to kill (no lock taken:
        another thread may have held it at the fork)."""
        self.live, self.mirror, self.offset = [], None, 0
        self.lock = threading.Lock()


_GROUPS = _Groups()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_GROUPS.forget)


def register_group(pgid: int) -> None:
    """A process group this process started (an engine): killed by kill_groups()."""
    _GROUPS.add(pgid)


def unregister_group(pgid: int) -> None:
    _GROUPS.discard(pgid)


def live_groups() -> list[int]:
    with _GROUPS.lock:
        return list(_GROUPS.live)


def mirror_groups(array, offset: int = 0) -> None:
    """Keep the live groups in `array[offset:]` (a shared ctypes array of numbers, e.g.
    a multiprocessing RawArray), so a parent can kill them after killing us."""
    with _GROUPS.lock:
        _GROUPS.mirror, _GROUPS.offset = array, offset
        _GROUPS._write()


def mirrored_groups(array, offset: int = 0) -> list[int]:
    """The groups a process mirrored into `array[offset:]` (read by its parent)."""
    return [int(x) for x in array[offset:] if x > 0]


def kill_group(pgid: int) -> bool:
    """SIGKILL every process of the group `pgid`; False if none was left (or the platform
    has no process groups)."""
    if pgid <= 0 or not hasattr(os, "killpg"):
        return False
    try:
        os.killpg(pgid, KILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def kill_groups(groups=None) -> None:
    """Kill the given process groups (default: every live group of this process)."""
    for pgid in (live_groups() if groups is None else list(groups)):
        kill_group(pgid)
        if groups is None:
            unregister_group(pgid)


def start_reaper(array, offset: int = 0) -> int | None:
    """Fork a small process that waits for this one to die (however: SIGKILL included),
    then kills the process groups mirrored in `array[offset:]` (see mirror_groups).
    Call it while this process has one thread (just after it started). Returns the
    reaper's pid (None where fork is not available).

    It waits on a pipe whose writing end only this process holds (not inherited by
    programs it runs), so the end of the pipe is the death of this process."""
    if not hasattr(os, "fork"):
        return None
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:            # the reaper
        try:
            # hold nothing of the parent's (its pipes, its sentinel) but our own pipe:
            # the shared array stays mapped without its file
            os.closerange(3, readable)
            os.closerange(readable + 1, _max_fd())
            signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's
            while True:
                try:
                    if not os.read(readable, 1):
                        break
                except InterruptedError:
                    continue
            for pgid in mirrored_groups(array, offset):
                kill_group(pgid)
        finally:
            os._exit(0)
    os.close(readable)
    _REAPER_PIPES.append(writable)      # held open for the life of this process
    return pid


_REAPER_PIPES: list[int] = []


def _max_fd() -> int:
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (AttributeError, ValueError, OSError):
        return 65536
