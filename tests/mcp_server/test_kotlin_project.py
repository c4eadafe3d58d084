"""A mixed Java and Kotlin project, indexed as `javakb index` indexes it, answered by the MCP tools (issue 29).

The project is a git checkout (testkit.git_repo) with the default scope: `src/main/java` and
`src/main/kotlin` are both read; a Kotlin test and a Gradle script are not.
"""

from __future__ import annotations

from typing import Any, Final

import pytest
from fastmcp import Client

from tests.support.checkouts import call, checkout_fixtures

pytestmark = pytest.mark.asyncio(loop_scope="module")

REPO: Final = "acme/vets"
FILES: Final = {
    "src/main/java/com/acme/vets/Vet.java": """package com.acme.vets;

/** A veterinarian. */
public class Vet {
    private final String name;

    public Vet(String name) {
        this.name = name;
    }

    public String getName() {
        return name;
    }

    public String label() {
        return SchedulesKt.shownName(this);
    }
}
""",
    "src/main/kotlin/com/acme/vets/VetController.kt": """package com.acme.vets

import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.RequestMapping
import org.springframework.web.bind.annotation.RestController

/** Lists the clinic's veterinarians. */
@RestController
@RequestMapping("/vets")
class VetController(private val vets: VetRepository) {

    /** Every vet with a specialty, for the schedule page. */
    @GetMapping("/{id}/specialties")
    suspend fun specialties(id: Long): List<String> = vets.specialtiesOf(id)
}
""",
    "src/main/kotlin/com/acme/vets/Schedules.kt": """package com.acme.vets

/** Rotates the night shifts between the veterinarians fairly. */
fun rotateNightShifts(vets: List<Vet>, weeks: Int): Map<Int, Vet> =
    (0 until weeks).associateWith { vets[it % vets.size] }

/** The name a schedule shows for a vet. */
fun shownName(vet: Vet): String = vet.getName().uppercase()
""",
    "src/main/kotlin/com/acme/vets/Owner.kt": """package com.acme.vets

/** A pet owner. */
data class Owner(val name: String, var isActive: Boolean) {
    @get:JvmName("shownLabel")
    val label: String get() = name.uppercase()
}
""",
    "src/main/java/com/acme/vets/OwnerDesk.java": """package com.acme.vets;

public class OwnerDesk {
    public String greet(Owner owner) {
        owner.setActive(true);
        return owner.getName() + owner.shownLabel();
    }
}
""",
    "src/main/kotlin/com/acme/vets/Roster.kt": """package com.acme.vets

import com.acme.vets.util.initials

class Roster {
    fun names(owner: Owner, vet: Vet): String = shownName(vet) + vet.name + initials(owner.name)

    fun shiftOf(shift: Shift): String = shift.name

    fun tag(owner: Owner): String = owner.label
}
""",
    "src/main/java/com/acme/vets/Shift.java": """package com.acme.vets;

/** A named shift of a schedule. */
public @interface Shift {
    String name() default "night";
}
""",
    "src/main/kotlin/com/acme/vets/util/names.kt": """@file:JvmName("Names")
package com.acme.vets.util

fun initials(name: String): String = name.take(1)
""",
    "src/test/kotlin/com/acme/vets/VetControllerTest.kt": "class VetControllerTest {\n    fun t() {}\n}\n",
    "build.gradle.kts": 'plugins {\n    kotlin("jvm")\n}\n',
}


deps, client = checkout_fixtures(FILES, REPO)


async def test_find_endpoint_answers_a_kotlin_controllers_route(client: Client[Any]) -> None:
    found = await call(client, "find_endpoint", path="/vets/7/specialties", http_method="GET")
    [item] = found["results"]
    assert item["qualified_name"] == "com.acme.vets.VetController.specialties"
    assert item["file_path"] == "src/main/kotlin/com/acme/vets/VetController.kt"
    assert (item["line_start"], item["line_end"]) == (12, 14)


async def test_get_symbol_finds_a_top_level_kotlin_function_by_its_facade_class(client: Client[Any]) -> None:
    found = await call(client, "get_symbol", name="SchedulesKt.rotateNightShifts")
    [item] = found["results"]
    assert item["qualified_name"] == "com.acme.vets.SchedulesKt.rotateNightShifts"
    assert "associateWith" in item["code"]


async def test_semantic_search_filters_by_language(client: Client[Any]) -> None:
    query = "rotate night shifts between veterinarians"
    kotlin = await call(client, "semantic_search", query=query, language="kotlin")
    assert kotlin["results"][0]["qualified_name"] == "com.acme.vets.SchedulesKt.rotateNightShifts"
    assert all(r["file_path"].endswith(".kt") for r in kotlin["results"])
    java = await call(client, "semantic_search", query=query, language="java")
    assert java["results"] and all(r["file_path"].endswith(".java") for r in java["results"])


async def test_kotlin_tests_and_build_scripts_are_not_indexed(client: Client[Any]) -> None:
    result = await client.call_tool("get_symbol", {"name": "VetControllerTest"}, raise_on_error=False)
    assert result.is_error
    assert "No symbol named 'VetControllerTest'" in str(result.content)


async def test_a_bad_language_is_refused_with_the_known_ones(client: Client[Any]) -> None:
    result = await client.call_tool("semantic_search", {"query": "vets", "language": "scala"}, raise_on_error=False)
    assert result.is_error
    assert "use one of java, kotlin" in str(result.content)


async def test_get_callers_of_a_java_method_finds_its_kotlin_caller(client: Client[Any]) -> None:
    found = await call(client, "get_callers", name="Vet.getName")
    # `vet.getName()` in a Kotlin function, and `vet.name`: a Kotlin property read of a Java bean's getter.
    assert {r["qualified_name"] for r in found["results"]} == {
        "com.acme.vets.Roster.names",
        "com.acme.vets.SchedulesKt.shownName",
    }


async def test_find_injections_finds_a_kotlin_primary_constructor(client: Client[Any]) -> None:
    found = await call(client, "find_injections", type="VetRepository")
    names = [r["qualified_name"] for r in found["results"]]
    assert names == ["com.acme.vets.VetController", "com.acme.vets.VetController.VetController"]


async def test_get_callers_of_a_kotlin_top_level_function_finds_its_java_caller(client: Client[Any]) -> None:
    found = await call(client, "get_callers", name="SchedulesKt.shownName")
    # Java calls it through the facade class; Kotlin of another file of the package calls it unqualified.
    assert {r["qualified_name"] for r in found["results"]} == {"com.acme.vets.Roster.names", "com.acme.vets.Vet.label"}


@pytest.mark.parametrize("name", ["Owner.getName", "Owner.name", "com.acme.vets.Owner.name"])
async def test_a_kotlin_propertys_callers_are_found_by_its_kotlin_and_its_java_name(
    client: Client[Any], name: str
) -> None:
    found = await call(client, "get_callers", name=name)
    # Java calls `owner.getName()`; Kotlin reads `owner.name` (and the data class's own getter reads it).
    names = {r["qualified_name"] for r in found["results"]}
    assert {"com.acme.vets.OwnerDesk.greet", "com.acme.vets.Roster.names"} <= names
    assert names <= {"com.acme.vets.OwnerDesk.greet", "com.acme.vets.Roster.names", "com.acme.vets.Owner.label"}


async def test_a_kotlin_propertys_setter_and_its_jvmname_getter_reach_their_java_callers(client: Client[Any]) -> None:
    active = await call(client, "get_callers", name="Owner.isActive")
    assert [r["qualified_name"] for r in active["results"]] == ["com.acme.vets.OwnerDesk.greet"]
    # Java calls `shownLabel()`, Kotlin reads `owner.label`: either name finds both.
    for name in ("Owner.label", "Owner.shownLabel"):
        label = await call(client, "get_callers", name=name)
        assert {r["qualified_name"] for r in label["results"]} == {
            "com.acme.vets.OwnerDesk.greet",
            "com.acme.vets.Roster.tag",
        }


async def test_a_kotlin_read_of_a_java_annotations_attribute_is_a_call_of_it(client: Client[Any]) -> None:
    found = await call(client, "get_callers", name="Shift.name")
    assert [r["qualified_name"] for r in found["results"]] == ["com.acme.vets.Roster.shiftOf"]


@pytest.mark.parametrize("name", ["Names.initials", "initials", "com.acme.vets.util.Names.initials"])
async def test_an_imported_top_level_function_of_a_renamed_facade_finds_its_kotlin_caller(
    client: Client[Any], name: str
) -> None:
    found = await call(client, "get_callers", name=name)
    assert [r["qualified_name"] for r in found["results"]] == ["com.acme.vets.Roster.names"]


async def test_language_narrows_the_answer_of_every_code_tool_never_the_symbol_asked_about(
    client: Client[Any],
) -> None:
    kotlin = await call(client, "get_callers", name="Vet.getName", language="kotlin")
    assert {r["file_path"][-3:] for r in kotlin["results"]} == {".kt"} and len(kotlin["results"]) == 2
    assert (await call(client, "get_callers", name="Vet.getName", language="java"))["results"] == []
    injected = await call(client, "find_injections", type="VetRepository", language="java")
    assert injected["results"] == []
    found = await call(client, "get_symbol", name="Vet", language="java")
    assert {r["file_path"] for r in found["results"]} == {"src/main/java/com/acme/vets/Vet.java"}
    missed = await client.call_tool("get_symbol", {"name": "Vet", "language": "kotlin"}, raise_on_error=False)
    assert missed.is_error
    routes = await call(client, "find_endpoint", path="/vets/7/specialties", language="java")
    assert routes["results"] == []
    grep = await call(client, "exact_search", pattern="shownName", language="kotlin")
    assert {r["file_path"] for r in grep["results"]} == {
        "src/main/kotlin/com/acme/vets/Schedules.kt",
        "src/main/kotlin/com/acme/vets/Roster.kt",
    }


async def test_auto_context_keeps_the_code_of_the_language_asked_for(client: Client[Any]) -> None:
    task = "change how Vet.getName shows the vet's name on the schedule"
    both = await call(client, "auto_context", task=task)
    kotlin = await call(client, "auto_context", task=task, language="kotlin")
    java = await call(client, "auto_context", task=task, language="java")
    everything = [*both["results"], *both["related"]]
    assert {r["file_path"][-3:] for r in everything} >= {".kt", "ava"}
    assert {r["file_path"][-3:] for r in [*kotlin["results"], *kotlin["related"]]} == {".kt"}
    assert {r["file_path"][-5:] for r in [*java["results"], *java["related"]]} == {".java"}


async def test_a_bad_language_is_refused_by_every_tool_that_takes_one(client: Client[Any]) -> None:
    result = await client.call_tool("get_callers", {"name": "Vet.getName", "language": "scala"}, raise_on_error=False)
    assert result.is_error
    assert "use one of java, kotlin" in str(result.content)


async def test_get_callees_resolves_a_kotlin_call_of_another_files_top_level_function(client: Client[Any]) -> None:
    found = await call(client, "get_callees", name="Roster.names")
    targets = {t["qualified_name"] for each in found["results"] for t in each["targets"]}
    assert {"com.acme.vets.SchedulesKt.shownName", "com.acme.vets.util.Names.initials"} <= targets
