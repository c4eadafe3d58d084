"""Benchmarks for the Java pipeline; run them with `python -m bench.<name>` from the repository root."""
