"""Kotlin seen from Java and Java from Kotlin (issue 29): JVM accessor names and top-level functions' calls."""

from __future__ import annotations

from typing import Final

import pytest

from pipeline.kotlin.interop import file_jvm_name, getter_name, is_accessor_name, jvm_names, setter_name
from pipeline.languages import chunk_file
from pipeline.model import Chunk, ChunkerConfig, SourceContext

READER: Final = """@file:JvmName("Labels")
package com.acme.vets

import com.acme.util.shownName
import com.acme.util.Formats.pad

class Board(private val vets: VetRepository) {
    private val cache: Cache = Cache()

    fun show(vet: Vet, owner: Owner, any: Any) {
        val n = vet.name
        val pet = any as? Pet
        pet.name
        owner.name = "x"
        val ref = owner::name
        owner.isActive = true
        owner.visits += 1
        cache.size.toString()
        it.name
        Colors.RED
        shownName(vet)
        pad(n)
        render(vet)
        local()
        helper()
    }

    fun local() {}
}

fun helper() = top()

fun top(): Int = 1
"""


def chunks(source: str, path: str = "src/main/kotlin/com/acme/vets/Board.kt") -> dict[str, Chunk]:
    result = chunk_file(source.encode(), path, SourceContext(repo_path="acme/vets"), ChunkerConfig())
    assert not result.skipped
    return {c.qualified_name: c for c in result.chunks}


@pytest.mark.parametrize(
    ("prop", "getter", "setter"),
    [("name", "getName", "setName"), ("isActive", "isActive", "setActive"), ("url", "getUrl", "setUrl"),
     ("island", "getIsland", "setIsland"), ("x", "getX", "setX")],
)  # fmt: skip
def test_a_property_has_kotlincs_accessor_names(prop: str, getter: str, setter: str) -> None:
    assert (getter_name(prop), setter_name(prop)) == (getter, setter)
    assert is_accessor_name(setter) and is_accessor_name(getter) == (getter != prop)
    assert not is_accessor_name(prop)


def test_jvm_names_follow_jvmname_and_fields_have_none() -> None:
    assert jvm_names("name", is_property=True) == ("getName", "setName")
    assert jvm_names("name", is_property=True, annotations=['@get:JvmName("shown")']) == ("shown", "setName")
    assert jvm_names("name", is_property=True, annotations=["@JvmField"]) == ()
    assert jvm_names("LIMIT", is_property=True, const=True) == ()
    assert jvm_names("render", is_property=False, annotations=['@JvmName("draw")']) == ("draw",)
    assert jvm_names("render", is_property=False) == ("render",)
    assert file_jvm_name(['@JvmName("Labels")']) == "Labels"
    assert file_jvm_name(['@get:JvmName("x")', "@Suppress"]) is None


def test_property_reads_and_writes_are_calls_of_their_accessors_where_the_receiver_is_typed() -> None:
    show = chunks(READER)["com.acme.vets.Board.show"]
    assert {"Vet.getName", "Owner.setName", "Owner.setActive", "Owner.getVisits", "Owner.setVisits",
            "Cache.getSize", "Pet.getName"} <= set(show.calls)  # fmt: skip
    assert {"com.acme.vets.Vet.getName", "com.acme.vets.Owner.setName"} <= set(show.calls_fq)
    assert not [c for c in show.calls if c.startswith(("it.", "Colors.")) or c.endswith((".getRED", ".getIt"))]
    assert "Owner.getName" not in show.calls  # written, and referenced (`owner::name` is no read)


def test_unqualified_calls_resolve_through_imports_the_file_and_its_package() -> None:
    found = chunks(READER)
    show = found["com.acme.vets.Board.show"]
    assert "com.acme.util.shownName" in show.calls_fq  # imported by name: the candidate is exact
    assert "com.acme.vets.Board.shownName" not in show.calls_fq
    assert "Formats.pad" in show.calls and "com.acme.util.Formats.pad" in show.calls_fq  # an object's member
    # Not declared here: the type's (an inherited member), or a top-level function of the package.
    assert {"com.acme.vets.Board.render", "com.acme.vets.render"} <= set(show.calls_fq)
    assert "com.acme.vets.Board.local" in show.calls_fq and "com.acme.vets.local" not in show.calls_fq
    # The file's own top-level function: its facade's, renamed by @file:JvmName.
    assert "Labels.helper" in show.calls and "com.acme.vets.Labels.helper" in show.calls_fq
    assert set(found["com.acme.vets.Labels.helper"].calls_fq) == {"com.acme.vets.Labels.top"}


def test_a_star_import_is_one_more_package_a_top_level_function_may_come_from() -> None:
    source = "package com.acme.vets\n\nimport com.acme.extra.*\n\nfun list() = render()\n"
    found = chunks(source, "src/main/kotlin/com/acme/vets/list-utils.kt")
    assert found["com.acme.vets.List_utilsKt.list"].calls_fq == ("com.acme.vets.render", "com.acme.extra.render")


def test_a_local_typed_by_a_call_records_its_calls_on_the_chain() -> None:
    source = """package a
class C(val pets: PetRepository) {
    fun load(id: Int) {
        val pet = pets.findById(id)
        pet.addVisit(Visit())
        val shown = pet.name
        val other = nobody.find()
        other.go()
        other.size
    }
}
"""
    result = chunk_file(source.encode(), "src/main/kotlin/a/C.kt", SourceContext(repo_path="r"), ChunkerConfig())
    [load] = [c for c in result.chunks if c.qualified_name == "a.C.load"]
    assert load.calls == (
        "PetRepository.findById",
        "PetRepository.findById().addVisit",  # as Java records `pets.findById(id).addVisit(v)`
        "PetRepository.findById().getName",
        "nobody.find",
        "other.go",  # a receiver whose chain is not known: as written, no property read
    )
    # A chain has no qualified form; its mark says the chunk calls `addVisit` on a call's result.
    assert load.calls_fq == ("a.PetRepository.findById", "().addVisit", "().getName")


def test_an_aliased_import_resolves_and_is_shown_as_the_name_it_stands_for() -> None:
    source = """package a
import com.acme.model.Owner as O
import com.other.Owner
import com.acme.util.shown as s
import com.acme.repo.OwnerRepository as Owners
@Service
class C(val owners: Owners) : O() {
    fun load(id: Int) { val o = O(); o.addPet(x); val p: Owner = owners.find(id); p.go(); s(o) }
}
"""
    result = chunk_file(source.encode(), "src/main/kotlin/a/C.kt", SourceContext(repo_path="r"), ChunkerConfig())
    by_name = {c.qualified_name: c for c in result.chunks}
    load, type_ = by_name["a.C.load"], by_name["a.C"]
    assert load.calls == ("Owner.addPet", "OwnerRepository.find", "Owner.go", "C.shown")
    assert load.calls_fq == (
        "com.acme.model.Owner.addPet",  # the alias
        "com.acme.repo.OwnerRepository.find",
        "com.other.Owner.go",  # the name imported plainly is another type
        "com.acme.util.shown",
    )
    assert (type_.extends, type_.extends_fq) == (("Owner",), ("com.acme.model.Owner",))
    assert (type_.injects, type_.injects_fq) == (("OwnerRepository",), ("com.acme.repo.OwnerRepository",))
