r"""Indexed text is untrusted: the one rule that keeps it inside the frames and fences we put around it.

Every place that shows indexed text to an agent wraps it: MCP and REST answers in a Markdown code
fence (`fence_for`), the context a prompt hook injects in `<java-kb-context>`
(`app.search.context.frame`). Whoever can push to an indexed project writes that text, so it must not
be able to close either wrapper early, not even with a look-alike a model would read as the real thing
(issue 24): `< /java-kb-context>`, a zero-width space or joiner inside the tag, fullwidth `<` `/` `>`
(U+FF1C, U+FF0F, U+FF1E), Cyrillic letters in the name, `&lt;` or `\u003c` for `<`, fullwidth
backticks for a fence.

Both wrappers read the text through `folded`, one normalisation written once:

- each character is NFKC-normalised on its own (fullwidth and small forms become ASCII);
- default-ignorable characters are dropped: format characters (`Cf`: zero-width space, joiners,
  U+FEFF, bidi controls, soft hyphen, tag characters) and the invisible fillers and selectors;
- a few look-alikes NFKC keeps are mapped to what they look like (angle quotation marks and brackets
  to `<`, Cyrillic and Greek letters to Latin ones).

Matching on the folded text only decides *where* to break a tag; nothing is ever removed from what the
agent reads except the tag's own opening character. Matching is deliberately generous: a false match
in ordinary code only turns a `<` into `[`.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_IGNORABLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810), *range(0xFE00, 0xFE10)]
)  # Default_Ignorable_Code_Point outside `Cf`: grapheme joiner, Hangul fillers, variation selectors
_LOOK_ALIKES = str.maketrans(
    "\u2039\u3008\u27e8\u276e\u02c2\u1438\u276c\u29fc"  # angle quotation marks, brackets, arrowheads -> <
    "\u2215\u2044\u29f8\u2571"  # division, fraction, big and box-drawing slashes -> /
    "\u0430\u0435\u043e\u0441\u0445\u0458\u043a\u0432\u0442\u0410\u0415\u041e\u0421\u0425\u0408\u041a\u0412\u0422"
    "\u03bf\u03b1\u03bd\u03ba\u03b5\u03c4\u039f\u0391\u039d\u039a\u0395\u03a4",
    "<<<<<<<<" "////" "aeocxjkbtAEOCXJKBT" "oavketOANKET",
)  # fmt: skip
_LT = r"(?P<lt><|&lt;?|&#0*60;?|&#x0*3c;?|\\u0*3c|\\x3c|%3c)"
_SEP = r"[\W_]{0,3}"


def _tag_pattern(tag: str) -> re.Pattern[str]:
    """`tag` opened or closed, with anything but a word character or `<` between `<` and a split name."""
    name = _SEP.join(re.escape(part) for part in re.split(r"[\W_]+", tag))
    return re.compile(rf"{_LT}[^\w<]{{0,4}}{name}", re.IGNORECASE)


@functools.lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    code = ord(char)
    if code in _IGNORABLE or unicodedata.category(char) == "Cf":
        return ""
    return unicodedata.normalize("NFKC", char).translate(_LOOK_ALIKES)


def folded(text: str) -> str:
    """`text` as it reads: NFKC per character, default-ignorables dropped, look-alikes mapped (module docs).

    Each distinct character is folded once and the text translated in one pass: code with comments in
    Chinese has a few hundred distinct characters in thousands.
    """
    if text.isascii():
        return text
    table = {ord(c): f for c in set(text) if (f := _fold_char(c)) != c}
    return text.translate(table) if table else text


def _folded_with_origins(text: str) -> tuple[str, list[int]]:
    """`folded(text)`, and for each of its characters the index of the character of `text` it comes from."""
    parts: list[str] = []
    origins: list[int] = []
    for index, char in enumerate(text):
        piece = _fold_char(char)
        parts.append(piece)
        origins.extend([index] * len(piece))
    return "".join(parts), origins


def defused(text: str, tag: str) -> str:
    """`text` with every opening or closing `tag`, look-alikes included, broken: its `<` becomes `[`.

    The whole look-alike span is rewritten in its folded form (`[/java-kb-context`), so what the agent
    reads says plainly what was there and can no longer pass for the tag; text outside matches is kept.
    """
    pattern = _tag_pattern(tag)
    if text.isascii():
        return pattern.sub(lambda m: "[" + m.group(0)[len(m.group("lt")) :], text)
    if pattern.search(folded(text)) is None:
        return text
    flat, origins = _folded_with_origins(text)
    out: list[str] = []
    kept = 0
    for match in pattern.finditer(flat):
        first, last = origins[match.start()], origins[match.end() - 1]
        out += [text[kept:first], "[", match.group(0)[len(match.group("lt")) :]]
        kept = last + 1
    out.append(text[kept:])
    return "".join(out)


_BACKTICKS = re.compile(r"`{3,}")


def fence_for(code: str) -> str:
    """A code fence longer than any run of backticks in `code`, look-alikes included (CommonMark, module docs)."""
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(folded(code))), default=2)
    return "`" * max(3, longest + 1)
