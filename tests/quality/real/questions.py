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
written here; the gold set is computed exhaustively by `gold.py` from the source.
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


def _s(name: str, repo: str | None = None) -> Single:
    return Single(name, "symbol", repo=repo, lookup=name)


SYMBOL: Final[tuple[Single, ...]] = (
    _s("OmsPortalOrderServiceImpl.generateOrder"),
    _s("OmsPortalOrderServiceImpl.cancelOrder"),
    _s("OmsPromotionServiceImpl"),
    _s("UmsAdminServiceImpl.login"),
    _s("UmsAdminCacheServiceImpl.delResourceListByRole"),
    _s("PmsProductServiceImpl.create"),
    _s("OrderTimeOutCancelTask"),
    _s("CancelOrderSender.sendMessage"),
    _s("EsProductServiceImpl.search", MALL),
    _s("JwtTokenUtil.generateToken"),
    _s("RedisServiceImpl.set", MALL),
    _s("PmsProductMapper"),
    _s("UserServiceImpl.create", ELADMIN),
    _s("RoleServiceImpl.buildPermissions"),
    _s("QuartzJobServiceImpl.execution"),
    _s("OnlineUserService.kickOutForUsername"),
    _s("RedisUtils.scanDel"),
    _s("FileUtil.getSize"),
    _s("LogAspect"),
    _s("GeneratorServiceImpl.generator"),
    _s("UserService.activateRegistration", JHIPSTER),
    _s("MailService.sendEmailFromTemplate"),
    _s("SecurityUtils.getCurrentUserLogin", JHIPSTER),
    _s("BankAccountResource.partialUpdateBankAccount"),
    _s("AuthenticateController.createToken"),
    _s("SpaWebFilter"),
    _s("ExchangeRatesServiceImpl.convert"),
    _s("StatisticsServiceImpl.createStatisticMetrics"),
    _s("NotificationServiceImpl.sendRemindNotifications"),
    _s("RecipientRepository.findReadyForRemind"),
    _s("ExchangeRatesClient"),
    _s("AccountServiceImpl.saveChanges"),
)


def _r(text: str, repo: str | None = None, *expected: str) -> Single:
    """A route question: the text is `METHOD /concrete/path`. Its handlers come from gold.py unless
    given: a servlet context path (set in YAML, invisible to gold.py) needs them written by hand."""
    verb, path = text.split()[:2]
    return Single(text, "route", frozenset(expected), repo=repo, lookup=f"{verb} {path}")


ROUTE: Final[tuple[Single, ...]] = (
    _r("POST /order/generateOrder", MALL),
    _r("POST /cart/add", MALL),
    _r("GET /cart/list/promotion", MALL),
    _r("POST /sso/login", MALL),
    _r("GET /home/productCateList/0", MALL),
    _r("POST /order/update/delivery", MALL),
    _r("POST /product/update/deleteStatus", MALL),
    _r("POST /sku/update/26", MALL),
    _r("GET /esProduct/search/simple", MALL),
    _r("POST /returnApply/create", MALL),
    _r("GET /admin/refreshToken", MALL),
    _r("POST /auth/login", ELADMIN),
    _r("GET /auth/info", ELADMIN),
    _r("DELETE /auth/online", ELADMIN),
    _r("GET /api/jobs/logs", ELADMIN),
    _r("GET /api/logs/error/17", ELADMIN),
    _r("POST /api/aliPay/toPayAsWeb", ELADMIN),
    _r("POST /api/generator/sys_user/0", ELADMIN),
    _r("GET /api/roles/3", ELADMIN),
    _r("POST /api/serverDeploy/testConnect", ELADMIN),
    _r("DELETE /api/admin/users/alice", JHIPSTER),
    _r("PATCH /api/bank-accounts/12", JHIPSTER),
    _r("GET /api/account", JHIPSTER),
    _r("POST /api/authenticate", JHIPSTER),
    _r("POST /api/account/reset-password/finish", JHIPSTER),
    _r("GET /recipients/current", PIGGY),
    _r("PUT /recipients/current", PIGGY),
    _r("GET /users/current", PIGGY),
    # context-path /statistics and /accounts (config/src/main/resources/shared/*.yml)
    _r("PUT /statistics/demo", None, f"{_P}statistics.controller.StatisticsController.saveAccountStatistics"),
    _r("GET /accounts/demo", PIGGY, f"{_P}account.controller.AccountController.getAccountByName"),
)

# Second group, written the same way (from the code, before any search on them): declarations without
# a body (repository, MyBatis mapper, Feign and service-interface methods) and inherited methods.
_EU = _EM + "system.repository.UserRepository."
_JU = _J + "repository.UserRepository."
BODILESS: Final[tuple[Single, ...]] = (
    _n("which users have a given role, by a native SQL query", _EU + "findByRoleId", tags="bodiless"),
    _n(
        "how are the passwords of several users reset at once",
        _EU + "resetPwd",
        *_both(_EM + "system.service.UserService", "resetPwd"),
        f"{_EM}system.rest.UserController.resetPwd",
        tags="bodiless",
    ),
    _n("how many users hold any of these jobs", _EU + "countByJobs", tags="bodiless"),
    _n(
        "find accounts that were never activated and were created before a date",
        _JU + "findAllByActivatedIsFalseAndActivationKeyIsNotNullAndCreatedDateBefore",
        _J + "service.UserService.removeNotActivatedUsers",
        tags="bodiless",
    ),
    _n("look up a user by the key of a password reset", _JU + "findOneByResetKey", tags="bodiless"),
    _n(
        "how does the account service push an account's data to the statistics service",
        f"{_P}account.client.StatisticsServiceClient.updateStatistics",
        f"{_P}account.service.AccountServiceImpl.saveChanges",
        tags="bodiless",
    ),
    _n(
        "which recipients are ready for the backup email",
        f"{_P}notification.repository.RecipientRepository.findReadyForBackup",
        tags="bodiless",
    ),
    _n(
        "where does the notification service fetch an account over HTTP",
        f"{_P}notification.client.AccountServiceClient.getAccount",
        tags="bodiless",
    ),
    _s("UserRepository.findOneWithAuthoritiesByLogin", JHIPSTER),
    _s("UserRepository.findByRoleDeptId", ELADMIN),
    _s("DeptRepository.findByPidIsNull"),
    _s("StatisticsServiceClient.updateStatistics"),
    _s("AccountServiceClient.getAccount"),
    _s("UmsMemberService.register"),
    _s("OmsPortalOrderService.paySuccessByOrderSn"),
    _s("MenuRepository.findByRoleIdsAndTypeNot"),
)


def _rp(text: str, lookup: str, repo: str | None = None) -> Single:
    """A route asked in a sentence (the request in `lookup`, its handlers from gold.py)."""
    return Single(text, "route", repo=repo, tags=frozenset({"phrased"}), lookup=lookup)


# Third group, written from the controllers' mappings: routes asked in sentences, with the phrasings
# the issue lists as misread (capitalised verbs, `/users`, "calls" a URL, the root route, a query string).
ROUTE_PHRASED: Final[tuple[Single, ...]] = (
    _rp("which method handles a GET request to /api/users", "GET /api/users"),
    _rp("who answers POST /api/users in the admin platform", "POST /api/users", ELADMIN),
    _rp("what happens on DELETE /api/users", "DELETE /api/users", ELADMIN),
    _rp("the UI calls POST /api/account/change-password, where is that handled", "POST /api/account/change-password"),
    _rp("which handler creates an account on POST /", "POST /", PIGGY),
    _rp("list the users shown publicly: GET /api/users", "GET /api/users", JHIPSTER),
    _rp("where is POST /api/register implemented", "POST /api/register"),
    _rp("what does calling GET /api/activate?key=abc do", "GET /api/activate"),
    _rp("handler for GET /api/authorities", "GET /api/authorities"),
    _rp("the app calls POST /order/paySuccess after payment, which code runs", "POST /order/paySuccess", MALL),
    _rp("what does GET /order/detail/12 return", "GET /order/detail/12", MALL),
    _rp("which endpoint records POST /member/readHistory/create", "POST /member/readHistory/create"),
    _rp("how is GET /api/menus/build served", "GET /api/menus/build"),
    _rp("where does POST /api/code/resetEmail go", "POST /api/code/resetEmail"),
)

SINGLES: Final[tuple[Single, ...]] = NATURAL + SYMBOL + ROUTE + BODILESS + ROUTE_PHRASED


def _a(annotation: str, repo: str) -> SetQuestion:
    return SetQuestion("annotation", annotation, repo)


def _i(type_name: str, repo: str) -> SetQuestion:
    return SetQuestion("injection", type_name, repo)


def _d(qualified_type: str, repo: str) -> SetQuestion:
    return SetQuestion("inverse", qualified_type, repo)


def _c(method: str, repo: str) -> SetQuestion:
    return SetQuestion("callers", method, repo)


def _e(http_method: str, path: str, repo: str) -> SetQuestion:
    return SetQuestion("endpoints", path, repo, http_method)


SETS: Final[tuple[SetQuestion, ...]] = (
    _a("Transactional", MALL),
    _a("Scheduled", MALL),
    _a("CacheException", MALL),
    _a("Cacheable", ELADMIN),
    _a("Transactional", ELADMIN),
    _a("Log", ELADMIN),
    _a("AnonymousAccess", ELADMIN),
    _a("PreAuthorize", ELADMIN),
    _a("Transactional", JHIPSTER),
    _a("PreAuthorize", JHIPSTER),
    _a("Scheduled", PIGGY),
    _a("PreAuthorize", PIGGY),
    _a("FeignClient", PIGGY),
    _i("UmsAdminService", MALL),
    _i("RedisService", MALL),
    _i("OmsPortalOrderService", MALL),
    _i("UmsMemberService", MALL),
    _i("PmsProductMapper", MALL),
    _i("UserService", ELADMIN),
    _i("RedisUtils", ELADMIN),
    _i("OnlineUserService", ELADMIN),
    _i("UserRepository", JHIPSTER),
    _i("MailService", JHIPSTER),
    _i("RecipientService", PIGGY),
    _i("ExchangeRatesService", PIGGY),
    _d("com.macro.mall.portal.service.impl.OmsPortalOrderServiceImpl", MALL),
    _d("com.macro.mall.service.impl.UmsAdminServiceImpl", MALL),
    _d("com.macro.mall.portal.service.impl.UmsMemberServiceImpl", MALL),
    _d("me.zhengjie.modules.system.service.impl.UserServiceImpl", ELADMIN),
    _d("me.zhengjie.modules.security.rest.AuthController", ELADMIN),
    _d("me.zhengjie.modules.quartz.service.impl.QuartzJobServiceImpl", ELADMIN),
    _d("io.github.jhipster.sample.web.rest.UserResource", JHIPSTER),
    _d("io.github.jhipster.sample.service.UserService", JHIPSTER),
    _d("com.piggymetrics.notification.service.NotificationServiceImpl", PIGGY),
    _d("com.piggymetrics.account.service.AccountServiceImpl", PIGGY),
    _c("OmsPortalOrderService.cancelOrder", MALL),
    _c("UmsAdminCacheService.delResourceListByRole", MALL),
    _c("RedisService.set", MALL),
    _c("UmsMemberService.getCurrentMember", MALL),
    _c("RedisUtils.del", ELADMIN),
    _c("UserService.findByName", ELADMIN),
    _c("OnlineUserService.logout", ELADMIN),
    _c("MailService.sendEmailFromTemplate", JHIPSTER),
    _c("UserRepository.findOneByLogin", JHIPSTER),
    _c("RecipientService.markNotified", PIGGY),
    _c("ExchangeRatesService.convert", PIGGY),
    _e("GET", "/order/list", MALL),
    _e("POST", "/cart/delete", MALL),
    _e("GET", "/api/users", ELADMIN),
    _e("GET", "/api/admin/users", JHIPSTER),
    _e("GET", "/current", PIGGY),
)

# Second group (see BODILESS): annotations on bodiless methods, calls resolved through the hierarchy,
# injection of interfaces without an implementation in the corpus (Feign clients, MapStruct mappers).
SETS_2: Final[tuple[SetQuestion, ...]] = (
    _a("Query", ELADMIN),
    _a("Modifying", ELADMIN),
    _a("Async", ELADMIN),
    _a("Query", JHIPSTER),
    _a("EntityGraph", JHIPSTER),
    _a("Cacheable", JHIPSTER),
    _a("Query", PIGGY),
    _a("RequestMapping", PIGGY),
    _c("BaseMapper.toDto", ELADMIN),
    _c("BaseMapper.toEntity", ELADMIN),
    _c("UserRepository.findByUsername", ELADMIN),
    _c("JpaRepository.save", JHIPSTER),
    _c("AbstractAuditingEntity.getCreatedBy", JHIPSTER),
    _c("CrudRepository.save", PIGGY),
    _c("StatisticsServiceClient.updateStatistics", PIGGY),
    _c("AccountServiceClient.getAccount", PIGGY),
    _i("UserMapper", ELADMIN),
    _i("PasswordEncoder", ELADMIN),
    _i("UserCacheManager", ELADMIN),
    _i("JwtTokenUtil", MALL),
    _i("DataPointRepository", PIGGY),
    _i("StatisticsServiceClient", PIGGY),
    _d("io.github.jhipster.sample.web.rest.AccountResource", JHIPSTER),
    _d("me.zhengjie.modules.system.service.impl.RoleServiceImpl", ELADMIN),
    _d("com.macro.mall.service.impl.PmsProductServiceImpl", MALL),
    _d("com.piggymetrics.statistics.service.StatisticsServiceImpl", PIGGY),
    _e("GET", "/api/logs", ELADMIN),
    _e("PUT", "/api/users/resetPwd", ELADMIN),
    _e("GET", "/api/bank-accounts/3", JHIPSTER),
)

ALL_SETS: Final[tuple[SetQuestion, ...]] = SETS + SETS_2
