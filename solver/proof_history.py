"""Where a checkpointed two-level proof stood after each of its jobs.

A checkpoint's job log (`DIR/jobs.jsonl`, niwa.solver.proof_tree) is the whole history of
its proof: replaying it job by job rebuilds the top tree as the run had it, so the proof
and disproof numbers of the root and of every first move can be read after each job,
together with the nodes and CPU seconds spent so far. Nothing is run and nothing is
written into the checkpoint.

How to read the numbers. A proof (disproof) number is df-pn's count of leaves still to
prove (refute) below a position, in the units of its initial numbers: an unexplored
position counts 1 to prove and one per legal move to refute (niwa.solver.proof). It is a
lower bound on the leaves left, not an estimate of the nodes a search will need; a number
may rise as well as fall while the search learns. A steady fall over many jobs says
which way the proof is going; no more. A position reached by two first moves (the lane
mirrors W1-a1 and W1-b1) is one node of the tree, so its two columns are equal.

>>> from niwa.ext.lotus import LotusState
>>> from niwa.solver.proof_tree import ProofTree
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     tree = ProofTree(LotusState(towers=1, lane=1, shared=2, trampoline_at=3),
...                      job_nodes=20, checkpoint=d)
...     _ = tree.run(); tree.close()
...     frame = checkpoint_history(d)
>>> frame["job"].tolist() == list(range(1, len(frame) + 1))
True
>>> float(frame["root_dn"].iloc[-1])       # the last job disproved the root
0.0
"""

from __future__ import annotations

import math
import time
from pathlib import Path

from niwa.solver.proof_tree import INF, open_checkpoint

# columns before the first moves' (each first move adds "<move> pn" and "<move> dn")
COLUMNS = ("job", "nodes", "cpu_s", "started_utc", "tree_nodes", "first_moves_decided",
           "root_pn", "root_dn")


def _number(x: int) -> float:
    """A proof or disproof number as a float: inf where the search stores its infinity."""
    return math.inf if x >= INF else float(x)


def checkpoint_history(directory, every: int = 1, transpositions: bool | None = None,
                       progress: bool = False, depth: int = 1):
    """The proof in `directory` after every `every`-th finished job (and after the last),
    as a pandas DataFrame with the columns COLUMNS then "<move> pn" and "<move> dn" for
    each first move, in the root mover's perspective (inf: proven the other way; before
    the root is first expanded, NaN). `started_utc` is when the job started (empty for
    logs written before jobs carried it). `transpositions` as for `--status`. `depth` 2
    or more: also "<line> pn" / "<line> dn" for every position the top tree held 2 to
    `depth` plies down at any time (named by the first line that reached it; NaN before
    it was in the tree, its proven numbers after a proof dropped it)."""
    import pandas as pd

    if every < 1:
        raise ValueError("every must be at least 1")
    deeper = _DeepPositions(depth)
    log = Path(directory) / "jobs.jsonl"
    total = log.read_bytes().count(b"\n") if log.exists() else 0
    rows: list[dict] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="job", desc="replaying", leave=False)

    def record(tree, row) -> None:
        if bar is not None:
            bar.update(1)
        deeper.look(tree)
        done = tree.jobs_done
        if done % every and done != total:
            return
        rows.append({**_row(tree, row), **deeper.numbers(tree)})

    try:
        tree = open_checkpoint(directory, read_only=True, transpositions=transpositions,
                               on_replay=record)
        tree.close()
    finally:
        if bar is not None:
            bar.close()
    if tree.jobs_done and (not rows or rows[-1]["job"] != tree.jobs_done):
        # a torn last line makes the log one job shorter than its line count
        rows.append({**_row(tree, None), **deeper.numbers(tree)})
    frame = pd.DataFrame(rows)
    if frame.empty:
        frame = pd.DataFrame(columns=list(COLUMNS))
    return frame


def _row(tree, row) -> dict:
    r = tree.root
    out = {"job": tree.jobs_done, "nodes": tree.nodes, "cpu_s": round(tree.cpu_s, 3),
           "started_utc": "", "tree_nodes": len(tree.by_key), "first_moves_decided": 0,
           "root_pn": _number(r.pn), "root_dn": _number(r.dn)}
    started = None if row is None else row.get("started")
    if isinstance(started, int | float):
        out["started_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    state = tree.root_state
    for a in state.legal_actions():
        name = state.action_to_string(a)
        out[f"{name} pn"] = out[f"{name} dn"] = math.nan
    for a, c in zip(r.actions or [], r.children or [], strict=True):
        name = state.action_to_string(a)
        pn, dn = r.seen(c)
        out[f"{name} pn"], out[f"{name} dn"] = _number(pn), _number(dn)
        out["first_moves_decided"] += pn == 0 or dn == 0
    return out


class _DeepPositions:
    """The positions 2..depth plies down that a replayed tree has held, and their numbers
    (the root mover's perspective) after each job."""

    def __init__(self, depth: int):
        self.depth = depth
        self.keys: dict[str, tuple] = {}    # line -> node key, in the order first met
        self.last: dict[str, tuple] = {}    # line -> its last numbers

    def look(self, tree) -> None:
        """Take note of the positions the tree holds now (each under its first line)."""
        from niwa.solver.proof_tree import line_text

        known = set(self.keys.values())
        for ply, c in tree.nodes_below(self.depth):
            if ply >= 2 and c.key not in known:
                known.add(c.key)
                self.keys[line_text(tree.root_state, c.path)] = c.key

    def numbers(self, tree) -> dict:
        out = {}
        for line, key in self.keys.items():
            n = tree.by_key.get(key)
            if n is not None:
                self.last[line] = tree.root_view(n)
            pn, dn = self.last.get(line, (None, None))
            proven = pn is not None and (pn == 0 or dn == 0)
            if n is None and not proven:
                pn = dn = None      # out of the tree, not by a proof: not known
            out[f"{line} pn"] = math.nan if pn is None else _number(pn)
            out[f"{line} dn"] = math.nan if dn is None else _number(dn)
        return out


def first_move_groups(frame) -> list[list[str]]:
    """The first moves of a history grouped by position: moves whose numbers are the
    same after every job (mirror moves, one node of the tree) form one group."""
    moves = [c[:-3] for c in frame.columns if c.endswith(" pn")]
    groups: list[list[str]] = []
    for m in moves:
        for g in groups:
            if frame[f"{m} pn"].equals(frame[f"{g[0]} pn"]) and \
                    frame[f"{m} dn"].equals(frame[f"{g[0]} dn"]):
                g.append(m)
                break
        else:
            groups.append([m])
    return groups


def plot_history(frame, path, title: str = "") -> None:
    """Two panels against the nodes spent (billions): the disproof numbers (top) and the
    proof numbers (bottom) of the root and of each first move (and deeper position,
    dashed), log scale; one decided is marked where it was decided (PNG, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    x = frame["nodes"].to_numpy(dtype=float) / 1e9
    fig, axes = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    for ax, kind, label in ((axes[0], "dn", "disproof number"), (axes[1], "pn", "proof number")):
        series = [("root", frame[f"root_{kind}"])]
        series += [(" = ".join(g), frame[f"{g[0]} {kind}"]) for g in first_move_groups(frame)]
        for name, values in series:
            y = values.to_numpy(dtype=float)
            shown = np.where(np.isfinite(y) & (y > 0), y, np.nan)
            style = {"color": "black", "linewidth": 2} if name == "root" else \
                {"linewidth": 1, "linestyle": "--" if " " in name.split(" = ")[0] else "-"}
            line, = ax.plot(x, shown, label=name, **style)
            decided = np.flatnonzero((y == 0) | np.isinf(y))
            if decided.size:
                # marked at its last open value: where the line ends
                i = decided[0]
                before = shown[:i][np.isfinite(shown[:i])]
                ax.plot([x[i]], [before[-1] if before.size else 1.0], "x",
                        color=line.get_color(), markersize=9)
        ax.set_yscale("log")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower left", ncol=3)
    axes[1].set_xlabel("df-pn nodes spent (billions)")
    fig.suptitle(title or "proof and disproof numbers after each job (for the player to move "
                 "at the root)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
