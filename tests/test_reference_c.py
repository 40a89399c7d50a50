"""The plain-C df-pn reference (bench/perfect-play/reference-c/dfpn.c) against niwa: the
same perft counts (four variants, other boards, mid-game positions) and the same proven
values and first-move values on small cases. Compiled here with the system C compiler;
skipped only when there is none."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from niwa.ext.lotus import LotusState, from_notation
from niwa.solver.proof import ProofSearch

SOURCE = Path(__file__).resolve().parents[1] / "bench" / "perfect-play" / "reference-c" / "dfpn.c"
RULES = [dict(rule=r, trampoline=t) for r in ("basic", "pro") for t in ("optional", "mandatory")]
FLAGS = {"towers": "--towers", "rule": "--rule", "trampoline": "--trampoline", "lane": "--lane",
         "shared": "--shared", "trampoline_at": "--trampoline-at"}


def compiled(tmp_path_factory, source: Path, name: str, *flags: str) -> Path:
    """`source` compiled with the system C compiler (-O3); the test skipped only without one."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("reference-c") / name
    subprocess.run([cc, "-O3", *flags, "-o", str(out), str(source)], check=True)
    return out


@pytest.fixture(scope="module")
def dfpn(tmp_path_factory):
    return compiled(tmp_path_factory, SOURCE, "dfpn")


def run(binary, *args):
    out = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def flags(variant):
    return [x for k, v in variant.items() for x in (FLAGS[k], v)]


def c_perft(binary, depth, variant=None, position=None):
    args = ["perft", depth] + (flags(variant) if variant else []) + \
        (["--position", position] if position else [])
    return run(binary, *args)["count"]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r['rule']}-{r['trampoline']}")
def test_perft_of_initial_positions_equals_niwas(dfpn, rules):
    for towers in (4, 3, 1):
        v = dict(rules, towers=towers)
        s = LotusState(**v)
        assert [c_perft(dfpn, d, v) for d in range(1, 6)] == [s.perft(d) for d in range(1, 6)]


def test_perft_on_other_boards_reaches_the_end_of_the_game(dfpn):
    # short boards: games end inside the depth, through blocked players and the goal
    for v in (dict(lane=1, shared=3, trampoline_at=2, towers=2),
              dict(lane=2, shared=4, trampoline_at=5, towers=1, rule="pro", trampoline="mandatory"),
              dict(lane=1, shared=2, trampoline_at=3, towers=2, rule="pro")):
        s = LotusState(**v)
        depth = 9 if v["towers"] == 2 else 12
        assert c_perft(dfpn, depth, v) == s.perft(depth), v


def test_perft_of_mid_game_positions_equals_niwas(dfpn):
    texts = [
        "lotus players=2 rule=basic trampoline=optional; track a3:BW b2:BBBB b3:WB 6:B 7:WW; "
        "start WW WW W W B B B; goal W:0 B:0; turn W",
        "lotus players=2 rule=pro trampoline=mandatory; track a2:BWWB b2:BB b3:BWB 4:BW 5:B 7:WB "
        "9:W 14:W; start W W W B; goal W:0 B:0; turn B",
        # blocked under the basic rule: the other player's stones and pass
        "lotus players=2 rule=basic trampoline=optional; track a1:WB 4:WWWB 9:WB 12:WWB; "
        "start BBBB BB; goal W:3 B:0; turn W",
    ]
    rng = random.Random(5)
    for variant in RULES:
        for _ in range(3):
            s = LotusState(**variant)
            for _ in range(rng.randrange(4, 40)):
                if s.is_terminal():
                    break
                s.apply(rng.choice(s.legal_actions()))
            if not s.is_terminal():
                texts.append(s.to_notation())
    for text in texts:
        s = from_notation(text)
        assert [c_perft(dfpn, d, position=text) for d in (1, 2, 3)] == [s.perft(d) for d in (1, 2, 3)], text


def niwa_values(state):
    r = ProofSearch(tt_mb=16, tables=None).solve(state)
    return r.value, {m.name: m.value for m in r.moves}


def c_values(binary, variant=None, position=None):
    args = ["solve", "--tt-mb", 16] + (flags(variant) if variant else []) + \
        (["--position", position] if position else [])
    r = run(binary, *args)
    mover_value = r["value_first_player"] if r["mover"] == 0 else 1 - r["value_first_player"]
    return mover_value, r["first_move_values"]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r['rule']}-{r['trampoline']}")
def test_proven_values_and_first_moves_equal_niwas(dfpn, rules):
    cases = [dict(rules, towers=2), dict(rules, towers=1),
             dict(rules, towers=2, lane=1, shared=4, trampoline_at=3),
             dict(rules, towers=2, lane=2, shared=3, trampoline_at=5),
             dict(rules, towers=1, lane=1, shared=2, trampoline_at=2)]
    for v in cases:
        assert c_values(dfpn, v) == niwa_values(LotusState(**v)), v


def test_values_of_random_mid_game_positions_equal_niwas(dfpn):
    rng = random.Random(11)
    seen = {0: 0, 1: 0}
    for i in range(32):
        v = dict(RULES[i % 4], towers=2)     # towers 3..1 mid-game proofs take millions of nodes
        s = LotusState(**v)
        for _ in range(rng.randrange(6, 30)):
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))
        if s.is_terminal():
            continue
        value, moves = c_values(dfpn, position=s.to_notation())
        assert (value, moves) == niwa_values(s), s.to_notation()
        seen[value] += 1
    assert seen[0] > 0 and seen[1] > 0     # both outcomes met: the check can fail either way


def test_the_node_limit_stops_the_proof(dfpn):
    r = run(dfpn, "solve", "--towers", 3, "--tt-mb", 16, "--max-nodes", 1000)
    assert r["status"] == "node limit" and r["value_first_player"] is None and r["nodes"] == 1000


@pytest.mark.parametrize("args,message", [
    (["solve", "--rule", "bonsai"], "--rule must be"),
    (["perft", "x"], "non-negative integer"),
    (["solve", "--trampoline-at", "2"], "must be a shared space"),
    (["solve", "--position", "lotus players=3; track -"], "2 players"),
    (["fly"], "mode must be"),
])
def test_bad_input_is_one_error_line_and_status_2(dfpn, args, message):
    out = subprocess.run([str(dfpn), *args], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("Error: ") and message in out.stderr and out.stderr.count("\n") == 1


# Towers 2..1 node counts, pinned: the reference runs niwa's df-pn (same moves in the same
# order, no entry replaced in these tables), and these were niwa's counts too when it was
# written (docs/lotus-perfect-play.csv). A change here means the reference's search changed.
PINNED_NODES = {("basic", "optional"): 33334, ("basic", "mandatory"): 13031,
                ("pro", "optional"): 28680, ("pro", "mandatory"): 18650}


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r['rule']}-{r['trampoline']}")
def test_the_reference_search_makes_its_pinned_number_of_expansions(dfpn, rules):
    r = run(dfpn, "solve", "--towers", 2, "--tt-mb", 64, "--rule", rules["rule"],
            "--trampoline", rules["trampoline"], "--no-root-values")
    assert r["overwrites"] == 0 and r["value_first_player"] == 0
    assert r["nodes"] == PINNED_NODES[rules["rule"], rules["trampoline"]]


# ---- the playout yardstick (bench/speed/reference-c/playout.c) -----------------------------
PLAYOUT_SOURCE = SOURCE.parents[3] / "bench" / "speed" / "reference-c" / "playout.c"


@pytest.fixture(scope="module")
def playout_c(tmp_path_factory):
    return compiled(tmp_path_factory, PLAYOUT_SOURCE, "playout", "-std=c99")


@pytest.mark.parametrize("trampoline", ["optional", "mandatory"])
def test_the_playout_yardstick_plays_niwas_games(playout_c, trampoline):
    """Its speed is a fair yardstick only if it does niwa's work: the same legal moves
    (perft to depth 8, where the trampoline settings first differ) and, from one seed, the
    same random games (its moves in niwa's order, niwa's RNG)."""
    from niwa.ext.lotus import playouts

    s = LotusState(trampoline=trampoline)
    assert run(playout_c, "perft", 8, "--trampoline", trampoline)["nodes"] == s.perft(8)
    c = run(playout_c, "run", 2000, "--seed", 7, "--trampoline", trampoline)
    games, actions, wins = playouts(s, 2000, seed=7)
    assert (c["games"], c["actions"], c["wins"]) == (games, actions, wins)
