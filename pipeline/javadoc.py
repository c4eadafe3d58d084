"""Javadoc: the first sentence of the comment that documents a declaration (the readers find the comment).

The first sentence ends, as in the javadoc tool, at the first period followed by white space
outside inline tags, at a paragraph tag such as `<p>`, or where the block tags begin. Inline tags
render as javadoc renders them: `{@code x}` as `x`, `{@link A#b label}` as `label`, and
`{@link A#b}` as `A.b`.
"""

from __future__ import annotations

import re

_INLINE_TAG = re.compile(r"\{@(\w+)\s*([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
_PARAGRAPH = re.compile(r"<(?:p|P|pre|ul|ol|table|h\d)\b[^>]*>")
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_SENTENCE_END = re.compile(r"\.(?=\s|$)")
_MAX_SUMMARY = 300
_HEAD_LINES = 3  # lines read before the whole comment: 2 in 3 summaries are decided by them
_HEAD_CHARS = 512


def summarize(raw: str) -> str | None:
    """First sentence of a javadoc comment as plain text, or None when it has no description."""
    # The summary is capped at 300 characters, so the first 2,000 of the comment always hold it.
    text = raw[:2000].removeprefix("/**").removesuffix("*/")
    # More lines than _HEAD_LINES in a prefix means its first ones end inside it: they are the
    # comment's first lines, and most summaries need no more (splitting all of it costs more).
    head = text[:_HEAD_CHARS].splitlines()
    quick = _unmarked_first_sentence(head[:_HEAD_LINES] if len(head) > _HEAD_LINES else text.splitlines()[:_HEAD_LINES])
    if quick is not None:
        return quick
    description = _description(text.splitlines())
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


def _unmarked_first_sentence(head: list[str]) -> str | None:
    """The summary, when the first lines of the comment decide it alone; else None.

    Two javadocs in three (java.base) end their first sentence in the first lines with no `{` or `<`
    before its period. Then no inline tag, HTML tag or paragraph starts before that period, and the
    later lines only append text after it (the description starts with the text of these lines), so
    the full rules of `summarize` cut at the same period; reading the whole comment is skipped.
    """
    text = " ".join(" ".join(_text_lines(head)).split())
    end = _SENTENCE_END.search(text)
    if end is None:
        return None
    sentence = text[: end.end()]
    if "{" in sentence or "<" in sentence:
        return None
    return sentence[:_MAX_SUMMARY]


def _text_lines(lines: list[str]) -> list[str]:
    """Comment lines without their leading `*`, up to the block tags (@param, @return...)."""
    stripped_lines = []
    for line in lines:
        stripped = line.strip().removeprefix("*").strip()
        if stripped.startswith("@"):
            break
        stripped_lines.append(stripped)
    return stripped_lines


def _description(lines: list[str]) -> str:
    text = " ".join(" ".join(_text_lines(lines)).split())
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
        ref, label = _split_reference(body)
        if label:
            return label
        return ref.lstrip("#").replace("#", ".")
    return body  # code, literal, value, ...


def _split_reference(body: str) -> tuple[str, str]:
    """Split `A#b(X, Y) the label` into (`A#b(X, Y)`, `the label`).

    The reference ends at the first space outside its parameter list.
    """
    depth = 0
    for i, char in enumerate(body):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char.isspace() and depth == 0:
            return body[:i], body[i:].strip()
    return body, ""


def _finish(out: list[str]) -> str | None:
    summary = " ".join("".join(out).split())
    return summary[:_MAX_SUMMARY] or None
