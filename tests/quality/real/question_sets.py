"""Set questions over the four real repositories (scored set-recall/precision through the structural
tools), written under the rules of `questions.py`: only the question is here; `gold.py` computes
the gold set exhaustively from the source.
"""

from __future__ import annotations

from typing import Final

from tests.quality.real.questions import (
    ELADMIN,
    JHIPSTER,
    MALL,
    PIGGY,
    SetQuestion,
)


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
