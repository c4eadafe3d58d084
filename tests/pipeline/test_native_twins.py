"""The C twins of two Python hot spots give what the Python functions give.

`pipeline._native.render_chunk` (a chunk's text, hash and id) and `pipeline._native.summarize` (the
first sentence of a javadoc), compared with `pipeline.render.render_chunk` and
`pipeline.javadoc.summarize` on generated inputs. Skipped without the extension.
"""

from __future__ import annotations

import random
import uuid

import pytest

from pipeline import javadoc, native, render
from pipeline.render import ID_NAMESPACE, chunk_id, chunk_id_prefix, content_hash

NATIVE_RENDER = native.render_chunk if native.NATIVE is not None else None
NATIVE_SUMMARIZE = native.summarize if native.NATIVE is not None else None
needs_native = pytest.mark.skipif(
    native.NATIVE is None, reason="pipeline._native is not built (scripts/build_native) or off"
)

WORDS = ["a", "Größe", "名前", "x.y", "", " ", "${p}", "\t", "line\nbreak", "€", "\u2028", "@Ann(1)", "GET"]


def _words(rng: random.Random, most: int) -> tuple[str, ...]:
    return tuple(rng.choice(WORDS) + str(i) for i in range(rng.randrange(most + 1)))


def _args(seed: int) -> render.RenderArgs:
    rng = random.Random(seed)
    count = rng.choice([1, 1, 2, 5])
    return (
        rng.choice(["acme/shop", "gitlab:7", "ünï/repo"]),
        rng.choice(["", "com.acme", "ünï"]),
        rng.choice(["A", "com.acme.A.m", "ünï.Größe.grüß"]),
        rng.choice(["method", "class", "constructor", "method_part"]),
        rng.choice([None, "", "service", "rest_controller"]),
        rng.choice(["m()", "grüß(Straße s): void", ""]),
        _words(rng, 3),
        _words(rng, 2),
        _words(rng, 3),
        _words(rng, 40),
        rng.choice([None, "", "Sums.", "Grüße, Welt."]),
        rng.choice(["", "void m() {}", "  名前 x = 1;\n  }", "\n\n"]),
        rng.randrange(count),
        count,
        chunk_id_prefix(rng.choice(["acme/shop", "gitlab:7"]), rng.choice(["A.java", "ünï/B.java"])),
        rng.choice(["type:A", "A.m(int,String...)", "Größe.grüß(Straße)", "A.B#2"]),
    )


@needs_native
@pytest.mark.parametrize("seed", range(200))
def test_the_c_renderer_gives_what_python_gives(seed: int) -> None:
    args = _args(seed)
    assert NATIVE_RENDER is not None
    assert NATIVE_RENDER(*args) == render.render_chunk(*args)


@pytest.mark.parametrize("seed", range(20))
def test_render_chunk_is_the_text_its_hash_and_its_id(seed: int) -> None:
    args = _args(seed)
    text, digest, point_id = native.render_chunk(*args)
    assert text.startswith(f"repository: {args[0]}\n") and text.endswith(f"\n---\n{args[11]}")
    assert digest == content_hash(text)
    assert point_id == render.chunk_id_in(args[14], args[15], args[12])


def test_chunk_id_from_a_prefix_is_the_uuid5_of_the_whole_name() -> None:
    prefix = chunk_id_prefix("gitlab:7", "src/Größe.java")
    expected = str(uuid.uuid5(ID_NAMESPACE, "gitlab:7\nsrc/Größe.java\nGröße.m()\n3"))
    assert (
        render.chunk_id_in(prefix, "Größe.m()", 3) == expected == chunk_id("gitlab:7", "src/Größe.java", "Größe.m()", 3)
    )


JAVADOC_PIECES = [
    "{", "}", "@", "{@link ", "{@linkplain ", "{@code ", "{@literal ", "{@see ", "#", "(", ")", "<p>", "<P>", "</b>",
    "<b>", "<h3 x>", "<pre>", "<table>", "<ul>", "<ol>", "<o", "<", ">", ".", ". ", ".\n", " ", "  ", "\t", "\n",
    "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "*", " * ", "@param x", "word", "A", "_", "9", "e.g.", "h1",
    "/**", "*/", "/", "Größe", "\u2028", "\x85",
]  # fmt: skip


@needs_native
@pytest.mark.parametrize("seed", range(40))
def test_the_c_summary_is_the_python_summary(seed: int) -> None:
    rng = random.Random(seed)
    assert NATIVE_SUMMARIZE is not None
    for _ in range(100):
        raw = "".join(rng.choice(JAVADOC_PIECES) for _ in range(rng.randrange(60)))
        raw = ("/**" if rng.random() < 0.7 else "") + raw + ("*/" if rng.random() < 0.7 else "")
        assert NATIVE_SUMMARIZE(raw) == javadoc.summarize(raw), raw


@needs_native
@pytest.mark.parametrize(
    "raw",
    [
        "/** Returns {@linkplain java.nio.charset.Charset#defaultCharset() the default}. More. */",
        "/**\n * Uses {@link Map#get(Object)} and {@link #size}.\n * <p>Not this.\n */",
        "/** A {@code {nested}} body, {@code {a {b}}} not a tag. Done. */",
        "/** " + "long " * 100 + "end. */",
        "/**\n * @return nothing\n */",
        "/**/",
        "/** x " + "y" * 2100 + ". */",
    ],
)
def test_the_c_summary_of_tricky_javadoc(raw: str) -> None:
    assert NATIVE_SUMMARIZE is not None
    assert NATIVE_SUMMARIZE(raw) == javadoc.summarize(raw)
