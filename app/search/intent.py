"""How much the dense (embedding) list counts in the store's fusion, from what the question asks (issue 26).

The store fuses the lexical and the dense list by RRF, the dense list's terms times a weight (the model's:
`EmbeddingSettings.fusion_weight`). One weight for every question is a compromise: a question that is only
code names (`TypeAdapter`, `Gson.toJson`, `JsonMapper`) is answered by the chunk that spells the name, and
the dense list, which reads `JsonMapper` as "JSON" and "mapper", puts every mapper near it. semble leans
its blend toward BM25 for such a query (MinishLab/semble `ranking/weighting.py`: 0.3 semantic for a bare
symbol, 0.5 otherwise); here the dense weight of a question that is only identifiers is multiplied by
`NAMES_ONLY_SHARE` (rule `names_only_dense`, switchable as every signal of `app.search.boosts`).

A question naming nothing keeps the weight: its lists are fused as before. So does a question that mixes
names and words ("ObjectMapper entry point for reading and writing JSON"), where the words are what the
dense list reads well: on semble's benchmark no lean for it held on both Java and Kotlin (docs/performance.md).
"""

from __future__ import annotations

from app.search.boosts import enabled, is_symbol_question
from app.search.question import QueryTerms

NAMES_ONLY_SHARE = 0.3
"""The share of the dense weight a question of code names only keeps (semble's 0.3 for a bare symbol;
0 and 0.3 measured equal on semble's Java symbol queries, 0.6 and up lose `JsonMapper` to other mappers)."""


def dense_weight(terms: QueryTerms, weight: float) -> float:
    """The dense list's weight in the fusion for this question, from the configured `weight`."""
    if enabled("names_only_dense") and is_symbol_question(terms):
        return weight * NAMES_ONLY_SHARE
    return weight
