"""Dependency sources at the versions in use (issue 16, part 1): record, fetch, index once, purge.

See docs/dependencies.md.
"""
