"""Spring and JAX-RS semantics: route joining, HTTP methods and paths, injection points."""

from __future__ import annotations

import pytest

from pipeline.spring import join_path, learned_mappings, learned_stereotypes
from tests.support.java import chunk_java, only


@pytest.mark.parametrize(
    ("prefix", "path", "joined"),
    [
        ("/api/owners", "/{ownerId}", "/api/owners/{ownerId}"),
        ("/api/owners", "", "/api/owners"),
        ("", "/api/invoices/{id}", "/api/invoices/{id}"),
        ("/v2/visits", "{visitId}", "/v2/visits/{visitId}"),  # no leading slash on the method path
        ("/a/", "/b/", "/a/b"),  # one slash between, none trailing
        ("//a//", "b//", "/a/b"),
        ("a", "b", "/a/b"),
        ("", "", "/"),
    ],
)
def test_join_path(prefix: str, path: str, joined: str) -> None:
    assert join_path(prefix, path) == joined


CONTROLLER = """package demo;

import org.springframework.web.bind.annotation.*;
import static org.springframework.web.bind.annotation.RequestMethod.PATCH;

@RestController
@RequestMapping("/x")
class Api {
    @RequestMapping("/any") void any() {}
    @RequestMapping void bare() {}
    @RequestMapping(value = "/del", method = RequestMethod.DELETE) void del() {}
    @RequestMapping(path = "/patch", method = PATCH) void patch() {}
    @GetMapping({"/a", "/b"}) void two() {}
    @PostMapping(path = "/p") void post() {}
    @PatchMapping("/q") void q() {}
    void helper() {}
}
"""


@pytest.mark.parametrize(
    ("method", "http_method", "http_path"),
    [
        ("any", ("ANY",), ("/x/any",)),  # @RequestMapping without method serves every verb
        ("bare", ("ANY",), ("/x",)),
        ("del", ("DELETE",), ("/x/del",)),
        ("patch", ("PATCH",), ("/x/patch",)),  # statically imported verb
        ("two", ("GET",), ("/x/a", "/x/b")),
        ("post", ("POST",), ("/x/p",)),
        ("q", ("PATCH",), ("/x/q",)),
        ("helper", (), ()),
    ],
)
def test_spring_route(method: str, http_method: tuple[str, ...], http_path: tuple[str, ...]) -> None:
    chunk = only(chunk_java(CONTROLLER), f"demo.Api.{method}")
    assert (chunk.http_method, chunk.http_path) == (http_method, http_path)


RESOURCE = """package demo;

import jakarta.ws.rs.*;

@Path("/r")
public class Resource {
    @GET public String list() { return ""; }
    @PUT @Path("{id}") public void put() {}
    @Path("/sub") public Sub sub() { return null; }
}
"""


@pytest.mark.parametrize(
    ("method", "http_method", "http_path"),
    [
        ("list", ("GET",), ("/r",)),
        ("put", ("PUT",), ("/r/{id}",)),
        ("sub", ("ANY",), ("/r/sub",)),  # a sub-resource locator: @Path without a verb
    ],
)
def test_jaxrs_route(method: str, http_method: tuple[str, ...], http_path: tuple[str, ...]) -> None:
    chunk = only(chunk_java(RESOURCE), f"demo.Resource.{method}")
    assert (chunk.http_method, chunk.http_path) == (http_method, http_path)


def test_feign_client_routes_go_on_its_methods() -> None:
    source = """package demo;
@FeignClient(name = "stock", path = "/stock/")
interface StockClient {
    @GetMapping("/items/{sku}") Item item(@PathVariable String sku);
    @DeleteMapping("/items/{sku}") void drop(@PathVariable String sku);
    @GetMapping("/items") List<Item> all();
}
"""
    result = chunk_java(source)
    routes = {c.qualified_name: (c.http_method, c.http_path) for c in result.chunks}
    assert routes == {
        "demo.StockClient": ((), ()),
        "demo.StockClient.item": (("GET",), ("/stock/items/{sku}",)),
        "demo.StockClient.drop": (("DELETE",), ("/stock/items/{sku}",)),
        "demo.StockClient.all": (("GET",), ("/stock/items",)),
    }


def test_http_exchange_interface_routes() -> None:
    source = """package demo;
@HttpExchange(url = "/repos", accept = "application/json")
interface RepoClient {
    @GetExchange("/{owner}") List<Repo> list(@PathVariable String owner);
    @PostExchange(url = "/new") Repo create(@RequestBody Repo repo);
    @HttpExchange(method = "patch", url = "/{id}") Repo rename(@PathVariable long id);
    @HttpExchange("/any") void any();
}
"""
    routes = {c.name: (c.http_method, c.http_path) for c in chunk_java(source).chunks}
    assert routes == {
        "RepoClient": ((), ()),
        "list": (("GET",), ("/repos/{owner}",)),
        "create": (("POST",), ("/repos/new",)),
        "rename": (("PATCH",), ("/repos/{id}",)),
        "any": (("ANY",), ("/repos/any",)),
    }


def test_exception_handler_is_not_a_route() -> None:
    source = """package demo;
@RestControllerAdvice
class Errors {
    @ExceptionHandler(IllegalStateException.class) String handle(IllegalStateException e) { return ""; }
}
"""
    chunk = only(chunk_java(source), "demo.Errors.handle")
    assert (chunk.http_method, chunk.http_path) == ((), ())


# --------------------------------------------------------------------------------------------------
# Injection points
# --------------------------------------------------------------------------------------------------


def _type_injects(source: str, name: str = "demo.A") -> tuple[str, ...]:
    return only(chunk_java(source), name).injects


def test_single_constructor_of_a_bean_injects_its_parameters() -> None:
    source = "package demo;\n@Service class A { A(Repo repo, Clock clock) {} }"
    assert _type_injects(source) == ("Repo", "Clock")


def test_single_constructor_of_a_plain_class_injects_nothing() -> None:
    source = "package demo;\nclass A { A(Repo repo) {} }"
    assert _type_injects(source) == ()


def test_two_constructors_without_autowired_inject_nothing() -> None:
    source = "package demo;\n@Service class A { A(Repo repo) {} A() {} }"
    assert _type_injects(source) == ()


def test_autowired_constructor_among_several_injects() -> None:
    source = "package demo;\n@Component class A { @Autowired A(Repo repo) {} A() {} }"
    assert _type_injects(source) == ("Repo",)


def test_inject_constructor_of_a_cdi_bean_injects() -> None:
    source = "package demo;\n@ApplicationScoped class A { @Inject A(Repo repo) {} A() {} }"
    assert _type_injects(source) == ("Repo",)


def test_collection_and_provider_parameters_inject_their_element_type() -> None:
    source = "package demo;\n@Service class A { A(List<Handler> hs, ObjectProvider<Clock> clock, Map<String, X> m) {} }"
    assert _type_injects(source) == ("Handler", "Clock", "Map")


def test_value_parameters_are_configuration_not_beans() -> None:
    source = 'package demo;\n@Service class A { A(Repo repo, @Value("${a.b}") String ab) {} }'
    assert _type_injects(source) == ("Repo",)


def test_required_args_constructor_injects_final_and_non_null_fields() -> None:
    source = """package demo;
@Service
@RequiredArgsConstructor
class A {
    private static final Logger LOG = null;
    private final Repo repo;
    @NonNull private Clock clock;
    private Cache cache;
    private final int limit = 3;
}
"""
    assert _type_injects(source) == ("Repo", "Clock")


def test_all_args_constructor_injects_every_instance_field_but_initialized_finals() -> None:
    source = """package demo;
@Component
@AllArgsConstructor
class A {
    private static Cache shared;
    private final Repo repo;
    private Clock clock;
    private final int limit = 3;
}
"""
    assert _type_injects(source) == ("Repo", "Clock")


def test_lombok_constructor_is_ignored_when_a_constructor_is_written() -> None:
    source = (
        "package demo;\n@Service\n@RequiredArgsConstructor\nclass A { private final Repo repo; A() { repo = null; } }"
    )
    assert _type_injects(source) == ()


def test_annotated_fields_are_injected() -> None:
    source = """package demo;
@Service
class A {
    @Autowired private Repo repo;
    @Inject private Clock clock;
    @Resource(name = "x") private Cache cache;
    private Other other;
}
"""
    assert sorted(_type_injects(source)) == ["Cache", "Clock", "Repo"]


def test_autowired_setter_injects_and_carries_its_injects() -> None:
    source = "package demo;\n@Service class A { @Autowired void setRepo(Repo repo) {} void setOther(Other o) {} }"
    result = chunk_java(source)
    assert (only(result, "demo.A").injects, only(result, "demo.A.setRepo").injects) == (("Repo",), ("Repo",))
    assert only(result, "demo.A.setOther").injects == ()


def test_bean_method_parameters_are_injected() -> None:
    source = "package demo;\n@Configuration class A { @Bean Client client(Props props, Clock clock) { return null; } }"
    result = chunk_java(source)
    assert (only(result, "demo.A").injects, only(result, "demo.A.client").injects) == (
        ("Props", "Clock"),
        ("Props", "Clock"),
    )


def test_fully_qualified_annotations_are_recognised() -> None:
    source = """package demo;
@org.springframework.stereotype.Service
class A {
    @org.springframework.beans.factory.annotation.Autowired private Repo repo;
}
"""
    chunk = only(chunk_java(source), "demo.A")
    assert (chunk.stereotype, chunk.injects, chunk.annotation_names) == ("service", ("Repo",), ("Service",))


def test_injects_fq_resolve_through_imports() -> None:
    source = "package demo;\nimport java.time.Clock;\n@Service class A { A(Clock clock, Repo repo) {} }"
    assert only(chunk_java(source), "demo.A").injects_fq == ("java.time.Clock", "demo.Repo")


# --------------------------------------------------------------------------------------------------
# Beans the file alone cannot recognise: injections recorded "if bean" (issue 12)
# --------------------------------------------------------------------------------------------------


def _if_bean(source: str, name: str = "demo.A") -> tuple[tuple[str, ...], tuple[str, ...]]:
    chunk = only(chunk_java(source), name)
    return chunk.injects, chunk.injects_if_bean


def test_annotated_class_of_no_known_role_records_its_constructor_injections_if_bean() -> None:
    source = "package demo;\nimport x.Repo;\n@UseCase class A { A(Repo repo, List<Clock> clocks) {} }"
    assert _if_bean(source) == ((), ("Repo", "Clock"))
    assert _if_bean(source, "demo.A.A") == ((), ("Repo", "Clock"))
    assert only(chunk_java(source), "demo.A").injects_if_bean_fq == ("x.Repo", "demo.Clock")


def test_lombok_constructor_of_an_annotated_class_is_recorded_if_bean() -> None:
    source = "package demo;\n@Adapter @RequiredArgsConstructor class A { private final Repo repo; private int n; }"
    assert _if_bean(source) == ((), ("Repo",))


def test_if_bean_follows_the_constructor_rules_of_beans() -> None:
    two = "package demo;\n@UseCase class A { A(Repo repo) {} A() {} }"
    marked = "package demo;\n@UseCase class A { @Inject A(Repo repo) {} A() {} }"
    assert (_if_bean(two), _if_bean(marked)) == (((), ()), ((), ("Repo",)))


@pytest.mark.parametrize(
    "source",
    [
        "package demo;\nclass A { A(Repo repo) {} }",  # no annotation: never a bean by annotation
        "package demo;\n@Service class A { A(Repo repo) {} }",  # a known bean: recorded as `injects`
        "package demo;\n@Entity class A { A(Repo repo) {} }",  # a known role that is no bean
        "package demo;\n@UseCase interface A { }",  # not a class
        "package demo;\n@UseCase record A(Repo repo) { }",
    ],
    ids=["plain", "known-bean", "entity", "interface", "record"],
)
def test_nothing_is_recorded_if_bean_for_other_types(source: str) -> None:
    assert only(chunk_java(source), "demo.A").injects_if_bean == ()


@pytest.mark.parametrize(
    "annotation", ["DgsComponent", "DgsDataLoader", "Stateless", "Dependent", "Prototype", "JsonComponent"]
)
def test_framework_stereotypes_are_beans_at_index_time(annotation: str) -> None:
    chunk = only(chunk_java(f"package demo;\n@{annotation} class A {{ A(Repo repo) {{}} }}"), "demo.A")
    assert (chunk.stereotype, chunk.injects, chunk.injects_if_bean) == ("component", ("Repo",), ())


def test_stereotypes_are_learned_transitively_from_declared_annotation_types() -> None:
    declared = {
        "UseCase": ("Retention", "DomainService"),
        "DomainService": ("Service",),
        "CdiStereo": ("Stereotype", "RequestScoped"),
        "Audited": ("Retention", "Target"),
        "Loop": ("Loop",),
    }
    assert learned_stereotypes(declared) == {"UseCase", "DomainService", "CdiStereo"}


COMPOSED = """package demo;

import org.springframework.web.bind.annotation.*;

@RestController
@RequestMapping({"/auth", "/v2/auth"})
class AuthController {
    @Log("用户登录") @AnonymousPostMapping(value = "/login") Object login() { return null; }
    @AnonymousGetMapping Object code() { return null; }
    @PreAuthorize("@el.check('user:list')") @GetMapping("/info") Object info() { return null; }
    @Secured("ADMIN") Object helper() { return null; }
}
"""


def test_a_handlers_unknown_annotations_record_the_routes_they_would_map() -> None:
    result = chunk_java(COMPOSED)
    login = only(result, "demo.AuthController.login")
    assert (login.http_path, login.routes_if_mapping) == (
        (),
        ("AnonymousPostMapping /auth/login", "AnonymousPostMapping /v2/auth/login"),  # `@Log`'s value is no path
    )
    assert only(result, "demo.AuthController.code").routes_if_mapping == (
        "AnonymousGetMapping /auth",
        "AnonymousGetMapping /v2/auth",
    )
    assert only(result, "demo.AuthController.info").routes_if_mapping == ()  # a known route: nothing to confirm
    assert only(result, "demo.AuthController.helper").routes_if_mapping == (
        "Secured /auth/ADMIN",
        "Secured /v2/auth/ADMIN",
    )


def test_only_handler_types_record_routes_to_confirm() -> None:
    service = only(
        chunk_java('package demo;\n@Service class S { @AnonymousPostMapping("/x") void m() {} }'), "demo.S.m"
    )
    assert service.routes_if_mapping == ()


@pytest.mark.parametrize(
    ("declaration", "verbs"),
    [
        ("@RequestMapping(method = RequestMethod.POST) public @interface P {}", ("POST",)),
        ("@GetMapping public @interface G {}", ("GET",)),
        ("@RequestMapping public @interface Any {}", ("ANY",)),
        ("@Retention(RetentionPolicy.RUNTIME) public @interface Audited {}", ()),
    ],
)
def test_an_annotation_type_that_carries_a_mapping_maps_its_methods(declaration: str, verbs: tuple[str, ...]) -> None:
    [chunk] = [c for c in chunk_java(f"package demo;\n{declaration}").chunks if c.symbol_type == "annotation"]
    assert chunk.maps_http == verbs


def test_composed_mappings_are_learned_transitively_with_their_methods() -> None:
    declared = {
        "AnonymousPostMapping": (("Target", "RequestMapping"), ("POST",)),
        "PublicLogin": (("AnonymousPostMapping",), ()),
        "Outer": (("PublicLogin",), ()),
        "Audited": (("Retention",), ()),
        "Loop": (("Loop",), ()),
    }
    assert learned_mappings(declared) == {
        "AnonymousPostMapping": ("POST",),
        "PublicLogin": ("POST",),
        "Outer": ("POST",),
    }
