"""Known results (solver/known.py): `niwa solve` answers a position a shipped opening book
or a certificate already proves at once, saying where from; `--fresh` proves again."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from niwa.cli.main import main
from niwa.ext.lotus import LotusState
from niwa.solver.book import find_book, load_book
from niwa.solver.certificate import extract_certificate
from niwa.solver.known import known_result
from niwa.solver.proof import ProofSearch
from niwa.solver.solve import solve_position

SMALL = "lotus towers=2 lane=1 shared=4 trampoline_at=3"


@pytest.fixture(autouse=True)
def _only_shipped_books(tmp_path, monkeypatch):
    monkeypatch.setenv("NIWA_BOOKS", str(tmp_path / "no-books"))


def run(*args):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("position", ["lotus", "lotus trampoline=mandatory"])
def test_the_full_game_start_is_answered_from_the_shipped_book(position):
    t0 = time.perf_counter()
    r = run("solve", position, "--json")
    elapsed = time.perf_counter() - t0
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["source"] == "book" and out["proven"] is True
    assert out["value"] == 0.0      # seat 1 wins the full basic game (both trampolines)
    assert "opening book lotus-" in out["status"] and "checksum ok" in out["status"]
    assert out["time_s"] < 1.0 and elapsed < 5.0
    text = run("solve", position).output
    assert "proven loss for player 0" in text
    assert "source proven (opening book lotus-" in text and "--fresh" in text


def test_fresh_proves_again():
    r = run("solve", "lotus", "--fresh", "--time", "0.2", "--tt-mb", "16", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["source"] == "search" and out["proven"] is False


def test_other_searches_are_not_answered_from_the_book():
    r = run("solve", "lotus", "--depth", "2", "--json")
    assert json.loads(r.output)["source"] == "search"


def test_a_book_position_inside_the_tree_is_answered_with_the_book_move():
    state = LotusState()
    book = load_book(find_book("lotus", state.variant))
    # seat 0 (the loser) moves, then seat 1 is at a book position
    state.apply(state.legal_actions()[0])
    move = book.lookup(state)
    assert move is not None and state.current_player() == book.winner
    r = solve_position(state)
    assert (r.algo, r.value, r.proven, r.best) == ("book", 1.0, True, move)
    # a position off the book's tree is not known
    other = LotusState(rule="pro")
    assert known_result(other, folders=[]) is None


def test_a_certificate_root_is_answered_from_the_certificate(tmp_path, monkeypatch):
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3)
    cert = extract_certificate(ProofSearch(tt_mb=8), state)
    cert.save(tmp_path / "small.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a certificate")
    monkeypatch.setenv("NIWA_CERTIFICATES", str(tmp_path))
    out = json.loads(run("solve", SMALL, "--json").output)
    assert out["source"] == "certificate" and out["value"] == cert.value
    assert "certificate small.npz, checksum ok" in out["status"]
    out = json.loads(run("solve", SMALL, "--json", "--fresh").output)
    assert out["source"] == "search" and out["value"] == cert.value
    # a damaged certificate proves nothing: the position is proved afresh
    with np.load(tmp_path / "small.npz") as z:
        arrays = {k: z[k] for k in ("offsets", "actions", "children", "meta")}
    arrays["actions"][0] ^= 1       # one move changed, the checksum left as it was
    np.savez_compressed(tmp_path / "small.npz", **arrays)
    out = json.loads(run("solve", SMALL, "--json").output)
    assert out["source"] == "search" and out["value"] == cert.value


def test_a_certificate_linked_into_the_folder_is_not_used(tmp_path, monkeypatch):
    """A certificates folder holds its certificates: a link there to a file elsewhere is
    skipped like an unreadable file (the position is proved afresh)."""
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3)
    elsewhere, folder = tmp_path / "elsewhere.npz", tmp_path / "certificates"
    extract_certificate(ProofSearch(tt_mb=8), state).save(elsewhere)
    folder.mkdir()
    (folder / "small.npz").symlink_to(elsewhere)
    assert known_result(state, folders=[folder]) is None
    assert known_result(state, folders=[tmp_path]).algo == "certificate"


def test_a_shipped_certificate_answers_its_root(monkeypatch):
    from pathlib import Path

    shipped = Path(__file__).resolve().parent.parent / "bench" / "perfect-play" / "certificates"
    monkeypatch.setenv("NIWA_CERTIFICATES", str(shipped))
    out = json.loads(run("solve", "lotus towers=3 rule=pro", "--json").output)
    assert out["source"] == "certificate" and out["value"] == 0.0
    assert "lotus-towers3-pro-optional.npz, checksum ok" in out["status"]


PRO_MANDATORY = "lotus rule=pro trampoline=mandatory"


def test_full_pro_mandatory_is_answered_from_the_shipped_book_and_proof_record(
        tmp_path, monkeypatch):
    """The decided pro/mandatory game: its start answered at once from the book read off
    its checked certificate, with every first stone's value from the record of the
    two-level proof; each first stone (the same player moves again) from that record,
    saying its certificate is checked."""
    monkeypatch.setenv("NIWA_CERTIFICATES", str(tmp_path))
    monkeypatch.setenv("NIWA_BOOKS", str(tmp_path))         # only the package's books
    t0 = time.perf_counter()
    r = run("solve", PRO_MANDATORY, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert time.perf_counter() - t0 < 5.0 and out["time_s"] < 1.0
    assert (out["source"], out["value"], out["proven"], out["best"]) == \
        ("book", 0.0, True, None)
    assert "opening book lotus-" in out["status"]
    assert {a["name"]: (a["value"], a["proven"]) for a in out["actions"]} == {
        m: (0.0, True) for m in ("W1-a1", "W1-b1", "W2-a2", "W2-b2", "W3-a3", "W3-b3", "W4-4")}
    state = LotusState(rule="pro", trampoline="mandatory")
    for a in state.legal_actions():     # the pro rule's first stone: the same player moves
        known = known_result(state.child(a), folders=[])
        assert (known.algo, known.value, known.player) == ("record", 0.0, 0)
        assert "certificate lotus-towers4-pro-mandatory.npz checked" in known.status
    assert known_result(LotusState(rule="pro"), folders=[]) is None     # not decided


PRO_RULE = Path(__file__).resolve().parent.parent / "bench" / "perfect-play" / "pro-rule"


@pytest.mark.parametrize("trampoline", ["mandatory", "optional"])
def test_the_shipped_proof_record_is_what_the_kept_checkpoint_proves(trampoline):
    """solver/books/proofs.json cannot drift from the proof: it equals the record read off
    the checkpoint the repository keeps (bench/perfect-play/pro-rule/); pro/optional's is
    the record of a proof still open, its decided first moves only."""
    from niwa.solver.known import proof_record, read_proof_records

    kept = PRO_RULE / f"checkpoint-pro-{trampoline}"
    shipped = {r["root"]: r for r in read_proof_records()}
    plies = next(r for r in shipped.values() if r["variant"]["trampoline"] == trampoline
                 and r["variant"]["rule"] == "pro").get("plies", 1)
    record = proof_record(kept, open_proof=trampoline == "optional", plies=plies)
    names = ("certificate", "certificates", "winning_moves", "inside")  # (certificates')
    kept_record = {k: v for k, v in shipped[record["root"]].items() if k not in names}
    if "decided" in kept_record:    # (a certified line below a fallen first move: below)
        certified = shipped[record["root"]].get("certificates", {})
        kept_record["decided"] = {line: v for line, v in kept_record["decided"].items()
                                  if line in record["decided"] or line not in certified}
    assert kept_record == {k: v for k, v in record.items() if k not in names}
    if "certificates" in record:        # the same record with the certificates named
        again = proof_record(kept, open_proof=True, plies=plies,
                             certificates=shipped[record["root"]]["certificates"],
                             certificate_dir=PRO_RULE / "certification")
        assert again == shipped[record["root"]]


def test_pro_optional_first_stone_w3_is_answered_from_the_open_proof_record():
    """Full pro/optional is open, its start is not answered; the first stone W3 (either
    lane) is, from the open proof's record, naming its checked certificate, whose root and
    winner agree with the answer."""
    from niwa.solver.certificate import load_certificate
    from niwa.solver.known import read_proof_records

    start = LotusState(rule="pro")
    assert known_result(start, folders=[]) is None
    record = next(r for r in read_proof_records() if r["root"] == start.to_notation())
    assert record["open"] and record["winner"] is None
    for move in ("W3-a3", "W3-b3"):
        known = known_result(start.child(start.string_to_action(move)), folders=[])
        assert (known.algo, known.value, known.player, known.proven) == \
            ("record", 0.0, 0, True)
        assert f"{move} decided by a two-level proof still open" in known.status
        name = record["certificates"][move]
        assert f"certificate {name} checked" in known.status
    cert = load_certificate(PRO_RULE / "certification" / name)
    after = start.child(start.string_to_action("W3-a3"))
    assert cert.root == after.to_notation() and cert.winner == 1


def test_an_open_proof_record_answers_only_its_decided_first_moves(tmp_path, monkeypatch):
    import niwa.solver.known as known
    from niwa.solver.known import ProofRecordError, add_proof_record, proof_record
    from niwa.solver.proof_tree import ProofTree

    path = tmp_path / "proofs.json"
    monkeypatch.setattr(known, "PROOF_RECORDS", path)
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro")
    cp = tmp_path / "cp"
    tree = ProofTree(state, job_nodes=40, tt_mb=8, checkpoint=cp)
    try:
        assert not tree.run(max_jobs=1).proven
    finally:
        tree.close()
    with pytest.raises(ProofRecordError, match="with a first move decided"):
        proof_record(cp, open_proof=True)       # nothing decided yet: nothing to record
    first = [state.action_to_string(a) for a in state.legal_actions()]
    record = {"game": "lotus", "variant": dict(sorted(state.variant.items())),
              "root": state.to_notation(), "winner": None, "open": True,
              "first_moves": {first[0]: 0, first[1]: 1}, "certificates": {first[0]: "c.npz"},
              "proof": "two-level proof-number search", "jobs": 1, "nodes": 40,
              "cpu_s": 0.1, "certificate": None}
    add_proof_record(record, path)
    assert known_result(state, folders=[]) is None      # the start: not decided
    answers = [known_result(state.child(state.string_to_action(m)), folders=[])
               for m in first]
    assert [(a.value, a.player) for a in answers[:2]] == [(0.0, 0), (1.0, 0)]
    assert "certificate c.npz checked" in answers[0].status
    assert "no certificate of its own yet" in answers[1].status
    assert all(a is None for a in answers[2:])


def test_a_proof_record_of_a_won_start_gives_a_winning_move_and_a_damaged_one_nothing(
        tmp_path, monkeypatch):
    import niwa.solver.known as known
    from niwa.solver.known import ProofRecordError, add_proof_record, proof_record
    from niwa.solver.proof_tree import ProofTree

    path = tmp_path / "proofs.json"
    monkeypatch.setattr(known, "PROOF_RECORDS", path)
    small = LotusState(towers=2, lane=1, shared=4, trampoline_at=3)
    won = small.child(small.legal_actions()[0])         # seat 1 to move, and it wins
    cases = ((small, 0), (won, 0), (LotusState(towers=2, lane=1, shared=4, trampoline_at=3,
                                               rule="pro"), 0),
             (LotusState(towers=2, lane=1, shared=4, trampoline_at=3,
                         trampoline="mandatory"), 2))
    kinds = set()
    for state, finish in cases:
        cp = tmp_path / f"cp{len(list(tmp_path.iterdir()))}"
        tree = ProofTree(state, job_nodes=40, tt_mb=8, checkpoint=cp)
        try:
            r = tree.run(max_jobs=finish)
        finally:
            tree.close()
        if not r.proven:
            with pytest.raises(ProofRecordError, match="not a finished proof"):
                proof_record(cp)
            kinds.add("unfinished")
            continue
        add_proof_record(proof_record(cp))
        found = known_result(state, folders=[])
        assert found.algo == "record" and found.value == r.value
        truth = ProofSearch(tt_mb=8).prove_value(state, state.current_player())
        assert found.value == truth
        kinds.add(found.value)
        if found.value == 1.0:      # the record's winning first move wins
            assert ProofSearch(tt_mb=8).prove_value(
                state.child(found.best), state.current_player()) == 1
        else:
            assert found.best is None
    assert kinds == {0.0, 1.0, "unfinished"}
    # one record a game and variant: a later proof of the same variant replaces it
    records = known.read_proof_records(path)
    assert len(records) == 2 and records[0]["variant"] != records[1]["variant"]
    assert known_result(small, folders=[]) is None       # (its record was replaced by `won`'s)
    assert known_result(won, folders=[]).algo == "record"
    path.write_text("{not json")        # a damaged file proves nothing
    assert known_result(won, folders=[]) is None


def test_the_decided_first_moves_of_an_open_proof_are_marked_in_a_search_of_its_start():
    """Full pro/optional is open: a time-limited solve of its start still searches, but the
    first moves its record decides (W3 in either lane) are given as exact losses, never
    chosen, the unfinished proof does not lean to them, and the status says where from."""
    from niwa.solver.known import read_proof_records

    start = LotusState(rule="pro")
    record = next(r for r in read_proof_records() if r["root"] == start.to_notation())
    decided = sorted(record["first_moves"])         # (W3-a3 and W3-b3 at least)
    assert {"W3-a3", "W3-b3"} <= set(decided) and set(record["first_moves"].values()) == {0}
    r = solve_position(start, time_s=0.5, tt_mb=16)
    assert not r.proven and r.algo.startswith("proof+")
    rows = {x.name: x for x in r.actions}
    assert sorted(n for n, x in rows.items() if x.proven) == decided
    assert all(rows[n].value == 0.0 for n in decided)
    assert r.best_name not in decided and r.pv[0] == r.best_name
    assert f"{len(decided)} of 7 moves known to lose: " in r.status
    assert f"{', '.join(decided)} (the open proof's record proofs.json, " in r.status
    bare = [n for n in decided if n not in record["certificates"]
            and n not in record.get("inside", {})]
    assert ("nodes so far; each with a checked certificate)" if not bare else
            f"nodes so far; {', '.join(bare)} with no certificate of its own yet)") in r.status
    assert not any(f"leaning to {n}" in r.status for n in decided)
    # --fresh searches without them
    fresh = solve_position(start, time_s=0.3, tt_mb=16, fresh=True)
    assert "known to lose" not in fresh.status


def _small_certificates(folder, states):
    folder.mkdir(exist_ok=True)
    for k, state in enumerate(states):
        extract_certificate(ProofSearch(tt_mb=8), state).save(folder / f"c{k}.npz")


def test_a_position_whose_moves_are_known_is_decided_at_once(tmp_path, monkeypatch):
    """One move to a known loss for the opponent wins the position; every move known and
    lost loses it (algo "known moves", no search); with only some known, the search runs
    and marks them. The value agrees with a fresh proof each time."""
    from niwa.solver.known import known_moves

    start = LotusState(towers=2, lane=1, shared=4, trampoline_at=3)   # seat 1 wins
    after = start.child(start.legal_actions()[0])                     # seat 1 to move
    reply = ProofSearch(tt_mb=8).solve(after).pv_actions[0]
    won = tmp_path / "won"
    _small_certificates(won, [after.child(reply)])
    monkeypatch.setenv("NIWA_CERTIFICATES", str(won))
    assert known_result(after) is None
    r = solve_position(after)
    assert (r.algo, r.value, r.proven, r.best) == ("known moves", 1.0, True, reply)
    assert f"{after.action_to_string(reply)} wins (certificate c0.npz" in r.status
    out = json.loads(run("solve", after.to_notation(), "--json").output)
    assert (out["source"], out["value"], out["best"]) == \
        ("known moves", 1.0, after.action_to_string(reply))
    assert "source proven: " in run("solve", after.to_notation()).output
    lost = tmp_path / "lost"
    children = [start.child(a) for a in start.legal_actions()]
    _small_certificates(lost, children[:-1])
    monkeypatch.setenv("NIWA_CERTIFICATES", str(lost))
    partial = solve_position(start, time_s=0.2, tt_mb=8)
    assert partial.algo != "known moves" and len(known_moves(start)) == len(children) - 1
    _small_certificates(lost, children[-1:] + children[:-1])
    r = solve_position(start)
    assert (r.algo, r.value, r.proven, r.best) == ("known moves", 0.0, True, None)
    assert "every move loses (3 moves" in r.status and len(r.actions) == 3
    assert r.value == ProofSearch(tt_mb=8).prove_value(start, 0)


def test_a_known_win_without_its_move_takes_the_move_from_its_known_moves(
        tmp_path, monkeypatch):
    """An open record's decided first move tells the value of the position after it but
    not the winner's move there; a certificate one move further down does: known_answer
    (the chain solve, review and perfect share) answers the win with that move, solve
    plays it, and the perfect agent's leaning move is that proven move."""
    import niwa.solver.known as known
    from niwa.solver.known import RECORDS_FORMAT, known_answer

    start = LotusState(towers=2, lane=1, shared=4, trampoline_at=3)   # seat 1 wins
    first = start.legal_actions()[0]
    after = start.child(first)
    reply = ProofSearch(tt_mb=8).solve(after).pv_actions[0]
    path = tmp_path / "proofs.json"
    path.write_text(json.dumps({"format": RECORDS_FORMAT, "records": [{
        "game": "lotus", "variant": dict(sorted(start.variant.items())),
        "root": start.to_notation(), "winner": None, "open": True,
        "first_moves": {start.action_to_string(first): 0}, "nodes": 40,
        "certificate": None}]}))
    monkeypatch.setattr(known, "PROOF_RECORDS", path)
    certificates = tmp_path / "certificates"
    monkeypatch.setenv("NIWA_CERTIFICATES", str(certificates))
    r, moves = known_answer(after)                      # no certificate yet
    assert (r.algo, r.value, r.best, moves) == ("record", 1.0, None, [])
    _small_certificates(certificates, [after.child(reply)])
    r, moves = known_answer(after)
    assert (r.algo, r.value, r.proven, r.best) == ("record", 1.0, True, reply)
    assert [m.action for m in moves] == [reply]
    assert "decided by a two-level proof still open" in r.status and \
        f"{after.action_to_string(reply)} wins (certificate c0.npz" in r.status
    assert solve_position(after).best == reply


def test_solve_moves_solves_the_position_after_them():
    after = run("solve", SMALL, "--moves", "W2-2", "--json", "--tt-mb", "8")
    state = LotusState(towers=2, lane=1, shared=4, trampoline_at=3)
    state.apply(state.string_to_action("W2-2"))
    direct = run("solve", state.to_notation(), "--json", "--tt-mb", "8")
    assert after.exit_code == 0 and json.loads(after.output)["value"] == \
        json.loads(direct.output)["value"] == 1.0
    bad = run("solve", SMALL, "--moves", "W2-2 zz")
    assert bad.exit_code == 2 and "move 2 ('zz') is not legal" in bad.output
    both = CliRunner().invoke(main, ["solve", "--batch", "-", "--moves", "W2-2"],
                              input=SMALL + "\n")
    assert both.exit_code == 2 and "--moves goes with one POSITION" in both.output


def test_the_open_records_decided_two_stone_openings_answer_their_transpositions_and_mirrors():
    """Pro/optional's record also holds the positions its top tree has decided two plies
    down or more (`plies` >= 2): each answers its transpositions and lane mirror (the proof's own
    key), naming its certificate, or the first move's certificate that holds it; moves
    into them are known moves. A line the rules refuse, or a key no line has, is not
    answered."""
    import niwa.solver.known as known
    from niwa.solver.certificate import load_certificate, positions_in
    from niwa.solver.known import known_moves, read_proof_records

    start = LotusState(rule="pro")
    record = next(r for r in read_proof_records() if r["root"] == start.to_notation())
    assert record["plies"] >= 2 and record["decided"]["W2-a2 W4-4"] == 0

    def after(line):
        state = start.clone()
        for name in line.split():
            state.apply(state.string_to_action(name))
        return state

    for line in ("W2-a2 W4-4", "W4-4 W2-a2", "W4-4 W2-b2", "W2-b2 W4-4"):
        r = known_result(after(line), folders=[])
        assert (r.algo, r.value, r.player) == ("record", 1.0, 1), line
        assert "W2-a2 W4-4 decided by a two-level proof still open" in r.status
        assert "certificate lotus-towers4-pro-optional-W2-a2-W4-4.npz checked" in r.status
    held = known_result(after("W1-b1 W3-b3"), folders=[])       # (W3-a3 W1-a1, mirrored)
    assert held.value == 1.0 and held.best_name == "B1-b1" and \
        "inside certificate lotus-towers4-pro-optional-W3-a3.npz, checked" in held.status
    assert known_result(after("W1-a1 W4-4"), folders=[]) is None       # not decided yet
    # the winner's move, read off each certificate when the record was written, is played
    # in the position and its mirror (the same position under the proof's key)
    assert known_result(after("W2-a2 W4-4"), folders=[]).best_name == "B4-4"
    assert known_result(after("W2-b2 pass"), folders=[]).best_name == "B2-b2"
    # (a line inside another certificate: the winner's move at its node there)
    assert set(record["inside"]) >= {"W3-a3 W1-a1", "W3-a3 W1-b1"}
    for line, move in record["winning_moves"].items():
        name = record["certificates"].get(line) or record["inside"][line]
        cert = load_certificate(PRO_RULE / "certification" / name)
        at = after(line)
        assert cert.winner == at.current_player() == 1
        # (matched under the proof's key: the line's position may be a node's mirror)
        key = lambda s: (s.symmetric_hash(), s.current_player())    # noqa: E731
        targets = {key(p): key(p.child(m)) for p, m in positions_in(cert) if m is not None}
        assert key(at.child(at.string_to_action(move))) == targets[key(at)]
    assert {m.name for m in known_moves(after("W2-a2"), folders=[])} >= {"W4-4", "W3-a3"}
    # a damaged line proves nothing
    assert known._decided_lines({"decided": {"W9-z9 W4-4": 0}}, start) == {}


def test_a_certified_line_below_a_fallen_first_move_stays_decided():
    """The top tree drops what lies below a decided node; a certified line under a first
    move that fell later is still decided when only the loser moves after that move (pro's
    second stone), never when the winner does, nor for a line the rules refuse."""
    from niwa.solver.known import _decided_through_loser

    start = LotusState(rule="pro")
    lost = {"W2-a2": 0}
    assert _decided_through_loser(start, "W2-a2 W3-a3", lost) == 0     # W's second stone
    assert _decided_through_loser(start, "W2-a2 pass", lost) == 0
    assert _decided_through_loser(start, "W2-a2 W3-a3 B1-a1", lost) is None   # B moves
    assert _decided_through_loser(start, "W2-a2 W3-a3", {"W2-a2": 1}) is None  # W won
    assert _decided_through_loser(start, "W2-a2 zz", lost) is None
    assert _decided_through_loser(start, "W4-4 W3-a3", lost) is None


@pytest.mark.parametrize("damage, answered", [
    ({"decided": {"W9-z9 zz": 0, "W2-a2 W4-4": "x"}}, False),
    ({"decided": [1, 2]}, False),
    ({"winning_moves": {"W2-a2 W4-4": "Q9"}}, True),
    ({"winning_moves": 5}, True),
    ({"certificates": {"W9": "a.npz"}, "first_moves": {"W9": 0}}, True),
    ({"first_moves": {"W3-a3": "x", "W3-b3": [0]}, "inside": 3}, True)])
def test_a_damaged_open_record_answers_less_never_wrongly(tmp_path, monkeypatch, damage,
                                                          answered):
    """Bad lines, values or moves in an open proof's record: the position is not answered
    (a damaged line proves nothing), or answered without the damaged part (no move, no
    certificate named); never an error."""
    import niwa.solver.known as known
    from niwa.solver.known import RECORDS_FORMAT, read_proof_records

    start = LotusState(rule="pro")
    record = next(r for r in read_proof_records() if r["root"] == start.to_notation())
    path = tmp_path / "proofs.json"
    path.write_text(json.dumps({"format": RECORDS_FORMAT, "records": [{**record, **damage}]}))
    monkeypatch.setattr(known, "PROOF_RECORDS", path)
    state = start.clone()
    for name in ("W2-a2", "W4-4"):
        state.apply(state.string_to_action(name))
    r = known_result(state, folders=[])
    assert (r is not None) == answered
    if answered:
        assert r.value == 1.0 and r.player == 1
        assert (r.best_name == "B4-4") == ("winning_moves" not in damage)


def test_a_record_refuses_a_certificate_that_contradicts_the_proof():
    """A decided line whose value a named certificate's tree contradicts (here W3-a3 told
    won for the first player, its certificate a seat-1 win) is a ProofRecordError when
    the record is written, not a record that answers two ways; a line the certificates
    do not hold gets neither a move nor a certificate."""
    import niwa.solver.known as known
    from niwa.solver.known import ProofRecordError

    start = LotusState(rule="pro")
    named = {"W3-a3": "lotus-towers4-pro-optional-W3-a3.npz"}
    folder = PRO_RULE / "certification"
    with pytest.raises(ProofRecordError, match="W3-a3: decided 1 .* seat 1 win"):
        known._certified_lines(start, named, folder, {"W3-a3": 1})
    moves, inside = known._certified_lines(
        start, named, folder, {"W3-a3": 0, "W3-b3 W1-b1": 0, "W1-a1 W2-a2": 0})
    assert inside == {"W3-b3 W1-b1": named["W3-a3"]} and moves == {"W3-b3 W1-b1": "B1-b1"}
