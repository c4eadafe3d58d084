from __future__ import annotations

from app.store.vectors import StoredState


def state(*points: tuple[str, str, str]) -> StoredState:
    out = StoredState()
    for point_id, file_path, source in points:
        out.add(point_id, file_path, "c", "p", source)
    return out


def test_a_file_has_a_source_hash_when_all_its_points_carry_the_same() -> None:
    found = state(("1", "A.java", "h"), ("2", "A.java", "h"), ("3", "B.java", "h"), ("4", "B.java", "g"))

    assert found.source_of("A.java") == "h"
    assert found.source_of("B.java") is None  # written by two runs: chunk it again
    assert found.source_of("C.java") is None  # nothing stored


def test_points_written_without_a_source_hash_give_none() -> None:
    assert state(("1", "A.java", ""), ("2", "A.java", "")).source_of("A.java") is None


def test_the_part_of_some_files_keeps_their_source_hashes() -> None:
    part = state(("1", "A.java", "h"), ("2", "B.java", "g")).of_files(["B.java"])

    assert (part.sources, part.source_of("B.java"), part.source_of("A.java")) == ({"2": "g"}, "g", None)
