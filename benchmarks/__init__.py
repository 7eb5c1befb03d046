"""The `make bench-*` scripts. Each runs as a script; the package lets the
tests import the figures' and checks' code (``from benchmarks import
soak_bench``) instead of loading a file by its path."""
