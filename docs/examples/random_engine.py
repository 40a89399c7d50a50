#!/usr/bin/env python3
"""A complete niwa engine in plain Python (no niwa import): it plays a uniformly random
move from the `legal` line the client sends before every `go`, so it plays every game.

    niwa tournament lotus --agents "engine:cmd=python3 docs/examples/random_engine.py" random

The protocol is in docs/engine-protocol.md. An optional argument seeds the choices:
`python3 random_engine.py 7`.
"""

import random
import sys


def main() -> None:
    rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else None)
    legal: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)     # a pipe is block-buffered: flush every reply

    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command = words[0]
        if command == "niwa-engine":
            if words[1:] != ["1"]:
                say("error this engine speaks protocol version 1")
                continue
            say("id name random-engine")
            say("id author the niwa examples")
            say("games *")              # moves come from `legal`: any game will do
            say("ok")
        elif command == "isready":
            say("readyok")
        elif command in ("newgame", "position", "moves"):
            legal = []                  # a new position: wait for its legal moves
        elif command == "legal":
            legal = words[1:]
        elif command == "go":
            if legal:
                say(f"info string one of {len(legal)} legal moves")
                say("bestmove " + rng.choice(legal))
            else:
                say("error go without a legal line: no move known")
        elif command == "quit":
            return
        else:
            say("error unknown command " + command)


if __name__ == "__main__":
    main()
