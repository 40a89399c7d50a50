"""The Dask executor on a real cluster: one `dask scheduler` and two `dask worker`
processes on 127.0.0.1 (free ports), results equal to the local run, always torn down."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

pytest.importorskip("distributed", reason="dask/distributed are not installed "
                    "(the optional extra: pip install 'niwa[dist]')")

from distributed import Client  # noqa: E402

from niwa.analysis.arena.executors import (  # noqa: E402
    DaskExecutor,
    ExecutorError,  # noqa: E402
    LocalExecutor,
)
from niwa.analysis.arena.tournament import make_config, run_tournament  # noqa: E402
from niwa.cli.main import main  # noqa: E402
from niwa.solver.agents import REGISTRY  # noqa: E402
from niwa.solver.tables import build_table

SEARCHER = "mcts:iters=50" if "mcts" in REGISTRY else "random"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dask_command() -> list[str]:
    beside = Path(sys.executable).with_name("dask")
    exe = str(beside) if beside.exists() else shutil.which("dask")
    assert exe, "the `dask` command is missing although distributed imports"
    return [exe]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    logs = tmp_path_factory.mktemp("dask-logs")
    port = free_port()
    address = f"127.0.0.1:{port}"
    procs = []

    def start(args, name):
        log = open(logs / f"{name}.log", "w")
        # own session: teardown can stop the nanny and its worker process together
        procs.append(subprocess.Popen([*dask_command(), *args], stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True))

    try:
        start(["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
              "scheduler")
        for i in range(2):
            start(["worker", f"tcp://{address}", "--host", "127.0.0.1", "--nthreads", "1",
                   "--no-dashboard", "--name", f"w{i}"], f"worker{i}")
        deadline = time.monotonic() + 90
        while True:
            try:
                with Client(f"tcp://{address}", timeout="5s") as client:
                    client.wait_for_workers(2, timeout=60)
                break
            except (OSError, TimeoutError):
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    text = "\n".join(f.read_text()[-2000:] for f in logs.iterdir())
                    pytest.fail(f"the Dask cluster did not start:\n{text}")
                time.sleep(0.5)
        yield address
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=15)


def games_without_durations(out):
    return pd.read_csv(os.path.join(out, "games.csv"), dtype=str,
                       keep_default_na=False).drop(columns="duration_s")


def read_tables(out):
    return {name: open(os.path.join(out, name)).read()
            for name in ("standings.csv", "pairs.csv", "seats.csv")}


def test_dask_run_equals_the_local_run(cluster, tmp_path):
    config, _ = make_config("lotus", [SEARCHER, "random", "random"], games=6, seed=17)
    local = str(tmp_path / "local")
    run_tournament(config, local, LocalExecutor(1), progress=False)

    remote = str(tmp_path / "dask")
    result = CliRunner().invoke(main, [
        "tournament", "lotus", "--agents", SEARCHER, "random", "random", "--games", "6",
        "--seed", "17", "--executor", f"dask://{cluster}", "--out", remote])
    assert result.exit_code == 0, result.output
    assert games_without_durations(remote).equals(games_without_durations(local))
    assert read_tables(remote) == read_tables(local)


def test_a_tournament_from_python_runs_on_the_cluster(cluster, tmp_path):
    """niwa.tournament(executor="dask://...") gives the games of the local run."""
    import niwa

    local = niwa.tournament("lotus", ["random", "greedy"], games=4, seed=5, workers=1,
                            out_dir=str(tmp_path / "local"))
    remote = niwa.tournament("lotus", ["random", "greedy"], games=4, seed=5,
                             executor=f"dask://{cluster}", out_dir=str(tmp_path / "dask"))
    assert games_without_durations(remote.out_dir).equals(games_without_durations(local.out_dir))


def test_dask_executor_reports_the_cluster_and_an_unreachable_one(cluster):
    ex = DaskExecutor(f"dask://{cluster}")
    try:
        assert ex.workers == 2 and cluster in ex.describe()
    finally:
        ex.close()
    with pytest.raises(ExecutorError, match="cannot reach the Dask scheduler"):
        DaskExecutor(f"dask://127.0.0.1:{free_port()}", timeout=1)


def test_dask_builds_the_same_endgame_table_as_one_process(cluster, tmp_path):
    """The classes of each level solved on the cluster's workers: the same bytes."""
    variant = dict(lane=2, shared=4, trampoline_at=4, towers=3)
    local = build_table(variant, 2, tmp_path / "local", progress=False)
    ex = DaskExecutor(f"dask://{cluster}")
    try:
        remote = build_table(variant, 2, tmp_path / "dask", executor=ex, progress=False)
    finally:
        ex.close()
    assert remote["payload_sha256"] == local["payload_sha256"] and "dask" in remote["build"]["executor"]


def test_openings_on_the_cluster_give_the_same_files_as_one_and_two_workers(cluster, tmp_path):
    """20 distinct games (random openings, seats swapped per opening) are the same games
    whoever plays them: games.csv equal but for duration_s, games.jsonl equal but for
    each record's date and each move's time and clock."""
    import json

    def run(out, *how):
        result = CliRunner().invoke(main, [
            "tournament", "lotus", "--agents", "greedy", "alphabeta:depth=2", "--openings",
            "random:plies=6", "--games", "20", "--seed", "5", "--quiet", "--out", str(out),
            *how])
        assert result.exit_code == 0, result.output
        with open(out / "games.jsonl", encoding="utf-8") as f:
            records = [json.loads(line) for line in f]
        for r in records:
            del r["date"]
            r["moves"] = [{k: v for k, v in m.items() if k not in ("time", "clock")}
                          for m in r["moves"]]
        return games_without_durations(out), records

    runs = {"w1": run(tmp_path / "w1", "--workers", "1"),
            "w2": run(tmp_path / "w2", "--workers", "2"),
            "dask": run(tmp_path / "dask", "--executor", f"dask://{cluster}")}
    rows, records = runs["w1"]
    assert len({tuple(json.dumps(m["move"]) for m in r["moves"]) for r in records}) == 20
    for name in ("w2", "dask"):
        pd.testing.assert_frame_equal(runs[name][0], rows)
        assert runs[name][1] == records, name


def test_a_two_level_proof_on_the_cluster_keeps_one_job_per_worker(cluster):
    """Proof jobs go one per worker (no second batch in flight, which the tree would choose
    from a stale state): the value is the plain df-pn value."""
    from niwa.ext.lotus import LotusState
    from niwa.solver.proof import ProofSearch
    from niwa.solver.proof_tree import ProofTree

    class Counting(ProofTree):
        most = 0

        def _job_for(self, node):
            job = super()._job_for(node)
            Counting.most = max(Counting.most, sum(n.busy for n in self.by_key.values()))
            return job

    state = LotusState(towers=2, lane=2, shared=3, trampoline_at=4, rule="pro")
    ex = DaskExecutor(f"dask://{cluster}")
    try:
        r = Counting(state, job_nodes=40, tt_mb=8).run(ex)
    finally:
        ex.close()
    assert r.value == ProofSearch(tt_mb=8).solve(state, pv=False).value
    assert r.jobs > 3 and 1 <= Counting.most <= ex.workers == 2


def test_a_proof_on_the_cluster_keeps_its_workers_proofs_between_sessions(cluster, tmp_path):
    """The workers' tables are theirs alone: a stop collects their largest proofs into
    DIR/proven.npy (merged: one row a position, proofs only), and a resume sends them to
    every worker, which loads them into its table; the value is the plain df-pn value."""
    from niwa.ext.lotus import LotusState
    from niwa.solver.proof import ProofSearch
    from niwa.solver.proof_tree import ProofTree, open_checkpoint, read_proven

    state = LotusState(towers=2, rule="pro", trampoline="mandatory")
    ex = DaskExecutor(f"dask://{cluster}")
    try:
        first = ProofTree(state, job_nodes=1000, tt_mb=16, checkpoint=tmp_path,
                          keep_min_work=1)
        r = first.run(ex, max_jobs=4)
        first.close()
        assert not r.proven and first.proven_saved > 0
        rows = read_proven(tmp_path, ProofSearch(tt_mb=1), state)
        assert len(rows) == first.proven_saved == len(set(rows[:, 0].tolist()))
        assert ProofSearch(tt_mb=16).load_proven(rows) == len(rows)     # proofs only
        again = open_checkpoint(tmp_path, keep_min_work=1)
        r = again.run(ex)
        again.close()
    finally:
        ex.close()
    assert again.proven_loaded == first.proven_saved
    assert r.value == ProofSearch(tt_mb=16).solve(state, pv=False).value


def test_a_certificate_in_parts_checks_on_the_cluster_as_in_one_process(cluster, tmp_path):
    """`niwa proof check --executor dask://...`: the parts are checked on the cluster's
    workers (which see the same files here) with the report of one process."""
    import json

    from niwa.ext.lotus import LotusState
    from niwa.solver.certificate import extract_certificate
    from niwa.solver.proof import ProofSearch

    state, search = LotusState(towers=2, lane=1, shared=4, trampoline_at=3, rule="pro"), \
        ProofSearch(tt_mb=16)
    folder = tmp_path / "parts"
    parts = []
    for a in state.legal_actions()[:2]:
        first = state.child(a)
        for b in first.legal_actions()[:2]:
            s = first.child(b)
            if not s.is_terminal() and s.current_player() == 1:
                parts.append(extract_certificate(search, s))
                parts[-1].save(folder / f"part{len(parts)}.npz")
    top = extract_certificate(search, state, parts=parts)
    top.save(tmp_path / "top.npz")
    args = ["proof", "check", str(tmp_path / "top.npz"), "--parts", str(folder), "--json"]
    alone = CliRunner().invoke(main, args)
    remote = CliRunner().invoke(main, [*args, "--executor", f"dask://{cluster}"])
    assert alone.exit_code == 0 and remote.exit_code == 0, remote.output
    alone, remote = json.loads(alone.output), json.loads(remote.output)
    assert "dask" in remote.pop("parts_checked_by") and alone.pop("parts_checked_by")
    assert alone.pop("time_s") > 0 and remote.pop("time_s") > 0
    assert remote == alone and alone["parts"] >= 1
