"""Javadoc: find the comment that documents a declaration and take its first sentence.

The first sentence ends, as in the javadoc tool, at the first period followed by white space
outside inline tags, at a paragraph tag such as `<p>`, or where the block tags begin. Inline tags
render as javadoc renders them: `{@code x}` as `x`, `{@link A#b label}` as `label`, and
`{@link A#b}` as `A.b`.
"""

from __future__ import annotations

import re

from tree_sitter import Node

_INLINE_TAG = re.compile(r"\{@(\w+)\s*([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
_PARAGRAPH = re.compile(r"<(?:p|P|pre|ul|ol|table|h\d)\b[^>]*>")
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_SENTENCE_END = re.compile(r"\.(?=\s|$)")
_MAX_SUMMARY = 300


def javadoc_of(decl: Node) -> Node | None:
    """The `/** ... */` comment node right before a declaration, if there is one."""
    prev = decl.prev_named_sibling
    while prev is not None and prev.type == "line_comment":
        prev = prev.prev_named_sibling
    if prev is None or prev.type != "block_comment" or prev.text is None:
        return None
    raw = prev.text
    return prev if raw.startswith(b"/**") and raw != b"/**/" else None


def summarize(raw: str) -> str | None:
    """First sentence of a javadoc comment as plain text, or None when it has no description."""
    description = _description(raw)
    if not description:
        return None
    out: list[str] = []
    pos = 0
    for tag in _INLINE_TAG.finditer(description):
        if _append_plain(out, description[pos : tag.start()]):
            return _finish(out)
        out.append(_render_inline(tag.group(1), tag.group(2).strip()))
        pos = tag.end()
    _append_plain(out, description[pos:])
    return _finish(out)


def _description(raw: str) -> str:
    # The summary is capped at 300 characters, so the first 2,000 of the comment always hold it.
    lines = []
    for line in raw[:2000].removeprefix("/**").removesuffix("*/").splitlines():
        stripped = line.strip().removeprefix("*").strip()
        if stripped.startswith("@"):
            break  # block tags (@param, @return...) end the description
        lines.append(stripped)
    text = " ".join(" ".join(lines).split())
    paragraph = _PARAGRAPH.search(text)
    return text[: paragraph.start()] if paragraph and paragraph.start() > 0 else text


def _append_plain(out: list[str], plain: str) -> bool:
    """Add plain text; True when it holds the end of the first sentence (then cut there)."""
    plain = _HTML_TAG.sub("", plain)
    end = _SENTENCE_END.search(plain)
    if end is None:
        out.append(plain)
        return False
    out.append(plain[: end.end()])
    return True


def _render_inline(tag: str, body: str) -> str:
    if tag in ("link", "linkplain", "see"):
        ref, _, label = body.partition(" ")
        if label.strip():
            return label.strip()
        return ref.lstrip("#").replace("#", ".")
    return body  # code, literal, value, ...


def _finish(out: list[str]) -> str | None:
    summary = " ".join("".join(out).split())
    return summary[:_MAX_SUMMARY] or None
