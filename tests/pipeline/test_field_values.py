"""Base URLs from fields the type fixes (issue 28): every assignment one literal, or a `@Value` default.

The Java below is written for these tests.
"""

from __future__ import annotations

import pytest

from pipeline.model import FileResult
from pipeline.outbound import Client, OutboundRoute, decode, literal_tail
from tests.pipeline.test_outbound import chunk_with, routes
from tests.support.java import only

FIELDS = """package demo.calls;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.client.RestTemplate;

public class Fields {
    private static final String UNUSED = "x";
    private String initial = "http://stock/";
    private final String fromConstructor;
    private String setterOverrides = "http://stock/";
    private String twoLiterals = "http://stock/";
    private String appended = "http://stock";
    @Value("${stock.url:http://stock}")
    private String injected;
    @Value("${stock.url}")
    private String placeholder;
    private final String injectedParameter;
    private String shadowed = "http://stock";
    private final RestTemplate rest;

    public Fields(RestTemplate rest, @Value("${stock.other:http://stock-other}") String other) {
        this.rest = rest;
        fromConstructor = "http://stock";
        this.injectedParameter = other;
    }

    public Fields(RestTemplate rest) {
        this(rest, "http://elsewhere");
        twoLiterals = "http://elsewhere/";
    }

    void setSetterOverrides(String url) {
        this.setterOverrides = url;
    }

    void suffix() {
        appended += "/v2";
    }

    String initial() { return rest.getForObject(initial + "items", String.class); }
    String fromConstructor() { return rest.getForObject(fromConstructor + "/items", String.class); }
    String setterOverrides() { return rest.getForObject(setterOverrides + "items", String.class); }
    String twoLiterals() { return rest.getForObject(twoLiterals + "items", String.class); }
    String appended() { return rest.getForObject(appended + "/items", String.class); }
    String injected() { return rest.getForObject(injected + "/items", String.class); }
    String placeholder() { return rest.getForObject(placeholder + "/items", String.class); }
    String injectedParameter() { return rest.getForObject(injectedParameter + "/items", String.class); }
    String shadowed(String shadowed) { return rest.getForObject(shadowed + "items", String.class); }
    String thisField() { return rest.getForObject(this.initial + "items/{id}", String.class, 7); }

    class Inner {
        String outer() { return rest.getForObject(initial + "inner", String.class); }
    }
}
"""


@pytest.fixture(scope="module")
def fields() -> FileResult:
    return chunk_with(FIELDS)


@pytest.mark.parametrize(
    ("method", "described"),
    [
        ("initial", "GET /items -> stock (rest_template)"),
        ("fromConstructor", "GET /items -> stock (rest_template)"),
        ("injected", "GET /items -> ${stock.url:http://stock} (rest_template)"),  # the property decides
        ("injectedParameter", "GET /items -> ${stock.other:http://stock-other} (rest_template)"),
        ("placeholder", "GET /items -> ${stock.url} (rest_template)"),  # a configured base, the path known
        ("thisField", "GET /items/{id} -> stock (rest_template)"),
        ("Inner.outer", "GET /inner -> stock (rest_template)"),
    ],
)
def test_a_field_the_type_fixes_resolves_the_uri(fields: FileResult, method: str, described: str) -> None:
    assert routes(only(fields, f"demo.calls.Fields.{method}")) == [described]


@pytest.mark.parametrize(
    ("method", "expression", "default"),
    [
        ("setterOverrides", '?setterOverrides + "items"', "stock"),  # a setter assigns a parameter
        ("twoLiterals", '?twoLiterals + "items"', "stock"),  # two constructors, two literals
        ("shadowed", '?shadowed + "items"', None),  # the parameter, not the field
    ],
)
def test_a_field_the_type_does_not_fix_leaves_the_uri_unresolved_with_its_default_service(
    fields: FileResult, method: str, expression: str, default: str | None
) -> None:
    [route] = [decode(r) for r in only(fields, f"demo.calls.Fields.{method}").outbound]
    assert (route.path, route.service, route.resolved) == (expression, default, False)
    assert literal_tail(route) == "/items"
    if default is not None:
        assert route.describe() == f"GET {expression} -> stock by default (rest_template)"


def test_a_compound_assignment_is_not_a_literal(fields: FileResult) -> None:
    # `appended += "/v2"`: its value is not one literal; what the call appends is still a path.
    assert routes(only(fields, "demo.calls.Fields.appended")) == ["GET /items (rest_template)"]


@pytest.mark.parametrize(
    ("expression", "tail"),
    [
        ('host + "pets/visits?petId={petId}"', "/pets/visits"),
        ('base + "/owners/" + id + "/pets"', "/owners/{id}/pets"),
        ('String.format("%s/x", host)', None),
        ("url", None),
        ('host + "?page=2"', None),
    ],
)
def test_the_literal_tail_of_an_unresolved_uri(expression: str, tail: str | None) -> None:
    route = OutboundRoute(client=Client.WEB_CLIENT, method="GET", service=None, path="?" + expression)
    assert literal_tail(route) == tail
