"""The pure planning of an index write (`plan`): what to embed, refresh, move and delete, and the counts.

The chunks are those of `test_indexing.py`; no store and no embedder are involved.
"""

from __future__ import annotations

from app.store.indexing import RunCounts, move_key, plan_writes
from pipeline.model import FileResult
from tests.app.test_indexing import (
    OWNER,
    OWNER_PATH,
    PET,
    PET_PATH,
    SHA_2,
    by_name,
    chunked,
    ids,
    stored_of,
)


def test_plan_embeds_every_chunk_of_new_files() -> None:
    owner, pet = chunked(OWNER), chunked(PET, PET_PATH)

    plan = plan_writes([owner, pet], {})

    assert plan.embed == owner.chunks + pet.chunks
    assert plan.refresh == ()
    assert plan.delete == ()
    assert plan.per_file == {OWNER_PATH: (4, 0, 0), PET_PATH: (2, 0, 0)}


def test_plan_refreshes_chunks_whose_hash_is_unchanged() -> None:
    owner = chunked(OWNER)
    moved = chunked("// a licence header\n" + OWNER, sha=SHA_2)  # other lines and commit, same text

    plan = plan_writes([moved], stored_of(owner))

    assert plan.embed == ()
    assert plan.refresh == moved.chunks
    assert plan.delete == ()
    assert plan.per_file == {OWNER_PATH: (0, 4, 0)}


def test_plan_embeds_only_the_chunk_whose_hash_differs() -> None:
    owner = chunked(OWNER)
    edited = chunked(OWNER.replace("return 42;", "return 43;"))

    plan = plan_writes([edited], stored_of(owner))

    assert plan.embed == (by_name(edited, "count"),)
    assert ids(plan.refresh) == ids(edited.chunks) - {by_name(edited, "count").id}
    assert plan.delete == ()
    assert plan.per_file == {OWNER_PATH: (1, 3, 0)}


def test_plan_deletes_stored_points_that_no_chunk_keeps() -> None:
    owner = chunked(OWNER)
    trimmed = chunked(OWNER.replace("    public int count() {\n        return 42;\n    }\n\n", ""))
    stored = stored_of(owner)

    plan = plan_writes([trimmed], stored)

    assert plan.delete == (by_name(owner, "count").id,)
    skeleton = trimmed.chunks[0]
    assert plan.embed == (skeleton,)  # the type's skeleton lists its members, so it changed too
    assert plan.per_file == {OWNER_PATH: (1, 2, 1)}


def test_plan_deletes_every_point_of_a_file_that_has_no_chunks_left() -> None:
    owner = chunked(OWNER)
    emptied = FileResult(file_path=OWNER_PATH)

    plan = plan_writes([emptied], stored_of(owner))

    assert plan.embed == plan.refresh == ()
    assert plan.delete == tuple(sorted(ids(owner.chunks)))
    assert plan.per_file == {OWNER_PATH: (0, 0, 4)}


def test_plan_counts_per_file() -> None:
    owner, pet = chunked(OWNER), chunked(PET, PET_PATH)
    stored = {**stored_of(owner, pet), "00000000-0000-5000-8000-000000000000": (PET_PATH, "gone")}
    edited_pet = chunked(PET.replace('"pet"', '"animal"'), PET_PATH)

    plan = plan_writes([owner, edited_pet], stored)

    assert plan.per_file == {OWNER_PATH: (0, 4, 0), PET_PATH: (1, 1, 1)}
    assert plan.delete == ("00000000-0000-5000-8000-000000000000",)


def test_plan_deletes_are_sorted_and_only_count_for_files_of_the_batch() -> None:
    stored = {"b": (OWNER_PATH, "h"), "a": (OWNER_PATH, "h"), "c": ("elsewhere/X.java", "h")}

    plan = plan_writes([FileResult(file_path=OWNER_PATH)], stored)

    assert plan.delete == ("a", "b", "c")
    assert plan.per_file == {OWNER_PATH: (0, 0, 2)}


def test_plan_moves_unchanged_chunks_of_a_renamed_file() -> None:
    old = chunked(OWNER)
    renamed = chunked(OWNER.replace("return 42;", "return 43;"), "pets/src/main/java/demo/Owners.java")
    movable = {move_key(c): c.id for c in old.chunks}

    plan = plan_writes([renamed], stored_of(old), movable)

    assert plan.embed == (by_name(renamed, "count"),)
    assert ids(plan.move) == ids(renamed.chunks) - {by_name(renamed, "count").id}
    assert plan.refresh == ()
    assert plan.delete == tuple(sorted(ids(old.chunks)))
    assert plan.per_file == {"pets/src/main/java/demo/Owners.java": (1, 3, 0)}


def test_run_counts_add_up_plans_and_skipped_files() -> None:
    owner, pet = chunked(OWNER), chunked(PET, PET_PATH)
    empty = chunked("", "pets/src/main/java/demo/Empty.java")
    binary = chunked("", "pets/src/main/java/demo/Blob.java", raw=b"\x00\x01\x02\xca\xfe\xba\xbe\x00")
    counts = RunCounts()

    counts.add(plan_writes([owner, empty], {}), [owner, empty])
    counts.add(plan_writes([pet, binary], {**stored_of(pet), "gone": (PET_PATH, "h")}), [pet, binary])

    assert (counts.files, counts.embedded, counts.reused, counts.deleted) == (4, 4, 2, 1)
    assert counts.skipped == 2
    assert counts.skipped_reasons == {"empty": 1, "binary": 1}
