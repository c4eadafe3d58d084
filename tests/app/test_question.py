"""Reading questions: question → parsed intent, over phrasings the way developers ask.

The rows are written from how people phrase questions (Stack Overflow titles, chat with a coding
assistant, terse search-box queries, pasted log lines), not from the fixture or any indexed code.
Each row states everything the reader must get: the relation and its subject, every code name, every
route and HTTP verb.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.search.question import Relation, expand_query, query_terms, tokenize
from app.store.lexical import singular

CALLERS = Relation.CALLERS
INJECTORS = Relation.INJECTORS
IMPLS = Relation.IMPLEMENTATIONS
CALLEES = Relation.CALLEES
DEPS = Relation.DEPENDENCIES
SUPERS = Relation.SUPERTYPES


@dataclass(frozen=True)
class Row:
    """A question and what it must be read as."""

    question: str
    relation: Relation | None = None
    subject: str | None = None
    ids: tuple[str, ...] = ()
    routes: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.question


def r(
    question: str,
    relation: Relation | None = None,
    subject: str | None = None,
    *,
    ids: tuple[str, ...] | None = None,
    routes: tuple[str, ...] = (),
    verbs: tuple[str, ...] = (),
) -> Row:
    """A row; the code names default to the subject alone."""
    names = ids if ids is not None else ((subject,) if subject else ())
    return Row(question, relation, subject, names, routes, verbs)


ROWS: tuple[Row, ...] = (
    # --- callers, active voice ---------------------------------------------------------------------
    r("who calls OwnerService.create", CALLERS, "OwnerService.create"),
    r("what calls findById", CALLERS, "findById"),
    r("which methods call PaymentGateway.charge?", CALLERS, "PaymentGateway.charge"),
    r("who is calling `save`", CALLERS, "save"),
    r("does anything still call LegacyMapper.toDto", CALLERS, "LegacyMapper.toDto"),
    r("which controllers invoke orderService.cancel()", CALLERS, "orderService.cancel"),
    r("Who invokes refreshToken()?", CALLERS, "refreshToken"),
    r("what code calls the sendMail method", CALLERS, "sendMail"),
    r("which classes call CartService#checkout", CALLERS, "CartService.checkout"),
    r("who calls UserRepository::findByEmail", CALLERS, "UserRepository.findByEmail"),
    r("find everything that calls computeTotal()", CALLERS, "computeTotal"),
    r("list all places that call StockService.reserve", CALLERS, "StockService.reserve"),
    r("is there any code that calls `deleteAll`", CALLERS, "deleteAll"),
    r("which jobs call ReportService.buildMonthlyReport", CALLERS, "ReportService.buildMonthlyReport"),
    # --- callers, passive voice --------------------------------------------------------------------
    r("where is OwnerService.create called", CALLERS, "OwnerService.create"),
    r("where is validateCoupon called from?", CALLERS, "validateCoupon"),
    r("is calculateDiscount() called anywhere", CALLERS, "calculateDiscount"),
    r("where does encodePassword get called", CALLERS, "encodePassword"),
    r("where is `publishEvent` invoked", CALLERS, "publishEvent"),
    r("where exactly is TokenProvider.validate being called", CALLERS, "TokenProvider.validate"),
    # --- callers, nouns ----------------------------------------------------------------------------
    r("callers of OrderService.place", CALLERS, "OrderService.place"),
    r("OwnerService.create callers", CALLERS, "OwnerService.create"),
    r("UserService.register's callers", CALLERS, "UserService.register"),
    r("show me the callers of `getCurrentUser`", CALLERS, "getCurrentUser"),
    r("usages of formatDate", CALLERS, "formatDate"),
    r("find usages of MoneyUtils.round", CALLERS, "MoneyUtils.round"),
    r("invocations of AuditLog.record", CALLERS, "AuditLog.record"),
    r("call sites of retryPolicy()", CALLERS, "retryPolicy"),
    r("what are the usages of the isExpired method", CALLERS, "isExpired"),
    # --- "use": callers for a member, injectors for a type ------------------------------------------
    r("where is findByUsername used", CALLERS, "findByUsername"),
    r("what uses DateUtils.parse", CALLERS, "DateUtils.parse"),
    r("which classes use RedisTemplate", INJECTORS, "RedisTemplate"),
    r("where is OrderMapper used?", INJECTORS, "OrderMapper"),
    r("who uses the JwtTokenProvider", INJECTORS, "JwtTokenProvider"),
    r("what is using `CacheManager`", INJECTORS, "CacheManager"),
    r("which services are using PaymentClient", INJECTORS, "PaymentClient"),
    r("is AccountRepository used anywhere?", INJECTORS, "AccountRepository"),
    r("usages of SmsSender", INJECTORS, "SmsSender"),
    r("users of NotificationService", INJECTORS, "NotificationService"),
    r("what references com.acme.billing.InvoiceService", INJECTORS, "com.acme.billing.InvoiceService"),
    # --- injectors ---------------------------------------------------------------------------------
    r("who injects OwnerRepository", INJECTORS, "OwnerRepository"),
    r("which beans inject the Clock", INJECTORS, "Clock"),
    r("where is MailGateway injected", INJECTORS, "MailGateway"),
    r("where is `ObjectMapper` autowired", INJECTORS, "ObjectMapper"),
    r("which components depend on StorageService", INJECTORS, "StorageService"),
    r("what depends on TenantContext?", INJECTORS, "TenantContext"),
    r("which bean receives the EventPublisher", INJECTORS, "EventPublisher"),
    r("which classes need PasswordEncoder", INJECTORS, "PasswordEncoder"),
    r("classes that autowire KafkaTemplate", INJECTORS, "KafkaTemplate"),
    r("injection points of DataSource", INJECTORS, "DataSource"),
    r("dependents of RateLimiter", INJECTORS, "RateLimiter"),
    r("who requires SecurityUtils", INJECTORS, "SecurityUtils"),
    # --- implementations ---------------------------------------------------------------------------
    r("which classes implement PricingPolicy", IMPLS, "PricingPolicy"),
    r("implementations of PaymentProvider", IMPLS, "PaymentProvider"),
    r("who implements `UserDetailsService`", IMPLS, "UserDetailsService"),
    r("what extends BaseEntity", IMPLS, "BaseEntity"),
    r("subclasses of AbstractAuditingEntity", IMPLS, "AbstractAuditingEntity"),
    r("NotificationChannel implementations", IMPLS, "NotificationChannel"),
    r("where is ExportStrategy implemented", IMPLS, "ExportStrategy"),
    r("which types extend com.acme.core.Shape?", IMPLS, "com.acme.core.Shape"),
    r("all implementors of Validator<Order>", IMPLS, "Validator", ids=("Validator", "Order")),
    # --- the other side: what X calls, receives, extends -------------------------------------------
    r("what does OrderController call", CALLEES, "OrderController"),
    r("what does checkout() call?", CALLEES, "checkout"),
    r("which methods are called by PaymentService.refund", CALLEES, "PaymentService.refund"),
    r("callees of ReportService.build", CALLEES, "ReportService.build"),
    r("what does UserController depend on", DEPS, "UserController"),
    r("dependencies of OwnerController", DEPS, "OwnerController"),
    r("OrderService's dependencies", DEPS, "OrderService"),
    r("what gets injected into CheckoutService", DEPS, "CheckoutService"),
    r("what does PetRepository extend", SUPERS, "PetRepository"),
    r("superclass of SysUser", SUPERS, "SysUser"),
    # --- a name, no relation -----------------------------------------------------------------------
    r("OwnerService", ids=("OwnerService",)),
    r("OwnerService.create", ids=("OwnerService.create",)),
    r("`OwnerService`", ids=("OwnerService",)),
    r("show OwnerService.java", ids=("OwnerService",)),
    r("what's in src/main/java/com/acme/shop/OwnerService.java", ids=("OwnerService",)),
    r("explain com.acme.shop.core.service.OrderService", ids=("com.acme.shop.core.service.OrderService",)),
    r("how does CartService#applyCoupon work", ids=("CartService.applyCoupon",)),
    r("Order::getTotal", ids=("Order.getTotal",)),
    r("#findAll in the repository", ids=("findAll",)),
    r("what does `normalize` do", ids=("normalize",)),
    r("how is MAX_RETRY_COUNT used in retries", CALLERS, "MAX_RETRY_COUNT"),
    r("what is DEFAULT_PAGE_SIZE set to", ids=("DEFAULT_PAGE_SIZE",)),
    r("difference between List<Owner> and Page<Owner>", ids=("List", "Owner", "Page")),
    r("a method called findByEmail", ids=("findByEmail",)),
    r("is there a class named ShippingCalculator", ids=("ShippingCalculator",)),
    r("why does OrderService.place throw NullPointerException", ids=("OrderService.place", "NullPointerException")),
    r("where is the Owner entity defined", ids=("Owner",)),
    r("how does the pet_type table map to PetType", ids=("pet_type", "PetType")),
    r("user_id column mapping", ids=("user_id",)),
    # --- routes and verbs: a route question even with "call" or "use" ------------------------------
    r("GET /users", routes=("/users",), verbs=("GET",)),
    r("get /users", routes=("/users",), verbs=("GET",)),
    r("POST /api/v1/orders", routes=("/api/v1/orders",), verbs=("POST",)),
    r("which handler serves GET /users/{id}", routes=("/users/{id}",), verbs=("GET",)),
    r("who handles /api/v1/users/{id}?", routes=("/api/v1/users/{id}",)),
    r("what happens when I call /api/orders/42", routes=("/api/orders/42",)),
    r("which controller is called for DELETE /owners/7", routes=("/owners/7",), verbs=("DELETE",)),
    r("what uses /users/{id}/roles", routes=("/users/{id}/roles",)),
    r("the users endpoint /users returns 500", routes=("/users",)),
    r("GET /", routes=("/",), verbs=("GET",)),
    r("which controller serves the root route /", routes=("/",)),
    r("handler for `/`", routes=("/",)),
    r("what serves http://localhost:8080/api/v1/users/42?expand=roles", routes=("/api/v1/users/42",)),
    r("curl -X PUT https://shop.example.com/api/carts/3/items", routes=("/api/carts/3/items",), verbs=("PUT",)),
    r("PATCH users/{id}/password", routes=("/users/{id}/password",), verbs=("PATCH",)),
    r("delete /api/owners/{ownerId}/pets/{petId}", routes=("/api/owners/{ownerId}/pets/{petId}",), verbs=("DELETE",)),
    r("`GET /owners/new`", routes=("/owners/new",), verbs=("GET",)),
    r("which endpoints handle DELETE requests", verbs=("DELETE",)),
    r("GET /api/users calls UserService.list?", ids=("UserService.list",), routes=("/api/users",), verbs=("GET",)),
    r("where is the /login page mapped", routes=("/login",)),
    r("OPTIONS preflight on /api/** blocked", routes=("/api/**",), verbs=("OPTIONS",)),
    r("Where's the code that handles the /checkout POST?", routes=("/checkout",), verbs=("POST",)),
    # --- harder structure ----------------------------------------------------------------------
    r("how do I call the OwnerService from a controller", INJECTORS, "OwnerService"),
    r("who calls OwnerService", INJECTORS, "OwnerService"),
    r("AccountClient used by which services", INJECTORS, "AccountClient"),
    r("methods calling repository.save", CALLERS, "repository.save"),
    r(
        "explain the flow from OrderController.create to PaymentService.charge",
        ids=("OrderController.create", "PaymentService.charge"),
    ),
    r("what is called when the user clicks save"),
    r("which Feign client calls the accounts service", ids=("Feign",)),  # a capitalised name may be a type
    r("who calls save"),
    # --- words only: no relation, no code ----------------------------------------------------------
    r("where is an invoice total computed?"),
    r("which users are locked out after failed logins"),
    r("how do we use JWT for authentication"),
    r("list all users"),
    r("how are users and roles stored"),
    r("who can call the admin api"),
    r("what happens when a payment callback fails"),
    r("Which service sends the confirmation email?"),
    r("Owner registration flow"),
    r("JPA entities"),
    r("how is the order status changed by the scheduler"),
    r("create / update product"),
    r("input/output formats for export"),
    r("e.g. the reset password mail"),
    r("Scheduled jobs that clean up tokens"),
    r("How to call an external API with retries"),
    # --- other languages ---------------------------------------------------------------------------
    r("用户登录 在哪里实现"),
    r("订单超时 自动取消"),
    r("谁调用了 OrderService.cancel", CALLERS, "OrderService.cancel"),
    r("哪些类注入了 RedisUtils", INJECTORS, "RedisUtils"),
    r("LoginController 在哪里使用", INJECTORS, "LoginController"),
    r("who calls 订单服务的 cancelOrder() 方法", CALLERS, "cancelOrder"),
    r("where is SysUserService used 用户管理", INJECTORS, "SysUserService"),
    r("GET /api/users 接口在哪里", routes=("/api/users",), verbs=("GET",)),
    # --- annotations are named, not code names -----------------------------------------------------
    r("methods annotated with @Transactional"),
    r("where is @Scheduled used", ids=()),
    r("@PreAuthorize on OrderController", ids=("OrderController",)),
)


def test_there_are_many_phrasings() -> None:
    assert len(ROWS) >= 100
    assert len({row.question for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_question_is_read_as_written(row: Row) -> None:
    terms = query_terms(row.question)

    got = (terms.relation, terms.subjects[:1], terms.identifiers, terms.routes, terms.http_methods)
    want = (row.relation, (row.subject,) if row.subject else (), row.ids, row.routes, row.verbs)
    assert got == want


@pytest.mark.parametrize(
    ("question", "annotations"),
    [
        ("methods annotated with @Transactional", ("Transactional",)),
        ("@org.springframework.cache.annotation.Cacheable methods", ("Cacheable",)),
        ("where is @Scheduled used", ("Scheduled",)),
    ],
)
def test_annotations_are_read_by_simple_name(question: str, annotations: tuple[str, ...]) -> None:
    assert query_terms(question).annotations == annotations


def test_a_quoted_verb_is_still_a_verb_and_a_quoted_word_is_code() -> None:
    kinds = [(t.text, t.kind.value) for t in tokenize("`GET /users` or `save`")]

    assert kinds == [("GET", "verb"), ("/users", "route"), ("or", "word"), ("save", "code")]


def test_a_capitalised_word_opening_a_sentence_is_english_elsewhere_code() -> None:
    assert query_terms("Owner is saved where? Ask Owner.").identifiers == ("Owner",)


def test_a_question_of_one_capitalised_word_names_a_type() -> None:
    assert query_terms("Table").identifiers == ("Table",)
    assert query_terms("Flow?").identifiers == ("Flow",)
    assert query_terms("table").identifiers == ()
    assert query_terms("Transactions everywhere").identifiers == ()


def test_plurals_fold_even_when_the_singular_is_a_substring() -> None:
    # "listener" is a substring of "listeners": the expansion compares words, not substrings.
    assert expand_query("kafka listeners") == "kafka listeners listener"
    assert expand_query("JPA entities") == "JPA entities entity"
    assert expand_query("entity entities") == "entity entities"


def test_the_lexical_query_writes_names_as_code_does_without_the_question_scaffolding() -> None:
    assert expand_query("who calls Type::method") == "calls Type.method call"
    assert expand_query("where is OwnerService.create used?") == "is OwnerService.create used"
    assert expand_query("what serves http://localhost:8080/api/users?x=1") == "serves /api/users serve"
    assert expand_query("how does `where` work") == "where work"  # a quoted word is code, and stays
    assert expand_query("methods with @Cacheable") == "methods with Cacheable method"


def test_the_lexical_query_adds_the_english_of_its_chinese_words() -> None:
    assert expand_query("清空购物车") == "清空购物车 clear empty shopping cart"


@pytest.mark.parametrize(
    ("word", "one"),
    [("entities", "entity"), ("listeners", "listener"), ("classes", "class"), ("status", "status"), ("is", "is")],
)
def test_singular(word: str, one: str) -> None:
    assert singular(word) == one
