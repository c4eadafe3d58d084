"""Parsing a Kotlin file that holds a syntax error without losing the declarations around it.

The Kotlin grammar's error recovery often swallows everything after a broken declaration into one
ERROR node (a missing `}` in one function hides every later class of the file). So a file with errors
is cut at its top-level declarations (lines that start one at column 0, with their KDoc and
annotations); a piece the error touches is parsed alone, and one that does not parse alone is blanked
(spaces, newlines kept: every byte offset and row stays the same) before the file is parsed again.
The blanked pieces are what the file reports as skipped.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import NamedTuple

from tree_sitter import Tree

from pipeline.kotlin.grammar import parse
from pipeline.kotlin.reader import error_nodes

_MODIFIER = (
    r"(?:public|private|internal|protected|abstract|open|final|sealed|data|enum|annotation|inline|value|inner|"
    r"suspend|operator|infix|tailrec|external|const|lateinit|override|expect|actual|fun)\s+"
)
_STARTS = re.compile(
    rb"^(?:@|/\*\*|(?:" + _MODIFIER.encode() + rb")*(?:fun|class|object|interface|val|var|typealias)\b)", re.M
)
_HEAD = re.compile(rb"^(?:@|/\*\*)")  # a start whose declaration follows on later lines


class Piece(NamedTuple):
    """A byte range of the source, and its rows (zero-based, inclusive)."""

    start: int
    end: int
    first_row: int
    last_row: int


def parse_recovering(data: bytes) -> tuple[Tree, list[Piece]]:
    """The tree of `data`, its unparsable top-level pieces blanked when it has errors; and those pieces."""
    tree = parse(data)
    if not tree.root_node.has_error:
        return tree, []
    errors = [(n.start_byte, max(n.end_byte, n.start_byte + 1)) for n in error_nodes(tree.root_node)]
    bad = [
        p for p in _pieces(data)
        if any(s < p.end and p.start < e for s, e in errors) and parse(_keep(data, p)).root_node.has_error
    ]  # fmt: skip
    if not bad:
        return tree, []
    return parse(_blank(data, bad)), bad


def _pieces(data: bytes) -> list[Piece]:
    starts = [0]
    after_head = False  # the previous start was an annotation or KDoc: this line continues its declaration
    for match in _STARTS.finditer(data):
        at = match.start()
        if at and not after_head:
            starts.append(at)
        after_head = bool(_HEAD.match(data, at))
    bounds = [*sorted(set(starts)), len(data)]
    pieces = []
    for start, end in pairwise(bounds):
        text = data[start:end].rstrip()
        first = data.count(b"\n", 0, start)
        pieces.append(Piece(start, end, first, first + text.count(b"\n")))
    return pieces


def _keep(data: bytes, piece: Piece) -> bytes:
    return _spaces(data[: piece.start]) + data[piece.start : piece.end] + _spaces(data[piece.end :])


def _blank(data: bytes, pieces: list[Piece]) -> bytes:
    out = bytearray(data)
    for piece in pieces:
        out[piece.start : piece.end] = _spaces(data[piece.start : piece.end])
    return bytes(out)


def _spaces(chunk: bytes) -> bytes:
    return re.sub(rb"[^\n]", b" ", chunk)
