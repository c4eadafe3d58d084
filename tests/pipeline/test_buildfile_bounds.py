"""Hostile build files (issue 24): coordinates that are no Maven coordinate, and interpolation bombs.

Every build file here was written for these tests.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

import pytest

from pipeline.buildfiles import coordinate_problem, read_builds

GOOD = ("org.good", "lib", "1.0")
TRAVERSAL = "1.0/../../../../internal/admin/delete?all=true&x="
HOSTILE: list[tuple[str, str, str]] = [
    ("org.lib", "util", TRAVERSAL),
    ("org.lib", "util", ".."),
    ("org.lib", "util", "."),
    ("org.lib", "util", "..;"),
    ("org.lib", "util", "1.0?x=1"),
    ("org.lib", "util", "1.0#frag"),
    ("org.lib", "util", "1.0%2F..%2Fadmin"),
    ("org.lib", "util", "1.0\\admin"),
    ("org.lib", "util", "1.0:admin"),
    ("org.lib", "util", "1.0 beta"),
    ("org.lib", "util", "1.0\tx"),
    ("org.lib", "util", "1.\uff0f0"),  # a fullwidth solidus, which some servers fold to `/`
    ("org.lib", "util", "1" * 201),
    ("org/../../admin", "util", "1.0"),
    ("..", "util", "1.0"),
    (".org", "util", "1.0"),
    ("org.", "util", "1.0"),
    ("org..lib", "util", "1.0"),
    ("org lib", "util", "1.0"),
    ("org.lib?x=1", "util", "1.0"),
    ("org.lib", "..", "1.0"),
    ("org.lib", ".", "1.0"),
    ("org.lib", "util/../../admin", "1.0"),
    ("org.lib", "util#x", "1.0"),
    ("org.lib", "\u00fctil", "1.0"),
    ("org.lib", "u" * 201, "1.0"),
]
FINE = [GOOD, ("org.springframework", "spring-core", "6.1.4"), ("com.acme_x", "my.lib", "1.0-SNAPSHOT"),
        ("io.x", "y", "2.0.0+build.5"), ("a", "b", "1.0.RELEASE")]  # fmt: skip


def pom_of(*dependencies: tuple[str, str, str]) -> bytes:
    items = "".join(
        f"<dependency><groupId>{escape(g)}</groupId><artifactId>{escape(a)}</artifactId>"
        f"<version>{escape(v)}</version></dependency>"
        for g, a, v in dependencies
    )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><groupId>com.acme</groupId><artifactId>shop</artifactId>'
        f"<version>1</version><dependencies>{items}</dependencies></project>"
    ).encode()


@pytest.mark.parametrize("coordinates", HOSTILE, ids=[":".join(c)[:40] for c in HOSTILE])
def test_a_hostile_coordinate_is_refused(coordinates: tuple[str, str, str]) -> None:
    why = coordinate_problem(*coordinates)
    assert why is not None and why.startswith("not a Maven coordinate: ")


@pytest.mark.parametrize("coordinates", FINE, ids=[":".join(c) for c in FINE])
def test_a_maven_coordinate_passes(coordinates: tuple[str, str, str]) -> None:
    assert coordinate_problem(*coordinates) is None


@pytest.mark.parametrize("coordinates", HOSTILE, ids=[":".join(c)[:40] for c in HOSTILE])
def test_a_pom_declaring_one_records_it_unresolved_with_the_reason(coordinates: tuple[str, str, str]) -> None:
    reading = read_builds({"pom.xml": pom_of(GOOD, coordinates)})
    good, hostile = reading.dependencies
    assert (good.group, good.artifact, good.version, good.unresolved) == (*GOOD, None)
    assert (hostile.unresolved or "").startswith("not a Maven coordinate")
    assert max(len(hostile.group), len(hostile.artifact), len(hostile.version)) <= 200  # storable


def test_a_gradle_notation_is_checked_too() -> None:
    script = "dependencies {\n  implementation 'org.lib:util:1.0'\n  implementation 'org.lib:util2:1.0%2F..%2Fx'\n}\n"
    found = {d.artifact: d.unresolved for d in read_builds({"build.gradle": script.encode()}).dependencies}
    assert found["util"] is None
    assert (found["util2"] or "").startswith("not a Maven coordinate: version")
