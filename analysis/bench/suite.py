"""The benchmark suite behind `niwa bench --suite`: niwa against its peers, in one run.

Every figure is a ratio of two measurements taken in the same run on the same machine,
so a slow or busy machine shifts both sides alike:

- engine vs oracle: random playouts/s of the Cython engine and of the plain-Python oracle;
- niwa MCTS vs OpenSpiel: simulations/s of niwa's MCTS and of OpenSpiel's Python MCTSBot
  (through niwa.analysis.interop.openspiel) from the same position (goal: at least 30x);
- strength: niwa MCTS against OpenSpiel's MCTSBot at equal time per move, win rate with a
  95% Wilson interval over `strength_games` games per game, seats swapped on each deal
  (goal: at least 75%);
- alpha-beta nodes/s vs perft nodes/s, and MCTS simulations/s vs random playouts/s;
- tournament throughput with 1 and 2 worker processes (the speedup);
- memory per MCTS node, from the growth of the process's resident memory while a tree
  grows to one million nodes.

`run_suite()` returns a DataFrame (one row per figure) and writes it as CSV;
`format_table()` prints it. Missing pieces (OpenSpiel not installed, no alpha-beta agent
registered yet) become rows that say what is missing instead of numbers.
"""

from __future__ import annotations

import math
import time

import pandas as pd

from niwa.analysis.bench.playouts import bench_engine_vs_oracle
from niwa.analysis.bench.search import decision_state
from niwa.ext.registry import games as niwa_games
from niwa.solver.agents import REGISTRY, make_agent
from niwa.solver.solve import has_hidden_information

COLUMNS = ["section", "game", "measure", "niwa", "reference", "ratio", "unit", "goal", "met",
           "note"]
GOAL_MCTS_SPEED = 30.0      # niwa MCTS simulations/s over OpenSpiel MCTSBot's
GOAL_WIN_RATE = 0.75        # niwa MCTS against MCTSBot at equal time per move
GOAL_ALPHABETA_SPEED = 0.25  # alpha-beta nodes/s over the positions/s perft plays


def niwa_mcts_spec(seconds: float) -> str:
    """niwa's MCTS agent searching `seconds` per move."""
    return f"mcts:time={seconds}"


def _row(section, game, measure, niwa=math.nan, reference=math.nan, ratio=None, unit="",
         goal="", met="", note=""):
    if ratio is None:
        ratio = niwa / reference if reference and not math.isnan(reference) else math.nan
    return {"section": section, "game": game, "measure": measure, "niwa": niwa,
            "reference": reference, "ratio": ratio, "unit": unit, "goal": goal, "met": met,
            "note": note}


def _openspiel():
    try:
        from niwa.analysis.interop import openspiel
    except ImportError as e:
        return None, f"OpenSpiel is not installed ({e}); pip install 'niwa[openspiel]'"
    return openspiel, ""


# ---- the measurements ------------------------------------------------------------------------
def bench_playouts(name: str, seconds: float) -> tuple[list[dict], dict]:
    r = bench_engine_vs_oracle(name, seconds=seconds)
    return [_row("engine vs oracle", name, "random playouts/s", r["engine_games_s"],
                 r["oracle_games_s"], unit="games/s",
                 note=f"engine {r['engine_actions_s']:,.0f} actions/s")], r


def niwa_mcts_rate(state, seconds: float) -> tuple[float, int]:
    """Simulations/s of niwa's MCTS from `state` (a fresh tree), and the nodes it built."""
    from niwa.solver.mcts import MCTS

    tree = MCTS(state.num_players, seed=1, ismcts=has_hidden_information(state))
    r = tree.search(state, time_limit=seconds)
    return r.iterations / r.time_s, r.nodes


def openspiel_mcts_rate(state, seconds: float) -> float:
    """Simulations/s of OpenSpiel's Python MCTSBot (random rollouts) from `state`."""
    import numpy as np
    from open_spiel.python.algorithms import mcts

    ospiel, _ = _openspiel()
    game = ospiel.game_for(state)
    rng = np.random.RandomState(1)
    bot = ospiel.timed_mcts_bot(game, 2.0, seconds, mcts.RandomRolloutEvaluator(1, rng), rng)
    spiel_state = game.state_from_niwa(state, first=max(state.current_player(), 0))
    t0 = time.perf_counter()
    bot.step(spiel_state)
    return bot.simulations / (time.perf_counter() - t0)


def bench_mcts_speed(name: str, seconds: float, playouts_s: float) -> list[dict]:
    state = decision_state(name)
    rate, _ = niwa_mcts_rate(state, seconds)
    rows = [_row("search speed", name, "MCTS simulations/s vs random playouts/s", rate,
                 playouts_s, unit="per s",
                 note="fresh tree from the first decision; playouts from the start")]
    ospiel, missing = _openspiel()
    if ospiel is None:
        rows.append(_row("search speed", name, "niwa MCTS vs OpenSpiel MCTSBot sims/s", rate,
                         unit="sims/s", goal=f">= {GOAL_MCTS_SPEED:g}x", met="n/a", note=missing))
        return rows
    ref = openspiel_mcts_rate(state, 2 * seconds)
    ratio = rate / ref
    rows.append(_row("search speed", name, "niwa MCTS vs OpenSpiel MCTSBot sims/s", rate, ref,
                     ratio, "sims/s", f">= {GOAL_MCTS_SPEED:g}x",
                     "yes" if ratio >= GOAL_MCTS_SPEED else "no",
                     "MCTSBot (Python, random rollouts) through niwa.analysis.interop.openspiel"))
    return rows


def _perft_worker(state, conn):
    depth, made = 0, 0
    while depth < 64:
        depth += 1
        t0 = time.perf_counter()
        n = state.perft(depth)
        conn.send((depth, n, time.perf_counter() - t0, made))
        made += n       # perft(depth + 1) plays every position perft(depth) counted


def perft_rate(state, seconds: float) -> tuple[int, int, float, int]:
    """(depth, leaves, seconds, positions played) of the deepest perft finished within
    `seconds` of work. The last ply is counted in bulk, not played, so the positions played
    are the leaves of every shallower depth.

    Perft runs depth after depth in a child process that is stopped when the time is up:
    the cost of the next depth cannot be predicted (Haru's simultaneous nodes expand in
    Python, so one more ply can cost 1000 times more), and a running perft cannot be
    interrupted from within.
    """
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_perft_worker, args=(state, child), daemon=True)
    proc.start()
    child.close()
    best = (0, 1, 0.0, 0)
    deadline = time.perf_counter() + seconds
    try:
        while time.perf_counter() < deadline and proc.is_alive():
            if parent.poll(max(deadline - time.perf_counter(), 0.0)):
                try:
                    best = parent.recv()
                except EOFError:
                    break
    finally:
        proc.terminate()
        proc.join()
    return best


def bench_perft_and_alphabeta(name: str, seconds: float) -> list[dict]:
    """Perft leaves/s at the deepest depth that fits `seconds`, and alpha-beta nodes/s."""
    state = decision_state(name)
    depth, leaves, spent, made = perft_rate(state, seconds)
    perft_speed = leaves / spent if spent > 0 else math.nan
    played_speed = made / spent if spent > 0 else math.nan
    note = f"perft({depth}) = {leaves:,} leaves, counted in bulk at the last ply"
    if "alphabeta" not in REGISTRY:
        return [_row("search speed", name, "alpha-beta nodes/s vs perft leaves/s",
                     reference=perft_speed, unit="nodes/s", met="n/a",
                     note="no `alphabeta` agent registered yet; " + note)]
    spec = f"alphabeta:time={seconds}" if "time" in REGISTRY["alphabeta"].params else "alphabeta"
    agent = make_agent(spec, seed=1)
    t0 = time.perf_counter()
    agent.step(state.clone(), max(state.current_player(), 0))
    dt = time.perf_counter() - t0
    info = agent.analysis()
    nodes = info.nodes if info is not None else None
    if not nodes:
        return [_row("search speed", name, "alpha-beta nodes/s vs perft leaves/s",
                     reference=perft_speed, unit="nodes/s", met="n/a",
                     note="alphabeta agent reports no node count in analysis(); " + note)]
    where = f"one {spec} move from the first decision, depth {info.depth}"
    ratio = nodes / dt / played_speed if played_speed else math.nan
    return [_row("search speed", name, "alpha-beta nodes/s vs perft leaves/s", nodes / dt,
                 perft_speed, unit="nodes/s", note=f"{where}; {note}"),
            _row("search speed", name, "alpha-beta nodes/s vs perft positions played/s",
                 nodes / dt, played_speed, unit="nodes/s", goal=f">= {GOAL_ALPHABETA_SPEED:g}x",
                 met="n/a" if math.isnan(ratio) else "yes" if ratio >= GOAL_ALPHABETA_SPEED else "no",
                 note=f"{where}; perft({depth}) played {made:,} positions (every ply above the "
                      "last), the work each alpha-beta node also does")]


def play_match(name: str, specs: list[str], games: int, workers: int, seed: int = 1,
               variant: dict | None = None) -> tuple[list[dict], float]:
    """A two-agent match through the tournament machinery: rows and seconds taken."""
    from niwa.analysis.arena.executors import LocalExecutor
    from niwa.analysis.arena.schedule import build_schedule
    from niwa.analysis.arena.tournament import make_config

    # A generous margin over the agents' own time budgets: on a busy machine a move can
    # overrun by far more than the tournament's default 0.5 s, and a forfeit would then
    # measure the machine's load, not the agents.
    config, _ = make_config(name, specs, games=games, seed=seed, variant=variant,
                            time_margin=10.0)
    tasks = build_schedule(config)
    t0 = time.perf_counter()
    rows = list(LocalExecutor(workers).run(tasks))
    return rows, time.perf_counter() - t0


def bench_strength(name: str, games: int, move_time: float, workers: int) -> list[dict]:
    from niwa.analysis.stats import wilson_interval

    ospiel, missing = _openspiel()
    niwa_spec = niwa_mcts_spec(move_time)
    measure = f"niwa MCTS vs OpenSpiel MCTSBot at {move_time * 1000:g} ms/move: win rate"
    if ospiel is None:
        return [_row("strength", name, measure, unit="win rate", met="n/a", note=missing)]
    os_spec = f"openspiel-mcts:time={move_time}"
    rows, took = play_match(name, [niwa_spec, os_spec], games, workers)
    score = 0.0
    errors = []
    for r in rows:
        seat = 0 if r["agent_0"] == niwa_spec else 1
        score += float(r[f"result_{seat}"])
        if r["error"]:
            errors.append(r["error"])
    n = len(rows)
    rate = score / n
    lo, hi = wilson_interval(round(score), n)
    extra = f"{n} games, 95% CI {lo:.3f}-{hi:.3f}, {took:.0f} s"
    if errors:
        extra += f", {len(errors)} forfeits (first: {errors[0]})"
    return [_row("strength", name, measure, rate, n, rate, "win rate",
                 f">= {GOAL_WIN_RATE:g}", "yes" if lo >= GOAL_WIN_RATE else
                 ("likely" if rate >= GOAL_WIN_RATE else "no"),
                 extra)]


def bench_throughput(name: str, games: int, move_time: float) -> list[dict]:
    spec = niwa_mcts_spec(move_time)
    _, one = play_match(name, [spec, spec], games, 1, seed=7)
    _, two = play_match(name, [spec, spec], games, 2, seed=7)
    return [_row("tournament", name, "throughput, 2 workers vs 1", games / two, games / one,
                 unit="games/s", note=f"{games} games of {spec} self-play")]


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (worker pools): the load-free
    measure of the suite's cost on a shared machine."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        import os

        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def bench_memory(name: str = "lotus", nodes: int = 1_000_000) -> list[dict]:
    from niwa.solver.mcts import MCTS

    state = decision_state(name)
    before = _rss_bytes()
    tree = MCTS(state.num_players, seed=1, max_nodes=nodes, solver=False)
    t0 = time.perf_counter()
    while tree.node_count < nodes and time.perf_counter() - t0 < 120:
        tree.search(state, iterations=50_000)
    count = max(tree.node_count, 1)
    # The pools' own accounting: exact, unlike resident-memory growth, which the allocator
    # can hide by reusing freed pages (it read 0 on small trees).
    per_node = tree.allocated_bytes / count
    grown = _rss_bytes() - before
    return [_row("memory", name, "bytes per MCTS node", per_node, unit="bytes",
                 ratio=math.nan, note=f"node and arm pools over {tree.node_count:,} nodes "
                 f"({tree.node_bytes} bytes a node, pools grow by doubling); resident memory "
                 f"grew {grown / count:.0f} bytes a node")]


# ---- the suite ---------------------------------------------------------------------------------
def run_suite(out_csv: str | None = "bench.csv", seconds_budget: float = 540.0,
              games: list[str] | None = None, strength_games: int = 200,
              move_time: float = 0.005, workers: int = 2, memory_nodes: int = 1_000_000,
              throughput_games: int | None = None, speed_seconds: float | None = None,
              progress=None) -> pd.DataFrame:
    """Run every benchmark, write `out_csv` (unless None) and return the table.

    `seconds_budget` scales the timed measurements (each speed figure gets 0.4% of it,
    or `speed_seconds`);
    the strength matches play `strength_games` games per game at `move_time` s per move
    with `workers` processes, and take most of the time (about 1 s of CPU per game at
    the default 5 ms per move).
    `progress(text)` is called before each step (e.g. click.echo).
    """
    say = progress or (lambda _text: None)
    names = games or niwa_games()
    slot = speed_seconds or max(seconds_budget * 0.004, 0.5)
    rows: list[dict] = []
    t_start, cpu_start = time.perf_counter(), _cpu_seconds()
    for name in names:
        say(f"{name}: engine vs oracle playouts")
        got, r = bench_playouts(name, slot)
        rows += got
        say(f"{name}: MCTS speed (niwa, OpenSpiel)")
        rows += bench_mcts_speed(name, slot, r["engine_games_s"])
        say(f"{name}: perft and alpha-beta")
        rows += bench_perft_and_alphabeta(name, 2 * slot)
    say("tournament throughput (1 and 2 workers)")
    rows += bench_throughput(names[0], throughput_games or max(8, int(seconds_budget / 20)),
                             move_time / 2)
    say("memory per MCTS node")
    rows += bench_memory(names[0], memory_nodes)
    for name in names:
        say(f"{name}: strength, {strength_games} games at {move_time:g} s/move")
        rows += bench_strength(name, strength_games, move_time, workers)
    df = pd.DataFrame(rows, columns=COLUMNS)
    df.attrs["seconds"] = time.perf_counter() - t_start
    df.attrs["cpu_seconds"] = _cpu_seconds() - cpu_start
    if out_csv:
        df.to_csv(out_csv, index=False, float_format="%.6g")
    return df


def _fmt(x, unit="") -> str:
    if isinstance(x, str):
        return x
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if unit == "win rate":
        return f"{x:.3f}"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def format_table(df: pd.DataFrame) -> str:
    """The suite's table as aligned text (one line per figure, notes below)."""
    head = ["game", "measure", "niwa", "reference", "ratio", "goal", "met"]
    lines = []
    for _, r in df.iterrows():
        ratio = r["ratio"]
        ratio_text = "-" if ratio is None or (isinstance(ratio, float) and math.isnan(ratio)) \
            else (f"{ratio:.3f}" if r["unit"] == "win rate"
                  else f"{ratio:,.1f}x" if ratio >= 1 else f"{ratio:.2g}x")
        ref = r["reference"]
        lines.append([r["game"], r["measure"], _fmt(r["niwa"], r["unit"]),
                      f"{ref:.0f} games" if r["unit"] == "win rate" and not
                      (isinstance(ref, float) and math.isnan(ref)) else _fmt(ref),
                      ratio_text, r["goal"] or "", r["met"] or ""])
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines, strict=False)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    for line in lines:
        out.append("  ".join(str(x).ljust(w) if i < 2 else str(x).rjust(w)
                             for i, (x, w) in enumerate(zip(line, widths, strict=True))))
    notes = [f"- {r['game']} {r['measure']}: {r['note']}" for _, r in df.iterrows() if r["note"]]
    if notes:
        out += ["", "notes:"] + notes
    if "seconds" in df.attrs:
        out.append(f"\nsuite ran in {df.attrs['seconds']:.0f} s"
                   + (f" ({df.attrs['cpu_seconds']:.0f} s of CPU)" if "cpu_seconds" in df.attrs else ""))
    return "\n".join(out)
