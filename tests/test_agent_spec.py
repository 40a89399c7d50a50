"""The agent spec as a value (niwa.solver.agent_spec) and the solver layer's import graph."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from niwa.ext.errors import NiwaError
from niwa.solver.agent_base import AgentError
from niwa.solver.agent_params import MCTS_DEFAULTS, MCTS_PARAMS
from niwa.solver.agent_registry import REGISTRY
from niwa.solver.agent_spec import AgentSpec, make_agent, parse_spec
from niwa.solver.time_control import TimeControl, TimeControlError

SOLVER = Path(__file__).resolve().parent.parent / "solver"


def test_a_spec_reads_typed_checked_and_writes_back_canonically():
    spec = AgentSpec.parse("  MCTS: iters = 200 , c=1.40,playout=heuristic, tc=40/60+0.5 ")
    assert spec.name == "mcts"
    assert spec.params == {"iters": 200, "c": 1.4, "playout": "heuristic"}
    assert spec.clock == TimeControl(60.0, 0.5, 40)
    assert str(spec) == "mcts:iters=200,c=1.4,playout=heuristic,tc=40/60+0.5"
    assert AgentSpec.parse(str(spec)) == spec and hash(AgentSpec.parse(str(spec))) == hash(spec)
    assert str(AgentSpec.parse("random")) == "random"
    assert AgentSpec.parse("alphabeta:time=0.5s").params == {"time": 0.5}
    assert str(AgentSpec.parse("mcts:solver=off,time=2")) == "mcts:solver=false,time=2"


def test_a_spec_is_immutable_and_its_params_are_a_copy():
    spec = AgentSpec.parse("mcts:iters=5")
    spec.params["iters"] = 7
    assert spec.params == {"iters": 5}
    with pytest.raises(AttributeError):
        spec.name = "random"
    assert pickle.loads(pickle.dumps(spec)) == spec      # sent to workers as it is
    assert AgentSpec.parse(spec) is spec


def test_order_is_part_of_the_spec_and_replace_keeps_it():
    a, b = AgentSpec.parse("mcts:iters=5,c=1"), AgentSpec.parse("mcts:c=1,iters=5")
    assert a != b and a.params == b.params
    assert str(a.replace(c=0.5, cutoff=10)) == "mcts:iters=5,c=0.5,cutoff=10"
    assert a.replace(c="0.5") == a.replace(c=0.5)
    with pytest.raises(AgentError, match="should be at least 0.0"):
        a.replace(c=-1)
    with pytest.raises(AgentError, match="has no parameter 'depth'"):
        a.replace(depth=3)
    assert str(a.without("c")) == "mcts:iters=5"


def test_the_clock_is_carried_apart_and_taken_off_before_the_agent_is_built():
    spec = AgentSpec.parse("mcts:tc=2+0.05,iters=50")
    assert spec.without_clock() == AgentSpec.parse("mcts:iters=50")
    assert spec.without_clock().with_clock("2+0.05") == spec
    assert spec.replace(tc="1") == AgentSpec.parse("mcts:iters=50,tc=1")
    assert AgentSpec.parse("random:TC=3").clock == TimeControl(3.0)
    with pytest.raises(TimeControlError, match="more than once"):
        AgentSpec.parse("random:tc=1,tc=2")
    with pytest.raises(TimeControlError, match="bad time control"):
        AgentSpec.parse("random:tc=fast")
    with pytest.raises(AgentError, match="tc=: a time control is run by a tournament"):
        make_agent(spec)
    assert make_agent(spec.without_clock()).spec == spec.without_clock()


@pytest.mark.parametrize("text, message", [
    ("nosuch", "unknown agent 'nosuch'; available: "),
    ("mcts:iters", "should be key=value"),
    ("mcts:iters=1,iters=2", "parameter iters is given twice"),
    ("mcts:iters=abc", "parameter iters='abc' should be int"),
    ("mcts:playout=fast", "should be one of random, heuristic, greedy"),
    ("mcts:time=inf", "should be a finite number"),
    ("mcts:w_free=nan", "weight w_free=nan should be a finite number"),
    ("random:w_free=1", "agent 'random' has no parameter 'w_free'"),
])
def test_bad_specs_say_what_is_wrong_in_one_line(text, message):
    with pytest.raises(AgentError, match=re.escape(message)) as e:
        AgentSpec.parse(text)
    assert "\n" not in str(e.value)
    with pytest.raises(AgentError):
        parse_spec(text)


def _mcts_value(key):
    typ = MCTS_PARAMS[key][0]
    if key in ("playout", "sim"):
        return st.sampled_from({"playout": ["random", "heuristic", "greedy"],
                                "sim": ["ucb", "rm", "exp3"]}[key])
    if typ is bool:
        return st.booleans()
    low, high = {"iters": (1, 10**9), "cutoff": (-1, 10**6), "nodes": (2, 10**9),
                 "gamma": (1e-9, 1.0), "eps": (0, 1), "minimax": (0, 1)}.get(key, (0, 100))
    if typ is int:
        return st.integers(low, high)
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_any_valid_spec_round_trips_through_its_text(data):
    keys = data.draw(st.lists(st.sampled_from(sorted(MCTS_PARAMS)), unique=True, max_size=6))
    params = {k: data.draw(_mcts_value(k)) for k in keys}
    spec = AgentSpec.parse("mcts").replace(**params)
    assert spec.params == params
    again = AgentSpec.parse(str(spec))
    assert again == spec and str(again) == str(spec)


def test_the_mcts_defaults_are_declared_once_and_the_searcher_takes_them():
    from niwa.solver.mcts import MCTS

    assert REGISTRY["mcts"].defaults()["c"] == MCTS_DEFAULTS["c"]
    tree = MCTS(2)
    assert (tree.c, tree.gamma, tree.cutoff, bool(tree.solver), bool(tree.reuse)) == (
        MCTS_DEFAULTS["c"], MCTS_DEFAULTS["gamma"], MCTS_DEFAULTS["cutoff"],
        MCTS_DEFAULTS["solver"], MCTS_DEFAULTS["reuse"])
    assert (tree.minimax, tree.bias, tree.eps) == (
        MCTS_DEFAULTS["minimax"], MCTS_DEFAULTS["bias"], MCTS_DEFAULTS["eps"])


# ---- the import graph of niwa.solver ------------------------------------------------------

_IMPORT = re.compile(r"^(?P<indent>[ \t]*)(?:from (?P<from>niwa\.[\w.]+) import\b"
                     r"|import (?P<plain>niwa\.[\w.]+))", re.M)


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(modules imported at module level, modules imported inside a function or class) of
    one solver source file; .py files through ast, Cython's .pyx by its import lines."""
    top, inner = set(), set()
    if path.suffix == ".py":
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = {node.module}
            elif isinstance(node, ast.Import):
                names = {a.name for a in node.names}
            else:
                continue
            names = {n for n in names if n.startswith("niwa.")}
            (top if node in tree.body else inner).update(names)
    else:
        for m in _IMPORT.finditer(path.read_text()):
            name = m["from"] or m["plain"]
            (inner if m["indent"] else top).add(name)
    return top, inner


def _solver_graph():
    top, inner = {}, {}
    for path in sorted(SOLVER.glob("*.py")) + sorted(SOLVER.glob("*.pyx")):
        if path.name == "__init__.py":
            continue
        top[f"niwa.solver.{path.stem}"], inner[f"niwa.solver.{path.stem}"] = _imports(path)
    return top, inner


def _reach(graph, start):
    seen, stack = set(), list(graph.get(start, ()))
    while stack:
        m = stack.pop()
        if m not in seen:
            seen.add(m)
            stack.extend(graph.get(m, ()))
    return seen


def test_no_solver_module_imports_a_module_that_imports_it_back():
    top, inner = _solver_graph()
    assert "niwa.solver.agent_spec" in top["niwa.solver.agents"]     # the parser sees files
    loops = sorted(m for m in top if m in _reach(top, m))
    assert loops == [], f"import loops through {loops}"
    # nor does an import inside a function dodge one
    dodges = sorted((m, n) for m, names in inner.items() for n in names
                    if n in top and m in _reach(top, n) | {n})
    assert dodges == [], f"imports inside functions that would loop: {dodges}"


def test_importing_the_agents_imports_nothing_that_imports_them_back():
    import subprocess
    import sys

    code = ("import sys, niwa.solver.agents; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('niwa.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.split()
    top, _ = _solver_graph()
    back = [m for m in loaded if "niwa.solver.agents" in top.get(m, ())]
    assert back == [], f"{back} import niwa.solver.agents back"
    assert not any(m.startswith(("niwa.analysis", "niwa.cli")) for m in loaded)


def test_a_niwa_error_is_what_a_bad_spec_raises():
    assert issubclass(AgentError, NiwaError) and issubclass(TimeControlError, NiwaError)
