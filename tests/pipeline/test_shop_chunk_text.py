"""The code and text of the `shop` fixture's chunks: exact source lines, Javadoc, the header and the hash,
and what a type chunk shows of its members.
"""

from __future__ import annotations

import hashlib

from pipeline.model import TYPE_SYMBOLS
from pipeline.render import TEXT_FORM
from tests.support.java_fixtures import SHOP_DIR
from tests.support.shop import (
    API,
    CORE,
    REPO,
    Shop,
)


def _source_lines(file_path: str, encoding: str) -> list[str]:
    return (SHOP_DIR / file_path).read_bytes().decode(encoding).removeprefix("\ufeff").split("\n")


def test_method_code_is_exactly_its_source_lines(shop: Shop) -> None:
    checked = 0
    for path, result in shop.results.items():
        if not result.chunks:
            continue
        lines = _source_lines(path, result.encoding or "utf-8")
        for chunk in result.chunks:
            if chunk.symbol_type in TYPE_SYMBOLS:
                continue
            assert chunk.code == "\n".join(lines[chunk.line_start - 1 : chunk.line_end]), chunk.qualified_name
            checked += 1
    assert checked == 17 + 130 + 3


def test_method_code_starts_with_its_javadoc(shop: Shop) -> None:
    chunk = shop.one(f"{CORE}.service.OwnerService.find", ("Long",))
    assert chunk.code.splitlines()[0].strip() == "/**"


def test_type_code_starts_with_its_javadoc(shop: Shop) -> None:
    chunk = shop.one(f"{CORE}.service.OwnerService")
    assert chunk.code.startswith("/**\n * Use cases around {@link Owner owners}")


def test_text_is_a_header_a_separator_line_and_the_code(shop: Shop) -> None:
    for chunk in shop.chunks:
        header, separator, code = chunk.text.partition("\n---\n")
        assert separator and code == chunk.code, chunk.qualified_name
        assert f"symbol: {chunk.qualified_name}" in header.splitlines()


def test_content_hash_is_the_sha256_of_the_text_without_its_repository_line(shop: Shop) -> None:
    # The repository line is left out so that a project rename keeps hashes (and vectors) valid.
    for chunk in shop.chunks:
        first, _, rest = chunk.text.partition("\n")
        assert first == f"repository: {chunk.repo_path}"
        assert chunk.content_hash == hashlib.sha256(f"form {TEXT_FORM}\n{rest}".encode()).hexdigest()


def test_header_names_kind_stereotype_signature_and_route(shop: Shop) -> None:
    header = shop.one(f"{API}.web.OwnerController.deleteOwner").text.partition("\n---\n")[0]
    assert header.splitlines() == [
        f"repository: {REPO}",
        f"package: {API}.web",
        f"symbol: {API}.web.OwnerController.deleteOwner",
        "words: owner controller delete",
        "kind: method (rest_controller)",
        "signature: deleteOwner(Long ownerId): void",
        'annotations: @DeleteMapping(path = {"/{ownerId}", "/by-id/{ownerId}"}) @ResponseStatus(HttpStatus.NO_CONTENT)',
        "http: DELETE /api/owners/{ownerId}, /api/owners/by-id/{ownerId}",
        "summary: Deletes an owner and the owner's pets.",
        "type summary: JSON API for owners.",
        "calls: OwnerService.delete",
    ]


def test_bodiless_members_are_listed_in_their_type_chunk(shop: Shop) -> None:
    code = shop.one(f"{CORE}.repository.OwnerRepository").code
    assert "Optional<Owner> findByTelephone(String telephone);" in code
    assert 'int updateTelephone(@Param("id") Long id, @Param("telephone") String telephone);' in code


def test_type_chunk_elides_method_bodies(shop: Shop) -> None:
    code = shop.one(f"{CORE}.service.OwnerService").code
    assert "public Optional<OwnerDto> find(Long id) { ... }" in code
    assert "ownerRepository.findById(id).map(OwnerMapper::toDto)" not in code
