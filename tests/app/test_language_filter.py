"""`language` is a search filter (issue 29): REST's parameter, `javakb search`'s option and the Qdrant condition."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.auth.access import LOCAL
from app.rest.schemas import SearchParams
from app.search.scoping import Filters, build_filter
from app.store.filters import eq
from entry.cli import _parser
from entry.filters import NAMED, RENAMED, filter_fields, filters_of
from pipeline.model import LANGUAGES


def test_rest_search_takes_a_language_and_filters_on_it() -> None:
    params = SearchParams.model_validate({"q": "owners", "language": "kotlin"})
    filters = filters_of(params)
    assert filters.language == "kotlin"
    built = build_filter(LOCAL, filters)
    assert built is not None and eq("language", "kotlin") in (built.must or [])


def test_rest_search_refuses_an_unknown_language() -> None:
    with pytest.raises(ValidationError, match="language must be one of"):
        SearchParams.model_validate({"q": "owners", "language": "scala"})


def test_no_language_adds_no_condition() -> None:
    built = build_filter(LOCAL, Filters())
    assert built is None or all(getattr(c, "key", None) != "language" for c in (built.must or []))


def test_the_cli_option_names_the_same_languages() -> None:
    args = _parser().parse_args(["search", "owners", "--language", "kotlin"])
    assert filters_of(args).language == "kotlin"
    assert LANGUAGES == ("java", "kotlin")


def test_every_named_filter_is_a_filter_of_its_own() -> None:
    args = _parser().parse_args(["search", "owners", "--path", "core", "--annotation", "Transactional"])
    fields = filter_fields(args)
    assert list(fields) == [RENAMED.get(name, name) for name in NAMED]  # each a field of `Filters`, by its name
    assert [getattr(filters_of(args), name) for name in fields] == [getattr(args, name) for name in NAMED]
    assert (fields["path_prefix"], fields["annotation"]) == ("core", "Transactional")
