"""decode_source: raw bytes to UTF-8 source, or the reason a file is skipped."""

from __future__ import annotations

import pytest

from pipeline.model import ChunkerConfig, Skipped, SkipReason
from pipeline.source import Decoded, decode_source

PATH = "src/main/java/demo/A.java"
JAVA = b"class A {}\n"


def decode(raw: bytes, config: ChunkerConfig | None = None) -> Decoded | Skipped:
    return decode_source(raw, PATH, config or ChunkerConfig())


def reason(raw: bytes, config: ChunkerConfig | None = None) -> SkipReason:
    result = decode(raw, config)
    assert isinstance(result, Skipped), result
    assert result.file_path == PATH
    return result.reason


def test_utf8_source_is_kept_as_is() -> None:
    assert decode("class Größe {}".encode()) == Decoded(data="class Größe {}".encode(), encoding="utf-8")


def test_utf8_bom_is_removed() -> None:
    assert decode(b"\xef\xbb\xbf" + JAVA) == Decoded(data=JAVA, encoding="utf-8")


def test_non_utf8_source_is_decoded_with_the_cp1252_fallback() -> None:
    raw = 'class A { String s = "€ Größe"; }'.encode("cp1252")
    assert decode(raw) == Decoded(data='class A { String s = "€ Größe"; }'.encode(), encoding="cp1252")


def test_non_utf8_source_without_fallback_is_skipped() -> None:
    raw = 'class A { String s = "Größe"; }'.encode("cp1252")
    assert reason(raw, ChunkerConfig(fallback_encoding=None)) is SkipReason.NOT_UTF8


def test_bytes_the_fallback_cannot_decode_are_skipped() -> None:
    assert reason(b'class A { String s = "\x81"; }') is SkipReason.NOT_UTF8  # 0x81 is unassigned in cp1252


def test_unknown_fallback_encoding_is_skipped_not_raised() -> None:
    raw = "class Größe {}".encode("cp1252")
    assert reason(raw, ChunkerConfig(fallback_encoding="no-such-codec")) is SkipReason.NOT_UTF8


def test_other_fallback_encoding_is_used_when_configured() -> None:
    raw = "class Größe {}".encode("latin-1")
    assert decode(raw, ChunkerConfig(fallback_encoding="latin-1")) == Decoded(
        data="class Größe {}".encode(), encoding="latin-1"
    )


def test_nul_byte_means_binary() -> None:
    assert reason(b"\x00\x01\x02\xca\xfe\xba\xbe") is SkipReason.BINARY


def test_nul_byte_after_text_in_the_first_8_kib_means_binary() -> None:
    assert reason(JAVA + b"\x00") is SkipReason.BINARY


def test_nul_byte_beyond_the_first_8_kib_is_not_sniffed() -> None:
    assert isinstance(decode(JAVA + b" " * 9000 + b"\x00"), Decoded)


def test_no_bytes_is_empty() -> None:
    assert reason(b"") is SkipReason.EMPTY


def test_only_white_space_is_empty() -> None:
    assert reason(b" \n\t\r\n ") is SkipReason.EMPTY


@pytest.mark.parametrize("raw", [b"\xef\xbb\xbf", b"\xef\xbb\xbf  \r\n"], ids=["bom", "bom+blank"])
def test_only_a_bom_is_empty(raw: bytes) -> None:
    assert reason(raw) is SkipReason.EMPTY


def test_file_above_the_size_limit_is_too_large() -> None:
    assert reason(JAVA + b" " * 10, ChunkerConfig(max_file_bytes=len(JAVA) + 9)) is SkipReason.TOO_LARGE


def test_file_at_the_size_limit_is_read() -> None:
    assert isinstance(decode(JAVA, ChunkerConfig(max_file_bytes=len(JAVA))), Decoded)


def test_skip_detail_is_human_readable() -> None:
    result = decode(b"\x00", ChunkerConfig())
    assert isinstance(result, Skipped)
    assert result.detail
    assert (result.line_start, result.line_end) == (None, None)
