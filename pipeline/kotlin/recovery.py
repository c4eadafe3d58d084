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
    rb"(?:public|private|internal|protected|abstract|open|final|sealed|data|enum|annotation|inline|value|inner|"
    rb"suspend|operator|infix|tailrec|external|const|lateinit|override|expect|actual|fun|companion)\s+"
)
_DECLARATION = (
    rb"(?:@|/\*\*|(?:" + _MODIFIER + rb")*(?:fun|class|object|interface|val|var|typealias|init|constructor)\b)"
)
_TOP = re.compile(rb"^" + _DECLARATION, re.M)
_OPENS_BODY = re.compile(rb"^\S[^\n]*\{[ \t]*$", re.M)  # the line at column 0 that opens a declaration's body
_MEMBER = re.compile(rb"^([ \t]+)" + _DECLARATION, re.M)  # the first member line gives the body's indentation


class Piece(NamedTuple):
    """A byte range of the source, and its rows (zero-based, inclusive)."""

    start: int
    end: int
    first_row: int
    last_row: int


def parse_recovering(data: bytes) -> tuple[Tree, list[Piece]]:
    """The tree of `data`, its unparsable pieces blanked when it has errors; and those pieces.

    A top-level declaration that does not parse alone is opened up into its members (the lines at its
    body's indentation that start one): only the members that break it are blanked, when that mends it.
    """
    tree = parse(data)
    if not tree.root_node.has_error:
        return tree, []
    errors = [(n.start_byte, max(n.end_byte, n.start_byte + 1)) for n in error_nodes(tree.root_node)]
    bad: list[Piece] = []
    for piece in _pieces(data, _TOP, 0, len(data)):
        if any(s < piece.end and piece.start < e for s, e in errors) and _broken(data[piece.start : piece.end]):
            bad.extend(_breaking_members(data, piece))
    if not bad:
        return tree, []
    return parse(_blank(data, bad)), bad


def _breaking_members(data: bytes, piece: Piece) -> list[Piece]:
    """The members of a broken declaration that break it; the whole of it when blanking those does not mend it.

    Each member is parsed in its declaration without the others (the head, the member, the closing line).
    """
    opened = _OPENS_BODY.search(data, piece.start, piece.end)  # not a primary constructor's parameters
    found = _MEMBER.search(data, opened.end(), piece.end) if opened is not None else None
    if found is None:
        return [piece]
    closing = data.rfind(b"\n}", found.start(), piece.end) + 1  # the body's closing line stays
    if closing <= 0:
        return [piece]
    indent = re.escape(found.group(1))
    members = _pieces(data, re.compile(rb"^" + indent + _DECLARATION, re.M), found.start(), closing)
    head, tail = data[piece.start : found.start()], data[closing : piece.end]
    bad = [m for m in members if _broken(head + data[m.start : m.end] + tail)]
    kept = b"".join(data[m.start : m.end] for m in members if m not in bad)
    if not bad or _broken(head + kept + tail):
        return [piece]
    return bad


def _broken(source: bytes) -> bool:
    return parse(source).root_node.has_error


def _pieces(data: bytes, starts: re.Pattern[bytes], start: int, end: int) -> list[Piece]:
    """`start`..`end` cut where a declaration starts; its KDoc and annotation lines stay with it."""
    cuts = [start]
    for match in starts.finditer(data, start, end):
        at = match.start()
        if at <= start:
            continue
        line_end = data.rfind(b"\n", start, at)  # the previous line, without its newline
        before = data[max(start, data.rfind(b"\n", start, line_end) + 1) : line_end].strip()
        if not (before.startswith(b"@") or before.endswith(b"*/")):  # a continuation of an annotated declaration
            cuts.append(at)
    bounds = [*cuts, end]
    pieces = []
    for first, last in pairwise(bounds):
        row = data.count(b"\n", 0, first)
        pieces.append(Piece(first, last, row, row + data[first:last].rstrip().count(b"\n")))
    return pieces


def _blank(data: bytes, pieces: list[Piece]) -> bytes:
    """`data` with the pieces' bytes turned into spaces, their newlines kept: offsets and rows stay."""
    out = bytearray(data)
    for piece in pieces:
        out[piece.start : piece.end] = data[piece.start : piece.end].translate(_TO_SPACES)
    return bytes(out)


_TO_SPACES = bytes(b if b == ord("\n") else ord(" ") for b in range(256))
