"""Benchmarks (figures, not tests): playout and search speed, strength matches, the suite
behind `niwa bench --suite`. The scripts in the top-level bench/ folder call into it."""
