"""Exact lookups that missed before issue 12, through both embedded engines (lexical-only).

Bodiless methods (interface, repository, mapper, Feign methods) are found by name, annotation, route,
callers and outline; calls resolve through the type hierarchy across files; beans of stereotypes
declared in the index (another file, another repository) and of framework stereotypes (DGS) have
their injections. The Java below is written for these tests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import pytest
import pytest_asyncio

from app.auth.access import LOCAL
from app.search.hits import Hit
from app.search.service import SearchService
from app.store.indexing import Indexer
from app.store.vectors import IndexModel
from pipeline.chunking import chunk_source
from pipeline.model import ChunkerConfig, SourceContext, SymbolType
from tests.support.engines import EMBEDDED_ENGINES, memory_store

APP: Final = "acme/app"
PLATFORM: Final = "acme/platform"
SRC: Final = "src/main/java/"

APP_FILES: Final = {
    "demo/order/OrderRepository.java": """\
package demo.order;

import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.transaction.annotation.Transactional;

public interface OrderRepository extends JpaRepository<Order, Long> {

    /**
     * Orders in one status, newest first.
     */
    @Transactional(readOnly = true)
    List<Order> findByStatus(String status);
}
""",
    "demo/order/OrderMapper.java": """\
package demo.order;

import org.apache.ibatis.annotations.Mapper;
import org.springframework.transaction.annotation.Transactional;

@Mapper
public interface OrderMapper {
    @Transactional
    int insert(Order row);

    Order selectByPrimaryKey(Long id);
}
""",
    "demo/web/OrderController.java": """\
package demo.web;

import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class OrderController {
    @GetMapping("/orders/list")
    String list() {
        return "all";
    }

    @GetMapping("/orders/{id}")
    String detail(@PathVariable long id) {
        return "one";
    }

    @DeleteMapping("/orders/{id}")
    void remove(@PathVariable long id) {
    }
}
""",
    "billing/src/main/java/demo/billing/BillingOrders.java": """\
package demo.billing;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class BillingOrders {
    @GetMapping("/orders/{number}")
    String invoice(@PathVariable String number) {
        return number;
    }
}
""",
    "demo/client/StockClient.java": """\
package demo.client;

import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;

@FeignClient(name = "stock", path = "/stock")
public interface StockClient {
    @GetMapping("/items/{sku}")
    Item item(@PathVariable("sku") String sku);
}
""",
    "demo/model/Base.java": """\
package demo.model;

public abstract class Base {
    public boolean isActive() {
        return true;
    }

    public abstract String label();
}
""",
    "demo/model/Child.java": """\
package demo.model;

public class Child extends Base {
    @Override
    public String label() {
        return "child";
    }
}
""",
    "demo/model/GrandChild.java": """\
package demo.model;

public class GrandChild extends Child {
    @Override
    public boolean isActive() {
        return false;
    }
}
""",
    "demo/model/Leaf.java": """\
package demo.model;

public class Leaf extends GrandChild {
}
""",
    "demo/model/Holder.java": """\
package demo.model;

public class Holder {
    public static class Inner extends Base {
    }

    boolean onInner(Holder.Inner inner) {
        return inner.isActive();
    }

    boolean onOutside(Outside outside) {
        return outside.isActive();
    }
}
""",
    "demo/model/Outside.java": """\
package demo.model;

public class Outside extends Holder.Inner {
}
""",
    "demo/use/Checker.java": """\
package demo.use;

import demo.model.Base;
import demo.model.Child;
import demo.model.Leaf;

public class Checker {
    boolean onChild(Child child) {
        return child.isActive();
    }

    boolean onLeaf(Leaf leaf) {
        return leaf.isActive();
    }

    boolean onBase(Base base) {
        return base.isActive();
    }
}
""",
    "demo/pay/PaymentGateway.java": """\
package demo.pay;

import org.springframework.transaction.annotation.Transactional;

public interface PaymentGateway {
    @Transactional
    void charge(long cents);
}
""",
    "demo/pay/CardGateway.java": """\
package demo.pay;

import org.springframework.stereotype.Component;

@Component
public class CardGateway implements PaymentGateway {
    @Override
    public void charge(long cents) {
        System.out.println(cents);
    }
}
""",
    "demo/pay/Checkout.java": """\
package demo.pay;

import lombok.RequiredArgsConstructor;
import org.springframework.stereotype.Service;

@Service
@RequiredArgsConstructor
public class Checkout {
    private final PaymentGateway gateway;
    private final CardGateway cards;

    void pay() {
        gateway.charge(100);
    }

    void payByCard() {
        cards.charge(200);
    }
}
""",
    "demo/arch/DomainService.java": """\
package demo.arch;

import org.springframework.stereotype.Service;

@Service
public @interface DomainService {
}
""",
    "demo/arch/UseCase.java": """\
package demo.arch;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;

@Retention(RetentionPolicy.RUNTIME)
@DomainService
public @interface UseCase {
}
""",
    "demo/use/PlaceOrder.java": """\
package demo.use;

import demo.arch.UseCase;
import demo.order.OrderRepository;

@UseCase
public class PlaceOrder {
    private final OrderRepository orders;

    public PlaceOrder(OrderRepository orders) {
        this.orders = orders;
    }

    public int pending() {
        return orders.findByStatus("NEW").size();
    }

    public void store(Order order) {
        orders.save(order);
    }
}
""",
    "demo/use/StockAdapter.java": """\
package demo.use;

import demo.client.StockClient;
import lombok.RequiredArgsConstructor;
import platform.arch.Adapter;

@Adapter
@RequiredArgsConstructor
public class StockAdapter {
    private final StockClient client;
}
""",
    "demo/use/PlainHolder.java": """\
package demo.use;

import demo.client.StockClient;
import lombok.Getter;
import lombok.RequiredArgsConstructor;

@Getter
@RequiredArgsConstructor
public class PlainHolder {
    private final StockClient client;
}
""",
    "demo/graphql/OrderFetcher.java": """\
package demo.graphql;

import com.netflix.graphql.dgs.DgsComponent;
import demo.order.OrderMapper;

@DgsComponent
public class OrderFetcher {
    private final OrderMapper mapper;

    public OrderFetcher(OrderMapper mapper) {
        this.mapper = mapper;
    }
}
""",
    "demo/web/SignupPost.java": """\
package demo.web;

import platform.web.PublicPost;

@PublicPost
public @interface SignupPost {
}
""",
    "demo/web/AuthController.java": """\
package demo.web;

import demo.audit.Log;
import platform.web.PublicPost;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping("/auth")
public class AuthController {
    @Log("用户登录")
    @PublicPost("/login")
    public String login() {
        return "token";
    }

    @SignupPost
    public String signup() {
        return "welcome";
    }

    @Log("/audit")
    public String audited() {
        return "not a route: Log is no mapping";
    }
}
""",
}

PLATFORM_FILES: Final = {
    "platform/arch/Adapter.java": """\
package platform.arch;

import org.springframework.stereotype.Component;

@Component
public @interface Adapter {
}
""",
    "platform/web/PublicPost.java": """\
package platform.web;

import org.springframework.core.annotation.AliasFor;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;

@RequestMapping(method = RequestMethod.POST)
public @interface PublicPost {
    @AliasFor(annotation = RequestMapping.class)
    String[] value() default {};
}
""",
}

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=EMBEDDED_ENGINES)
async def search(request: pytest.FixtureRequest) -> AsyncIterator[SearchService]:
    store = memory_store(request.param)
    try:
        await store.ensure(IndexModel(embedding_model=None, dimension=None))
        indexer = Indexer(store, None)
        config = ChunkerConfig()
        for repo, files, project in ((APP, APP_FILES, 1), (PLATFORM, PLATFORM_FILES, 2)):
            context = SourceContext(repo_path=repo, gitlab_project_id=project)
            results = [
                chunk_source(code.encode(), path if "src/main/" in path else SRC + path, context, config)
                for path, code in files.items()
            ]
            await indexer.write(repo, results)
        yield SearchService(store, None)
    finally:
        await store.close()


def names(hits: list[Hit]) -> list[str]:
    return sorted({h.qualified_name for h in hits})


# Bodiless methods ---------------------------------------------------------------------------------


async def test_repository_and_mapper_methods_are_symbols(search: SearchService) -> None:
    [hit] = await search.symbol(LOCAL, "findByStatus")
    assert (hit.qualified_name, hit.symbol_type, hit.line_start, hit.line_end) == (
        "demo.order.OrderRepository.findByStatus", SymbolType.METHOD, 9, 13,
    )  # fmt: skip
    assert names(await search.symbol(LOCAL, "OrderMapper.selectByPrimaryKey")) == [
        "demo.order.OrderMapper.selectByPrimaryKey"
    ]


async def test_transactional_on_interface_methods_is_found_by_annotation(search: SearchService) -> None:
    assert names(await search.by_annotation(LOCAL, "Transactional")) == [
        "demo.order.OrderMapper.insert",
        "demo.order.OrderRepository.findByStatus",
        "demo.pay.PaymentGateway.charge",
    ]


async def test_feign_method_is_the_endpoint_of_its_route(search: SearchService) -> None:
    assert names(await search.endpoint(LOCAL, "/stock/items/abc-1", "GET")) == ["demo.client.StockClient.item"]


async def test_a_literal_route_shadows_a_pattern_only_within_its_application(search: SearchService) -> None:
    # One application serves GET /orders/list by its literal handler alone (Spring's most specific match);
    # the billing module is another application, and another method is another dispatch.
    assert names(await search.endpoint(LOCAL, "/orders/list", "GET")) == [
        "demo.billing.BillingOrders.invoice", "demo.web.OrderController.list",
    ]  # fmt: skip
    assert names(await search.endpoint(LOCAL, "/orders/list")) == [
        "demo.billing.BillingOrders.invoice", "demo.web.OrderController.list", "demo.web.OrderController.remove",
    ]  # fmt: skip
    assert names(await search.endpoint(LOCAL, "/orders/7", "GET")) == [
        "demo.billing.BillingOrders.invoice", "demo.web.OrderController.detail",
    ]  # fmt: skip


async def test_callers_of_a_bare_repository_method_name(search: SearchService) -> None:
    assert names(await search.callers(LOCAL, "findByStatus")) == ["demo.use.PlaceOrder.pending"]


async def test_outline_lists_bodiless_methods_in_line_order(search: SearchService) -> None:
    hits = await search.outline(LOCAL, APP, SRC + "demo/order/OrderMapper.java")
    assert [h.qualified_name for h in hits] == [
        "demo.order.OrderMapper",
        "demo.order.OrderMapper.insert",
        "demo.order.OrderMapper.selectByPrimaryKey",
    ]


# Calls through the type hierarchy ----------------------------------------------------------------


# Beans of learned and framework stereotypes ------------------------------------------------------


# Composed mapping annotations -----------------------------------------------------------------------
