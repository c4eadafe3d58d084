"""The command blocks of README.md and docs/*.md, and the one bash script that runs a document's checked blocks.

Every ```sh or ```bash block carries a marker on the line before it (a block without one fails the test, so
a new block is a decision):

- `<!-- check -->`: run it. A document's checked blocks run in order in one bash session (`set -euo
  pipefail`), so a variable or file one block makes is there for the next. In a checked block, lines
  `#> TEXT` right after a command are that command's expected standard output, line by line.
- `<!-- check: serve -->`: the block ends by starting the server in the foreground: it runs in the
  background, and the next block starts once `/readyz` answers 200.
- `<!-- skip: REASON -->`: never run here (a cluster, GitLab.com, a CI job, minutes of work).
- `<!-- skip-file: REASON -->` anywhere in a document: none of its blocks runs (the benchmarks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```(sh|bash)\s*$")
MARKER = re.compile(r"^<!--\s*(check|check: serve|skip: .+|skip-file: .+)\s*-->\s*$")
EXPECT = "#> "
READY_S = 180  # a `serve` under load: migrations, the embedded store, the worker's first poll


@dataclass(frozen=True)
class Block:
    """One fenced command block and its marker (`None`: unmarked)."""

    doc: Path
    line: int
    marker: str | None
    text: str

    @property
    def runs(self) -> bool:
        """Whether the test runs it."""
        return self.marker in ("check", "check: serve")


def blocks(doc: Path) -> list[Block]:
    """Every sh/bash block of a document, with the marker on the line before its fence."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    skip_file = next((m.group(1) for m in map(MARKER.match, lines) if m and m.group(1).startswith("skip-file")), None)
    found: list[Block] = []
    i = 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            marked = MARKER.match(lines[i - 1]) if i else None
            marker = skip_file or (marked.group(1) if marked else None)
            found.append(Block(doc, i + 1, marker, "\n".join(lines[i + 1 : end])))
            i = end
        i += 1
    return found


def statements(text: str) -> list[tuple[str, list[str]]]:
    """A block's commands (continuation lines joined), each with the `#> ` lines that follow it."""
    result: list[tuple[str, list[str]]] = []
    pending = ""
    for line in text.splitlines():
        if line.startswith(EXPECT.rstrip()) and result and not pending:
            result[-1][1].append(line[len(EXPECT) :] if line.startswith(EXPECT) else "")
            continue
        pending += line + "\n"
        if not line.endswith("\\"):
            result.append((pending.rstrip("\n"), []))
            pending = ""
    return result


def script(doc_blocks: list[Block], port: int) -> str:
    """One bash script running a document's checked blocks in order, against `port` instead of 8080."""
    out = ["set -euo pipefail", _EXPECT_FN]
    for block in (b for b in doc_blocks if b.runs):
        text = block.text.replace(":8080", f":{port}")
        out.append(f"echo '--- {block.doc.name}:{block.line}' >&2")
        if block.marker == "check: serve":
            out += [f"( {text}\n) >serve.log 2>&1 &", f"wait_ready {port}"]
            continue
        for command, expected in statements(text):
            if expected:
                want = "\n".join(expected)
                out.append(f"expect {block.line} \"$( {command}\n)\" <<'__DOC_EOF'\n{want}\n__DOC_EOF")
            else:
                out.append(command)
    return "\n".join(out) + "\n"


_EXPECT_FN = f"""
expect() {{  # expect LINE OUTPUT <<< WANTED
  local want; want="$(cat)"
  if [ "$2" != "$want" ]; then printf 'block at line %s: expected\\n%s\\ngot\\n%s\\n' "$1" "$want" "$2" >&2; exit 97; fi
}}
wait_ready() {{
  for _ in $(seq 1 {READY_S}); do
    [ "$(curl -s -o /dev/null -w '%{{http_code}}' "localhost:$1/readyz")" = 200 ] && return 0
    sleep 1
  done
  echo "the server did not get ready on port $1 within {READY_S} s:" >&2; tail -40 serve.log >&2; exit 98
}}
"""
