"""Playing scheduled games: the one game loop, schedules, executors, the game log and the
run engine that tournaments and variant experiments share."""
