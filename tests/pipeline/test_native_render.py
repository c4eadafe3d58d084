"""`pipeline._native.render_chunk` gives the text, hash and id `pipeline.render.render_chunk` gives."""

from __future__ import annotations

import random
import uuid

import pytest

from pipeline import reader, render
from pipeline.render import ID_NAMESPACE, chunk_id, chunk_id_prefix, content_hash

NATIVE_RENDER = reader.render_chunk if reader.NATIVE is not None else None
needs_native = pytest.mark.skipif(
    NATIVE_RENDER is None, reason="pipeline._native is not built (scripts/build_native) or off"
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
    text, digest, point_id = reader.render_chunk(*args)
    assert text.startswith(f"repository: {args[0]}\n") and text.endswith(f"\n---\n{args[11]}")
    assert digest == content_hash(text)
    assert point_id == render.chunk_id_in(args[14], args[15], args[12])


def test_chunk_id_from_a_prefix_is_the_uuid5_of_the_whole_name() -> None:
    prefix = chunk_id_prefix("gitlab:7", "src/Größe.java")
    expected = str(uuid.uuid5(ID_NAMESPACE, "gitlab:7\nsrc/Größe.java\nGröße.m()\n3"))
    assert (
        render.chunk_id_in(prefix, "Größe.m()", 3) == expected == chunk_id("gitlab:7", "src/Größe.java", "Größe.m()", 3)
    )
