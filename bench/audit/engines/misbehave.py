#!/usr/bin/env python3
"""A niwa engine that misbehaves in one chosen way (the audit's `engines` class).

    python3 misbehave.py MODE [SEED]

Modes: silent (never answers), crash (exits 1 at once), crash-on-go (exits on the
second `go`), garbage (random bytes instead of replies), illegal (a move that is not
legal), huge-line (a 20 MB line as its move), id-flood (endless `id` lines in the
handshake), sleep-on-go (answers the handshake, then never a move), child-stdout (starts a
`sleep` that inherits its stdout, then plays), child-stdout-exit (the same, then exits on
the first `go`), bad-utf8 (invalid UTF-8 in its replies), early-bestmove (a `bestmove`
before the handshake's `ok`), error-go (`error` instead of a move), stderr-flood (10 MB
on stderr, then plays), close-stdout (closes stdout after the handshake), prepare-silent
(asks for `features prepare`, then never answers the `isready` before a game),
prepare-error (the same, answered `error`). Otherwise it
plays a random legal move, like docs/examples/random_engine.py.
"""

import os
import random
import subprocess
import sys
import time


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    out = sys.stdout

    def say(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    if mode == "crash":
        sys.exit(1)
    if mode in ("child-stdout", "child-stdout-exit"):
        subprocess.Popen(["sleep", "300"])        # inherits stdout and stderr
    legal, goes = [], 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command = words[0]
        if mode == "silent":
            continue
        if mode == "garbage":
            out.buffer.write(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))))
            out.flush()
            continue
        if command == "niwa-engine":
            if mode == "early-bestmove":
                say("bestmove pass")
            if mode == "id-flood":
                while True:
                    say("id name flood")
            if mode == "bad-utf8":
                out.buffer.write(b"id name \xff\xfe\xc3\x28\n")
                out.flush()
            say("id name misbehave-" + mode)
            say("games *")
            if mode.startswith("prepare-"):
                say("features prepare")
            say("ok")
            if mode == "close-stdout":
                os.close(1)
        elif command == "isready":
            if mode == "prepare-silent" and len(words) > 1:
                continue
            say("error cannot prepare" if mode == "prepare-error" and len(words) > 1
                else "readyok")
        elif command in ("newgame", "position", "moves"):
            legal = []
        elif command == "legal":
            legal = words[1:]
        elif command == "go":
            goes += 1
            if mode == "sleep-on-go":
                time.sleep(3600)
            if mode == "crash-on-go" and goes >= 2:
                sys.exit(3)
            if mode == "child-stdout-exit":
                sys.exit(0)
            if mode == "illegal":
                say("bestmove Z9-zz")
                continue
            if mode == "huge-line":
                say("bestmove " + "W" * 20_000_000)
                continue
            if mode == "error-go":
                say("error no move for you")
                continue
            if mode == "bad-utf8":
                out.buffer.write(b"info string \xff\xff\n")
                out.flush()
            if mode == "stderr-flood" and goes == 1:
                sys.stderr.write("e" * 10_000_000 + "\n")
                sys.stderr.flush()
            say("bestmove " + (rng.choice(legal) if legal else "pass"))
        elif command == "quit":
            return


if __name__ == "__main__":
    main()
