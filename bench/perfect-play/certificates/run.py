"""Make and check the proof certificates of the proven Lotus results (towers 3..1 in the
four rule variants; the full game on request) and record their figures.

    python bench/perfect-play/certificates/run.py                 # towers 3..1, 4 variants
    python bench/perfect-play/certificates/run.py --only basic-mandatory --towers 4

Each certificate: a df-pn proof of the start (niwa.solver.proof), its solution tree read
off the proof (niwa.solver.certificate.extract_certificate), written here, then loaded
and checked with the reference rules (check_certificate). One row per certificate goes to
results.csv beside this file: nodes, moves, bytes, proof / write / check seconds.
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VARIANTS = {f"{rule}-{tramp}": dict(rule=rule, trampoline=tramp)
            for rule in ("basic", "pro") for tramp in ("optional", "mandatory")}
FIELDS = ["name", "towers", "rule", "trampoline", "winner", "proof_nodes", "proof_s",
          "cert_nodes", "cert_edges", "game_over_leaves", "bytes", "write_s", "check_s",
          "tt_mb", "sha256"]


def make_one(name: str, towers: int, tt_mb: float) -> dict:
    from niwa.ext.lotus import LotusState
    from niwa.solver.certificate import check_certificate, extract_certificate, load_certificate
    from niwa.solver.proof import ProofSearch

    variant = dict(VARIANTS[name], towers=towers)
    state = LotusState(**variant)
    search = ProofSearch(tt_mb=tt_mb)
    proof = search.solve(state, root_values=False, pv=False)
    assert proof.proven, proof.summary()
    t0 = time.perf_counter()
    cert = extract_certificate(search, state)
    cert.info.update(proof_nodes=int(proof.nodes), proof_s=round(proof.time_s, 2),
                     tt_mb=float(tt_mb))
    path = cert.save(HERE / f"lotus-towers{towers}-{name}.npz")
    write_s = time.perf_counter() - t0
    del search
    report = check_certificate(load_certificate(path))
    return {"name": path.name, "towers": towers, **VARIANTS[name], "winner": cert.winner,
            "proof_nodes": proof.nodes, "proof_s": round(proof.time_s, 1),
            "cert_nodes": cert.nodes, "cert_edges": cert.edges,
            "game_over_leaves": report.game_over_leaves, "bytes": os.path.getsize(path),
            "write_s": round(write_s, 1), "check_s": round(report.time_s, 1),
            "tt_mb": tt_mb, "sha256": cert.sha256}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", choices=sorted(VARIANTS), default=sorted(VARIANTS))
    ap.add_argument("--towers", type=int, default=3)
    ap.add_argument("--tt-mb", type=float, default=1024)
    args = ap.parse_args()
    out = HERE / "results.csv"
    rows = []
    if out.exists():
        with out.open() as f:
            rows = [r for r in csv.DictReader(f)]
    for name in args.only:
        row = make_one(name, args.towers, args.tt_mb)
        print(row, flush=True)
        rows = [r for r in rows if r["name"] != row["name"]] + [row]
        with out.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(sorted(rows, key=lambda r: r["name"]))


if __name__ == "__main__":
    main()
