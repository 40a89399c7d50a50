"""Engine vs oracle playout speed, measured in one run (ratios survive a noisy machine)."""

from __future__ import annotations

import random
import time

from niwa.ext.registry import get_game, spec_of


def _time_engine(start, seconds, seed):
    spec = spec_of(start)
    fast = spec.batch_playouts if spec is not None else None
    games = actions = 0
    batch = 64
    t0 = time.perf_counter()
    while True:
        if fast is not None:
            g, a, _ = fast(start, batch, seed + games)
        else:
            g, a = 0, 0
            for i in range(batch):
                s = start.clone()
                a += s.random_playout(seed + games + i)
                g += 1
        games += g
        actions += a
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return games, actions, elapsed
        batch = min(batch * 2, 1 << 16)


def _time_oracle(name, variant, seconds, seed):
    oracle = get_game(name).load_reference()
    rng = random.Random(seed)
    games = actions = 0
    t0 = time.perf_counter()
    while True:
        state = oracle.initial(**variant)
        actions += oracle.random_playout(state, rng)
        games += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return games, actions, elapsed


def bench_engine_vs_oracle(name: str, seconds: float = 2.0, seed: int = 1, **variant) -> dict:
    info = get_game(name)
    start = info.new(**variant)
    variant = start.variant
    eg, ea, et = _time_engine(start, seconds, seed)
    og, oa, ot = _time_oracle(name, variant, seconds, seed)
    return {
        "game": name, "variant": variant,
        "engine_games_s": eg / et, "engine_actions_s": ea / et,
        "oracle_games_s": og / ot, "oracle_actions_s": oa / ot,
        "ratio": (eg / et) / (og / ot),
    }
