"""BERT's uncased WordPiece tokenizer over a `vocab.txt`, in plain Python (no `tokenizers` package).

What all-MiniLM-L6-v2's tokenizer does with English and code: lowercase, strip accents, split on
whitespace and punctuation (every punctuation character is a token of its own, `_` and `$` included),
then cut each word greedily into the longest pieces of the vocabulary (`deserializer` → `des`,
`##eria`, `##lizer`); a word that cannot be cut is `[UNK]`. The pieces of a word are cached: code
repeats its words, so a chunk costs a few dictionary look-ups.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

MAX_WORD_CHARS = 100
"""Longer words are `[UNK]` (BERT's rule)."""

_WORDS = re.compile(r"[^\W_]+|[^\w\s]|_", re.UNICODE)


def basic_words(text: str) -> list[str]:
    """BERT's basic tokenization: lowercased, accents stripped, split on whitespace and punctuation."""
    text = text.lower()
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    return _WORDS.findall(text)


@dataclass(slots=True)
class WordPiece:
    """A vocabulary (token → id, `##` marks a piece inside a word) and its per-word cache."""

    vocab: dict[str, int]
    unk: int
    cls: int
    sep: int
    _cache: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> WordPiece:
        """The tokenizer of a `vocab.txt` (one token a line, its id the line's number)."""
        tokens = path.read_text(encoding="utf-8").split("\n")
        vocab = {token: i for i, token in enumerate(tokens) if token}
        return cls(vocab=vocab, unk=vocab["[UNK]"], cls=vocab["[CLS]"], sep=vocab["[SEP]"])

    def pieces(self, word: str) -> tuple[int, ...]:
        """The ids of `word`'s pieces (a basic word: lowercase, no space or punctuation inside)."""
        found = self._cache.get(word)
        if found is None:
            found = self._cut(word)
            if len(self._cache) < 200_000:  # bounded (about 30 MB): a corpus of distinct words cannot grow it forever
                self._cache[word] = found
        return found

    def _cut(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD_CHARS:
            return (self.unk,)
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if (token := self.vocab.get(piece)) is not None:
                    ids.append(token)
                    break
                end -= 1
            else:
                return (self.unk,)
            start = end
        return tuple(ids)

    def encode(self, text: str, max_tokens: int = 256) -> list[int]:
        """`[CLS]`, the pieces of `text`'s words (cut to `max_tokens` in all), `[SEP]`."""
        ids = [self.cls]
        for word in basic_words(text):
            ids.extend(self.pieces(word))
            if len(ids) >= max_tokens - 1:
                del ids[max_tokens - 1 :]
                break
        ids.append(self.sep)
        return ids
