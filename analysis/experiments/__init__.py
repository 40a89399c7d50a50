"""Rule-variant experiments: a schedule of cells fed to the arena's runner, their metrics,
report and plots."""
