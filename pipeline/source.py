"""Turn raw file bytes into UTF-8 source, or say why not (binary, empty, too large, undecodable)."""

from __future__ import annotations

from pipeline._values import value
from pipeline.model import ChunkerConfig, Skipped, SkipReason

_BOM = b"\xef\xbb\xbf"
_SNIFF_BYTES = 8192


@value
class Decoded:
    """Source ready for the parser: UTF-8 bytes and the encoding they were read in."""

    data: bytes
    encoding: str


def decode_source(raw: bytes, file_path: str, config: ChunkerConfig) -> Decoded | Skipped:
    """Check size and content of a file and return UTF-8 bytes, or the reason it is skipped."""
    if len(raw) > config.max_file_bytes:
        return Skipped(
            file_path=file_path,
            reason=SkipReason.TOO_LARGE,
            detail=f"{len(raw)} bytes is above the limit of {config.max_file_bytes}",
        )
    if not raw.removeprefix(_BOM).strip():
        return Skipped(file_path=file_path, reason=SkipReason.EMPTY, detail="no content")
    if b"\x00" in raw[:_SNIFF_BYTES]:
        return Skipped(file_path=file_path, reason=SkipReason.BINARY, detail="NUL byte in the first 8 KiB")
    data = raw.removeprefix(_BOM)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _decode_fallback(data, file_path, config, exc)
    return Decoded(data=data, encoding="utf-8")


def _decode_fallback(data: bytes, file_path: str, config: ChunkerConfig, exc: UnicodeDecodeError) -> Decoded | Skipped:
    # Legacy Java sources are often ISO-8859-1 / windows-1252; javac reads them with -encoding.
    # Indexing them beats losing the code, so a configured single-byte fallback is tried.
    detail = f"invalid UTF-8 at byte {exc.start}"
    if not config.fallback_encoding:
        return Skipped(file_path=file_path, reason=SkipReason.NOT_UTF8, detail=detail)
    try:
        decoded = data.decode(config.fallback_encoding)
    except (UnicodeDecodeError, LookupError):
        return Skipped(file_path=file_path, reason=SkipReason.NOT_UTF8, detail=detail)
    return Decoded(data=decoded.encode("utf-8"), encoding=config.fallback_encoding)
