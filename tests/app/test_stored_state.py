from __future__ import annotations

from app.store.payloads import StampedFiles, read_stamp, source_stamp, stamped_files
from app.store.vectors import StoredState


def state(*points: tuple[str, str, str]) -> StoredState:
    out = StoredState()
    for point_id, file_path, source in points:
        out.add(point_id, file_path, "c", "p", source)
    return out


def stamp(source: str, chunks: int, path: str = "A.java") -> str:
    return source_stamp(source, chunks, path)


def test_a_file_has_a_source_hash_when_all_its_points_carry_the_same() -> None:
    b2, g2 = stamp("h", 2, "B.java"), stamp("g", 2, "B.java")
    found = state(
        ("1", "A.java", stamp("h", 2)), ("2", "A.java", stamp("h", 2)), ("3", "B.java", b2), ("4", "B.java", g2)
    )

    assert found.source_of("A.java") == "h"
    assert found.source_of("B.java") is None  # written by two runs: chunk it again
    assert found.source_of("C.java") is None  # nothing stored


def test_a_file_whose_write_stopped_halfway_has_no_source_hash() -> None:
    # 2 of the 3 points written with the stamp are there (an interrupted run): chunk it again.
    assert state(("1", "A.java", stamp("h", 3)), ("2", "A.java", stamp("h", 3))).source_of("A.java") is None


def test_points_written_without_a_source_hash_give_none() -> None:
    assert state(("1", "A.java", ""), ("2", "A.java", "")).source_of("A.java") is None


def test_a_stamp_of_another_path_or_without_a_path_gives_none() -> None:
    moved = stamp("h", 1, "Old.java")  # the points of a file renamed with the same bytes
    assert state(("1", "A.java", moved)).source_of("A.java") is None
    assert state(("1", "A.java", "h/1")).source_of("A.java") is None  # a stamp written before paths were in it


def test_the_part_of_some_files_keeps_their_source_hashes() -> None:
    g2 = stamp("g", 2, "B.java")
    part = state(("1", "A.java", stamp("h", 2)), ("2", "B.java", g2), ("3", "B.java", g2)).of_files(["B.java"])

    assert (part.sources, part.source_of("B.java"), part.source_of("A.java")) == ({"2": g2, "3": g2}, "g", None)


def test_a_stamp_reads_back_with_a_path_that_has_colons_and_slashes() -> None:
    assert read_stamp(stamp("ab12", 7, "src/a:b/C.java")) == ("ab12", 7, "src/a:b/C.java")
    assert [read_stamp(s) for s in ("", "ab12/7", "ab12/x:C.java", "/7:C.java", "ab12/7:")] == [None] * 5


def test_stamped_files_tell_the_whole_files_and_every_stored_one() -> None:
    counts = {
        stamp("h", 2, "A.java"): 2,  # whole
        stamp("g", 3, "B.java"): 2,  # a write that stopped halfway
        stamp("f", 1, "C.java"): 1,  # two runs' points: not whole
        stamp("e", 1, "C.java"): 1,
    }
    assert stamped_files(counts) == StampedFiles({"A.java": "h"}, {"A.java": 2, "B.java": 2, "C.java": 2})
    assert stamped_files({**counts, "": 3}) is None  # points without a stamp: read the whole state
    assert stamped_files({**counts, "h/2": 2}) is None  # a stamp written before paths were in it
