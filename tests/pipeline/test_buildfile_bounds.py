"""Hostile build files (issue 24): coordinates that are no Maven coordinate, and interpolation bombs.

Every build file here was written for these tests.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

import pytest

from pipeline.buildfiles import Problem, coordinate_problem, read_builds
from pipeline.buildfiles.gradle import GradleBuild, variables
from pipeline.buildfiles.model import MAX_VALUE_CHARS, MAX_WORK, OVER_VALUE, OVER_WORK, Work
from pipeline.buildfiles.pom import MAX_DEPTH, Pom, PomSet, interpolate, parse_pom

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


def bomb(copies: int, *, extra: str = "") -> bytes:
    """A pom whose property repeats itself `copies` times, used as a version: copies^10 without bounds."""
    return (
        "<project><groupId>com.acme</groupId><artifactId>bomb</artifactId><version>1</version>"
        f"<properties><a>{'${a}' * copies}</a><ok>2.0</ok></properties><dependencies>"
        "<dependency><groupId>org.x</groupId><artifactId>y</artifactId><version>${a}</version></dependency>"
        f"{extra}</dependencies></project>"
    ).encode()


def test_the_property_bomb_stops_at_the_bound_and_the_rest_of_the_pom_reads() -> None:
    assert len(bomb(6)) <= 332  # the size of issue 24's
    good = "<dependency><groupId>org.good</groupId><artifactId>lib</artifactId><version>${ok}</version></dependency>"
    reading = read_builds({"pom.xml": bomb(6, extra=good), "svc/pom.xml": pom_of(("org.z", "z", "1"))})
    found = {d.artifact: d for d in reading.dependencies}
    assert found["y"].unresolved == OVER_VALUE and len(found["y"].version) <= 200
    assert (found["lib"].version, found["lib"].unresolved) == ("2.0", None)
    assert reading.problems == (Problem(source="pom.xml", detail=OVER_VALUE),)  # once, though the model reads it too


def test_interpolating_the_bomb_is_bounded_work() -> None:
    work = Work()
    text, why = interpolate("${a}", {"a": "${a}" * 6}.get, work)
    assert why == OVER_VALUE and len(text) <= MAX_VALUE_CHARS
    assert MAX_WORK - work.left <= MAX_DEPTH * MAX_VALUE_CHARS  # characters produced, not 6^10 copies


def test_a_pom_importing_itself_as_a_bom_builds_its_model_once() -> None:
    imports = "".join(
        "<dependency><groupId>com.acme</groupId><artifactId>bomb</artifactId><version>1</version>"
        f"<type>pom</type><scope>import</scope><classifier>{i}</classifier></dependency>"
        for i in range(6)
    )
    head = "<project><groupId>com.acme</groupId><artifactId>bomb</artifactId><version>1</version>"
    data = f"{head}<dependencyManagement><dependencies>{imports}</dependencies></dependencyManagement></project>"
    parsed = parse_pom("pom.xml", data.encode())
    assert isinstance(parsed, Pom)
    work = Work()
    PomSet({"pom.xml": parsed}).model(parsed, work)
    assert work.hit is None and MAX_WORK - work.left < 100  # 6^10 models without the memo: the budget spent


def test_the_work_budget_of_one_file_is_a_problem_of_that_file_only() -> None:
    work = Work(left=50)
    values = {"a": "x" * 40}
    assert interpolate("${a}", values.get, work) == ("x" * 40, None)
    assert interpolate("${a}", values.get, work) == ("${a}", OVER_WORK)
    assert interpolate("1.0", values.get, work) == ("1.0", None)  # a literal still reads
    assert work.hit == OVER_WORK


def test_gradle_variable_expansion_is_bounded_per_value() -> None:
    files = {
        "gradle.properties": b"big=" + b"9" * 600 + b"\n",
        "build.gradle": b'dependencies {\n  implementation "org.x:y:$big$big"\n'
        b'  implementation "org.good:lib:1.0"\n}\n',
    }
    reading = read_builds(files)
    found = {d.artifact: d for d in reading.dependencies}
    assert found["y"].unresolved == OVER_VALUE and found["lib"].unresolved is None
    assert reading.problems == (Problem(source="build.gradle", detail=OVER_VALUE),)


@pytest.mark.parametrize("opening", ["implementation", "implementation(", "implementation platform("])
def test_a_run_of_blanks_after_a_configuration_is_read_in_one_pass(opening: str) -> None:
    """`\\s*\\(?\\s*` matched N blanks N ways: 20,000 took 33 s before (bench/build_bomb.py --runs), 100,000 hours."""
    script = f"{opening}{' ' * 100_000}x\nimplementation 'org.good:lib:1.0'\n"
    [found] = read_builds({"build.gradle": script.encode()}).dependencies
    assert (found.group, found.artifact, found.version, found.unresolved) == ("org.good", "lib", "1.0", None)


def test_an_unclosed_run_of_property_openings_is_read_in_one_pass() -> None:
    """`\\$\\{([^}]+)\\}` scanned to the end from each `${`: 20,000 of them took 4.8 s before (bench/build_bomb.py)."""
    reading = read_builds({"pom.xml": pom_of(("org.x", "y", "${" * 200_000), GOOD)})
    found = {d.artifact: d for d in reading.dependencies}
    assert found["lib"].unresolved is None and found["y"].unresolved is not None and len(found["y"].version) <= 200


def test_a_root_script_s_variables_are_read_once_for_every_module_below_it() -> None:
    """Each module re-read the root script's assignments: 200 modules under an 800 KiB root took 43 s before."""
    modules = {f"m{i}/build.gradle": b"implementation 'a:b:$x'\n" for i in range(20)}
    files = {"build.gradle": b"x = '1'\n" * 1000, **modules}
    calls: list[str] = []

    def counted(text: str) -> dict[str, str]:
        calls.append(text)
        return variables(text)

    build = GradleBuild(files, read=counted)
    read = [build.declared(path) for path in sorted(build.scripts)]
    assert [d.version for found in read for d in found] == ["1"] * 20
    assert len(calls) <= 2 * len(files)  # once per script (and per absent .kts), not once per module below


def test_what_is_stored_has_a_bounded_length() -> None:
    """A groupId PostgreSQL cannot index failed the whole reading, which then ran again at every sync."""
    long_group = "com." + "a" * 5000
    imports = "".join(
        f"<dependency><groupId>org.bom{i}</groupId><artifactId>{'b' * 150}</artifactId><version>1</version>"
        "<type>pom</type><scope>import</scope></dependency>"
        for i in range(20)
    )
    data = (
        f"<project><groupId>{long_group}</groupId><artifactId>shop</artifactId><version>1</version>"
        f"<dependencyManagement><dependencies>{imports}</dependencies></dependencyManagement>"
        "<dependencies><dependency><groupId>org.x</groupId><artifactId>y</artifactId></dependency></dependencies>"
        "</project>"
    ).encode()
    gradle = b"group = '" + b"g" * 5000 + b"'\n"
    reading = read_builds({"pom.xml": data, "build.gradle": gradle, "svc/pom.xml": pom_of(GOOD)})
    assert reading.groups == ("com.acme",)  # no groupId of 5,000 characters: not one a library could have
    found = {d.artifact: d for d in reading.dependencies}
    assert (found["y"].unresolved or "").startswith("managed by BOM org.bom0") and len(
        found["y"].unresolved or ""
    ) <= 1000


def test_an_unclosed_run_of_property_openings_in_a_gradle_notation_is_read_in_one_pass() -> None:
    """A notation's `${...}` may quote a name (`${property("v")}`): 200,000 unclosed openings stay one pass."""
    script = 'implementation("org.x:y:' + "${" * 200_000 + '")\nimplementation("org.good:lib:1.0")\n'
    found = {d.artifact: d for d in read_builds({"build.gradle.kts": script.encode()}).dependencies}
    assert found["lib"].unresolved is None
