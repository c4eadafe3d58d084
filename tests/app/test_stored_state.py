from __future__ import annotations

from app.store.payloads import source_stamp
from app.store.vectors import StoredState


def state(*points: tuple[str, str, str]) -> StoredState:
    out = StoredState()
    for point_id, file_path, source in points:
        out.add(point_id, file_path, "c", "p", source)
    return out


H2, G2, H3 = source_stamp("h", 2), source_stamp("g", 2), source_stamp("h", 3)


def test_a_file_has_a_source_hash_when_all_its_points_carry_the_same() -> None:
    found = state(("1", "A.java", H2), ("2", "A.java", H2), ("3", "B.java", H2), ("4", "B.java", G2))

    assert found.source_of("A.java") == "h"
    assert found.source_of("B.java") is None  # written by two runs: chunk it again
    assert found.source_of("C.java") is None  # nothing stored


def test_a_file_whose_write_stopped_halfway_has_no_source_hash() -> None:
    # 2 of the 3 points written with the stamp are there (an interrupted run): chunk it again.
    assert state(("1", "A.java", H3), ("2", "A.java", H3)).source_of("A.java") is None


def test_points_written_without_a_source_hash_give_none() -> None:
    assert state(("1", "A.java", ""), ("2", "A.java", "")).source_of("A.java") is None


def test_the_part_of_some_files_keeps_their_source_hashes() -> None:
    part = state(("1", "A.java", H2), ("2", "B.java", G2), ("3", "B.java", G2)).of_files(["B.java"])

    assert (part.sources, part.source_of("B.java"), part.source_of("A.java")) == ({"2": G2, "3": G2}, "g", None)
