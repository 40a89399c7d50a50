"""Proof certificates (solver/certificate.py): written off a df-pn proof, checked with the
reference rules only; `niwa proof check`, `niwa solve --certificate`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.solver.certificate import (
    GAME_OVER,
    TABLE_LEAF,
    Certificate,
    CertificateError,
    check_certificate,
    extract_certificate,
    load_certificate,
    parse_reference_position,
    positions_in,
)
from niwa.solver.proof import ProofSearch

SMALL = dict(towers=2, lane=1, shared=3, trampoline_at=3)
PRO = dict(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
SHIPPED = Path(__file__).resolve().parent.parent / "bench" / "perfect-play" / "certificates"


def make(variant, **kw):
    return extract_certificate(ProofSearch(tt_mb=8), LotusState(**variant), **kw)


@pytest.fixture(scope="module")
def small():
    return make(SMALL)


@pytest.fixture(scope="module")
def pro():
    return make(PRO)


def test_the_walk_ticks_every_1024_positions():
    """`tick` (a certification's keeper of its table's proofs) is called as the walk goes,
    at the 1st, 1,025th, ... position, not only when a part ends."""
    calls = []
    cert = make(dict(PRO, towers=3), tick=lambda: calls.append(1))
    assert cert.nodes > 1024
    assert len(calls) == (cert.nodes - 1) // 1024 + 1


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


def with_edges(cert, actions, children, offsets=None):
    """A copy of `cert` with other arrays (what a forger would write: save() gives it a
    correct checksum, so only the checker can refuse it)."""
    return Certificate(game=cert.game, variant=cert.variant, root=cert.root,
                       winner=cert.winner, value=cert.value,
                       offsets=cert.offsets if offsets is None else offsets,
                       actions=np.array(actions, dtype=cert.actions.dtype),
                       children=np.array(children, dtype=np.int32), info=dict(cert.info))


def node_positions(cert):
    """Each node's reference position (walking the certificate from its root)."""
    positions = {0: parse_reference_position(cert.root)}
    for i in range(cert.nodes):
        for j in range(cert.offsets[i], cert.offsets[i + 1]):
            if cert.children[j] >= 0 and cert.children[j] not in positions:
                child = positions[i].clone()
                child.apply(int(cert.actions[j]))
                positions[int(cert.children[j])] = child
    return positions


def node_kinds(cert):
    """For each node, whether the winner moves there (walking the reference positions)."""
    return {i: o.current_player() == cert.winner for i, o in node_positions(cert).items()}


# ---- a valid certificate ------------------------------------------------------------------
@pytest.mark.parametrize("variant", [SMALL, PRO, dict(SMALL, trampoline="mandatory"),
                                     dict(PRO, trampoline="mandatory")])
def test_a_certificate_of_a_finished_proof_checks(variant):
    cert = make(variant)
    report = check_certificate(cert)
    assert report.nodes == cert.nodes == report.winner_nodes + report.loser_nodes
    assert report.edges == cert.edges and report.game_over_leaves > 0
    assert report.table_leaves == 0
    # the proof search agrees on who wins
    state = LotusState(**variant)
    assert ProofSearch(tt_mb=8).solve(state).value == cert.value
    assert cert.winner == (0 if cert.value == 1.0 else 1)


def test_the_pro_opening_has_seat_0_move_twice(pro):
    root = LotusState(**PRO)
    assert "opening=first" in pro.root and root.to_notation() == pro.root
    kinds = node_kinds(pro)
    after_first = [int(c) for c in pro.children[pro.offsets[0]:pro.offsets[1]] if c >= 0]
    # seat 0 moves at the root and again right after (the second stone or pass)
    second = parse_reference_position(pro.root)
    second.apply(int(pro.actions[pro.offsets[0]]))
    assert second.current_player() == 0 and second.opening == "second"
    assert all(kinds[c] == kinds[0] for c in after_first)


def test_nodes_are_numbered_parents_first_and_transpositions_shared(small):
    for i in range(small.nodes):
        kids = small.children[small.offsets[i]:small.offsets[i + 1]]
        assert all(k > i for k in kids if k >= 0)
    inner = small.children[small.children >= 0]
    assert len(set(inner.tolist())) == small.nodes - 1      # every node but the root reached
    assert len(inner) > len(set(inner.tolist()))    # some reached twice: a DAG, not a tree


def test_positions_in_gives_each_node_and_part_root_once_with_the_winners_move(small):
    """positions_in: every node of the tree once (a transposition too), the winner's one
    move at the winner's nodes, None at the loser's; a part's root once however many
    edges reach it, with None (its moves are in the part)."""
    listed = list(positions_in(small))
    assert len(listed) == small.nodes and len({p.to_notation() for p, _ in listed}) == \
        small.nodes
    for position, move in listed:
        if position.current_player() == small.winner:
            assert move in position.legal_actions()
        else:
            assert move is None
    top = load_certificate(Path(__file__).resolve().parent.parent / "bench" / "perfect-play"
                           / "pro-rule" / "certification"
                           / "lotus-towers4-pro-optional-W3-a3.npz")
    listed = {p.to_notation(): m for p, m in positions_in(top)}
    roots = {q["root"] for q in top.parts if not q.get("mirror")}
    assert len(listed) == len(list(positions_in(top))) > top.nodes
    assert roots and roots <= set(listed) and all(listed[r] is None for r in roots)


def test_save_load_round_trip_and_info(tmp_path, small):
    path = small.save(tmp_path / "c.npz")
    back = load_certificate(path)
    assert back.sha256 == small.sha256 and back.root == small.root
    assert back.winner == small.winner and back.value == small.value
    assert np.array_equal(back.offsets, small.offsets)
    assert np.array_equal(back.actions, small.actions)
    assert np.array_equal(back.children, small.children)
    assert check_certificate(back).nodes == small.nodes
    info = json.loads(run("proof", "info", str(path)).output)
    assert info["nodes"] == small.nodes and info["sha256"] == small.sha256


# ---- refused: a forged or damaged certificate ------------------------------------------
@settings(max_examples=25, deadline=None)
@given(st.data())
def test_removing_any_loser_reply_is_refused(small, data):
    kinds = node_kinds(small)
    losers = [i for i in range(small.nodes) if not kinds[i]]
    i = data.draw(st.sampled_from(losers))
    j = data.draw(st.integers(int(small.offsets[i]), int(small.offsets[i + 1]) - 1))
    actions = np.delete(small.actions, j)
    children = np.delete(small.children, j)
    offsets = small.offsets.copy()
    offsets[i + 1:] -= 1
    forged = with_edges(small, actions, children, offsets)
    with pytest.raises(CertificateError, match="missing|not reached|different position"):
        check_certificate(forged)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_changing_any_winner_move_is_refused(small, data):
    kinds = node_kinds(small)
    winners = [i for i in range(small.nodes) if kinds[i]]
    i = data.draw(st.sampled_from(winners))
    j = int(small.offsets[i])
    old = int(small.actions[j])
    new = data.draw(st.integers(0, 255).filter(lambda a: a != old))
    actions = small.actions.copy()
    actions[j] = new
    with pytest.raises(CertificateError):
        check_certificate(with_edges(small, actions, small.children))


def test_refusals_name_what_is_wrong(small):
    kinds = node_kinds(small)
    w = next(i for i in range(small.nodes) if kinds[i])
    actions = small.actions.copy()
    actions[small.offsets[w]] = 200         # not an action of this board
    with pytest.raises(CertificateError, match=f"node {w} .*winner's move 200 is not legal"):
        check_certificate(with_edges(small, actions, small.children))
    # a move that does not end the game marked as a game-over leaf
    children = small.children.copy()
    j = int(np.flatnonzero(children > 0)[0])
    children[j] = GAME_OVER
    with pytest.raises(CertificateError, match="does not end the game|not reached"):
        check_certificate(with_edges(small, small.actions, children))
    # an edge back up (a cycle would be a claim of endless play, not of a win)
    children = small.children.copy()
    j = int(np.flatnonzero(children > 1)[-1])
    children[j] = 0
    with pytest.raises(CertificateError, match="not a later node"):
        check_certificate(with_edges(small, small.actions, children))
    # a game-over move marked as a table leaf: terminal positions are not table leaves
    children = small.children.copy()
    j = int(np.flatnonzero(children == GAME_OVER)[0])
    children[j] = TABLE_LEAF
    with pytest.raises(CertificateError, match="table leaf"):
        check_certificate(with_edges(small, small.actions, children))


def test_two_edges_to_one_node_must_reach_one_position(small):
    children = small.children.copy()
    inner = np.flatnonzero(children > 0)
    # point an edge at another node than its own (one that a lower node also reaches)
    j = int(inner[0])
    other = next(int(children[k]) for k in inner if children[k] != children[j]
                 and children[k] > children[j])
    children[j] = other
    with pytest.raises(CertificateError):
        check_certificate(with_edges(small, small.actions, children))
    # one of two edges to a node (so it stays reached) pointed at another node, reached
    # from a different position: refused for the position, whichever edge comes first
    children = small.children.copy()
    parent = np.searchsorted(small.offsets, np.arange(len(children)), side="right") - 1
    notation = {i: o.to_notation() for i, o in node_positions(small).items()}
    twice = [int(v) for v, n in zip(*np.unique(children[inner], return_counts=True),
                                     strict=True) if n >= 2]
    j = next(int(k) for k in inner if int(children[k]) in twice)
    other = next(int(children[k]) for k in inner if children[k] > parent[j]
                 and notation[int(children[k])] != notation[int(children[j])])
    children[j] = other
    with pytest.raises(CertificateError, match="different position"):
        check_certificate(with_edges(small, small.actions, children))


def test_a_wrong_claim_in_the_header_is_refused(tmp_path, small):
    forged = with_edges(small, small.actions, small.children)
    forged.winner = 1 - small.winner
    forged.value = 1.0 - small.value
    with pytest.raises(CertificateError):
        check_certificate(forged)
    forged = with_edges(small, small.actions, small.children)
    forged.value = 1.0 - small.value
    with pytest.raises(CertificateError, match="does not agree"):
        check_certificate(forged)


def test_a_damaged_or_edited_file_is_refused(tmp_path, small):
    path = small.save(tmp_path / "c.npz")
    raw = bytearray(path.read_bytes())
    rng = random.Random(7)
    for trial in range(20):
        damaged = bytearray(raw)
        k = rng.randrange(len(damaged))
        damaged[k] ^= 1 << rng.randrange(8)
        bad = tmp_path / f"bad{trial}.npz"
        bad.write_bytes(bytes(damaged))
        r = run("proof", "check", str(bad))
        if r.exit_code == 0:
            # only the zip's bookkeeping was hit (a timestamp, say): the content is intact
            back = load_certificate(bad)
            assert back.sha256 == small.sha256, f"byte {k} flipped, content changed"
            assert np.array_equal(back.actions, small.actions)
            assert np.array_equal(back.children, small.children)
            continue
        assert r.exit_code == 2 and r.output.startswith("Error: "), r.output
        assert len(r.output.strip().splitlines()) == 1
    # the header edited, the checksum not: refused before any checking
    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
        arrays = {k: z[k] for k in ("offsets", "actions", "children")}
    meta["winner"] = 1 - meta["winner"]
    edited = tmp_path / "edited.npz"
    np.savez_compressed(edited, meta=np.array(json.dumps(meta)), **arrays)
    r = run("proof", "check", str(edited))
    assert r.exit_code == 2 and "checksum mismatch" in r.output
    for missing in (tmp_path / "none.npz", tmp_path):
        r = run("proof", "check", str(missing))
        assert r.exit_code == 2 and r.output.startswith("Error: ")
    (tmp_path / "text.npz").write_text("not a certificate")
    r = run("proof", "check", str(tmp_path / "text.npz"))
    assert r.exit_code == 2 and "not a readable certificate" in r.output
    # numpy takes a text file for a pickle and suggests loading it unsafely: not passed on
    assert "not a numpy .npy/.npz file" in r.output and "pickle" not in r.output


def test_the_cli_refuses_a_forged_certificate_with_one_line(tmp_path, small):
    kinds = node_kinds(small)
    i = next(i for i in range(small.nodes) if not kinds[i]
             and small.offsets[i + 1] - small.offsets[i] > 1)
    j = int(small.offsets[i])
    offsets = small.offsets.copy()
    offsets[i + 1:] -= 1
    forged = with_edges(small, np.delete(small.actions, j), np.delete(small.children, j),
                        offsets)
    path = forged.save(tmp_path / "forged.npz")
    r = run("proof", "check", str(path))
    assert r.exit_code == 2, r.output
    assert r.output.startswith(f"Error: node {i} (lotus ") and "missing" in r.output
    assert len(r.output.strip().splitlines()) == 1


# ---- table leaves: solved again by the reference rules --------------------------------------
def test_table_leaves_are_solved_again(tmp_path):
    from niwa.solver.tables import build_table

    variant = dict(SMALL, towers=2)
    build_table(variant, 1, directory=tmp_path, progress=False)
    from niwa.solver.tables import find_table

    table = find_table(LotusState(**variant), tmp_path)
    assert table is not None
    cert = extract_certificate(ProofSearch(tt_mb=8, tables=table), LotusState(**variant),
                               tables=table)
    report = check_certificate(cert)
    assert report.table_leaves > 0 and report.leaf_positions > 0
    assert report.nodes < make(variant).nodes        # the table cut the tree
    with pytest.raises(CertificateError, match="more than 1 positions"):
        check_certificate(cert, leaf_budget=1)
    # a winner's move to a table position that the winner loses is refused
    from niwa.solver.certificate import _LeafSolver

    kinds = node_kinds(cert)
    positions = {0: parse_reference_position(cert.root)}
    for i in range(cert.nodes):
        o = positions[i]
        for j in range(cert.offsets[i], cert.offsets[i + 1]):
            if cert.children[j] >= 0:
                child = o.clone()
                child.apply(int(cert.actions[j]))
                positions.setdefault(int(cert.children[j]), child)
        if not kinds[i] or cert.children[cert.offsets[i]] != TABLE_LEAF:
            continue
        for a in o.legal_actions():
            child = o.clone()
            child.apply(a)
            if not child.is_terminal() and \
                    _LeafSolver(10**6).winner(child) != cert.winner:
                actions = cert.actions.copy()
                actions[cert.offsets[i]] = a
                with pytest.raises(CertificateError, match="table leaf .* is not a win"):
                    check_certificate(with_edges(cert, actions, cert.children))
                return
    pytest.fail("no losing move into the table found to forge")


def _table_leaves(cert):
    """(edge, the node's position, the leaf's position) of every move into a table leaf."""
    out, positions = [], {0: parse_reference_position(cert.root)}
    for i in range(cert.nodes):
        o = positions[i]
        for j in range(cert.offsets[i], cert.offsets[i + 1]):
            child = o.clone()
            child.apply(int(cert.actions[j]))
            if cert.children[j] >= 0:
                positions.setdefault(int(cert.children[j]), child)
            elif cert.children[j] == TABLE_LEAF:
                out.append((j, o, child))
    return out


def _forged_table_leaf(cert):
    """`cert` with one winner's move into a table leaf changed to a move into a table
    position the winner loses (found with the reference rules)."""
    from niwa.solver.certificate import _LeafSolver

    for j, o, _ in _table_leaves(cert):
        for a in (o.legal_actions() if o.current_player() == cert.winner else []):
            child = o.clone()
            child.apply(a)
            if not child.is_terminal() and _LeafSolver(10**6).winner(child) != cert.winner:
                actions = cert.actions.copy()
                actions[j] = a
                return with_edges(cert, actions, cert.children)
    raise AssertionError("no losing move into the table found to forge")


def _small_table(tmp_path):
    """The start of a small variant and its k = 2 endgame table, built in tmp_path."""
    from niwa.solver.tables import build_table, find_table

    variant = dict(towers=3, lane=2, shared=5, trampoline_at=4)
    build_table(variant, 2, directory=tmp_path, progress=False)
    return LotusState(**variant), find_table(LotusState(**variant), tmp_path)


def _certified_with(table, state):
    """The certificate of `state`, its leaves in `table` where the proof reached it."""
    return extract_certificate(ProofSearch(tt_mb=8, tables=table), state, tables=table)


def test_a_table_orders_the_leaf_search_and_never_decides_a_verdict(tmp_path):
    from niwa.solver.certificate import _leaf_guide, _LeafSolver, _TableGuide

    start, table = _small_table(tmp_path)
    cert = _certified_with(table, start)
    plain, guided = check_certificate(cert), check_certificate(cert, tables=tmp_path)
    assert plain.table_leaves == guided.table_leaves > 0
    assert guided.leaf_positions < plain.leaf_positions
    assert (plain.leaf_order, guided.leaf_order) == ("", "the k=2 table")
    # one load (and checksum) a process, not one a part: 7 s each on the full game's k = 5
    assert _leaf_guide(tmp_path, cert.root) is _leaf_guide(tmp_path, cert.root) is not None

    class Liar(_TableGuide):
        """The table's order turned upside down: losing moves first."""

        def order(self, o, moves, state=None):
            return super().order(o, moves, state)[::-1]

    class ByNotation(_TableGuide):
        """The engine's copy of each position made from its notation, not carried down."""

        def order(self, o, moves, state=None):
            return super().order(o, moves)

    # every leaf and every position one move below it: the same winner whatever the order
    positions = [leaf for _, _, leaf in _table_leaves(cert)]
    for o in list(positions):
        for a in o.legal_actions():
            child = o.clone()
            child.apply(a)
            if not child.is_terminal():
                positions.append(child)
    solvers = [_LeafSolver(10**6), _LeafSolver(10**6, _TableGuide(table)),
               _LeafSolver(10**6, Liar(table)),
               # ordering only one seat's moves (the check orders the claimed winner's)
               *(_LeafSolver(10**6, g, favoured=seat) for g in (_TableGuide(table), Liar(table))
                 for seat in (0, 1))]
    winners = {o.to_notation(): [s.winner(o) for s in solvers] for o in positions}
    assert all(len(set(w)) == 1 for w in winners.values())
    assert {w[0] for w in winners.values()} == {0, 1}
    assert len(solvers[1].memo) < len(solvers[0].memo) < len(solvers[2].memo)
    # the engine's copy carried down beside the reference position orders as its notation
    by_notation = _LeafSolver(10**6, ByNotation(table))
    assert {o.to_notation(): by_notation.winner(o) for o in positions} == \
        {k: w[0] for k, w in winners.items()}
    assert by_notation.memo.keys() == solvers[1].memo.keys()
    # on the leaves (claimed won by the certificate's winner), ordering the winner's moves
    # alone searches exactly the positions ordering every move does: the loser's moves
    # are all tried anyway
    leaves = [leaf for _, _, leaf in _table_leaves(cert)]
    every, winners_only = _LeafSolver(10**6, _TableGuide(table)), \
        _LeafSolver(10**6, _TableGuide(table), favoured=cert.winner)
    assert all(every.winner(o) == winners_only.winner(o) == cert.winner for o in leaves)
    assert every.memo.keys() == winners_only.memo.keys()
    # a winner's move into a table position the winner loses is refused, guided or not
    forged = _forged_table_leaf(cert)
    with pytest.raises(CertificateError, match="table leaf .* is not a win"):
        check_certificate(forged, tables=tmp_path)
    # the command line: the order named in the report; a folder without the table refused
    path = tmp_path / "cert.npz"
    cert.save(path)
    r = run("proof", "check", str(path), "--tables", str(tmp_path))
    assert r.exit_code == 0 and "moves ordered by the k=2 table" in r.output, r.output
    (tmp_path / "empty").mkdir()
    r = run("proof", "check", str(path), "--tables", str(tmp_path / "empty"))
    assert r.exit_code == 2 and "no endgame table" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_the_leaf_guide_reads_its_table_unverified_and_a_damaged_one_changes_no_verdict(
        tmp_path):
    """The guide skips the table's checksum (10 s a part on the full game's k = 5): a
    damaged payload only reorders the leaf search. A caller that asks for the checksum
    afterwards, in the same process, still has the damage refused."""
    from niwa.solver import certificate as certificate_mod
    from niwa.solver import tables as tables_mod
    from niwa.solver.tables import TableError, find_table

    start, table = _small_table(tmp_path)
    cert = _certified_with(table, start)
    good = check_certificate(cert, tables=tmp_path)
    payload = next(tmp_path.glob("*.npy"))
    raw = bytearray(payload.read_bytes())
    values_start = len(raw) - table.size
    rng = random.Random(7)
    for k in rng.sample(range(values_start, len(raw)), len(raw[values_start:]) // 3):
        raw[k] = rng.randrange(256)
    payload.write_bytes(bytes(raw))
    for cache in (tables_mod._LOADED, tables_mod._VERIFIED, tables_mod._LISTED,
                  certificate_mod._GUIDES):
        cache.clear()
    damaged = check_certificate(cert, tables=tmp_path)
    assert (damaged.nodes, damaged.table_leaves, damaged.leaf_order) == \
        (good.nodes, good.table_leaves, good.leaf_order)
    assert damaged.leaf_positions != good.leaf_positions    # the damage reordered the search
    with pytest.raises(TableError, match="fails its checksum"):
        find_table(start, tmp_path)



def _leaf_certificates(tmp_path):
    """Certificates with table leaves of the moves of a small variant's start (so that
    they share endgames, as the parts of one certification do); the table is built in
    tmp_path."""
    start, table = _small_table(tmp_path)
    certs = [cert for cert in (_certified_with(table, start.child(a))
                               for a in start.legal_actions())
             if (cert.children == TABLE_LEAF).any()]
    assert len(certs) >= 2
    return certs


def _saved_leaf_certificates(tmp_path):
    """_leaf_certificates, each saved in tmp_path (c0.npz, c1.npz ...): (certs, paths)."""
    certs = _leaf_certificates(tmp_path)
    paths = [tmp_path / f"c{k}.npz" for k in range(len(certs))]
    for cert, path in zip(certs, paths, strict=True):
        cert.save(path)
    return certs, paths


def test_a_leaf_memo_kept_across_certificates_searches_less_and_changes_no_verdict(tmp_path):
    from niwa.solver.certificate import LeafMemo

    certs = _leaf_certificates(tmp_path)
    alone = [check_certificate(c, tables=tmp_path) for c in certs]
    memo = LeafMemo()
    shared = [check_certificate(c, tables=tmp_path, leaf_memo=memo) for c in certs]
    for a, b in zip(alone, shared, strict=True):
        assert (a.nodes, a.table_leaves, a.edges) == (b.nodes, b.table_leaves, b.edges)
        assert b.leaf_positions <= a.leaf_positions
    assert shared[0].leaf_positions == alone[0].leaf_positions      # (nothing kept yet)
    assert sum(b.leaf_positions for b in shared) < sum(a.leaf_positions for a in alone)
    assert len(memo) == sum(b.leaf_positions for b in shared)
    # a memo full of right values hides no wrong leaf: a forged one is still refused, the
    # second time with the forged leaf's own value (kept by the first refusal) in the memo
    forged = _forged_table_leaf(certs[0])
    for _ in range(2):
        with pytest.raises(CertificateError, match="table leaf .* is not a win"):
            check_certificate(forged, tables=tmp_path, leaf_memo=memo)
    # the budget counts the positions a certificate searched, not those kept before
    with pytest.raises(CertificateError, match="need more than 1 positions"):
        check_certificate(certs[1], tables=tmp_path, leaf_budget=1, leaf_memo=LeafMemo())
    check_certificate(certs[1], tables=tmp_path, leaf_memo=memo, leaf_budget=1)  # all kept
    # one memo a variant (a position key does not name its variant), emptied past its cap
    small = LeafMemo(max_entries=3)
    basic, pro = small.for_variant({"rule": "basic"}), small.for_variant({"rule": "pro"})
    assert basic is not pro and small.for_variant({"rule": "basic"}) is basic
    basic.update({bytes([k]): 0 for k in range(4)})
    assert small.for_variant({"rule": "basic"}) == {} and len(small) == 0


def test_proof_check_takes_several_certificates_and_stops_at_the_first_wrong_one(tmp_path):
    certs, paths = _saved_leaf_certificates(tmp_path)
    r = run("proof", "check", *map(str, paths), "--tables", str(tmp_path), "--json",
            "--no-progress", "--ledger", str(tmp_path / "ledger.jsonl"))
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.output.strip().splitlines()]
    assert [x["sha256"] for x in lines] == [c.sha256 for c in certs]
    alone = check_certificate(certs[-1], tables=tmp_path)
    assert lines[-1]["leaf_positions"] < alone.leaf_positions   # (the memo at work)
    r = run("proof", "check", *map(str, paths), "--tables", str(tmp_path), "--json",
            "--no-progress", "--leaf-memo", "0")
    assert [json.loads(x)["leaf_positions"] for x in r.output.strip().splitlines()][-1] == \
        alone.leaf_positions
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a certificate")
    r = run("proof", "check", str(paths[0]), str(bad), str(paths[1]), "--json",
            "--no-progress", "--tables", str(tmp_path))
    out = r.output.strip().splitlines()
    assert r.exit_code == 2 and len(out) == 2 and json.loads(out[0])["valid"]
    assert "bad.npz" in out[1]


def test_proof_check_reads_certificates_from_stdin_each_as_its_line_arrives(tmp_path):
    """`niwa proof check -`: a long-lived checker (certify.py's): each line's certificate is
    checked and reported before the next line is written, `--mirror PATH` lines check the
    mirror claim, one leaf memo serves them all, and a wrong one stops it with exit 2."""
    import subprocess
    import sys

    certs, paths = _saved_leaf_certificates(tmp_path)
    cmd = [sys.executable, "-m", "niwa.cli.main", "proof", "check", "-", "--json",
           "--no-progress", "--tables", str(tmp_path), "--ledger", str(tmp_path / "l.jsonl")]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        for line in [str(paths[0]), f"--mirror {paths[0]}", *map(str, paths[1:])]:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            seen.append(json.loads(proc.stdout.readline()))    # (answered before the next)
        proc.stdin.close()
        assert proc.wait(120) == 0
    finally:
        proc.kill()
    assert [(x["sha256"], x["mirror"]) for x in seen] == \
        [(certs[0].sha256, False), (certs[0].sha256, True),
         *((c.sha256, False) for c in certs[1:])]
    alone = check_certificate(certs[-1], tables=tmp_path)
    assert seen[-1]["leaf_positions"] < alone.leaf_positions   # (one memo throughout)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a certificate")
    r = run("proof", "check", "-", "--json", "--no-progress", input=f"{paths[0]}\n{bad}\n"
            f"{paths[1]}\n")
    out = r.output.strip().splitlines()
    assert r.exit_code == 2 and len(out) == 2 and "bad.npz" in out[1]
    r = run("proof", "check", "-", str(paths[0]))
    assert r.exit_code == 2 and "comes alone" in r.output

# ---- the notation the checker reads -----------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["basic", "pro"]),
       st.sampled_from(["optional", "mandatory"]), st.integers(0, 60))
def test_reference_positions_parse_from_engine_notation(seed, rule, trampoline, plies):
    state = LotusState(rule=rule, trampoline=trampoline)
    rng = random.Random(seed)
    for _ in range(plies):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    if state.is_terminal():
        return
    o = parse_reference_position(state.to_notation())
    assert o.to_notation() == state.to_notation()
    assert o.legal_actions() == sorted(state.legal_actions())
    assert o.current_player() == state.current_player()


@pytest.mark.parametrize("text, what", [
    ("lotus players=2 rule=basic trampoline=optional; track -; start WWWW; goal W:0 B:0; "
     "turn W", "stone counts"),
    ("lotus players=2 rule=basic; track -", "expected"),
    ("lotus players=2 rule=basic trampoline=optional; track z9:W; start -; goal W:0 B:0; "
     "turn W", "track entry"),
])
def test_a_bad_root_is_refused(text, what):
    with pytest.raises(CertificateError, match=what):
        parse_reference_position(text)


# ---- niwa solve --certificate, niwa proof check ----------------------------------------
def test_solve_writes_a_certificate_that_proof_check_accepts(tmp_path):
    path = tmp_path / "tiny.npz"
    position = "lotus towers=2 lane=1 shared=3 trampoline_at=3"
    r = run("solve", position, "--certificate", str(path), "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["certificate"]["nodes"] > 0 and out["proven"] is True
    r = run("proof", "check", str(path))
    assert r.exit_code == 0, r.output
    assert "valid" in r.output and "checked with the reference rules" in r.output
    r = run("proof", "check", str(path), "--json")
    report = json.loads(r.output)
    assert report["valid"] is True and report["nodes"] == out["certificate"]["nodes"]


@pytest.mark.parametrize("extra", [["--algo", "mcts"], ["--depth", "3"], ["--batch", "-"]])
def test_solve_certificate_refuses_other_searches(tmp_path, extra):
    r = run("solve", "lotus towers=3", "--certificate", str(tmp_path / "c.npz"), *extra)
    assert r.exit_code == 2 and "does not go with --certificate" in r.output


def test_solve_certificate_needs_a_finished_proof(tmp_path):
    r = run("solve", "lotus towers=3", "--certificate", str(tmp_path / "c.npz"), "--time",
            "0.001")
    assert r.exit_code == 2 and "no certificate written" in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "c.npz").exists()


def test_solve_certificate_refuses_an_unwritable_place_before_proving(tmp_path):
    r = run("solve", "lotus towers=3", "--certificate", str(tmp_path / "no" / "c.npz"))
    assert r.exit_code == 2 and "cannot write into" in r.output


def test_solve_certificate_refuses_other_games(tmp_path):
    r = run("solve", "haru", "--certificate", str(tmp_path / "c.npz"))
    assert r.exit_code == 2 and r.output.startswith("Error: ")


# ---- the shipped certificates -------------------------------------------------------------
@pytest.mark.parametrize("name, variant", [
    ("lotus-towers3-basic-mandatory.npz", dict(towers=3, trampoline="mandatory")),
    ("lotus-towers4-basic-mandatory.npz", dict(trampoline="mandatory")),    # the full game
    ("lotus-towers4-basic-optional.npz", dict(trampoline="optional")),      # the full game
])
def test_a_shipped_certificate_checks(name, variant):
    path = SHIPPED / name
    if not path.exists():
        pytest.fail(f"the shipped certificate {path} is missing")
    r = run("proof", "check", str(path), "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["valid"] and report["winner"] == 1 and report["nodes"] > 1000
    assert report["root"] == LotusState(**variant).to_notation()


# full pro/mandatory: certified in parts (bench/perfect-play/pro-rule/certify.py), each part
# checked with the reference rules as it was made and recorded in a check ledger; the parts'
# files are gone, the top certificate and the ledger are in the repository
CERTIFIED_IN_PARTS = SHIPPED.parent / "pro-rule" / "certification"


def test_the_full_pro_mandatory_certificate_checks_with_its_ledger(tmp_path):
    """The shipped top certificate of full pro/mandatory checks against a copy of the
    repository's check ledger: its own 214 positions with the reference rules, every part
    it stops at (and every part below) taken from the ledger in the orientation met. A
    ledger without its newest archive lacks parts: refused in one line."""
    cert = CERTIFIED_IN_PARTS / "lotus-towers4-pro-mandatory.npz"
    ledger_files = sorted(CERTIFIED_IN_PARTS.glob("pro-mandatory-ledger.*"))
    assert cert.exists() and len(ledger_files) >= 2
    for path in (cert, *ledger_files):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    ledger = tmp_path / "pro-mandatory-ledger.jsonl"
    before = ledger.read_bytes()
    r = run("proof", "check", str(tmp_path / cert.name), "--ledger", str(ledger), "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["valid"] and report["winner"] == 1 and report["value"] == 0.0
    assert report["root"] == LotusState(rule="pro", trampoline="mandatory").to_notation()
    assert report["parts_from_ledger"] == report["parts"] > 100_000
    assert report["nodes"] + report["part_nodes"] > 10**9
    assert ledger.read_bytes() == before            # (a check from the ledger adds nothing)
    newest = max(tmp_path.glob("pro-mandatory-ledger.*.jsonl.gz"))
    newest.unlink()
    r = run("proof", "check", str(tmp_path / cert.name), "--ledger", str(ledger))
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert "is not found" in r.output


PRO_OPTIONAL_CERTIFIED = [      # (line, parts, positions in all)
    ("W3-a3", 24, 17_899_872), ("W2-a2 W4-4", 85, 25_453_267), ("W1-a1 pass", 14, 38_735),
    ("W2-a2 pass", 13, 39_738), ("W2-a2 W3-a3", 6, 5_787_700), ("W2-a2 W3-b3", 6, 6_450_746),
    ("W4-4 W3-a3", 7, 5_741_881), ("W4-4 pass", 14, 49_554), ("W2-a2 W1-a1", 80, 32_456_844)]


@pytest.mark.parametrize("line, parts, positions", PRO_OPTIONAL_CERTIFIED,
                         ids=[c[0] for c in PRO_OPTIONAL_CERTIFIED])
@pytest.mark.parametrize("mirror", [False, True], ids=["as made", "mirror"])
def test_the_pro_optional_positions_decided_so_far_check_with_their_ledger(
        tmp_path, line, parts, positions, mirror):
    """Full pro/optional is open, but positions below it are decided and certified as they
    fall: each top certificate checks against a copy of the check ledger, its parts taken
    from the ledger, in the orientation made and (--mirror) in the lane mirror (W3-b3; W2-b2
    W4-4); seat 1 wins in both. A root that is its own mirror (W4-4 pass) is checked as
    made only (certify.py's rule)."""
    if mirror and line == "W4-4 pass":
        state = LotusState(rule="pro", trampoline="optional")
        for move in line.split():
            state.apply(move)
        assert parse_reference_position(state.to_notation()).mirrored().to_notation() == \
            state.to_notation()
        return
    cert = CERTIFIED_IN_PARTS / f"lotus-towers4-pro-optional-{line.replace(' ', '-')}.npz"
    ledger = CERTIFIED_IN_PARTS / "pro-optional-ledger.jsonl"
    for path in (cert, ledger):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    r = run("proof", "check", str(tmp_path / cert.name), "--ledger",
            str(tmp_path / ledger.name), "--json", *(["--mirror"] if mirror else []))
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["valid"] and report["winner"] == 1
    state = LotusState(rule="pro", trampoline="optional")
    for move in line.split():
        state.apply(move)
    assert report["value"] == (0.0 if state.current_player() == 0 else 1.0)
    assert LotusState.from_notation(report["root"]).symmetric_hash() == \
        state.symmetric_hash()
    assert report["parts_from_ledger"] == report["parts"] == parts
    assert report["nodes"] + report["part_nodes"] == positions


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(SHIPPED.glob("*.npz")), ids=lambda p: p.name)
def test_every_shipped_certificate_checks(path):
    cert = load_certificate(path)
    report = check_certificate(cert)
    assert report.nodes == cert.nodes and cert.winner == 1     # the second player wins


@pytest.mark.parametrize("module", ["niwa.solver.certificate", "niwa.solver.known"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
