"""Fakes and harnesses shared by the tests and the benchmarks; the service never imports this package.

The fake GitLab (real git underneath, its HTTP API in a thread), the fake embedding server, GitLab
hook bodies, the whole sync stack of the scenario tests and the audit of the index against git live
here so that `bench/` needs nothing from `tests/` (`tests/test_bench_layout.py` keeps it so).
"""
