"""Exact and pattern search's patterns: a literal or an RE2 regular expression, compiled with limits (issue 28).

RE2 (the `google-re2` wheel) matches in time linear in the text whatever the pattern: `(a+)+$` cannot
backtrack, because RE2 does not backtrack. What could still cost is the compiled program: a pattern of
thousands of alternatives or nested counted repetitions (`(a{1000}){1000}`) needs memory, so the
program is capped at `PROGRAM_BYTES` and the pattern text at `MAX_PATTERN_CHARS`; past either the
pattern is refused with a message, never run. Backreferences and lookaround are not RE2 syntax: such a
pattern is refused as invalid, naming RE2. Matching is per line, as `git grep`: the program never
matches a newline (`never_nl`), and `^`/`$` are a line's ends. Pure: no I/O.
"""

from __future__ import annotations

import re
import re._parser as sre_parse  # the stdlib's regex parser: read for a required literal only, never to match
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import re2

from app.core.errors import PayloadError

MAX_PATTERN_CHARS = 1000
"""The longest pattern accepted (a literal or a regular expression), in characters."""
PROGRAM_BYTES = 8 << 20
"""RE2's memory budget for one compiled pattern: a bigger program is refused, not built."""
MIN_LITERAL = 3
"""The shortest literal worth a substring condition in the query (shorter ones select most chunks anyway)."""
_DOC_PREFIX = re.compile(r"^/\*\*.*?\*/\s*")
_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})


class PatternError(PayloadError):
    """A pattern that is not accepted: empty, too long, not RE2 syntax, or too big a program."""


@dataclass(frozen=True, slots=True)
class PatternSpec:
    """What the caller asks for: the text, whether it is a regular expression, and whether case matters."""

    text: str
    regex: bool = False
    case_sensitive: bool = True


class LinePattern:
    """A compiled pattern that tells the lines of a text it matches."""

    def __init__(self, spec: PatternSpec, program: Any) -> None:
        self.spec = spec
        self._program = program

    def matches(self, text: bytes) -> bool:
        """Whether some line of `text` matches (one pass over the whole text)."""
        return self._program.search(text) is not None

    def lines(self, lines: Sequence[bytes]) -> list[int]:
        """The indexes of the lines that match."""
        search = self._program.search
        return [i for i, line in enumerate(lines) if search(line) is not None]


def compile_pattern(spec: PatternSpec) -> LinePattern:
    """The pattern compiled for line matching, within the limits (module docs).

    Raises:
        PatternError: the pattern is empty, over `MAX_PATTERN_CHARS`, not valid RE2 syntax, or its program
            needs more than `PROGRAM_BYTES`; the message says which.
    """
    text = spec.text
    if not text:
        raise PatternError("the pattern is empty")
    if len(text) > MAX_PATTERN_CHARS:
        raise PatternError(f"the pattern has {len(text)} characters; at most {MAX_PATTERN_CHARS} are accepted")
    if "\n" in text or "\r" in text:
        raise PatternError("the pattern spans lines; matching is per line, as git grep's")
    options = re2.Options()
    options.max_mem = PROGRAM_BYTES
    options.never_nl = True
    options.case_sensitive = spec.case_sensitive
    options.literal = not spec.regex
    options.log_errors = False
    source = ("(?m)" + text) if spec.regex else text
    try:
        program = re2.compile(source.encode(), options)
    except UnicodeEncodeError as exc:
        raise PatternError("the pattern is not valid Unicode text (a lone surrogate)") from exc
    except re2.error as exc:
        raise PatternError(_why(_text(exc), spec)) from exc
    return LinePattern(spec, program)


def _text(exc: Exception) -> str:
    """RE2's message (the binding gives it as bytes)."""
    arg = exc.args[0] if exc.args else ""
    return arg.decode(errors="replace") if isinstance(arg, bytes) else str(arg)


def _why(error: str, spec: PatternSpec) -> str:
    if "pattern too large" in error:
        return (
            f"the pattern compiles to a program over RE2's {PROGRAM_BYTES >> 20} MiB budget "
            "(too many alternatives or repetitions); narrow it"
        )
    if "repetition size" in error:
        return f"a repetition count over RE2's 1000 (nested counts multiply): {error}"
    what = "regular expression" if spec.regex else "literal"
    return f"invalid {what} for RE2 (no backreferences or lookaround): {error}"


def squashed(line: str) -> str:
    """A line as an outline writes it: whitespace runs as one space, a leading `/** summary */` dropped.

    A type chunk's outline (`pipeline.skeleton`) lists a bodiless member's head as its own chunk has it,
    squashed and maybe after its Javadoc's summary: equal squashed texts in one file are one source line.
    """
    return " ".join(_DOC_PREFIX.sub("", line.strip()).split())


def required_literal(spec: PatternSpec) -> str | None:
    """A string every matching line contains, case as written, for the store to select chunks by; None if none.

    A case-sensitive literal is itself. For a regular expression, the longest run of plain characters its
    top-level concatenation (plain groups included, a repetition of at least one inner ones) requires, read
    with the standard library's parser: RE2's syntax where the two agree; where they differ the parser
    fails and there is no literal (the scan then reads every chunk in scope). Case-insensitive parts and
    alternatives give none. At least `MIN_LITERAL` characters, else None.
    """
    if not spec.case_sensitive:
        return None
    if not spec.regex:
        return spec.text if len(spec.text) >= MIN_LITERAL else None
    try:
        parsed = sre_parse.parse(spec.text)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    if parsed.state.flags & re.IGNORECASE:
        return None
    runs = list(_runs(list(parsed)))
    best = max(runs, key=lambda run: len(run.encode()), default="")
    return best if len(best) >= MIN_LITERAL else None


def _runs(items: list[tuple[object, object]]) -> Iterator[str]:
    """The literal runs a sequence of parsed items requires (each run one contiguous string)."""
    current: list[str] = []
    for op, arg in _flattened(items):
        name = str(op)
        if name == "LITERAL" and isinstance(arg, int) and arg != 10:
            current.append(chr(arg))
            continue
        if current:
            yield "".join(current)
            current = []
        if name in _REPEATS and isinstance(arg, tuple) and arg[0] >= 1:
            yield from _runs(list(arg[2]))
    if current:
        yield "".join(current)


def _flattened(items: list[tuple[object, object]]) -> Iterator[tuple[object, object]]:
    """The items, a plain group's own items in its place (a group is part of the concatenation)."""
    for op, arg in items:
        if str(op) == "SUBPATTERN" and isinstance(arg, tuple) and not arg[1] & re.IGNORECASE:
            yield from _flattened(list(arg[3]))
        else:
            yield op, arg
