"""What the embedding model reads of a chunk (`pipeline.render.model_text`) against the whole embedding text.

Run from the repository root:

    .venv/bin/python -m bench.model_text                       # java.base of the JDK's src.zip
    .venv/bin/python -m bench.model_text --module java.desktop --repeat 7

Every file of the module is chunked once (its time is printed for scale), then `model_text` runs over every
chunk's text `--repeat` times, alternating with the baseline (the text as it is, what the model read before:
one pass that only measures its length), CPU time of this process. Reports chunks, characters per chunk both
ways (what an embedding endpoint is sent and charged for) and min / median CPU per pass. Exit status: 0, or 2
on bad arguments or a missing source zip.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence

from bench.common import DEFAULT_MODULE, add_jdk_arguments, ensure_extracted, load_files
from pipeline.chunking import chunk_source
from pipeline.model import ChunkerConfig, SourceContext
from pipeline.render import model_text

CONFIG = ChunkerConfig(include=("**/*.java",), exclude=())
CONTEXT = SourceContext(repo_path="openjdk/jdk17-src")


def passes(texts: Sequence[str], form: Callable[[str], str], repeat: int) -> list[float]:
    """CPU seconds of `repeat` passes of `form` over every text."""
    seconds = []
    for _ in range(repeat):
        start = time.process_time()
        for text in texts:
            form(text)
        seconds.append(time.process_time() - start)
    return seconds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.model_text", description=__doc__.split("\n\n")[0])
    add_jdk_arguments(parser)
    parser.add_argument("--module", default=DEFAULT_MODULE, help="JDK module to chunk (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=5, help="passes of each form (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    ensure_extracted(args.src_zip, args.cache_dir)
    files = load_files(args.cache_dir, args.module)
    start = time.process_time()
    texts = [c.text for path, raw in files for c in chunk_source(raw, path, CONTEXT, CONFIG).chunks]
    chunking = time.process_time() - start
    baseline: list[float] = []
    model: list[float] = []
    for _ in range(args.repeat):  # alternate the two, one pass each, so the machine's load hits both alike
        baseline += passes(texts, str, 1)
        model += passes(texts, model_text, 1)
    whole = sum(map(len, texts)) / len(texts)
    read = sum(len(model_text(t)) for t in texts) / len(texts)
    print(f"{args.module}: {len(files)} files, {len(texts)} chunks, chunked in {chunking:.2f} s CPU")
    print(f"characters a chunk: whole text {whole:.0f}, model_text {read:.0f} ({read / whole:.0%})")
    for name, seconds in (("whole text (baseline)", baseline), ("model_text", model)):
        per_chunk = statistics.median(seconds) / len(texts) * 1e6
        print(
            f"{name:22s} min {min(seconds) * 1e3:7.1f} ms  median {statistics.median(seconds) * 1e3:7.1f} ms"
            f"  ({per_chunk:.2f} us a chunk)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
