"""Questions over the four real repositories, written by reading their code (git show / grep on the
mirrors) BEFORE any search was run on them; none was reworded or re-picked after seeing results.
Later additions go in new tuples in new commits; existing questions are never changed.

Single-answer questions (scored R@1/R@5/MRR through `SearchService.search`):
    natural: behaviour in words, naming no identifier. `tags` mark the ones whose words differ from
        the code's ("vocab"), and the ones whose only textual link to the code is a Chinese comment
        ("zh"); some are asked in Chinese (as a Chinese-speaking team would ask).
    symbol: a type or method as written in code (expected: every declaration with that name suffix,
        computed from the source by `gold.py`, so all overloads and the interface declaration count).
    route: an HTTP request as copied from a log (expected: the handlers `gold.py` says serve it).
`expected` of natural questions lists every chunk an asker would accept: for a service method, its
interface declaration and its implementation.

Set questions (scored set-recall/precision through the structural tools): only the question is
written here; the gold set is computed exhaustively by `gold.py` from the source (Java; over Kotlin,
which gold.py does not read, the gold is written by hand: `tests/quality/kotlin/`).

This module holds the questions' model and the natural questions; the symbol and route questions and
`SINGLES`: `question_lookups.py`; the set questions and `ALL_SETS`: `question_sets.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from app.search.scoping import Filters

SingleKind = Literal["natural", "symbol", "route"]
SetKind = Literal["annotation", "callers", "injection", "inverse", "endpoints"]
SINGLE_KINDS: Final[tuple[SingleKind, ...]] = ("natural", "symbol", "route")
SET_KINDS: Final[tuple[SetKind, ...]] = ("annotation", "callers", "injection", "inverse", "endpoints")

MALL = "macrozheng/mall"
ELADMIN = "elunez/eladmin"
JHIPSTER = "jhipster/jhipster-sample-app"
PIGGY = "sqshq/piggymetrics"


@dataclass(frozen=True, slots=True)
class Single:
    """A single-answer question; `expected` empty means "computed by gold.py" (symbol, route)."""

    text: str
    kind: SingleKind
    expected: frozenset[str] = frozenset()
    repo: str | None = None  # a filter the asker gives
    tags: frozenset[str] = frozenset()
    lookup: str = ""  # symbol: the name suffix; route: "METHOD /path" (derived from the text when empty)

    @property
    def filters(self) -> Filters:
        return Filters(repo=self.repo)


@dataclass(frozen=True, slots=True)
class SetQuestion:
    """A set question: the structural tool is asked `target` (in `repo`); gold.py computes the answer."""

    kind: SetKind
    target: str
    repo: str
    http_method: str = field(default="")
    gold: frozenset[str] = frozenset()
    """Written by hand from the code where gold.py cannot compute it (Kotlin); empty: computed by gold.py."""

    @property
    def text(self) -> str:
        verb = f"{self.http_method} " if self.http_method else ""
        return f"{self.kind} {verb}{self.target} in {self.repo}"


def _n(text: str, *expected: str, repo: str | None = None, tags: str = "") -> Single:
    if not expected:
        raise ValueError(f"natural question without an answer: {text!r}")
    return Single(text, "natural", frozenset(expected), repo, frozenset(tags.split()))


def _both(interface: str, method: str) -> tuple[str, str]:
    """A service method: its interface declaration and its implementation in `<package>.impl.<Name>Impl`."""
    package, name = interface.rsplit(".", 1)
    return f"{interface}.{method}", f"{package}.impl.{name}Impl.{method}"


_MP = "com.macro.mall.portal.service."
_MA = "com.macro.mall.service."
_ES = "me.zhengjie.service."
_EM = "me.zhengjie.modules."
_J = "io.github.jhipster.sample."
_P = "com.piggymetrics."

NATURAL: Final[tuple[Single, ...]] = (
    # --- macrozheng/mall (Chinese javadoc on the service interfaces, English-free bodies) ---
    _n(
        "how is an order created from the items a shopper submits at checkout",
        *_both(_MP + "OmsPortalOrderService", "generateOrder"),
        tags="zh",
    ),
    _n(
        "where is the confirmation page data built from the shopping cart before placing an order",
        *_both(_MP + "OmsPortalOrderService", "generateConfirmOrder"),
        tags="zh",
    ),
    _n(
        "what happens after a payment succeeds for an order",
        *_both(_MP + "OmsPortalOrderService", "paySuccess"),
        tags="zh",
    ),
    _n(
        "which code cancels orders that were not paid in time",
        *_both(_MP + "OmsPortalOrderService", "cancelTimeOutOrder"),
        "com.macro.mall.portal.component.OrderTimeOutCancelTask.cancelTimeOutOrder",
        tags="zh",
    ),
    _n(
        "where does a customer confirm that the parcel was received",
        *_both(_MP + "OmsPortalOrderService", "confirmReceiveOrder"),
        tags="zh vocab",
    ),
    _n(
        "how is a delayed message sent to cancel an order later",
        *_both(_MP + "OmsPortalOrderService", "sendDelayMessageCancelOrder"),
        "com.macro.mall.portal.component.CancelOrderSender.sendMessage",
        tags="zh",
    ),
    _n(
        "where are promotions applied to the items in a shopping cart",
        *_both(_MP + "OmsPromotionService", "calcCartPromotion"),
        tags="zh",
    ),
    _n(
        "how is a product put into the cart, merging quantities when it is already there",
        *_both(_MP + "OmsCartItemService", "add"),
        tags="zh",
    ),
    _n("where is the quantity of a cart line changed", *_both(_MP + "OmsCartItemService", "updateQuantity"), tags="zh"),
    _n("how does a shopper empty the whole cart", *_both(_MP + "OmsCartItemService", "clear"), tags="zh vocab"),
    _n(
        "how does a new shopper sign up with a phone verification code",
        *_both(_MP + "UmsMemberService", "register"),
        tags="zh",
    ),
    _n(
        "where is the SMS verification code generated for a phone number",
        *_both(_MP + "UmsMemberService", "generateAuthCode"),
        tags="zh",
    ),
    _n(
        "how are loyalty points of a member updated",
        *_both(_MP + "UmsMemberService", "updateIntegration"),
        tags="zh vocab",
    ),
    _n(
        "which coupons can be used for the goods in my cart",
        *_both(_MP + "UmsMemberCouponService", "listCart"),
        tags="zh",
    ),
    _n("how does a member claim a coupon", *_both(_MP + "UmsMemberCouponService", "add"), tags="zh vocab"),
    _n(
        "where is the Alipay asynchronous payment notification handled",
        *_both(_MP + "AlipayService", "notify"),
        tags="zh",
    ),
    _n("how do we ask Alipay for the status of a trade", *_both(_MP + "AlipayService", "query"), tags="zh"),
    _n(
        "where is the content of the storefront home page assembled",
        *_both(_MP + "HomeService", "content"),
        tags="zh vocab",
    ),
    _n(
        "how are popular products listed page by page on the home page",
        *_both(_MP + "HomeService", "hotProductList"),
        tags="zh vocab",
    ),
    _n(
        "where is a member's verification code kept in the cache",
        *_both(_MP + "UmsMemberCacheService", "setAuthCode"),
        tags="zh",
    ),
    _n(
        "how are several orders shipped at once by an administrator",
        *_both(_MA + "OmsOrderService", "delivery"),
        tags="zh vocab",
    ),
    _n("where does an admin close a batch of orders with a note", *_both(_MA + "OmsOrderService", "close"), tags="zh"),
    _n(
        "where can an administrator change the receiver address of an order",
        *_both(_MA + "OmsOrderService", "updateReceiverInfo"),
        tags="zh",
    ),
    _n(
        "how is a new product with its SKUs, ladder prices and attributes created",
        *_both(_MA + "PmsProductService", "create"),
        tags="zh",
    ),
    _n(
        "where are products approved or rejected in review",
        *_both(_MA + "PmsProductService", "updateVerifyStatus"),
        tags="zh vocab",
    ),
    _n(
        "how are products taken off the shelf or put on sale in bulk",
        *_both(_MA + "PmsProductService", "updatePublishStatus"),
        tags="zh vocab",
    ),
    _n("how does a back-office user log in and get a JWT", *_both(_MA + "UmsAdminService", "login"), tags="zh"),
    _n("where are roles assigned to an admin account", *_both(_MA + "UmsAdminService", "updateRole"), tags="zh"),
    _n(
        "how are the resources an admin may access looked up",
        *_both(_MA + "UmsAdminService", "getResourceList"),
        *_both(_MA + "UmsAdminCacheService", "getResourceList"),
        tags="zh",
    ),
    _n(
        "when a role's permissions change, which cache entries of admins are dropped",
        *_both(_MA + "UmsAdminCacheService", "delResourceListByRole"),
        *_both(_MA + "UmsAdminCacheService", "delResourceListByRoleIds"),
        tags="zh",
    ),
    _n("how are menus granted to a role", *_both(_MA + "UmsRoleService", "allocMenu"), tags="zh"),
    _n(
        "where is a coupon with its product and category relations created",
        *_both(_MA + "SmsCouponService", "create"),
        tags="zh",
    ),
    _n("生成订单", *_both(_MP + "OmsPortalOrderService", "generateOrder"), tags="zh"),
    _n(
        "自动取消超时订单",
        *_both(_MP + "OmsPortalOrderService", "cancelTimeOutOrder"),
        "com.macro.mall.portal.component.OrderTimeOutCancelTask.cancelTimeOutOrder",
        tags="zh",
    ),
    _n("给角色分配资源", *_both(_MA + "UmsRoleService", "allocResource"), tags="zh"),
    _n("批量修改商品推荐状态", *_both(_MA + "PmsProductService", "updateRecommendStatus"), tags="zh"),
    # --- elunez/eladmin (Chinese comments) ---
    _n(
        "how is a verification code emailed to a user",
        *_both(_EM + "system.service.VerifyService", "sendEmail"),
        tags="zh",
    ),
    _n(
        "where is an emailed verification code checked",
        *_both(_EM + "system.service.VerifyService", "validated"),
        tags="zh",
    ),
    _n(
        "which departments may a user see under data permissions",
        *_both(_EM + "system.service.DataService", "getDeptIds"),
        tags="zh vocab",
    ),
    _n(
        "how is the permission list of a logged-in user built from roles and menus",
        *_both(_EM + "system.service.RoleService", "buildPermissions"),
        tags="zh",
    ),
    _n(
        "where is a role checked to be unused by any user before it is deleted",
        *_both(_EM + "system.service.RoleService", "verification"),
        tags="zh",
    ),
    _n(
        "how is a scheduled task run immediately from the admin page",
        *_both(_EM + "quartz.service.QuartzJobService", "execution"),
        tags="zh",
    ),
    _n(
        "where is a scheduled task paused or resumed",
        *_both(_EM + "quartz.service.QuartzJobService", "updateIsPause"),
        tags="zh",
    ),
    _n(
        "how are the sub-tasks of a quartz job executed",
        *_both(_EM + "quartz.service.QuartzJobService", "executionSubJob"),
        tags="zh",
    ),
    _n(
        "where are the operation logs written when an annotated method runs",
        *_both(_ES + "SysLogService", "save"),
        tags="zh",
    ),
    _n("how are all error logs deleted", *_both(_ES + "SysLogService", "delAllByError"), tags="zh"),
    _n("how is source code generated for a database table", *_both(_ES + "GeneratorService", "generator"), tags="zh"),
    _n(
        "where are the column definitions of a table synchronised with the database",
        *_both(_ES + "GeneratorService", "sync"),
        tags="zh",
    ),
    _n("how is an uploaded file stored on the local disk", *_both(_ES + "LocalStorageService", "create"), tags="zh"),
    _n(
        "where is a web payment request sent to Alipay from a mobile browser",
        *_both(_ES + "AliPayService", "toPayAsWeb"),
        tags="zh",
    ),
    _n("how is the SMTP configuration saved", *_both(_ES + "EmailService", "config"), tags="zh vocab"),
    _n(
        "how is an online user's session kicked out by username",
        f"{_EM}security.service.OnlineUserService.kickOutForUsername",
        tags="vocab",
    ),
    _n(
        "where is a logged-in user's session saved to redis with browser and IP",
        f"{_EM}security.service.OnlineUserService.save",
    ),
    _n("how are a file size in bytes formatted for humans", "me.zhengjie.utils.FileUtil.getSize", tags="vocab"),
    _n(
        "数据权限",
        *_both(_EM + "system.service.DataService", "getDeptIds"),
        f"{_EM}system.service.DataService",
        tags="zh",
    ),
    _n("立即执行定时任务", *_both(_EM + "quartz.service.QuartzJobService", "execution"), tags="zh"),
    # --- jhipster/jhipster-sample-app ---
    _n(
        "how is a user account activated from the emailed key",
        f"{_J}service.UserService.activateRegistration",
        f"{_J}web.rest.AccountResource.activateAccount",
    ),
    _n(
        "where does a forgotten password get reset with the key from the mail",
        f"{_J}service.UserService.completePasswordReset",
        f"{_J}web.rest.AccountResource.finishPasswordReset",
        tags="vocab",
    ),
    _n(
        "which job deletes accounts that were never activated",
        f"{_J}service.UserService.removeNotActivatedUsers",
        tags="vocab",
    ),
    _n(
        "how is a JWT issued after a successful login",
        f"{_J}web.rest.AuthenticateController.authorize",
        f"{_J}web.rest.AuthenticateController.createToken",
    ),
    _n("where is the mail with the password reset link sent", f"{_J}service.MailService.sendPasswordResetMail"),
    _n(
        "how is an email body rendered from a Thymeleaf template",
        f"{_J}service.MailService.sendEmailFromTemplateSync",
        f"{_J}service.MailService.sendEmailFromTemplate",
    ),
    _n(
        "where are invalid or expired tokens counted for monitoring",
        f"{_J}management.SecurityMetersService.trackTokenExpired",
        f"{_J}management.SecurityMetersService.trackTokenInvalidSignature",
        f"{_J}management.SecurityMetersService",
        f"{_J}config.SecurityJwtConfiguration.jwtDecoder",
        tags="vocab",
    ),
    _n(
        "how are single page app routes forwarded to index.html",
        f"{_J}web.filter.SpaWebFilter.doFilterInternal",
        f"{_J}web.filter.SpaWebFilter",
    ),
    _n(
        "how is a bank account partially updated with only the fields sent",
        f"{_J}web.rest.BankAccountResource.partialUpdateBankAccount",
    ),
    _n(
        "where do we find out the login of whoever is signed in",
        f"{_J}security.SecurityUtils.getCurrentUserLogin",
        tags="vocab",
    ),
    _n(
        "how is a signed-in user's password changed after checking the current one",
        f"{_J}service.UserService.changePassword",
        f"{_J}web.rest.AccountResource.changePassword",
    ),
    _n(
        "where are user details loaded for spring security by login or email",
        f"{_J}security.DomainUserDetailsService.loadUserByUsername",
    ),
    # --- sqshq/piggymetrics ---
    _n(
        "how are amounts converted between currencies",
        f"{_P}statistics.service.ExchangeRatesServiceImpl.convert",
        f"{_P}statistics.service.ExchangeRatesService.convert",
    ),
    _n(
        "where are the latest exchange rates fetched from the external API",
        f"{_P}statistics.client.ExchangeRatesClient.getRates",
        f"{_P}statistics.service.ExchangeRatesServiceImpl.getCurrentRates",
        f"{_P}statistics.service.ExchangeRatesService.getCurrentRates",
    ),
    _n(
        "what is returned when the currency rates provider is down",
        f"{_P}statistics.client.ExchangeRatesClientFallback.getRates",
        f"{_P}statistics.client.ExchangeRatesClientFallback",
        tags="vocab",
    ),
    _n(
        "how is a daily snapshot of an account's finances stored for statistics",
        f"{_P}statistics.service.StatisticsServiceImpl.save",
        f"{_P}statistics.service.StatisticsService.save",
        tags="vocab",
    ),
    _n(
        "where are the total incomes, expenses and savings of an account computed",
        f"{_P}statistics.service.StatisticsServiceImpl.createStatisticMetrics",
    ),
    _n(
        "which scheduled job emails users a backup of their account data",
        f"{_P}notification.service.NotificationServiceImpl.sendBackupNotifications",
        tags="vocab",
    ),
    _n(
        "where are users reminded to come back and update their budget",
        f"{_P}notification.service.NotificationServiceImpl.sendRemindNotifications",
        tags="vocab",
    ),
    _n(
        "how do we pick the subscribers that are due for a notification",
        f"{_P}notification.service.RecipientServiceImpl.findReadyToNotify",
        f"{_P}notification.service.RecipientService.findReadyToNotify",
        f"{_P}notification.repository.RecipientRepository.findReadyForBackup",
        f"{_P}notification.repository.RecipientRepository.findReadyForRemind",
        tags="vocab",
    ),
    _n(
        "how is a new account created with a default saving when someone registers",
        f"{_P}account.service.AccountServiceImpl.create",
        f"{_P}account.service.AccountService.create",
    ),
    _n(
        "where does the account service ask the auth service to create the login",
        f"{_P}account.client.AuthServiceClient.createUser",
    ),
    _n("how is a new user's password hashed before saving", f"{_P}auth.service.UserServiceImpl.create"),
    _n(
        "how is the notification email with an attachment composed and sent",
        f"{_P}notification.service.EmailServiceImpl.send",
        f"{_P}notification.service.EmailService.send",
    ),
)
