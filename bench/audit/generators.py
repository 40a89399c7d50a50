"""The audit's cases, class by class, each generated from a seeded random.Random.

options  every option and argument of every command (walked from niwa.cli.main): boundary,
         out-of-range, wrong-type, huge, negative, NaN/inf, empty and unicode values, and
         the games' variant settings (-v KEY=VALUE)
moves    mutated notations and move lists of the three games through show, moves, perft,
         score, solve, solve --batch, play --position, and scripted stdin to `niwa play`
files    damaged endgame tables, books, game records and run folders
engines  misbehaving external engines (engines/*.py) in `niwa tournament`
kills    SIGKILL of tournament / analyse / tune / tables build / book build at a random
         time, then --resume (or a rerun): finished work kept, final files as an
         uninterrupted run's
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

from run import Case, sha

GAMES = ("lotus", "haru", "bonsai")
# a Lotus variant small enough for a book and a table in a second or two
TINY = ["-v", "lane=1", "-v", "shared=3", "-v", "trampoline_at=3", "-v", "towers=2"]


def make(cls: str, ctx, rng) -> list[Case]:
    cases = {"options": option_cases, "moves": move_cases, "files": file_cases,
             "engines": engine_cases, "kills": kill_cases}[cls](ctx, rng)
    if ctx.quick:
        keep = max(1, len(cases) // QUICK_SHARE.get(cls, 10))
        cases = rng.sample(cases, keep) if len(cases) > keep else cases
    seen = set()
    for case in cases:
        assert case.id not in seen, case.id
        seen.add(case.id)
    return cases


QUICK_SHARE = {"options": 40, "moves": 30, "files": 20, "engines": 8, "kills": 8}


# ---- fixtures --------------------------------------------------------------------------
FIXTURES_OF = {"options": {"tables", "book", "tournament", "positions"}, "moves": set(),
               "files": {"tables", "book", "tournament", "analysis", "tune"},
               "engines": set(), "kills": {"kills"}}


def fixtures_needed(classes) -> set:
    return set().union(*(FIXTURES_OF[c] for c in classes))


def build_fixtures(ctx, needs) -> None:
    """The undamaged files the cases copy and damage, and the answers they must give."""
    fx = ctx.root / "fixtures"
    fx.mkdir(exist_ok=True)

    def must(argv, timeout=900, env=None):
        res = ctx.cli(argv, fx, timeout=timeout, env=env)
        if res.rc != 0:
            raise SystemExit(f"fixture failed: niwa {' '.join(argv)}\n{res.err[-2000:]}")
        return res

    ctx.fixtures["tinystart"] = must(["new", "lotus", *TINY]).out.strip()
    if "tables" in needs:
        must(["tables", "build", "lotus", "--stones", "2", "--dir", str(fx / "tables"),
              "--no-progress"])
        ctx.fixtures["tables"] = str(fx / "tables")
        positions = table_positions(ctx)
        ctx.fixtures["tablepos"] = positions[0]
        probes, solves = [], []
        for i, pos in enumerate(positions):
            ctx.fixtures[f"tablepos{i}"] = pos
            probes.append(json.loads(must(["tables", "probe", pos, "--dir", str(fx / "tables"),
                                           "--json"]).out.strip().splitlines()[-1]))
            out = must(["solve", pos, "--tables", str(fx / "tables"), "--json"]).out
            solves.append(_solve_value(out))
        ctx.fixtures["probe_answers"] = json.dumps(probes)
        ctx.fixtures["solve_answers"] = json.dumps(solves)
    if "book" in needs:
        books = fx / "books"
        res = must(["book", "build", "lotus", *TINY, "--plies", "3", "--tt-mb", "64",
                    "--no-progress"], env={"NIWA_BOOKS": str(books)})
        path = json.loads(res.out.strip().splitlines()[-1])["path"]
        ctx.fixtures["book"] = path
        ctx.fixtures["bookname"] = Path(path).name
        out = must(["solve", ctx.fixtures["tinystart"], "--json", "--time", "60"],
                   env={"NIWA_BOOKS": str(books)}).out
        ctx.fixtures["book_answer"] = json.dumps(_solve_value(out))
    if "tournament" in needs:
        must(["tournament", "lotus", "--agents", "random", "greedy", "--games", "6",
              "--seed", "5", "-o", str(fx / "tournament"), "--no-progress", "-q",
              "--workers", "1"])
        ctx.fixtures["tournament"] = str(fx / "tournament")
        ctx.fixtures["rec"] = str(fx / "tournament" / "games.jsonl")
        rows, _ = _games(fx / "tournament")
        ctx.fixtures["tournament_games"] = json.dumps({k: list(v) for k, v in rows.items()})
    if "analysis" in needs:
        must(["analyse", "lotus", "--vary", "rule=basic,pro", "--agent", "random",
              "--games", "4", "--seed", "5", "-o", str(fx / "analysis"), "--workers", "1"])
        ctx.fixtures["analysis"] = str(fx / "analysis")
    if "tune" in needs:
        must(["tune", "lotus", "--agent", "mcts:iters=8", "--param", "c=0.3:3",
              "--iterations", "2", "--games-per-iteration", "2", "--seed", "5",
              "-o", str(fx / "tune")])
        ctx.fixtures["tune"] = str(fx / "tune")
    if "positions" in needs:
        ctx.fixtures["positions"] = str(fx / "positions.txt")
        (fx / "positions.txt").write_text("lotus\nhau\n\n# comment\nbonsai\n")
    if "kills" in needs:
        build_kill_baselines(ctx)


def in_child(fn, *args, timeout=None):
    """fn(*args) in a forked child (its result as JSON through a pipe), so that nothing
    the harness asks of niwa changes the state later cases are forked from."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            data = json.dumps({"ok": fn(*args)}).encode()
        except BaseException as e:
            data = json.dumps({"error": f"{type(e).__name__}: {e}"}).encode()
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    try:
        with os.fdopen(r, "rb") as f:
            data = f.read()
    finally:
        os.waitpid(pid, 0)
    out = json.loads(data or b'{"error": "no answer"}')
    if "error" in out:
        raise RuntimeError(out["error"])
    return out["ok"]


def _table_positions(folder, count):
    """Positions of default 2-player Lotus inside the k=2 table, from seeded random play."""
    import random

    from niwa.ext.lotus import LotusState
    from niwa.solver.tables import find_table, table_value

    found, rng = [], random.Random(7)
    for _ in range(400):
        s = LotusState(players=2)
        table = find_table(s, folder)
        while not s.is_terminal() and len(found) < count:
            if not s.is_chance_node() and table_value(table, s) is not None:
                found.append(s.to_notation())
                break
            s.apply(rng.choice(s.legal_actions()))
        if len(found) >= count:
            break
    return found


def table_positions(ctx, count=4):
    if "tablepos_all" not in ctx.fixtures:
        found = in_child(_table_positions, ctx.fixtures["tables"], count)
        if not found:
            raise SystemExit("no position inside the k=2 table was found")
        ctx.fixtures["tablepos_all"] = "\n".join(found)
    return ctx.fixtures["tablepos_all"].split("\n")


# ---- class 1: option values ------------------------------------------------------------
NUMBER_TEXTS = ["-1", "-0", "abc", "", " 7 ", "1.5", "1e3", "nan", "NaN", "inf", "-inf",
                "1e309", "1" + "0" * 40, "9223372036854775808", "-9223372036854775809",
                "4294967296", "0x10", "1_000", "\u0661\u0662", "\uff11", "\u22121", "٣.٥",
                "1,5", "1" * 5000]
STRING_TEXTS = ["", " ", "bogus", "=", ",", ":", "é", "\u200b", "x" * 5000, "nan", "-1",
                "a=b=c", "../../etc/passwd", "%s%n", "{}", "null"]
# (no path outside the case folder that a command could write to: the audit may run as root)
PATH_TEXTS = ["", ".", "/proc", "/proc/niwa-audit/dir/file", "/dev/null", "/proc/self/status",
              "x" * 300, "é/ü.json", "-", "{case}/sub/file"]
AGENT_TEXTS = ["random:", ":", "mcts:iters=nan", "mcts:iters=-1", "mcts:iters=0",
               "mcts:iters=1e30", "mcts:c=inf", "mcts:c=-1", "mcts:iters=10,iters=20",
               "mcts:bogus=1", "alphabeta:depth=1000000", "alphabeta:depth=-3",
               "mcts:iters=١٠", "mcts:tc=0", "mcts:tc=-1+1", "mcts:tc=nan", "greedy:w_free=nan",
               "greedy:w_bogus=1", "MCTS", "engine:cmd=", "engine:cmd=/nonexistent",
               "engine:cmd=true,timeout=nan", "perfect:tt_mb=0", "human", "mcts:iters=5,"]
TARGETED = {
    "agents": AGENT_TEXTS, "agent": AGENT_TEXTS, "opponent": AGENT_TEXTS, "spec": AGENT_TEXTS,
    "p0": AGENT_TEXTS, "p1": AGENT_TEXTS, "p2": AGENT_TEXTS, "p3": AGENT_TEXTS,
    "time_control": ["0", "-1", "1/0", "0/60", "nan", "1+nan", "40/60+1", "60+-1", "inf",
                     "1e309", "/", "+", "60+1+1", "99999999999999999999"],
    "sprt": ["elo0=10,elo1=0", "alpha=2", "elo0=nan", "elo0=0,elo1=10,alpha=0,beta=0",
             "elo1=inf", "bogus=1", "elo0", "elo0=0,elo0=1"],
    "openings": ["random:plies=-1", "random:plies=1e9", "random:plies=2,count=0",
                 "random:plies=nan", "random:", "random:plies=2,order=bogus",
                 "/proc/niwa-audit/openings.txt", "{positions}", "random:plies=9999"],
    "vary": ["rule=", "=basic", "rule=basic,basic", "nosuch=1,2", "players=1,99",
             "players=nan,2", "rule", "rule=basic,,pro", "lane=-1,2", "lane=1e30,2"],
    "strengths": ["mcts:iters=10,100", "mcts:iters=", "bogus:x=1,2", "mcts:iters=nan,1",
                  ":=", "mcts"],
    "params": ["c=0.3:3", "c=3:0.3", "c=nan:1", "c=1:inf", "c=", "bogus=1:2", "c=1:1",
               "c", "iters=1:1e30", "c=-1:1"],
    "house": ["nosuch.module:Class", "os:path", "niwa.ext.lotus:LotusState", ":", "x"],
    "executor": ["dask://", "dask://nohost.invalid:1", "bogus", "local ", "LOCAL",
                 "dask://127.0.0.1:1"],
    "deck_cards": ["", "XX", "MA MA MA", "é", "1 2 3"],
    "variants": ["rule=bogus", "rule=", "rule", "=pro", "nosuch=1", "players=0",
                 "players=1000", "players=-1", "players=nan", "lane=99999999999999999999",
                 "lane=-1", "towers=0", "shared=1e3", "rule=pro", "rule=PRO", "é=1"],
    "move_list": ["W1-a1 bogus", "1 2 3 99999", "-1", "pass pass", "٣", ""],
}


def walk(group, prefix=()):
    import click

    for name, cmd in sorted(group.commands.items()):
        path = (*prefix, name)
        if isinstance(cmd, click.Group):
            yield from walk(cmd, path)
        else:
            yield " ".join(path), cmd


# a valid, cheap invocation of each command: (arguments, options)
BASES = {
    "agents": ([], []),
    "analyse": (["lotus"], ["--vary", "rule=basic,pro", "--agent", "random", "--games", "2",
                            "-o", "{case}/a", "--workers", "1"]),
    "bench": (["lotus"], ["--seconds", "0.05", "--no-search"]),
    "book build": (["lotus"], [*TINY, "--plies", "1", "--tt-mb", "16", "-o", "{case}/b.json",
                               "--no-progress"]),
    "book info": (["{book}"], []),
    "book upgrade": (["{book}"], ["-o", "{case}/up.json"]),
    "engine": (["random"], []),
    "games": ([], []),
    "moves": (["lotus"], []),
    "new": (["lotus"], []),
    "perft": (["lotus"], ["--depth", "1"]),
    "play": (["lotus"], ["--p0", "random", "--p1", "random", "--no-record"]),
    "proof check": (["{case}/none.cert"], []),
    "proof info": (["{case}/none.cert"], []),
    "replay": (["{rec}"], ["--game", "1"]),
    "review": (["{rec}"], ["--game", "1", "--agent", "mcts:iters=10", "--prove-time", "0",
                           "--out", "{case}/r"]),
    "score": (["lotus"], []),
    "show": (["lotus"], []),
    "solve": (["lotus"], ["--algo", "mcts", "--iters", "20"]),
    "tables build": (["lotus"], ["--stones", "1", *TINY, "--dir", "{case}/tb", "--no-progress"]),
    "tables info": ([], ["--dir", "{tables}"]),
    "tables probe": (["{tablepos}"], ["--dir", "{tables}"]),
    "tournament": (["lotus"], ["--agents", "random", "random", "--games", "2", "-o", "{case}/t",
                               "--no-progress", "-q", "--workers", "1"]),
    "tune": (["lotus"], ["--agent", "mcts:iters=5", "--param", "c=0.3:3", "--iterations", "1",
                         "--games-per-iteration", "2", "-o", "{case}/u"]),
}


def _values(param) -> list[tuple[str, str]]:
    """(kind, text) values to try for one parameter."""
    import click

    from niwa.cli.common import Number

    t = param.type
    out = []
    if isinstance(t, Number):
        lo, hi = t.low, t.high
        if t.kind is int:
            out += [("low", str(int(lo))), ("high", str(int(hi))), ("below", str(int(lo) - 1)),
                    ("above", str(int(hi) + 1))]
        else:
            out += [("low", repr(float(lo))), ("high", repr(float(hi))),
                    ("below", repr(float(lo) - 1)), ("above", repr(float(hi) * 10 + 1)),
                    ("tiny", "1e-300")]
        out += [(f"n{i}", v) for i, v in enumerate(NUMBER_TEXTS)]
    elif isinstance(t, click.types.IntParamType | click.types.FloatParamType):
        out += [(f"n{i}", v) for i, v in enumerate(["0", "1", "2147483647", "2147483648",
                                                    *NUMBER_TEXTS])]
    elif isinstance(t, click.Choice):
        out += [("choice", t.choices[0]), ("upper", t.choices[0].upper()),
                ("bogus", "bogus"), ("empty", ""), ("unicode", "é")]
    elif isinstance(t, click.Path | click.File):
        out += [(f"p{i}", v) for i, v in enumerate(PATH_TEXTS)]
    else:
        out += [(f"s{i}", v) for i, v in enumerate(STRING_TEXTS)]
        out += [(f"t{i}", v) for i, v in enumerate(TARGETED.get(param.name, []))]
    return out


def _accepts(param, text) -> bool:
    """Whether the parameter's type takes `text` (then a long run is the user's request)."""
    try:
        param.type.convert(text, param, None)
        return True
    except Exception:
        return False


def _with_option(opts: list, param, value) -> list:
    """`opts` without any occurrence of param's option (and its values), plus param=value."""
    names = set(param.opts) | set(param.secondary_opts)
    out, i = [], 0
    while i < len(opts):
        if opts[i] in names:
            i += 1
            while i < len(opts) and not opts[i].startswith("-"):
                i += 1
            continue
        out.append(opts[i])
        i += 1
    return out + [param.opts[0], value]


def option_cases(ctx, rng) -> list[Case]:
    import click

    from niwa.cli.main import main

    cases = []
    for path, cmd in walk(main):
        if path not in BASES:
            cases.append(Case("options", f"{path}-no-base".replace(" ", "-"), path.split(),
                              check=lambda r, d, c: ("bad exit", "the audit has no base "
                                                     "invocation for this command")))
            continue
        args, opts = BASES[path]
        arguments = [p for p in cmd.params if isinstance(p, click.Argument)]
        stdin = "quit\n" if path == "engine" else None
        cases.append(Case("options", f"{path}-base".replace(" ", "-"),
                          [*path.split(), *args, *opts], stdin=stdin, timeout=60))
        for param in cmd.params:
            if isinstance(param, click.Option) and (param.is_flag or param.count):
                continue
            for kind, value in _values(param):
                if isinstance(param, click.Argument):
                    k = arguments.index(param)
                    new_args = list(args) + [""] * (k + 1 - len(args))
                    new_args[k] = value
                    argv = [*path.split(), *new_args, *opts]
                else:
                    argv = [*path.split(), *args, *_with_option(opts, param, value)]
                accepted = _accepts(param, value)
                cases.append(Case("options", f"{path}-{param.name}-{kind}".replace(" ", "-"),
                                  argv, stdin=stdin, long_ok=accepted,
                                  timeout=8.0 if accepted else 30.0))
    # the games' variant settings, through `new` (every game) and `solve`
    from niwa.ext.registry import games, get_game

    for game in games():
        for opt in get_game(game).options:
            texts = [f"{opt.key}=", f"{opt.key}=bogus", f"{opt.key}=-1", f"{opt.key}=0",
                     f"{opt.key}=99999999999999999999", f"{opt.key}=nan", f"{opt.key}=1e3",
                     f"{opt.key}= {opt.default}", f"{opt.key.upper()}={opt.default}",
                     f"{opt.key.replace('_', '-')}={opt.default}", f"{opt.key}=é",
                     f"{opt.key}={opt.default}"]
            for i, text in enumerate(texts):
                cases.append(Case("options", f"variant-{game}-{opt.key}-{i}",
                                  ["new", game, "-v", text]))
                if i % 3 == 0:
                    cases.append(Case("options", f"variant-solve-{game}-{opt.key}-{i}",
                                      ["solve", game, "-v", text, "--algo", "mcts",
                                       "--iters", "10"], timeout=30))
    return cases


# ---- class 2: move text and positions --------------------------------------------------
def _samples(seed: int, per_game: int):
    """Seeded random games of every game and variant: (game, start, notation, moves)."""
    import random

    from niwa.ext.registry import games, get_game

    rng = random.Random(seed)
    out = []
    setups = {"lotus": [{}, {"players": 3}, {"players": 4, "rule": "pro"}],
              "haru": [{}], "bonsai": [{}, {"players": 1}, {"players": 3}]}
    for game in games():
        info = get_game(game)
        for kw in setups.get(game, [{}]):
            for _ in range(per_game):
                s = info.new(seed=rng.randrange(1000), **{k: str(v) for k, v in kw.items()})
                start = s.to_notation()
                moves = []
                for _ in range(rng.randrange(0, 40)):
                    if s.is_terminal():
                        break
                    if s.is_chance_node():
                        a = rng.choice([a for a, _ in s.chance_outcomes()])
                        moves.append(s.action_to_string(a))
                        s.apply(a)
                    elif s.is_simultaneous_node():
                        joint = [rng.choice(s.legal_actions(q)) if s.legal_actions(q) else -1
                                 for q in range(s.num_players)]
                        moves.append(" ".join(s.action_to_string(a, q)
                                              for q, a in enumerate(joint) if a >= 0))
                        s.apply_joint(joint)
                    else:
                        a = rng.choice(s.legal_actions())
                        moves.append(s.action_to_string(a))
                        s.apply(a)
                out.append((game, start, s.to_notation(), moves))
    return out


JUNK = ["é", "\u200b", "\u0661", "\uff11", "💥", ";", ",", " ", "  ", "-", "=", "?", "{",
        "}", "/", "\\", "'", '"', "\t", "0", "9", "x", "W", "B", "#"]
BIG = ["2147483648", "-1", "99", "9223372036854775808", "nan", "inf", "1e309", "0", "-0",
       "4294967295", "18446744073709551616", "1" * 400]


def mutate(text: str, rng, others=()) -> tuple[str, str]:
    """One random mutation of `text`: (kind, mutated text)."""
    import re

    kind = rng.choice(["delete", "insert", "replace", "swap", "dup", "drop-token",
                       "number", "truncate", "splice", "case", "repeat"])
    if not text:
        return "insert", rng.choice(JUNK)
    i = rng.randrange(len(text))
    tokens = text.split(" ")
    if kind == "delete":
        return kind, text[:i] + text[i + 1:]
    if kind == "insert":
        return kind, text[:i] + rng.choice(JUNK) + text[i:]
    if kind == "replace":
        return kind, text[:i] + rng.choice(JUNK) + text[i + 1:]
    if kind == "swap" and len(tokens) > 1:
        a, b = rng.sample(range(len(tokens)), 2)
        tokens[a], tokens[b] = tokens[b], tokens[a]
        return kind, " ".join(tokens)
    if kind == "dup":
        k = rng.randrange(len(tokens))
        return kind, " ".join(tokens[:k + 1] + tokens[k:])
    if kind == "drop-token" and len(tokens) > 1:
        k = rng.randrange(len(tokens))
        return kind, " ".join(tokens[:k] + tokens[k + 1:])
    if kind == "number":
        spans = [m.span() for m in re.finditer(r"\d+", text)]
        if spans:
            a, b = rng.choice(spans)
            return kind, text[:a] + rng.choice(BIG) + text[b:]
    if kind == "truncate":
        return kind, text[:i]
    if kind == "splice" and others:
        other = rng.choice(others)
        j = rng.randrange(len(other) + 1)
        return kind, text[:i] + other[j:]
    if kind == "case":
        return kind, text.swapcase()
    if kind == "repeat":
        return kind, text + " " + text
    return "replace", text[:i] + rng.choice(JUNK) + text[i + 1:]


def _round_trip(text: str):
    """None if `text` parses to a state whose notation parses back to itself (and equals
    the state's own); else what is wrong."""
    from niwa.ext.registry import parse_position

    s = parse_position(text)
    n = s.to_notation()
    t = parse_position(n)
    if t.to_notation() != n:
        return f"notation does not round-trip: {n!r} -> {t.to_notation()!r}"
    if s.is_terminal() != t.is_terminal() or (
            not s.is_terminal() and not s.is_chance_node() and not s.is_simultaneous_node()
            and s.legal_actions() != t.legal_actions()):
        return "the re-parsed state differs (legal actions or terminal)"
    return None


def _check_round_trip(text):
    def check(res, case_dir, ctx):
        if res.rc != 0:
            return None
        try:
            problem = in_child(_round_trip, text, timeout=60)
        except RuntimeError as e:
            problem = f"accepted by the command, refused by the parser: {e}"
        if problem:
            return "silent wrong answer", problem
        return None
    return check


def _check_moves(text):
    """`show START --moves TEXT` accepted: each typed move must be the move applied (its
    name in any case, or its number)."""
    def check(res, case_dir, ctx):
        if res.rc != 0:
            return None
        first = res.out.splitlines()[0] if res.out else ""
        if not first.startswith("after "):
            return "silent wrong answer", f"no 'after N plies' line: {first[:80]!r}"
        played = first.split(": ", 1)[1] if ": " in first else ""
        typed = text.replace(",", " ").split()
        names = played.replace("+", " ").split()
        if any(t.lstrip("-").isdigit() for t in typed):
            return None             # action ids: names differ from the typed text
        if [t.lower() for t in typed] != [n.lower() for n in names]:
            return "silent wrong answer", f"typed {' '.join(typed)[:80]!r}, applied {played[:80]!r}"
        return None
    return check


def move_cases(ctx, rng) -> list[Case]:
    samples = in_child(_samples, rng.randrange(10**6), 12)
    notations = [n for _, _, n, _ in samples]
    cases = []
    commands = [
        ("show", lambda m, g: ["show", m], True),
        ("moves", lambda m, g: ["moves", m, "--json"], False),
        ("perft", lambda m, g: ["perft", m, "--depth", "1"], False),
        ("score", lambda m, g: ["score", m], False),
        ("solve", lambda m, g: ["solve", m, "--algo", "mcts", "--iters", "10", "--json"], False),
        ("play", lambda m, g: ["play", g, "--position", m, "--p0", "random", "--p1", "random",
                               "--p2", "random", "--p3", "random", "--no-record"], False),
    ]
    n = 0
    for game, start, notation, moves in samples:
        for _ in range(6):
            kind, mutant = mutate(notation, rng, notations)
            name, make_argv, check = commands[n % len(commands)]
            cases.append(Case("moves", f"pos-{name}-{game}-{n}-{kind}", make_argv(mutant, game),
                              timeout=40, check=_check_round_trip(mutant) if check else None))
            n += 1
        # the moves that led here, one of them mutated
        if moves:
            for _ in range(3):
                text = " ".join(moves)
                kind, mutant = mutate(text, rng, [" ".join(m) for *_, m in samples if m])
                cases.append(Case("moves", f"movelist-{game}-{n}-{kind}",
                                  ["show", start, "--moves", mutant], timeout=30,
                                  check=_check_moves(mutant)))
                n += 1
    # positions files for solve --batch
    for k in range(40):
        lines = []
        for _ in range(rng.randrange(1, 6)):
            source = rng.choice(notations)
            lines.append(source if rng.random() < 0.3 else mutate(source, rng, notations)[1])
        if rng.random() < 0.3:
            lines.insert(rng.randrange(len(lines) + 1),
                         rng.choice(["", "# c", "\x00", "\ufeff", "\udcff\udcfe not UTF-8"]))
        body = "\n".join(lines) + rng.choice(["\n", "", "\r\n"])

        def setup(case_dir, ctx, body=body):
            (case_dir / "positions.txt").write_text(body, encoding="utf-8",
                                                    errors="surrogateescape")
        cases.append(Case("moves", f"batch-{k}", ["solve", "--batch", "{case}/positions.txt",
                                                  "--algo", "mcts", "--iters", "10",
                                                  "--out", "{case}/out.csv"],
                          timeout=60, setup=setup))
    # a person at `niwa play`: scripted lines on stdin
    words = ["moves", "help", "?", "", "undo", "1", "2", "0", "-1", "99999", "1e3", "٣", "１",
             "1" * 5000, "W1-a1", "pass", "é", "\u200b", "list", "  1  ", "x" * 100_000,
             "QUIT", "exit"]
    for k in range(60):
        game = GAMES[k % 3]
        lines = [rng.choice(words) for _ in range(rng.randrange(1, 30))]
        if rng.random() < 0.5:
            lines.append("quit")
        players = ["--p1", "random", "--p2", "random", "--p3", "random"]
        rec = ["--record", "{case}/game.jsonl"] if k % 2 else ["--no-record"]
        cases.append(Case("moves", f"play-stdin-{game}-{k}",
                          ["play", game, "--p0", "human", *players, "--seed", str(k), *rec],
                          stdin="\n".join(lines) + ("\n" if rng.random() < 0.8 else ""),
                          timeout=60))
    return cases


# ---- class 3: damaged files ------------------------------------------------------------
def _flip(path: Path, rng, lo=0, hi=None) -> None:
    data = bytearray(path.read_bytes())
    if not data:
        path.write_bytes(b"\x01")
        return
    hi = len(data) if hi is None else min(hi, len(data))
    i = rng.randrange(min(lo, hi - 1), hi)
    data[i] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))


def _truncate(path: Path, rng) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:rng.randrange(len(data))] if data else b"")


def _header_edit(field, value, redigest):
    """Set a table header field (dotted path) to `value`; `redigest`: recompute both
    digests' worth of bookkeeping the way the writer does (a forger's or buggy tool's edit
    that the checksum cannot catch, so the loader's own checks must)."""
    def edit(folder: Path, rng):
        import hashlib

        path = next(folder.glob("*.json"))
        header = json.loads(path.read_text())
        target, keys = header, field.split(".")
        for k in keys[:-1]:
            target = target[k]
        if value is _DELETE:
            target.pop(keys[-1], None)
        else:
            target[keys[-1]] = value(folder) if callable(value) else value
        if redigest:
            fields = {k: v for k, v in header.items() if k != "sha256"}
            header["sha256"] = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
        path.write_text(json.dumps(header, indent=2) + "\n")
    return edit


_DELETE = object()


def _outside_payload(folder: Path):
    """A copy of the payload outside the tables folder; its path, relative to the folder."""
    npy = next(folder.glob("*.npy"))
    outside = folder.parent / "elsewhere"
    outside.mkdir(exist_ok=True)
    shutil.copy(npy, outside / npy.name)
    return f"../elsewhere/{npy.name}"


def _absolute_payload(folder: Path):
    return str((folder.parent / "elsewhere").resolve() / next(folder.glob("*.npy")).name) \
        if (folder.parent / "elsewhere").exists() else _absolute_copy(folder)


def _absolute_copy(folder: Path):
    rel = _outside_payload(folder)
    return str((folder / rel).resolve())


def _table_damages():
    npy = lambda f: next(f.glob("*.npy"))       # noqa: E731
    hdr = lambda f: next(f.glob("*.json"))      # noqa: E731

    def symlink_outside(p):
        """Replace the file by a link to its copy outside the tables folder."""
        outside = p.parent.parent / f"copy{p.suffix}"
        shutil.copy(p, outside)
        p.unlink()
        p.symlink_to(outside)

    def payload_symlink(f, rng):
        symlink_outside(npy(f))

    def payload_dir(f, rng):
        p = npy(f)
        p.unlink()
        p.mkdir()

    def header_symlink(f, rng):
        symlink_outside(hdr(f))

    def unreadable(f, rng):
        os.chmod(npy(f), 0)

    damages = {
        "payload-flip-npyheader": lambda f, rng: _flip(npy(f), rng, 0, 128),
        "payload-truncate": lambda f, rng: _truncate(npy(f), rng),
        "payload-append": lambda f, rng: npy(f).write_bytes(npy(f).read_bytes() + b"\0"),
        "payload-empty": lambda f, rng: npy(f).write_bytes(b""),
        "payload-delete": lambda f, rng: npy(f).unlink(),
        "payload-symlink": payload_symlink,
        "payload-dir": payload_dir,
        "payload-unreadable": unreadable,
        "header-truncate": lambda f, rng: _truncate(hdr(f), rng),
        "header-delete": lambda f, rng: hdr(f).unlink(),
        "header-empty": lambda f, rng: hdr(f).write_text(""),
        "header-huge": lambda f, rng: hdr(f).write_text(" " * (2 << 20)),
        "header-list": lambda f, rng: hdr(f).write_text("[]\n"),
        "header-nan": lambda f, rng: hdr(f).write_text(
            hdr(f).read_text().replace('"stones": 2', '"stones": NaN')),
        "header-bad-utf8": lambda f, rng: hdr(f).write_bytes(b"\xff\xfe" + hdr(f).read_bytes()),
        "header-symlink": header_symlink,
        "leftover-tmp": lambda f, rng: (f / ".x.npy.tmp").write_bytes(b"junk"),
    }
    for k in range(24):
        damages[f"payload-flip-{k}"] = lambda f, rng: _flip(npy(f), rng, 128)
    for k in range(10):
        damages[f"header-flip-{k}"] = lambda f, rng: _flip(hdr(f), rng)
    edits = {"payload-outside": _outside_payload, "payload-absolute": _absolute_payload,
             "payload-etc": "/etc/passwd", "payload-dotdot": "../../../../etc/passwd",
             "payload-sub": "sub/x.npy", "payload-empty-name": "", "stones-1": 1,
             "stones-3": 3, "stones-neg": -1, "stones-huge": 10**30, "stones-str": "2",
             "positions": 7, "payload_bytes": 1, "payload_bytes-neg": -5,
             "format_version": 1, "index.version": 2, "variant.lane": 99,
             "variant.players": 3, "variant": "x", "counts": {}, "build": _DELETE,
             "payload_sha256": "0" * 64, "game": "haru"}
    for name, value in edits.items():
        field = name.split("-")[0] if name.split("-")[0] in (
            "payload", "stones", "payload_bytes") else name
        if name.startswith("payload-"):
            field = "payload"
        for redigest in (False, True):
            damages[f"edit-{name}{'-redigest' if redigest else ''}"] = \
                _header_edit(field, value, redigest)
    return damages


# edits no loader can tell from a real table (the header's digest is recomputed and the
# field is not checked against the payload): what the table says is then what it is
FORGED = {"edit-counts-redigest", "edit-build-redigest"}


def _solve_value(out: str):
    try:
        data = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return (data.get("value"), data.get("proven"))


def _probe_answer(out: str):
    try:
        data = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return data


def table_cases(ctx, rng) -> list[Case]:
    cases = []
    for name, damage in _table_damages().items():
        seed = rng.randrange(10**9)

        def setup(case_dir, ctx, damage=damage, seed=seed):
            import random

            shutil.copytree(ctx.fixtures["tables"], case_dir / "tables")
            damage(case_dir / "tables", random.Random(seed))

        k = len(cases)

        def info_check(res, case_dir, ctx, name=name):
            # (a file mode stops no one running as root: then the table is whole)
            unharmed = name == "payload-unreadable" and os.geteuid() == 0
            if res.rc == 0 and name not in FORGED and name != "leftover-tmp" and not unharmed:
                return "silent wrong answer", "tables info exits 0 on a damaged table"
            return None

        def probe_check(res, case_dir, ctx, name=name, pos=None):
            if res.rc != 0:
                return None
            got = _probe_answer(res.out)
            want = json.loads(ctx.fixtures["probe_answers"])[pos]
            if got != want:
                return "silent wrong answer", f"probe answer {str(got)[:80]} != {str(want)[:80]}"
            return None

        def solve_check(res, case_dir, ctx, pos=None):
            if res.rc != 0:
                return None
            got = _solve_value(res.out)
            want = json.loads(ctx.fixtures["solve_answers"])[pos]
            if got is None or (got[1] and got[0] != want[0]):
                return "silent wrong answer", f"solve value {got} != {want}"
            return None

        pos_index = k % 4
        cases.append(Case("files", f"table-{name}-info", ["tables", "info", "--dir",
                                                          "{case}/tables"],
                          setup=setup, check=info_check, timeout=60))
        cases.append(Case("files", f"table-{name}-probe",
                          ["tables", "probe", "{tablepos" + str(pos_index) + "}", "--dir",
                           "{case}/tables", "--json"], setup=setup, timeout=60,
                          check=lambda r, d, c, f=probe_check, i=pos_index: f(r, d, c, pos=i)))
        cases.append(Case("files", f"table-{name}-solve",
                          ["solve", "{tablepos" + str(pos_index) + "}", "--tables", "{case}/tables",
                           "--json", "--time", "5"], setup=setup, timeout=60,
                          check=lambda r, d, c, f=solve_check, i=pos_index: f(r, d, c, pos=i)))
    return cases


def _book_damages():
    book = lambda f: next(f.glob("*.npz"))     # noqa: E731
    damages = {
        "truncate": lambda f, rng: _truncate(book(f), rng),
        "append": lambda f, rng: book(f).write_bytes(book(f).read_bytes() + b"x"),
        "empty": lambda f, rng: book(f).write_bytes(b""),
        "comment": lambda f, rng: book(f).write_bytes(book(f).read_bytes()[:-70]
                                                      + b"niwa-sha256:" + b"0" * 64),
        "trailer-gone": lambda f, rng: book(f).write_bytes(book(f).read_bytes()[:-76]),
        "text": lambda f, rng: book(f).write_text("not a book"),
        "dir": lambda f, rng: (book(f).unlink(), book_dir_fix(f)),
    }
    for k in range(40):
        damages[f"flip-{k}"] = lambda f, rng: _flip(book(f), rng)
    return damages


def book_dir_fix(folder):
    (folder / "placeholder.npz").mkdir()


def book_cases(ctx, rng) -> list[Case]:
    cases = []
    for name, damage in _book_damages().items():
        seed = rng.randrange(10**9)

        def setup(case_dir, ctx, damage=damage, seed=seed):
            import random

            (case_dir / "books").mkdir()
            shutil.copy(ctx.fixtures["book"], case_dir / "books")
            damage(case_dir / "books", random.Random(seed))

        def info_check(res, case_dir, ctx):
            if res.rc == 0:
                return "silent wrong answer", "book info exits 0 on a damaged book"
            return None

        def solve_check(res, case_dir, ctx):
            if res.rc != 0:
                return None
            got = _solve_value(res.out)
            want = json.loads(ctx.fixtures["book_answer"])
            if got is None or (got[1] and got[0] != want[0]):
                return "silent wrong answer", f"solve value {got} != {want}"
            return None

        env = {"NIWA_BOOKS": "{case}/books"}
        cases.append(Case("files", f"book-{name}-info", ["book", "info", "{case}/books/{bookname}"],
                          setup=setup, check=info_check, timeout=60))
        cases.append(Case("files", f"book-{name}-solve",
                          ["solve", "{tinystart}", "--json", "--time", "20"], env=env,
                          setup=setup, check=solve_check, timeout=60))
        cases.append(Case("files", f"book-{name}-perfect",
                          ["play", "lotus", *TINY, "--p0", "random", "--p1", "perfect",
                           "--seed", str(seed % 100), "--no-record"], env=env, setup=setup,
                          timeout=90))
    return cases


RESULT_COLUMNS = ("game_id", "result_0", "result_1", "plies", "termination")


def _games(folder: Path):
    """{game_id: (results...)} of games.csv and the number of JSON lines of games.jsonl
    (None for a file that is missing or does not parse)."""
    rows = None
    try:
        with open(folder / "games.csv", newline="", encoding="utf-8") as f:
            rows = {}
            for row in csv.DictReader(f):
                rows[row["game_id"]] = tuple(row.get(c) for c in RESULT_COLUMNS)
    except (OSError, KeyError, UnicodeDecodeError, csv.Error):
        rows = None
    records = None
    try:
        with open(folder / "games.jsonl", encoding="utf-8") as f:
            records = {}
            for line in f:
                if line.strip():
                    rec = json.loads(line)
                    records[str(rec.get("tags", rec).get("game_id", len(records) + 1))] = rec
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        records = None
    return rows, records


def _record_check(baseline_key):
    """After a resume that exits 0: every game of the schedule in games.csv and
    games.jsonl, each with the uninterrupted run's result."""
    def check(res, case_dir, ctx):
        if res.rc != 0:
            return None
        want = json.loads(ctx.fixtures[baseline_key])
        rows, records = _games(case_dir / "t")
        if rows is None or records is None:
            return "record lost", "games.csv or games.jsonl missing or unreadable after exit 0"
        missing = sorted(set(want) - set(rows), key=str)
        if missing or len(records) < len(want):
            return "record lost", (f"games.csv lacks {missing[:5]}" if missing else
                                   f"games.jsonl holds {len(records)} of {len(want)} games")
        wrong = [g for g in want if list(rows[g]) != want[g]]
        if wrong:
            return "silent wrong answer", f"games {wrong[:5]} differ from the uninterrupted run"
        return None
    return check


def _json_edits(rng, text: str) -> list[tuple[str, str]]:
    """Edits of a run's JSON file: (kind, new text)."""
    data = json.loads(text)
    paths = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                paths.append((*path, k))
                walk(v, (*path, k))
    walk(data, ())
    out = [("flip", None), ("truncate", None), ("empty", ""), ("list", "[]\n"),
           ("nan", text.replace("1", "NaN", 1))]
    values = [None, -1, "x", 10**30, [], {}, 1.5, True, "é" * 3]
    for k in range(12):
        path = rng.choice(paths)
        new = json.loads(text)
        node = new
        for key in path[:-1]:
            node = node[key]
        if rng.random() < 0.3:
            node.pop(path[-1])
            out.append((f"del-{'.'.join(path)}-{k}", json.dumps(new, indent=2)))
        else:
            v = rng.choice(values)
            node[path[-1]] = v
            out.append((f"set-{'.'.join(path)}-{k}", json.dumps(new, indent=2)))
    return out


def record_cases(ctx, rng) -> list[Case]:
    cases = []
    resume = ["tournament", "--resume", "-o", "{case}/t", "--no-progress", "-q",
              "--workers", "1"]
    line_damages = ["flip", "delete-line", "truncate", "dup-line", "swap-lines", "empty",
                    "delete-file", "garbage-line", "drop-tail"]
    for target in ("games.csv", "games.jsonl"):
        for kind in line_damages:
            for k in range(4 if kind in ("flip", "delete-line", "truncate") else 1):
                seed = rng.randrange(10**9)

                def setup(case_dir, ctx, target=target, kind=kind, seed=seed):
                    import random

                    r = random.Random(seed)
                    shutil.copytree(ctx.fixtures["tournament"], case_dir / "t")
                    path = case_dir / "t" / target
                    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
                    first = 1 if target == "games.csv" else 0   # keep the csv header
                    if kind == "flip":
                        _flip(path, r, len(lines[0]) if first else 0)
                        return
                    if kind == "truncate":
                        _truncate(path, r)
                        return
                    if kind == "empty":
                        path.write_text("")
                        return
                    if kind == "delete-file":
                        path.unlink()
                        return
                    i = r.randrange(first, len(lines))
                    if kind == "delete-line":
                        del lines[i]
                    elif kind == "dup-line":
                        lines.insert(i, lines[i])
                    elif kind == "swap-lines" and len(lines) > first + 1:
                        j = r.randrange(first, len(lines))
                        lines[i], lines[j] = lines[j], lines[i]
                    elif kind == "garbage-line":
                        lines.insert(i, "garbage,\x01,é\n")
                    elif kind == "drop-tail":
                        lines = lines[:i]
                    path.write_text("".join(lines), encoding="utf-8")

                name = f"record-{target}-{kind}-{k}"
                check = _record_check("tournament_games")
                cases.append(Case("files", f"{name}-resume", resume, setup=setup, check=check,
                                  timeout=120))
                cases.append(Case("files", f"{name}-resume-drop",
                                  [*resume, "--on-bad-rows", "drop"], setup=setup,
                                  check=check, timeout=120))
                cases.append(Case("files", f"{name}-replay",
                                  ["replay", f"{{case}}/t/{'games.jsonl'}", "--game",
                                   str(1 + k % 6)], setup=setup, timeout=60))
                if k == 0:
                    cases.append(Case("files", f"{name}-review",
                                      ["review", "{case}/t/games.jsonl", "--game", "2",
                                       "--agent", "mcts:iters=10", "--prove-time", "0",
                                       "--out", "{case}/rev"], setup=setup, timeout=90))
    # run folders: tournament.json, analysis.json, tune.json edited
    runs = [("tournament", "tournament.json", resume, _record_check("tournament_games")),
            ("analysis", "analysis.json", ["analyse", "--resume", "-o", "{case}/t",
                                           "--workers", "1"], None),
            ("tune", "tune.json", ["tune", "lotus", "--agent", "mcts:iters=8", "--param",
                                   "c=0.3:3", "--resume", "-o", "{case}/t"], None)]
    for fixture, filename, argv, check in runs:
        text = (Path(ctx.fixtures[fixture]) / filename).read_text()
        for kind, new_text in _json_edits(rng, text):
            seed = rng.randrange(10**9)
            partial = rng.random() < 0.5 and fixture == "tournament"

            def setup(case_dir, ctx, fixture=fixture, filename=filename, kind=kind,
                      new_text=new_text, seed=seed, partial=partial):
                import random

                shutil.copytree(ctx.fixtures[fixture], case_dir / "t")
                path = case_dir / "t" / filename
                if new_text is None:
                    (_flip if kind == "flip" else _truncate)(path, random.Random(seed))
                else:
                    path.write_text(new_text)
                if partial:     # a run stopped after 3 games: resume must finish it
                    for name, keep in (("games.csv", 4), ("games.jsonl", 3)):
                        p = case_dir / "t" / name
                        p.write_text("".join(p.read_text().splitlines(keepends=True)[:keep]))
            cases.append(Case("files", f"run-{filename}-{kind}{'-partial' if partial else ''}",
                              argv, setup=setup, check=check, timeout=120))
    return cases


def file_cases(ctx, rng) -> list[Case]:
    return table_cases(ctx, rng) + book_cases(ctx, rng) + record_cases(ctx, rng)


# ---- class 4: misbehaving engines ------------------------------------------------------
ENGINE_MODES = ("silent", "crash", "crash-on-go", "garbage", "illegal", "huge-line",
                "id-flood", "sleep-on-go", "child-stdout", "child-stdout-exit", "bad-utf8",
                "early-bestmove", "error-go", "stderr-flood", "close-stdout",
                "prepare-silent", "prepare-error", "ok")


def engine_cases(ctx, rng) -> list[Case]:
    cases = []
    for mode in ENGINE_MODES:
        for k in range(2):
            seed = rng.randrange(1000)
            workers = str(1 + k % 2)
            spec = f"engine:cmd={{python}} {{engines}}/misbehave.py {mode} {seed},timeout=3"
            seats = ["random", spec] if k % 2 else [spec, "random"]
            games = 2 + k % 2

            def check(res, case_dir, ctx, games=games):
                if res.rc != 0:
                    return None
                rows, records = _games(case_dir / "t")
                if rows is None or records is None or len(rows) < games or len(records) < games:
                    return "record lost", (f"{len(rows or {})} rows, {len(records or {})} "
                                           f"records of {games} games")
                return None
            cases.append(Case("engines", f"{mode}-{k}",
                              ["tournament", "lotus", "--agents", *seats, "--games", str(games),
                               "--seed", str(seed), "-o", "{case}/t", "--no-progress", "-q",
                               "--workers", workers], check=check, timeout=60))
    return cases


# ---- class 5: kill points --------------------------------------------------------------
KILL_COMMANDS = {
    "tournament": (["tournament", "lotus", "--agents", "random", "greedy", "--games", "6",
                    "--seed", "5", "-o", "{case}/t", "--no-progress", "-q", "--workers", "2"],
                   ["tournament", "--resume", "-o", "{case}/t", "--no-progress", "-q",
                    "--workers", "2"]),
    "analyse": (["analyse", "lotus", "--vary", "rule=basic,pro", "--agent", "random",
                 "--games", "4", "--seed", "5", "-o", "{case}/t", "--workers", "2"],
                ["analyse", "--resume", "-o", "{case}/t", "--workers", "2"]),
    "tune": (["tune", "lotus", "--agent", "mcts:iters=8", "--param", "c=0.3:3",
              "--iterations", "2", "--games-per-iteration", "2", "--seed", "5",
              "-o", "{case}/t"],
             ["tune", "lotus", "--agent", "mcts:iters=8", "--param", "c=0.3:3",
              "--iterations", "2", "--games-per-iteration", "2", "--seed", "5",
              "-o", "{case}/t", "--resume"]),
    "tables": (["tables", "build", "lotus", "--stones", "2", "--dir", "{case}/t",
                "--no-progress", "--workers", "2"],
               ["tables", "build", "lotus", "--stones", "2", "--dir", "{case}/t",
                "--no-progress"]),
    "book": (["book", "build", "lotus", *TINY, "--plies", "3", "--tt-mb", "64",
              "-o", "{case}/t/book.npz", "--no-progress"],
             ["book", "build", "lotus", *TINY, "--plies", "3", "--tt-mb", "64",
              "-o", "{case}/t/book.npz", "--no-progress"]),
}


def _final_state(kind: str, folder: Path, ctx):
    """What an uninterrupted run leaves, in a comparable form."""
    if kind in ("tournament", "analyse", "tune"):
        rows, records = _games(folder)
        standings = None
        for name in ("standings.csv",):
            if (folder / name).exists():
                standings = (folder / name).read_text()
        return {"games": rows and {k: list(v) for k, v in rows.items()},
                "records": None if records is None else len(records),
                "standings": standings}
    if kind == "tables":
        return sorted(sha(p) for p in folder.glob("*.npy"))
    if kind == "book":
        return _book_content(folder / "book.npz")
    return None


def _book_content(path: Path):
    import io

    import numpy as np
    try:
        data = path.read_bytes()
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return [z["keys"].tolist(), z["actions"].tolist()]
    except Exception:
        return None


def kill_cases(ctx, rng) -> list[Case]:
    cases = []
    for kind, (first, again) in KILL_COMMANDS.items():
        for k in range(5):
            fraction = rng.random()

            def run(ctx, case_dir, kind=kind, first=first, again=again, fraction=fraction):
                from runner import judge

                duration = float(ctx.fixtures[f"kill_seconds_{kind}"])
                at = 0.05 + fraction * duration * 1.1
                (case_dir / "t").mkdir(exist_ok=True) if kind == "book" else None
                argv = ctx.fill(first, case_dir)
                cmd = ctx.runner.command_text(argv, str(case_dir))
                res = ctx.cli(argv, case_dir, timeout=600, kill_after=at)
                outcome, detail = judge(res)
                if outcome != "ok":
                    return outcome, f"killed at {at:.2f} s: {detail}", cmd
                argv2 = ctx.fill(again, case_dir)
                cmd += f"  # SIGKILL after {at:.2f} s, then: " + ctx.runner.command_text(argv2, None)
                res2 = ctx.cli(argv2, case_dir, timeout=600)
                outcome, detail = judge(res2)
                if outcome != "ok":
                    return outcome, f"after a kill at {at:.2f} s, the rerun: {detail}", cmd
                if res2.rc != 0 and not (kind == "tables" and "exists already" in res2.err):
                    return "record lost", (f"after a kill at {at:.2f} s the rerun cannot "
                                           f"finish: {res2.err.strip()[-150:]}"), cmd
                got = _final_state(kind, case_dir / "t", ctx)
                want = json.loads(ctx.fixtures[f"kill_final_{kind}"])
                if got != want:
                    lost = kind in ("tournament", "analyse", "tune") and (
                        not got["games"] or len(got["games"]) < len(want["games"] or {})
                        or (got["records"] or 0) < (want["records"] or 0))
                    return ("record lost" if lost else "silent wrong answer",
                            f"killed at {at:.2f} s ({'finished' if not res.killed else 'killed'}),"
                            f" rerun: final files differ from an uninterrupted run", cmd)
                return "ok", f"killed at {at:.2f} s" if res.killed else "finished first", cmd
            cases.append(Case("kills", f"{kind}-{k}", [], run=run))
    return cases


def build_kill_baselines(ctx) -> None:
    import time

    for kind, (first, _) in KILL_COMMANDS.items():
        folder = ctx.root / "fixtures" / f"kill-{kind}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        if kind == "book":
            (folder / "t").mkdir()
        t0 = time.monotonic()
        res = ctx.cli(ctx.fill(first, folder), folder, timeout=900)
        if res.rc != 0:
            raise SystemExit(f"kill baseline {kind} failed: {res.err[-1500:]}")
        ctx.fixtures[f"kill_seconds_{kind}"] = str(time.monotonic() - t0)
        ctx.fixtures[f"kill_final_{kind}"] = json.dumps(_final_state(kind, folder / "t", ctx))
