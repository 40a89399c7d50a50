"""Lotus endgame tables: every entry against the proof search and a brute-force minimax
over the plain-Python reference rules, the index's round trip, the file format and its
checksum, the build's reproducibility across workers, and their use by solve, the proof
search and MCTS (docs/endgame-tables.md)."""

import io
import itertools
import json
import random
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from niwa.analysis.arena.executors import LocalExecutor
from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.ext.reference.lotus import COLOURS, LotusOracle
from niwa.solver.mcts import MCTS
from niwa.solver.proof import ProofSearch
from niwa.solver.solve import solve_position
from niwa.solver.tables import (
    ClassJob,
    TableError,
    TableWarning,
    _deps,
    build_table,
    find_table,
    load_table,
    make_index,
    plan_parts,
    table_name,
    table_value,
)

TINY = dict(lane=1, shared=3, trampoline_at=3, towers=2)
SMALL = dict(lane=2, shared=4, trampoline_at=4, towers=3)
SHORT = dict(lane=2, shared=6, trampoline_at=5)            # towers 4 (10 stones each)
RULES = [dict(rule=r, trampoline=t) for r in ("basic", "pro") for t in ("optional", "mandatory")]


def run(*args):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Tables built once for the module: TINY k=2 and SMALL k=2 under every rule and
    trampoline mode, SHORT k=2 with the default rules."""
    d = tmp_path_factory.mktemp("tables")
    for rules in RULES:
        build_table({**TINY, **rules}, 2, d, progress=False)
        build_table({**SMALL, **rules}, 2, d, progress=False)
    build_table(SHORT, 2, d, progress=False)
    return d


def oracle_of(state):
    """The reference rules' state for an engine position (same variant, same stones)."""
    v = state.variant
    o = LotusOracle(**v)
    j = state.to_json()
    for sp in o.spaces:
        name = str(sp[1]) if sp[0] == "s" else f"{sp[0]}{sp[1]}"
        o.stacks[sp] = [COLOURS.index(c) for c in j["track"].get(name, "")]
    o.start = [list(j["start"][COLOURS[p]]) for p in range(2)]
    o.goal = [j["goal"][COLOURS[p]] for p in range(2)]
    o.to_move = COLOURS.index(j["to_move"])
    o.opening = "done"
    assert o.to_notation() == state.to_notation()
    return o


def brute_force(oracle, memo):
    """(mover wins?, plies to the end with perfect play) by plain minimax over the oracle
    (`memo`: notation -> answer, shared between calls)."""

    def solve(o):
        key = o.to_notation()
        if key in memo:
            return memo[key]
        mover, win, loss = o.to_move, None, 0
        for a in o.legal_actions():
            c = o.clone()
            c.apply(a, check=False)
            if c.is_terminal():
                w, d = c.winner() == mover, 1
            else:
                cw, cd = solve(c)
                w, d = not cw, cd + 1
            if w:
                win = d if win is None else min(win, d)
            else:
                loss = max(loss, d)
        memo[key] = (True, win) if win is not None else (False, loss)
        return memo[key]

    return solve(oracle)


@pytest.mark.parametrize("rules", [RULES[0], RULES[3]], ids=lambda r: f"{r['rule']}-{r['trampoline']}")
def test_every_entry_of_a_small_table_is_the_reference_minimax_value(folder, rules):
    table = find_table(LotusState(**TINY, **rules), folder)
    assert table is not None and table.k == 2 and table.size == 2238
    memo = {}
    for i in range(table.size):
        s = table.unrank(i)
        v, plies = table_value(table, s)
        assert brute_force(oracle_of(s), memo) == (bool(v), plies), s.to_notation()


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r['rule']}-{r['trampoline']}")
def test_a_shortened_board_table_agrees_with_the_proof_search(folder, rules):
    table = find_table(LotusState(**SMALL, **rules), folder)
    ps = ProofSearch(tt_mb=16)
    assert table.size == 8058
    wins = 0
    for i in random.Random(1).sample(range(table.size), 3000):
        s = table.unrank(i)
        v, _ = table_value(table, s)
        assert ps.solve(s, root_values=False, pv=False).value == v, s.to_notation()
        wins += v == 1.0
    assert 0 < wins < 3000


def test_random_positions_of_the_short_standard_towers_table_match_the_proof_search(folder):
    """Towers 4 (10 stones each) on a shortened board: 1000 random indices."""
    table = find_table(LotusState(**SHORT), folder)
    assert table.size == 15658
    ps = ProofSearch(tt_mb=16)
    rng = random.Random(5)
    for i in rng.sample(range(table.size), 1000):
        s = table.unrank(i)
        assert ps.solve(s, root_values=False, pv=False).value == table_value(table, s)[0]


def test_random_playouts_into_the_domain_are_found_and_agree(folder):
    """Positions the game produces (random playouts from the start, cut when both players
    are down to 2 stones outside the goal) are inside the table, with the proof's value."""
    table = find_table(LotusState(**SHORT), folder)
    ps = ProofSearch(tt_mb=16)
    rng = random.Random(11)
    found = 0
    for _ in range(150):
        s = LotusState(**SHORT)
        while not s.is_terminal() and not (s.goal_count(0) >= 8 and s.goal_count(1) >= 8):
            s.apply(rng.choice(s.legal_actions()))
        if s.is_terminal():
            continue
        assert table.index(s) >= 0, s.to_notation()
        assert ps.solve(s, root_values=False, pv=False).value == table_value(table, s)[0]
        found += 1
    assert found > 50


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_unrank_then_rank_is_the_identity_and_positions_are_legal(data):
    variant = data.draw(st.sampled_from([TINY, SMALL, SHORT, {}]))
    k = data.draw(st.integers(1, 3))
    index = make_index(variant, k)
    i = data.draw(st.integers(0, index.size - 1))
    s = index.unrank(i)
    assert index.index(s) == i
    again = LotusState.from_notation(s.to_notation())     # the notation's checks accept it
    assert index.index(again) == i and again.to_notation() == s.to_notation()
    # the domain: 1..k stones a player outside the goal, the game on
    assert not s.is_terminal()
    stones_each = index.stones_each
    assert all(1 <= stones_each - s.goal_count(p) <= k for p in (0, 1))


def test_positions_outside_the_domain_have_no_index():
    index = make_index({}, 2)
    assert index.index(LotusState()) == -1                          # 10 stones each out
    pro = make_index({"rule": "pro", "towers": 2}, 3)
    assert pro.index(LotusState(rule="pro", towers=2)) == -1        # the pro opening
    assert pro.index(LotusState(rule="pro", towers=2).child(0)) == -1
    assert pro.index(LotusState(towers=2, rule="pro").child(0).child(132)) >= 0
    assert index.index(LotusState(lane=2)) == -1                   # another variant


def test_the_build_is_the_same_with_two_workers(tmp_path):
    one = build_table(SMALL, 2, tmp_path / "one", progress=False)
    two = build_table(SMALL, 2, tmp_path / "two", executor=LocalExecutor(2), progress=False)
    assert one["payload_sha256"] == two["payload_sha256"] and one["counts"] == two["counts"]
    # built in place in a memory-mapped file, the payload is still exactly np.save's bytes
    payload = tmp_path / "two" / two["payload"]
    saved = io.BytesIO()
    np.save(saved, np.load(payload))
    assert saved.getvalue() == payload.read_bytes()
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == \
        sorted([two["payload"], two["payload"].replace(".npy", ".json")])


class _Spy(LocalExecutor):
    """A local executor that keeps the job lists it was given."""

    def __init__(self, workers):
        super().__init__(workers)
        self.runs = []

    def run(self, tasks):
        self.runs.append(tasks)
        yield from super().run(tasks)


def test_a_class_solved_in_parts_on_two_workers_is_the_same_table(tmp_path):
    one = build_table(SMALL, 2, tmp_path / "one", progress=False)
    spy = _Spy(2)
    parts = build_table(SMALL, 2, tmp_path / "parts", executor=spy, progress=False,
                        split_least=1)
    assert one["payload_sha256"] == parts["payload_sha256"] and one["counts"] == parts["counts"]
    staged = [list(r) for r in spy.runs if getattr(r, "one_per_worker", False)]
    assert sum(len(stage) >= 2 for stage in staged) >= 2        # parts solved side by side
    # the default least part (1M positions) leaves a table this small whole
    spy = _Spy(2)
    build_table(SMALL, 2, tmp_path / "whole", executor=spy, progress=False)
    assert not any(getattr(r, "one_per_worker", False) for r in spy.runs)


@given(st.lists(st.integers(0, 6), min_size=1, max_size=60), st.integers(1, 4),
       st.integers(1, 5))
def test_parts_cover_the_build_order_and_only_cut_runs_of_equal_progress(values, pieces, least):
    progress = sorted(values, reverse=True)
    stages = plan_parts(progress, pieces, least)
    ranges = [r for stage in stages for r in stage]
    assert ranges[0][0] == 0 and ranges[-1][1] == len(progress)
    assert all(a < b for a, b in ranges)
    assert all(b == c for (_, b), (c, _) in itertools.pairwise(ranges))    # in order, no gap
    for stage in stages:
        assert len(stage) <= pieces
        if len(stage) > 1:      # solved at once: one progress, parts of at least `least`
            assert len({progress[i] for a, b in stage for i in range(a, b)}) == 1
            assert all(b - a >= least for a, b in stage)


def test_every_move_inside_a_class_raises_its_progress_or_passes():
    """What solving a class in parts rests on: a position's successors in its own class
    have a higher progress (a track move), or the same board (a pass)."""
    index = make_index(SMALL, 2)
    rng = np.random.default_rng(5)
    checked = 0
    for c in index.classes():
        order, progress = index.composition_order(c["id"])
        of = np.empty(len(order), dtype=np.int64)
        of[order] = progress                    # composition -> its progress
        ncomp = len(order)
        for at in rng.integers(c["offset"], c["offset"] + c["size"], size=60):
            state = index.unrank(int(at))
            comp = (int(at) - c["offset"]) % ncomp
            for action in state.legal_actions():
                child = state.child(action)
                there = index.index(child) if not child.is_terminal() else -1
                if not c["offset"] <= there < c["offset"] + c["size"]:
                    continue
                after = (there - c["offset"]) % ncomp
                assert of[after] > of[comp] or after == comp
                checked += 1
    assert checked > 1000


def test_local_workers_read_and_write_the_payload_instead_of_copies(tmp_path):
    index = make_index(SMALL, 2)
    classes = index.classes()
    payload = tmp_path / "table.npy"
    table = np.lib.format.open_memmap(payload, mode="w+", dtype=np.uint8, shape=(index.size,))
    spans = {c["id"]: (c["offset"], c["size"]) for c in classes}
    for c in sorted(classes, key=lambda c: c["level"]):      # dependencies first
        at, size = spans[c["id"]]
        by_copies = ClassJob(SMALL, 2, c["id"], _deps(index, c["id"], table, spans, copy=True))()
        by_file = ClassJob(SMALL, 2, c["id"], payload=str(payload), spans=spans)()
        assert by_file["values"] is None
        assert np.array_equal(table[at:at + size], by_copies["values"])
        assert np.count_nonzero(table[at:at + size] == 0) == 0


class _Interrupted:
    name = "local"

    def run(self, jobs):
        yield next(iter(jobs))()
        raise KeyboardInterrupt


def test_a_build_that_stops_leaves_no_half_written_payload(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        build_table(SMALL, 2, tmp_path, executor=_Interrupted(), progress=False)
    assert list(tmp_path.iterdir()) == []


def test_header_documents_the_table(folder):
    header = json.loads((folder / (table_name({**make_index(SHORT, 2).variant}, 2) + ".json"))
                        .read_text())
    assert header["format"] == "niwa-endgame-table" and header["game"] == "lotus"
    assert header["stones"] == 2 and header["positions"] == 15658
    assert header["variant"]["lane"] == 2 and header["variant"]["towers"] == 4
    assert header["index"]["scheme"] and header["index"]["version"] == 1
    assert header["counts"]["wins"] + header["counts"]["losses"] == 15658
    values = np.load(folder / header["payload"])
    assert values.dtype == np.uint8 and values.all()
    assert int(np.count_nonzero(values & 128)) == header["counts"]["wins"]


def test_a_damaged_table_fails_its_checksum_clearly(tmp_path):
    header = build_table(TINY, 1, tmp_path, progress=False)
    payload = tmp_path / header["payload"]
    data = bytearray(payload.read_bytes())
    data[-1] ^= 0x80
    payload.write_bytes(bytes(data))
    with pytest.raises(TableError, match="checksum"):
        load_table(tmp_path / (payload.stem + ".json"))
    r = run("tables", "info", "--dir", str(tmp_path))
    assert r.exit_code == 2 and "FAILED" in r.output and "Traceback" not in r.output
    position = LotusState(**TINY)
    r = run("solve", position.to_notation(), "--tables", str(tmp_path))
    assert r.exit_code == 2 and "checksum" in r.output


@pytest.mark.parametrize("part", ["header", "payload"])
def test_a_table_file_linked_from_outside_the_folder_is_refused(tmp_path, part):
    """A table is the regular files in its folder: its header or its values file reached
    through a symbolic link (here to a copy elsewhere) is refused, by name, the same way."""
    folder = tmp_path / "tables"
    header = build_table(TINY, 1, folder, progress=False)
    name = header["payload"] if part == "payload" else Path(header["payload"]).stem + ".json"
    inside, outside = folder / name, tmp_path / name
    outside.write_bytes(inside.read_bytes())
    inside.unlink()
    inside.symlink_to(outside)
    with pytest.raises(TableError, match="symbolic link"):
        load_table(folder / (Path(header["payload"]).stem + ".json"))
    with pytest.warns(TableWarning, match="symbolic link"):
        assert find_table(LotusState(**TINY), folder) is None
    r = run("tables", "info", "--dir", str(folder))
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert str(inside) in r.output and "symbolic link" in r.output, r.output
    errors = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("Error: "), r.stderr


def test_solve_answers_inside_the_table_fast_with_every_move_and_the_line(folder):
    table = find_table(LotusState(**SHORT), folder)
    rng = random.Random(3)
    ps = ProofSearch(tt_mb=16)
    for i in rng.sample(range(table.size), 30):
        s = table.unrank(i)
        t0 = time.perf_counter()
        r = solve_position(s, tables=str(folder))
        # the table is loaded already: no search, no checksum again (bench/endgame-tables/run.py
        # measures the latency: about a millisecond)
        assert time.perf_counter() - t0 < 0.25
        proof = ps.solve(s)
        assert r.algo == "tables" and r.proven and r.value == proof.value
        assert [a.value for a in r.actions] == [m.value for m in proof.moves]
        assert len(r.pv) == table_value(table, s)[1]          # the line ends the game
        end = s.clone()
        for name in r.pv:
            end.apply(end.string_to_action(name))
        assert end.is_terminal() and (end.winner() == s.current_player()) == (r.value == 1.0)


def test_solve_cli_says_the_source_and_respects_no_tables(folder):
    table = find_table(LotusState(**SHORT), folder)
    position = table.unrank(777).to_notation()
    r = run("solve", position, "--json", "--tables", str(folder))
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["source"] == "tables" and out["proven"]
    r = run("solve", position, "--json", "--no-tables")
    assert json.loads(r.output)["source"] == "search"
    assert json.loads(r.output)["value"] == out["value"]


def test_the_proof_search_stops_at_the_tables_with_the_same_values(folder):
    """Positions with 3 stones a player outside the goal (outside the k=2 table): the same
    value with and without the table, and fewer nodes with it."""
    table = find_table(LotusState(**SHORT), folder)
    rng = random.Random(7)
    saved = checked = hits = 0
    for _ in range(40):
        s = LotusState(**SHORT)
        while not s.is_terminal() and not (s.goal_count(0) >= 7 and s.goal_count(1) >= 7):
            s.apply(rng.choice(s.legal_actions()))
        if s.is_terminal() or table.index(s) >= 0:
            continue
        plain = ProofSearch(tt_mb=16).solve(s)
        with_tables = ProofSearch(tt_mb=16, tables=table).solve(s)
        assert with_tables.value == plain.value
        assert [m.value for m in with_tables.moves] == [m.value for m in plain.moves]
        saved += plain.nodes - with_tables.nodes
        hits += with_tables.table_hits
        checked += 1
    assert checked >= 10 and saved > 0 and hits > 0


def test_mcts_takes_exact_values_at_its_leaves(folder):
    table = find_table(LotusState(**SHORT), folder)
    ps = ProofSearch(tt_mb=16)
    rng = random.Random(9)
    hits = proven = 0
    for _ in range(10):
        s = LotusState(**SHORT)
        while not s.is_terminal() and not (s.goal_count(0) >= 7 and s.goal_count(1) >= 7):
            s.apply(rng.choice(s.legal_actions()))
        if s.is_terminal():
            continue
        tree = MCTS(2, seed=1, tables=table)
        r = tree.search(s, iterations=3000)
        hits += tree.table_hits
        if r.proven:        # MCTS-Solver with exact leaves: the proven value is the truth
            assert r.value == ps.solve(s, root_values=False, pv=False).value
            proven += 1
    assert hits > 0 and proven >= 5


def test_a_table_of_another_variant_is_not_used(folder):
    table = find_table(LotusState(**SHORT), folder)
    other = LotusState(**{**SHORT, "rule": "pro"}).clone()
    assert not table.accepts(other) and table.value(other) is None
    r = ProofSearch(tt_mb=16, tables=table).solve(LotusState(**TINY))
    assert r.table_hits == 0


def test_tables_cli_build_info_probe(tmp_path):
    r = run("tables", "build", "lotus", "--stones", "1", "-v", "lane=1", "-v", "shared=3",
            "-v", "trampoline_at=3", "-v", "towers=2", "--dir", str(tmp_path))
    assert r.exit_code == 0, r.output
    assert "82 positions" in r.output
    r = run("tables", "info", "--dir", str(tmp_path))
    assert r.exit_code == 0 and "checksum ok" in r.output and "k=1" in r.output
    position = make_index(TINY, 1).unrank(5).to_notation()
    r = run("tables", "probe", position, "--dir", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["k"] == 1 and out["value"] in (0.0, 1.0) and out["moves"]
    r = run("tables", "build", "lotus", "--stones", "1", "-v", "lane=1", "-v", "shared=3",
            "-v", "trampoline_at=3", "-v", "towers=2", "--dir", str(tmp_path))
    assert r.exit_code == 2 and "--force" in r.output


@pytest.mark.parametrize("args, message", [
    (["tables", "build", "haru", "--stones", "2"], "lotus only"),
    (["tables", "build", "lotus", "--stones", "2", "-v", "players=3"], "2 players"),
    (["tables", "build", "lotus", "--stones", "0"], "--stones"),
    (["tables", "build", "lotus", "--stones", "3", "-v", "towers=1"], "1..1"),
    (["tables", "build", "lotus", "--stones", "1", "-v", "lane=9"], "lane"),
    (["tables", "build", "lotus", "--stones", "1", "--executor", "nowhere"], "executor"),
    (["tables", "probe", "lotus"], "no table"),
    (["tables", "probe", "not a position"], ""),
    (["solve", "lotus", "--tables", "x", "--no-tables"], "contradict"),
])
def test_tables_cli_errors_exit_2(args, message, tmp_path):
    r = run(*args, "--dir", str(tmp_path)) if args[0] == "tables" else run(*args)
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output


def test_probe_outside_the_table_exits_2(folder):
    r = run("tables", "probe", LotusState(**SHORT).to_notation(), "--dir", str(folder))
    assert r.exit_code == 2 and "outside the table" in r.output


def test_agents_with_tables_true_use_the_default_folder(folder, monkeypatch):
    from niwa.solver.agents import make_agent

    monkeypatch.setenv("NIWA_TABLES", str(folder))
    table = find_table(LotusState(**SHORT), folder)
    s = table.unrank(4242)
    perfect = make_agent("perfect:tables=true")
    move = perfect.step(s, s.current_player())
    assert perfect.analysis().algo == "tables" and move == solve_position(s, tables=table).best
    # MCTS answers a position inside the table from it, as perfect does
    mcts = make_agent("mcts:iters=300,tables=true", seed=1)
    assert mcts.step(s, s.current_player()) == move and mcts.analysis().algo == "tables"
    # ... and one just outside by a search whose leaves inside the table are exact
    rng, outside = random.Random(5), LotusState(**SHORT)
    while True:
        nxt = outside.clone()
        nxt.apply(rng.choice(outside.legal_actions()))
        if table.index(nxt) >= 0:
            break
        outside = nxt
    mcts = make_agent("mcts:iters=300,tables=true", seed=1)
    assert mcts.step(outside, outside.current_player()) in outside.legal_actions()
    assert mcts.analysis().algo == "mcts" and mcts.tree.table_hits > 0


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r['rule']}-{r['trampoline']}")
def test_standard_board_k3_table_against_the_proof_search(tmp_path, rules):
    """k = 3 on the standard board (5.3M positions, built here: seconds), 2000 random
    indices and 500 positions random games reach, each proven without the table."""
    build_table(rules, 3, tmp_path, progress=False)
    table = find_table(LotusState(**rules), tmp_path)
    ps = ProofSearch(tt_mb=64)
    rng = random.Random(2026)
    positions = [table.unrank(i) for i in rng.sample(range(table.size), 2000)]
    while len(positions) < 2500:
        s = LotusState(**rules)
        while not s.is_terminal() and not (s.goal_count(0) >= 7 and s.goal_count(1) >= 7):
            s.apply(rng.choice(s.legal_actions()))
        if not s.is_terminal():
            positions.append(s)
    for s in positions:
        assert ps.solve(s, root_values=False, pv=False).value == table_value(table, s)[0], \
            s.to_notation()
