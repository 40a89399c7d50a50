"""df-pn proof search (solver/proof.pyx) against a plain exhaustive minimax written here
from the engine's Python API, and against alpha-beta where that proves, on every small
two-player Lotus set-up we can afford; plus the PV, root move values, budgets, the small
table warning and the refusals (chance, simultaneous, hidden, 3 players)."""

from __future__ import annotations

import random
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from niwa.ext.errors import NiwaError
from niwa.ext.lotus import LotusState
from niwa.ext.toys import ChanceNimState, KuhnState, MatrixGameState
from niwa.solver.alphabeta import AlphaBeta
from niwa.solver.proof import ProofSearch, SharedProofTable, _check_word

RULES = [dict(rule=r, trampoline=t) for r in ("basic", "pro") for t in ("optional", "mandatory")]


def boards():
    """Every shortened board: lanes 1..2, 2..5 shared spaces, the trampoline on any shared."""
    for lane in (1, 2):
        for shared in range(2, 6):
            for at in range(lane + 1, lane + shared + 1):
                yield dict(lane=lane, shared=shared, trampoline_at=at)


def tag(v):
    return "-".join(f"{k}{v[k]}" for k in v)


TOWERS1 = [dict(b, towers=1, **r) for b in boards() for r in RULES]
# towers 2..1: the boards whose minimax costs under ~0.2 s (lane 1 up to 4 shared spaces,
# lane 2 up to 3), all rule combinations; 5 shared spaces are covered by random positions
# and alpha-beta below
TOWERS2 = [dict(b, towers=2, **r) for b in boards() if b["shared"] <= 5 - b["lane"] for r in RULES]


# ---- the oracle: plain minimax over the Python API, memoised across calls -------------------
MEMO: dict[tuple, float] = {}


def minimax(state) -> float:
    """Value for the player to move: 1.0 if some move wins, else 0.0, evaluating every move.
    (Memoised on the variant and the engine's 64-bit hash, as tests/test_solver.py does.)"""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    variant = tuple(sorted(state.variant.items()))

    def value(s) -> float:
        key = (variant, s.hash())
        if key not in MEMO:
            p = s.current_player()
            vals = []
            for a in s.legal_actions():
                c = s.clone()
                c.apply(a)
                if c.is_terminal():
                    vals.append(c.returns()[p])
                else:
                    cv = value(c)
                    vals.append(cv if c.current_player() == p else 1.0 - cv)
            MEMO[key] = max(vals)
        return MEMO[key]

    return value(state)


def move_values(state) -> dict[int, float]:
    p = state.current_player()
    out = {}
    for a in state.legal_actions():
        c = state.clone()
        c.apply(a)
        if c.is_terminal():
            out[a] = c.returns()[p]
        else:
            out[a] = minimax(c) if c.current_player() == p else 1.0 - minimax(c)
    return out


def check_pv(state, r):
    """The PV is legal, ends the game, and the winner is the side the value names."""
    s = state.clone()
    for a, name in zip(r.pv_actions, r.pv, strict=True):
        assert a in s.legal_actions()
        assert s.action_to_string(a) == name
        s.apply(a)
    assert s.is_terminal(), f"PV {r.pv} stops before the end"
    winner = s.returns().index(1.0)
    mover = state.current_player()
    assert (winner == mover) == (r.value == 1.0)


SEARCHERS = {}


def searcher(symmetry="auto"):
    """One table per configuration, reused across set-ups (it is cleared per variant)."""
    if symmetry not in SEARCHERS:
        SEARCHERS[symmetry] = ProofSearch(tt_mb=32, symmetry=None if symmetry == "none" else "auto")
    return SEARCHERS[symmetry]


# (the lane symmetry is on by default; the plain keys are checked on the towers-1 boards and
# the lane-1 towers-2 boards)
GRID = [(v, "auto") for v in TOWERS1 + TOWERS2] + \
    [(v, "none") for v in TOWERS1 + TOWERS2 if v["towers"] == 1 or v["lane"] == 1]


@pytest.mark.parametrize(("variant", "symmetry"), GRID, ids=[f"{tag(v)}-{s}" for v, s in GRID])
def test_dfpn_equals_minimax_on_every_small_setup(variant, symmetry):
    s = LotusState(**variant)
    r = searcher(symmetry).solve(s)
    assert r.proven and r.status == "proven"
    assert r.value == minimax(s)
    check_pv(s, r)
    truth = move_values(s)
    assert {m.action: m.value for m in r.moves} == truth
    assert r.winning_moves == [s.action_to_string(a) for a in s.legal_actions() if truth[a] == 1.0]


def random_positions(count, seed, **variant):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = LotusState(**variant)
        for _ in range(rng.randrange(0, 14)):
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))
        if not s.is_terminal():
            out.append(s)
    return out


MIDGAME = [dict(towers=2, lane=2, shared=5, trampoline_at=5, **r) for r in RULES] + \
    [dict(towers=2, lane=1, shared=5, trampoline_at=6, **r) for r in RULES]


@pytest.mark.parametrize("variant", MIDGAME, ids=tag)
def test_dfpn_equals_minimax_from_random_positions(variant):
    ps = ProofSearch(tt_mb=16)
    seen = set()
    for s in random_positions(12, seed=sum(map(ord, tag(variant))), **variant):
        r = ps.solve(s)
        assert r.proven and r.value == minimax(s), s.to_notation()
        check_pv(s, r)
        seen.add(r.value)
        for m in r.moves:
            c = s.clone()
            c.apply(m.action)
            assert m.value == (c.returns()[s.current_player()] if c.is_terminal()
                               else minimax(c) if c.current_player() == s.current_player()
                               else 1.0 - minimax(c))
    assert seen == {0.0, 1.0}, "the positions should include wins and losses"


AB_SETUPS = [dict(towers=2, lane=2, shared=5, trampoline_at=5, **r) for r in RULES] + \
    [dict(towers=2, lane=2, shared=5, trampoline_at=at, **RULES[i]) for at, i in ((3, 0), (7, 3))]


@pytest.mark.parametrize("variant", AB_SETUPS, ids=tag)
def test_dfpn_equals_alphabeta_where_it_proves(variant):
    s = LotusState(**variant)
    ab = AlphaBeta(2, tt_bits=18).search(s, depth=200, time_limit=2.0)
    r = ProofSearch(tt_mb=16).solve(s)
    assert r.proven
    if ab.proven:
        assert ab.value == r.value
    assert r.value == minimax(s)


def test_longer_board_against_alphabeta():
    # a longer track than minimax here can afford (8 shared spaces; alpha-beta: 0.4 s)
    s = LotusState(towers=2, lane=1, shared=8, trampoline_at=5)
    ab = AlphaBeta(2, tt_bits=20).search(s, depth=200, time_limit=10.0)
    r = ProofSearch(tt_mb=64).solve(s)
    assert ab.proven and r.proven and ab.value == r.value
    check_pv(s, r)


def test_pro_opening_same_mover_twice():
    # seat 0 takes two actions in the pro opening: the child keeps the mover (no swap)
    s = LotusState(towers=2, lane=1, shared=3, trampoline_at=3, rule="pro")
    s.apply(s.legal_actions()[0])
    assert s.current_player() == 0 and s.opening == "second"
    r = ProofSearch(tt_mb=8).solve(s)
    assert r.value == minimax(s)
    check_pv(s, r)


def test_budgets_stop_cleanly_and_say_how_far():
    s = LotusState(towers=3)
    ps = ProofSearch(tt_mb=16)
    r = ps.solve(s, max_nodes=5000)
    assert not r.proven and r.value is None and r.status == "node limit"
    assert r.nodes <= 5001 and r.root_pn > 0 and r.root_dn > 0 and r.moves == [] and r.pv == []
    r = ps.solve(s, time_limit=0.05)
    assert not r.proven and r.status == "time limit" and r.time_s < 1.0
    # the same searcher still proves small games afterwards
    t = LotusState(towers=2, lane=1, shared=3, trampoline_at=3)
    assert ps.solve(t).value == minimax(t)


def test_a_tiny_table_still_proves_and_says_it_is_too_small():
    s = LotusState(towers=2, lane=2, shared=5, trampoline_at=5)
    ps = ProofSearch(tt_mb=0.002, big_work=20)      # 20 entries
    r = ps.solve(s)
    assert r.proven and r.value == minimax(s)
    assert r.tt_capacity < 100 and r.overwrites > 0 and r.overwritten_unproven > 0
    assert r.table_warning and "too small" in r.table_warning
    check_pv(s, r)
    big = ProofSearch(tt_mb=8).solve(s)
    assert big.table_warning is None and big.overwrites == 0


@pytest.mark.parametrize("options", [dict(eps=0.0), dict(eps=1.0), dict(init="uniform"),
                                     dict(init="evaluation"), dict(order="evaluation"),
                                     dict(weak=True), dict(reprobe=False), dict(twins=True)],
                         ids=str)
def test_every_search_option_gives_the_same_values(options):
    for variant in (dict(towers=2, lane=2, shared=4, trampoline_at=4, rule="pro"),
                    dict(towers=2, lane=1, shared=5, trampoline_at=3, trampoline="mandatory")):
        s = LotusState(**variant)
        r = ProofSearch(tt_mb=8, **options).solve(s)
        assert r.value == minimax(s)
        check_pv(s, r)


def test_lane_symmetry_saves_nodes_and_is_the_plain_hash_elsewhere():
    from niwa.solver.proof import SymmetricKeys

    s = LotusState(towers=2)
    plain = ProofSearch(tt_mb=64, symmetry=None).solve(s)
    sym = ProofSearch(tt_mb=64, symmetry=SymmetricKeys()).solve(s)
    assert plain.value == sym.value and sym.nodes < 0.8 * plain.nodes
    assert {m.name: m.value for m in plain.moves} == {m.name: m.value for m in sym.moves}
    # a position and its lane mirror share the key; the plain hash tells them apart
    a, b = LotusState(towers=2), LotusState(towers=2)
    a.apply("W1-a1")
    b.apply("W1-b1")
    assert a.symmetric_hash() == b.symmetric_hash() and a.hash() != b.hash()
    nim = ChanceNimState(pile=5)
    assert nim.symmetric_hash() == nim.hash()


@pytest.mark.parametrize("variant", [dict(rule="pro"), dict(rule="basic", trampoline="mandatory"),
                                     dict(players=3), dict(players=4, rule="pro", lane=2)])
def test_the_kept_lotus_hashes_equal_the_ones_computed_from_the_stacks(variant):
    # the search keys every child on the hash c_apply keeps up to date: a slip there would
    # make two positions share an entry; clones, copies and notation keep or recompute it
    rng = random.Random(11)
    for _ in range(20):
        s = LotusState(**variant)
        s.hash()
        while not s.is_terminal():
            assert (s.hash(), s.symmetric_hash()) == s._hash_from_scratch()
            back = LotusState.from_notation(s.to_notation())
            assert (back.hash(), back.symmetric_hash()) == (s.hash(), s.symmetric_hash())
            s = s.clone() if rng.random() < 0.2 else s
            s.apply(rng.choice(s.legal_actions()))


def test_twins_keep_one_child_of_a_position_and_its_mirror():
    # at the start both lanes are empty: W1-a1 and W1-b1 (and so on) lead to mirror images,
    # so with lane symmetry the root has half as many children to count in its dn
    s = LotusState(towers=2)
    one = ProofSearch(tt_mb=8, twins=True)
    r = one.solve(s, max_nodes=2, root_values=False, pv=False)
    both = ProofSearch(tt_mb=8).solve(s, max_nodes=2, root_values=False, pv=False)
    assert not r.proven and not both.proven
    assert (r.root_dn, both.root_dn) == (2, 4)     # one node below the root: every dn is 1


def test_refuses_what_it_cannot_prove():
    ps = ProofSearch(tt_mb=1)
    with pytest.raises(NiwaError, match="two-player"):
        ps.solve(LotusState(players=3, towers=1))
    with pytest.raises(NiwaError, match="chance"):
        ps.solve(ChanceNimState(pile=5))        # the chance node lies below the root
    with pytest.raises(NiwaError, match="simultaneous"):
        ps.solve(MatrixGameState())
    kuhn = KuhnState()
    kuhn.apply(kuhn.legal_actions()[0])         # the deal: now each player hides a card
    with pytest.raises(NiwaError, match="perfect information"):
        ps.solve(kuhn)
    done = LotusState(towers=1, lane=1, shared=2, trampoline_at=3)
    while not done.is_terminal():
        done.apply(done.legal_actions()[0])
    with pytest.raises(NiwaError, match="already over"):
        ps.solve(done)
    with pytest.raises(ValueError):
        ProofSearch(tt_mb=0)
    with pytest.raises(MemoryError, match="does not fit"):
        ProofSearch(tt_mb=300_000)      # 300 GB: refused up front, not killed when it fills


# ---- the table shared by several processes (SharedProofTable) -------------------------------
INF32 = 0xFFFFFFFF
NUMBERS = st.one_of(st.sampled_from([0, 1, 2, 3, 0xFFFFFFFE, INF32]), st.integers(0, INF32))


def entry(pn, dn, work, best):
    """The (nums, extra) words of an entry, as proof.pyx lays them out."""
    return pn | dn << 32, work | (best & INF32) << 32


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 2**64 - 1), st.integers(1, 2**64 - 1),
       st.tuples(NUMBERS, NUMBERS, NUMBERS, st.integers(-1, 300)),
       st.tuples(NUMBERS, NUMBERS, NUMBERS, st.integers(-1, 300)))
# key 1 against the check word 0 of a write under way whose words are nums 1, extra 0:
# 1 ^ 1 ^ 0 == 0, so the half-written slot used to read as a disproof stored for key 1
@example(1, 2, (5, 5, 5, 5), (1, 0, 0, 0))
# found by hypothesis against a check linear in the words (key ^ nums ^ extra * c): key 5's
# check word with key 1's nums read as key 1's, because 5 ^ nums 5 == 1 ^ nums 1
@example(1, 5, (1, 0, 0, 0), (5, 0, 0, 1))
def test_a_slot_mixed_from_two_writes_reads_as_a_miss_or_one_whole_entry(ka, kb, a, b):
    """What two processes writing one slot at once can leave: each of its three words from
    either write (the check word also 0, as a write starts). A probe then finds nothing,
    or an entry exactly as one write of that key stored it, never numbers written for
    another key."""
    table = SharedProofTable(1e-4)              # one bucket: every key lands in it
    assert table.nbuckets == 1
    ps = ProofSearch(shared=table)
    writes = {}
    for key, nums_extra in ((ka, a), (kb, b)):
        writes.setdefault(key, []).append(nums_extra)
    words = []
    for key, (pn, dn, work, best) in ((ka, a), (kb, b)):
        nums, extra = entry(pn, dn, work, best)
        words.append((_check_word(key, nums, extra), nums, extra))
    for check in (words[0][0], words[1][0], 0):
        for nums in (words[0][1], words[1][1]):
            for extra in (words[0][2], words[1][2]):
                table._write_raw(0, check, nums, extra)
                for key in {ka, kb}:
                    got = ps._probe_key(key)
                    assert got is None or got in writes[key], (check, nums, extra, key)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), NUMBERS, NUMBERS, NUMBERS,
                          st.integers(-1, 300), st.booleans()), min_size=1, max_size=12))
def test_the_proofs_kept_of_a_table_being_written_always_load_again(slots):
    """proven_entries on a table other processes write (a certification keeps its shared
    table's proofs as it runs): whatever its slots hold, whole entries or words of
    several, every row it gives is a proof load_proven takes, and a whole proof of enough
    work is among them."""
    table = SharedProofTable(1e-3)
    ps = ProofSearch(shared=table)
    whole = set()
    for i, (key, pn, dn, work, best, torn) in enumerate(slots):
        nums, extra = entry(pn, dn, work, best)
        check = _check_word(key, nums, extra) ^ (1 if torn else 0)
        table._write_raw(i, check, nums, extra)
        proven = (pn, dn) in ((0, INF32), (INF32, 0))
        if not torn and key and check and proven and work >= 2:
            whole.add((key, nums, extra))
    rows = ps.proven_entries(2)
    assert ProofSearch(tt_mb=1).load_proven(rows) == len(rows)
    assert whole <= {tuple(int(w) for w in row) for row in rows}


def test_a_shared_table_is_read_and_written_by_every_process_that_maps_it():
    table = SharedProofTable(1)
    one, two = ProofSearch(shared=table), ProofSearch(shared=table)
    assert one.tt_mb == two.tt_mb == 1.0 and one.shared is table
    one._store_key(12345, 0, INF32, 7, 3)
    assert two._probe_key(12345) == (0, INF32, 7, 3)
    assert ProofSearch(tt_mb=1)._probe_key(12345) is None        # a private table
    two._store_key(12345, 5, 6, 1, -1)      # the same key again: numbers replaced, work summed
    assert one._probe_key(12345) == (5, 6, 8, -1)
    one.clear()
    assert two._probe_key(12345) is None
    with pytest.raises(ValueError):
        SharedProofTable(0)


def _solve_all(table, states, seed, out):
    """A worker process: prove every state (in its own order) in the shared table."""
    order = list(range(len(states)))
    random.Random(seed).shuffle(order)
    ps = ProofSearch(shared=table)
    out.put([(i, ps.solve(states[i], root_values=False, pv=False).value) for i in order])


SHARED_SETUPS = [dict(towers=2, lane=2, shared=5, trampoline_at=5, **r) for r in RULES]


@pytest.mark.parametrize("variant", SHARED_SETUPS, ids=tag)
def test_processes_racing_on_a_tiny_shared_table_prove_the_minimax_values(variant):
    """Three processes prove the same positions at the same time in one table far too small
    for them (about 2,000 entries for tens of thousands of expansions), so they overwrite
    each other's entries all the time: every value is still the minimax value."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    states = random_positions(8, seed=len(tag(variant)), **variant)
    truth = [minimax(s) for s in states]
    table = SharedProofTable(0.05)
    out = ctx.Queue()
    procs = [ctx.Process(target=_solve_all, args=(table, states, seed, out)) for seed in range(3)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    for rows in results:
        assert len(rows) == len(states)
        for i, value in rows:
            assert value == truth[i], states[i].to_notation()
    # and what they left in the table proves the same here
    ps = ProofSearch(shared=table)
    assert [ps.solve(s, root_values=False, pv=False).value for s in states] == truth


def test_cheapest_known_win_is_the_known_winning_move_with_the_smallest_proof():
    """What winning_move tries first, in C: the same answer as asking the table move by
    move (known_value, then subtree_work, the first of equals), and -1 where no child is
    known to win (the loser's positions, or before anything is proved)."""
    root = LotusState(towers=2, lane=1, shared=3, trampoline_at=3)
    ps = ProofSearch(tt_mb=8)
    assert ps.cheapest_known_win(root, 0) == -1 and ps.cheapest_known_win(root, 1) == -1
    ps.solve(root)
    checked = 0
    for line in ([], [0], [1], [0, 4]):
        s = root.clone()
        for k in line:
            s.apply(s.legal_actions()[k % len(s.legal_actions())])
        if s.is_terminal():
            continue
        for winner in (0, 1):
            best = None
            for a in s.legal_actions():
                child = s.child(a)
                if ps.known_value(child, winner) == 1:
                    work = ps.subtree_work(child)
                    if best is None or work < best[0]:
                        best = (work, a)
            assert ps.cheapest_known_win(s, winner) == (-1 if best is None else best[1])
            checked += best is not None
    assert checked >= 2
