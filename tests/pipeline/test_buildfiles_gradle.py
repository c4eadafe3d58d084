"""Gradle build files and version catalogs: the forms of a dependency, platforms, variables and catalog
aliases, and what a bad catalog reports.

The Maven side: `test_buildfiles.py`.
"""

from __future__ import annotations

import pytest

from pipeline.buildfiles import (
    DependencyKind,
    read_builds,
)
from tests.pipeline.test_buildfiles import versions

GRADLE_CASES: list[tuple[str, str, dict[str, tuple[str, str | None]]]] = [
    ("groovy string, single quotes", "implementation 'org.a:b:1.0'", {"org.a:b": ("1.0", None)}),
    ("groovy string, double quotes", 'api "org.a:b:1.1"', {"org.a:b": ("1.1", None)}),
    ("kotlin call", 'implementation("org.a:b:1.2")', {"org.a:b": ("1.2", None)}),
    ("classifier and extension", "runtimeOnly 'org.a:b:1.3:linux@jar'", {"org.a:b": ("1.3", None)}),
    ("groovy map", "implementation group: 'org.a', name: 'b', version: '1.4'", {"org.a:b": ("1.4", None)}),
    ("kotlin map", 'implementation(group = "org.a", name = "b", version = "1.5")', {"org.a:b": ("1.5", None)}),
    (
        "test configuration",
        "testImplementation 'org.junit.jupiter:junit-jupiter:5.10.2'",
        {"org.junit.jupiter:junit-jupiter": ("5.10.2", None)},
    ),
    (
        "groovy variable",
        "ext { libVersion = '2.0' }\nimplementation \"org.a:b:$libVersion\"",
        {"org.a:b": ("2.0", None)},
    ),
    (
        "groovy braces variable",
        "ext.libVersion = '2.1'\nimplementation \"org.a:b:${libVersion}\"",
        {"org.a:b": ("2.1", None)},
    ),
    ("kotlin val", 'val libVersion = "2.2"\nimplementation("org.a:b:$libVersion")', {"org.a:b": ("2.2", None)}),
    (
        "kotlin extra",
        'val libVersion by extra("2.3")\nimplementation("org.a:b:${libVersion}")',
        {"org.a:b": ("2.3", None)},
    ),
    ("set()", 'ext { set("libVersion", "2.4") }\nimplementation("org.a:b:${libVersion}")', {"org.a:b": ("2.4", None)}),
    (
        "undefined variable",
        'implementation("org.a:b:$nowhere")',
        {"org.a:b": ("$nowhere", "variable nowhere is not defined in the build files or gradle.properties read")},
    ),
    (
        "no version",
        "implementation 'org.springframework.boot:spring-boot-starter-web'",
        {
            "org.springframework.boot:spring-boot-starter-web": (
                "",
                "no version: a platform, a BOM or Spring's dependency-management plugin picks it (not resolved)",
            )
        },
    ),
    (
        "dynamic version",
        "implementation 'org.a:b:1.+'",
        {"org.a:b": ("1.+", "a dynamic version (1.+): the version Gradle picks depends on the repository")},
    ),
    (
        "latest",
        "implementation 'org.a:b:latest.release'",
        {
            "org.a:b": (
                "latest.release",
                "a dynamic version (latest.release): the version Gradle picks depends on the repository",
            )
        },
    ),
    (
        "a comment is not a declaration",
        "// implementation 'org.a:b:9'\n/* api 'org.c:d:9' */\nimplementation 'org.e:f:1'",
        {"org.e:f": ("1", None)},
    ),
    ("quoted configuration", '"implementation"("org.a:b:3.1")', {"org.a:b": ("3.1", None)}),
    ("add()", 'add("testImplementation", "org.a:b:3.2")', {"org.a:b": ("3.2", None)}),
    (
        "property() and extra[]",
        'extra["v"] = "3.3"\nimplementation("org.a:b:${property("v")}")\napi("org.c:d:${rootProject.extra["v"]}")',
        {"org.a:b": ("3.3", None), "org.c:d": ("3.3", None)},
    ),
    (
        "kotlin() with a version",
        'implementation(kotlin("stdlib-jdk8", "1.9.0"))',
        {"org.jetbrains.kotlin:kotlin-stdlib-jdk8": ("1.9.0", None)},
    ),
    (
        "kotlin() without the plugin's version",
        'implementation(kotlin("reflect"))',
        {
            "org.jetbrains.kotlin:kotlin-reflect": (
                "",
                "no version: the Kotlin Gradle plugin's version, not written in the build files read",
            )
        },
    ),
    ("project and files are not libraries", "implementation project(':core')\nimplementation files('libs/x.jar')", {}),
    ("plugins are not dependencies", "plugins { id 'org.springframework.boot' version '3.2.4' }", {}),
    ("buildscript classpath is not a dependency", "buildscript { dependencies { classpath 'org.x:plugin:1' } }", {}),
]


@pytest.mark.parametrize(("script", "expected"), [(s, e) for _, s, e in GRADLE_CASES], ids=[c[0] for c in GRADLE_CASES])
@pytest.mark.parametrize("name", ["build.gradle", "build.gradle.kts"])
def test_gradle_forms(name: str, script: str, expected: dict[str, tuple[str, str | None]]) -> None:
    assert versions({f"app/{name}": f"dependencies {{\n{script}\n}}\n".encode()}) == expected


def test_a_platform_is_a_bom() -> None:
    reading = read_builds(
        {
            "build.gradle.kts": b"dependencies { implementation(platform("
            b'"org.springframework.boot:spring-boot-dependencies:3.2.4")) }'
        }
    )
    [found] = reading.dependencies
    assert (found.artifact, found.version, found.kind, found.scope) == (
        "spring-boot-dependencies",
        "3.2.4",
        DependencyKind.BOM,
        "implementation",
    )


def test_variables_from_gradle_properties_and_the_root_build() -> None:
    files = {
        "gradle.properties": b"# versions\nspringVersion=6.1.4\nlombokVersion: 1.18.30\n",
        "build.gradle": b"ext { guavaVersion = '33.0.0-jre' }\n",
        "svc/build.gradle": b'dependencies {\n implementation "org.springframework:spring-web:$springVersion"\n'
        b' compileOnly "org.projectlombok:lombok:${lombokVersion}"\n'
        b' implementation "com.google.guava:guava:$guavaVersion"\n}\n',
    }
    assert versions(files) == {
        "org.springframework:spring-web": ("6.1.4", None),
        "org.projectlombok:lombok": ("1.18.30", None),
        "com.google.guava:guava": ("33.0.0-jre", None),
    }


CATALOG = b"""
[versions]
spring = "6.1.4"
jackson = { strictly = "2.16.1" }

[libraries]
spring-web = { module = "org.springframework:spring-web", version.ref = "spring" }
spring_core = { group = "org.springframework", name = "spring-core", version.ref = "spring" }
jackson-databind = { module = "com.fasterxml.jackson.core:jackson-databind", version.ref = "jackson" }
guava = "com.google.guava:guava:33.0.0-jre"
lombok = { module = "org.projectlombok:lombok" }
mockito = { module = "org.mockito:mockito-core", version = { require = "5.8.0" } }
broken = { module = "org.x:y", version.ref = "nope" }

[bundles]
spring = ["spring-web", "spring-core"]

[plugins]
boot = { id = "org.springframework.boot", version = "3.2.4" }
"""


@pytest.mark.parametrize(
    ("accessor", "expected"),
    [
        ("libs.spring.web", {"org.springframework:spring-web": ("6.1.4", None)}),
        ("libs.spring.core", {"org.springframework:spring-core": ("6.1.4", None)}),
        ("libs.jackson.databind", {"com.fasterxml.jackson.core:jackson-databind": ("2.16.1", None)}),
        ("libs.guava", {"com.google.guava:guava": ("33.0.0-jre", None)}),
        ("libs.mockito", {"org.mockito:mockito-core": ("5.8.0", None)}),
        (
            "libs.lombok",
            {
                "org.projectlombok:lombok": (
                    "",
                    "no version: a platform, a BOM or Spring's dependency-management plugin picks it (not resolved)",
                )
            },
        ),
        ("libs.broken", {"org.x:y": ("", "version.ref 'nope' is not in [versions]")}),
        (
            "libs.bundles.spring",
            {"org.springframework:spring-web": ("6.1.4", None), "org.springframework:spring-core": ("6.1.4", None)},
        ),
    ],
)
@pytest.mark.parametrize("form", ["implementation({})", "implementation {}"])
def test_version_catalog(accessor: str, expected: dict[str, tuple[str, str | None]], form: str) -> None:
    files = {
        "gradle/libs.versions.toml": CATALOG,
        "svc/build.gradle.kts": f"dependencies {{ {form.format(accessor)} }}".encode(),
    }
    assert versions(files) == expected


def test_a_version_from_the_catalog_in_a_string() -> None:
    files = {
        "gradle/libs.versions.toml": CATALOG,
        "build.gradle.kts": b"dependencies { implementation("
        b'"org.springframework:spring-jdbc:${libs.versions.spring.get()}") }',
    }
    assert versions(files) == {"org.springframework:spring-jdbc": ("6.1.4", None)}


def test_an_unknown_catalog_alias_is_a_problem() -> None:
    reading = read_builds(
        {"gradle/libs.versions.toml": CATALOG, "build.gradle": b"dependencies { implementation libs.nothing.here }"}
    )
    assert reading.dependencies == ()
    [problem] = reading.problems
    assert "libs.nothing.here is not in the version catalog" in problem.detail


def test_a_bad_catalog_is_a_problem() -> None:
    reading = read_builds(
        {"gradle/libs.versions.toml": b"[versions\n", "build.gradle": b"dependencies { implementation 'org.a:b:1' }"}
    )
    assert [d.artifact for d in reading.dependencies] == ["b"]
    assert reading.problems[0].source == "gradle/libs.versions.toml"


def test_a_kotlin_module_without_a_version_gets_the_kotlin_plugins_version_from_a_script_above() -> None:
    root = b'plugins {\n    val kotlinVersion = "2.1.0"\n    kotlin("jvm") version kotlinVersion apply false\n}\n'
    module = (
        b'plugins { kotlin("jvm") }\ndependencies {\n    implementation(kotlin("reflect"))\n'
        b'    implementation("org.jetbrains.kotlin:kotlin-stdlib")\n    implementation("org.other:lib")\n}\n'
    )
    found = versions({"build.gradle.kts": root, "app/build.gradle.kts": module})
    assert found["org.jetbrains.kotlin:kotlin-reflect"] == ("2.1.0", None)
    assert found["org.jetbrains.kotlin:kotlin-stdlib"] == ("2.1.0", None)
    assert found["org.other:lib"][0] == ""  # Spring's plugin or a BOM picks it: not the Kotlin plugin
