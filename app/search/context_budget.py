"""The character budget of an `auto_context` answer: its default and its bounds (the standard library only).

Apart from `app.search.context`, so that `javakb context` checks `--max-chars` without importing the
search it asks `javakb serve` for (`entry.cli`; docs/performance.md, "javakb search through serve's socket").
"""

from __future__ import annotations

DEFAULT_MAX_CHARS = 6000
"""The budget of one context: a few methods, well under what Claude Code shows whole (10,000 characters)."""
MIN_MAX_CHARS = 1000
"""The smallest budget: the frame and one piece with a few lines of code."""
MAX_MAX_CHARS = 100_000
