"""The pooling variants of bench.pooling_variants with the real token table: each does what it names."""

from __future__ import annotations

import zipfile
from collections import Counter
from pathlib import Path

import numpy as np

from app.store.static_embedder import weighted_ids
from app.store.token_table import load_table
from bench.pooling_variants import (
    first_direction,
    idf_weights,
    jdk_word_counts,
    pooled_counts,
    remove_direction,
    sif_weights,
    variant_embed,
)
from pipeline.render import SEPARATOR

CHUNK = f"words: json reader\nsignature: nextString(): String\n{SEPARATOR}\nreturn jaxbElement.getValue();"


def test_sif_weighs_a_frequent_word_less_and_an_unseen_one_fully() -> None:
    table = load_table()
    weights = sif_weights(table, Counter({"get": 900, "json": 100}), a=0.01)
    assert weights[table.index["get"]] < weights[table.index["json"]] < 1.0
    assert weights[table.index["reader"]] == 1.0


def test_idf_weighs_a_word_in_every_file_least() -> None:
    table = load_table()
    weights = idf_weights(table, Counter({"get": 10, "json": 1}), files=10)
    assert weights[table.index["get"]] < weights[table.index["json"]] < weights[table.index["reader"]]


def test_removing_the_first_direction_leaves_nothing_along_it() -> None:
    table = load_table()
    direction = first_direction(table)
    assert abs(float(np.linalg.norm(direction)) - 1.0) < 1e-4
    vector = table.vectors[table.index["json"]].astype(np.float32)
    assert abs(float(remove_direction(vector, direction) @ direction)) < 1e-2 * float(np.linalg.norm(vector))


def test_pooled_counts_is_the_committed_rule_unless_whole_identifiers_are_asked() -> None:
    table = load_table()
    assert pooled_counts(table, CHUNK, 3, whole=False) == weighted_ids(table, CHUNK)
    with_whole = pooled_counts(table, CHUNK, 3, whole=True)
    assert with_whole[table.index["jaxbelement"]] == 1  # in the body, once; its parts as before
    assert with_whole[table.index["jaxb"]] == weighted_ids(table, CHUNK)[table.index["jaxb"]]


def test_the_baseline_variant_embeds_as_the_service_does() -> None:
    from app.store.static_embedder import embed_one

    table = load_table()
    embed = variant_embed(table, np.ones(len(table.index), np.float32), None, 3, whole=False)
    assert np.allclose(embed([CHUNK])[0], embed_one(table, CHUNK), atol=1e-5)


def test_jdk_word_counts_reads_java_base_only(tmp_path: Path) -> None:
    src = tmp_path / "src.zip"
    with zipfile.ZipFile(src, "w") as archive:
        archive.writestr("java.base/java/lang/A.java", "class JsonReader { get(); get(); }")
        archive.writestr("java.sql/java/sql/B.java", "class Sql {}")
    tf, df, files = jdk_word_counts(src)
    assert files == 1 and tf["get"] == 2 and df["get"] == 1 and "sql" not in tf
