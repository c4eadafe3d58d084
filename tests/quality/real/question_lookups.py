"""Single-answer questions that name what they look for (symbol, route, bodiless members, phrased routes),
written under the rules of `questions.py`, and `SINGLES`: every single-answer question.
"""

from __future__ import annotations

from typing import Final

from tests.quality.real.questions import (
    _EM,
    _J,
    _P,
    ELADMIN,
    JHIPSTER,
    MALL,
    NATURAL,
    PIGGY,
    Single,
    _both,
    _n,
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
