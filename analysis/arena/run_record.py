"""The JSON record of a run (tournament.json, analysis.json): read, written atomically,
with one entry per invocation in its `runs` list."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from importlib.metadata import PackageNotFoundError, version

from niwa.analysis.arena.game_loop import first_line
from niwa.ext.errors import NiwaError


def read_record(path: str, parse, error: type[NiwaError], what: str):
    """`parse(record)` of the JSON record at `path`, None if there is no file; a file that
    is not such a record raises `error` in one line naming it (a tournament or analysis)."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return parse(json.load(f))
    except NiwaError:
        raise
    except (ValueError, KeyError, TypeError) as e:
        raise error(f"{path} is not a niwa {what} record: {first_line(e)}") from None


def write_record(path: str, data: dict) -> None:
    """Write a JSON record atomically (a crash leaves the old one whole)."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, default=str)
        f.write("\n")
    os.replace(tmp, path)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def start_run(meta: dict, command: str, executor, games_before: int) -> dict:
    """Append this invocation's entry to meta["runs"] and return it."""
    run = {"started": _now(), "command": command, "executor": executor.describe(),
           "games_before": games_before}
    meta.setdefault("runs", []).append(run)
    return run


def end_run(run: dict, games_played: int) -> None:
    run.update({"ended": _now(), "games_played": games_played})


def versions(uses_dask: bool) -> dict:
    """Python, platform and the versions of the packages a run's results depend on."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in ("niwa", "numpy", "pandas", "scipy", "dask", "distributed"):
        if pkg in ("dask", "distributed") and not uses_dask:
            continue
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


# ---- what a resume may start --------------------------------------------------------
TRUST_FLAG = "--trust-engines"


def starts_a_program(spec: str) -> bool:
    """Whether an agent spec runs a command of its own: the `engine` agent (the engine
    protocol, engine:cmd=...) or any agent whose parameters include `cmd`."""
    from niwa.solver.agent_spec import AgentSpec

    try:
        parsed = AgentSpec.parse(spec)
    except NiwaError:       # refused later anyway; judged by its name meanwhile
        return str(spec).partition(":")[0].strip().lower() == "engine"
    return parsed.name == "engine" or "cmd" in parsed.entry.params


# a Python parameter -> the command-line option it stands for, where the two differ
_FLAGS = {"out_dir": "--out DIR", "game": "GAME", "fmt": "--format",
          "time_control": "--tc", "lineup": "--agents"}


def option_flag(name: str) -> str:
    """How a command spells the option behind a parameter name, for one-line errors raised
    below the CLI (the API passes `str` instead, to name its own parameters).

    >>> option_flag("time_margin"), option_flag("out_dir")
    ('--time-margin', '--out DIR')
    """
    return _FLAGS.get(name) or "--" + name.replace("_", "-")


def require_folder_and_game(resume: bool, out_dir, game, *, what: str, example: str,
                            error: type[NiwaError], spell=option_flag) -> None:
    """The first checks of a run that may resume: a resume needs its folder (`what` names
    the run), a new run its game (`example` shows one)."""
    if resume and not out_dir:
        raise error(f"{spell('resume')} needs {spell('out_dir')} (the folder of {what})")
    if not resume and not game:
        raise error(f"missing {spell('game')} (e.g. {example})")


def refuse_untrusted_programs(record: str, agents=(), house=(), *, again: str,
                              error: type[NiwaError], trust: bool = False) -> None:
    """A resume takes what the user did not type from the folder's record (`record`, its
    path); a folder received from someone else could name any command there. So an agent
    spec read from it that starts a program (starts_a_program), or a house rule (Python
    code it would import), is refused in one line naming it and the two ways out: type it
    again (`again`, the option) or pass --trust-engines."""
    if trust:
        return
    for spec in agents:
        if starts_a_program(spec):
            raise error(f"{record} names the agent {_clipped(spec)!r}, which starts a "
                        f"program; a resume runs no command you did not type: give it "
                        f"again ({again}) or pass {TRUST_FLAG} if you trust this folder")
    for text in house:
        raise error(f"{record} names the house rule {_clipped(text)!r}, Python code a "
                    f"resume would import; give it again (--house {_clipped(text)}) or pass "
                    f"{TRUST_FLAG} if you trust this folder")


def _clipped(text: str, width: int = 120) -> str:
    text = str(text).replace("\n", " ")
    return text if len(text) <= width else text[:width - 3] + "..."
