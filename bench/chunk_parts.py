"""Where the pipeline's Python instructions go: the callgrind subset with one part of the work left out.

    valgrind --tool=callgrind --callgrind-out-file=/dev/null .venv/bin/python -m bench.chunk_parts PART

PART is `none` (the whole pipeline, as `bench.chunk_callgrind pipeline`) or the part replaced by a stand-in
that does nothing: `generated` (`mark_generated`), `text` (the embedding text, its hash and the chunk id in
`drafts._derived`), `summaries` (javadoc summaries), `calls` (`FileCalls.calls_in`: resolving each method's
calls). The difference from `none` is what the part costs, within the accuracy of leaving it out (a part
left out also changes what later parts see: shorter texts to hash without summaries, for example). The
output is not the pipeline's: this is a measurement, never a way to run it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from bench.chunk_callgrind import main as run_subset
from pipeline import chunking, drafts, skeleton
from pipeline.calls import FileCalls
from pipeline.model import Chunk

PARTS = ("none", "generated", "text", "summaries", "calls")


def _unmarked(lines: Sequence[str], chunks: Sequence[Chunk]) -> tuple[Chunk, ...]:
    return tuple(chunks)


def _underived(chunk: Chunk, id_prefix: bytes, key: str, type_summary: str | None) -> Chunk:
    return chunk


def _no_summary(raw: str) -> str | None:
    return None


def _no_calls(self: FileCalls, *args: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (), ()


def leave_out(part: str) -> None:
    """Replace one part of the pipeline by a stand-in (a measurement only)."""
    if part == "generated":
        setattr(chunking, "mark_generated", _unmarked)  # noqa: B010 (an import of chunking, not its own)
    elif part == "text":
        drafts._derived = _underived
    elif part == "summaries":
        for module in (chunking, skeleton):  # each imported it
            setattr(module, "summarize", _no_summary)  # noqa: B010
    elif part == "calls":
        FileCalls.calls_in = _no_calls  # type: ignore[assignment,method-assign]
    elif part != "none":
        raise SystemExit(f"usage: python -m bench.chunk_parts {'|'.join(PARTS)}")


if __name__ == "__main__":
    leave_out(sys.argv[1] if len(sys.argv) > 1 else "")
    sys.exit(run_subset("pipeline"))
