"""Could these solo Bonsai games have been won? An agent plays seeded solo deals; the
deck-known search (niwa.solver.solo) then asks, with the deck order the record reveals,
for the best score each deal allowed, from the start and from a late position of the same
game (the first turn with at most --late-cards cards left in the deck; by default the
game's last turn, which the search solves exactly).

    python bench/bonsai-solo/run.py                          # 20 deals: results/deals.*
    python bench/bonsai-solo/run.py --deals 5 --nodes 300000 --late-cards 4 --out /tmp/solo

Writes OUT.csv (one row per deal) and OUT.png (default OUT: results/deals beside this
file). The game loop, the record and the deck-known search (niwa.solver.solo, what
`niwa solve --deck-known` runs) come from niwa's Python API. Columns: deal_seed, goals, the agent's
score and whether it won; from the start: best score found, proven upper bound, exact,
win (yes/no/unknown), best winning score, the nested Monte Carlo incumbent, nodes, time;
the same for the late position (its best is a final score of the same game, so it compares
with the agent's final score directly).
Node budgets, not seconds: the figures are reproducible from the seeds on any machine
(only the times depend on it); one process.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

from tqdm import tqdm

from niwa.analysis.arena.game_loop import play
from niwa.analysis.arena.game_record import record_of, seats_for
from niwa.ext.game import Rng
from niwa.ext.registry import get_game
from niwa.solver.agents import make_agent
from niwa.solver.solo import from_record, solve_solo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from campaign import guarded  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "deals"
COLUMNS = ["deal_seed", "goals", "agent", "agent_score", "agent_won", "agent_time_s",
           "best", "upper", "exact", "win", "best_winning", "incumbent", "nodes", "time_s",
           "late_ply", "late_deck_left", "late_turn", "best_late", "upper_late", "exact_late",
           "win_late", "nodes_late", "time_late_s"]


def play_record(seed: int, spec: str, level: int):
    state = get_game("bonsai").new(seed=seed, players=1, solo_level=level)
    t0 = time.perf_counter()
    result = play(state, [make_agent(spec, seed=seed + 1000)], chance_rng=Rng(seed))
    seconds = time.perf_counter() - t0
    record = record_of(result, seats=seats_for([spec], [spec], "bonsai", [seed + 1000]),
                       deal_seed=seed)
    return record, seconds


def late_ply(record, cards: int) -> int | None:
    for ply, state in record.positions():
        if state.is_terminal():
            return None
        if state.phase in ("action", "remove") and state.to_json()["deck_left"] <= cards:
            return ply
    return None


def run_deal(seed, spec, level, nodes, late_cards, late_nodes, tt_bits) -> dict:
    record, agent_s = play_record(seed, spec, level)
    start, final = from_record(record, 0)
    r = solve_solo(start, time_s=None, nodes=nodes, tt_bits=tt_bits, seed=seed, final=final)
    row = {"deal_seed": seed, "goals": " ".join(start.goals_in_play()), "agent": spec,
           "agent_score": r.obtained, "agent_won": r.obtained_won,
           "agent_time_s": round(agent_s, 2), "best": r.best_score, "upper": r.upper_bound,
           "exact": r.exact, "win": r.win, "best_winning": r.best_winning_score,
           "incumbent": r.incumbent_score, "nodes": r.nodes, "time_s": round(r.time_s, 2)}
    ply = late_ply(record, late_cards)
    if ply is not None:
        late, _ = from_record(record, ply)
        q = solve_solo(late, time_s=None, nodes=late_nodes, tt_bits=tt_bits, seed=seed,
                       final=final)
        row.update({"late_ply": ply, "late_deck_left": late.to_json()["deck_left"],
                    "late_turn": late.to_json()["turns"] + 1, "best_late": q.best_score,
                    "upper_late": q.upper_bound, "exact_late": q.exact, "win_late": q.win,
                    "nodes_late": q.nodes, "time_late_s": round(q.time_s, 2)})
    return row


def plot(rows, threshold, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4.8), sharey=False)
    x = list(range(len(rows)))
    seeds = [r["deal_seed"] for r in rows]
    a.plot(x, [r["upper"] for r in rows], "v", color="grey", label="proven upper bound")
    a.plot(x, [r["best"] for r in rows], "o", color="tab:green", label="best found (deck known)")
    a.plot(x, [r["agent_score"] for r in rows], "s", color="tab:red", label=rows[0]["agent"])
    a.axhline(threshold, ls="--", color="k", lw=0.8, label=f"win threshold {threshold}")
    a.set_title("from the start of the deal")
    b.plot(x, [r.get("upper_late") for r in rows], "v", color="grey", label="proven upper bound")
    b.plot(x, [r.get("best_late") for r in rows], "o", color="tab:green",
           label="best from there (deck known)")
    b.plot(x, [r["agent_score"] for r in rows], "s", color="tab:red", label=rows[0]["agent"])
    b.axhline(threshold, ls="--", color="k", lw=0.8)
    exact = sum(bool(r.get("exact_late")) for r in rows)
    b.set_title(f"from the agent's position with few cards left ({exact}/{len(rows)} exact)")
    for ax in (a, b):
        ax.set_xticks(x, [str(s) for s in seeds], fontsize=7)
        ax.set_xlabel("deal seed")
        ax.set_ylabel("final score")
        ax.legend(fontsize=7)
    fig.suptitle("Solo Bonsai: the agent's score vs the best the deck order allowed")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--deals", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--agent", default="mcts")
    ap.add_argument("--level", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=1_500_000,
                    help="search nodes from the start (a node budget, so the figures do not "
                    "depend on the machine's load)")
    ap.add_argument("--late-cards", type=int, default=0,
                    help="the late position: the first turn with at most this many cards "
                    "left in the deck (0: the deck has run out: the game's last turn)")
    ap.add_argument("--late-nodes", type=int, default=1_000_000)
    ap.add_argument("--tt", type=int, default=22)
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    args = ap.parse_args(argv)
    if args.deals < 1 or args.nodes < 1 or args.late_nodes < 1 or args.late_cards < 0:
        ap.error("--deals, --nodes and --late-nodes must be at least 1, --late-cards 0 or more")
    rows = []
    seeds = range(args.first_seed, args.first_seed + args.deals)
    for seed in tqdm(seeds, desc="solo deals", unit="deal"):
        rows.append(run_deal(seed, args.agent, args.level, args.nodes, args.late_cards,
                             args.late_nodes, args.tt))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    from niwa.ext.bonsai import SPEC

    plot(rows, SPEC.solo_thresholds[args.level], out.with_suffix(".png"))
    n = len(rows)
    won = sum(bool(r["agent_won"]) for r in rows)
    can = sum(r["win"] == "yes" for r in rows)
    print(f"{n} deals: agent won {won}, a win was possible (found) in {can}; "
          f"mean agent {sum(r['agent_score'] for r in rows) / n:.1f}, best found "
          f"{sum(r['best'] for r in rows) / n:.1f}, upper bound "
          f"{sum(r['upper'] for r in rows) / n:.1f}; exact from the start "
          f"{sum(bool(r['exact']) for r in rows)}/{n}, from the late position "
          f"{sum(bool(r.get('exact_late')) for r in rows)}/{n}")
    print(f"wrote {out.with_suffix('.csv')} and {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main))
