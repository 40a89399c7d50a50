#!/bin/sh
# A niwa engine in POSIX shell: it plays the first move of the `legal` line, in any game.
# It shows that an engine needs no Python, only lines in and lines out:
#   niwa tournament lotus --agents random "engine:cmd=sh docs/examples/first_move_engine.sh"
# The protocol is in docs/engine-protocol.md.
set -f      # words of a position such as `T*3` are not file patterns
first=""
while IFS= read -r line; do
    set -- $line
    case "$1" in
        niwa-engine)
            if [ "$2" = 1 ]; then
                printf 'id name first-move\nid author the niwa examples\ngames *\nok\n'
            else
                echo "error this engine speaks protocol version 1"
            fi ;;
        isready) echo readyok ;;
        newgame|position|moves) first="" ;;
        legal) first="$2" ;;
        go)
            if [ -n "$first" ]; then echo "bestmove $first"; else echo "error no legal line"; fi ;;
        quit) exit 0 ;;
        "") ;;
        *) echo "error unknown command $1" ;;
    esac
done
