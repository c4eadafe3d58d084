"""PostgreSQL adapter (asyncpg): sync state, runs, deliveries, sweeps, backfills, requests, status, manifests.

All SQL lives in this package, one module per table family; `Database` is all of them over one pool
(`app.db.pool`, where asyncpg's errors are translated). It is the only package that imports asyncpg.
"""

from app.db.backfills import BackfillQueries
from app.db.deliveries import DeliveryQueries
from app.db.dependencies import Coordinates, DependencyQueries, LibraryRow, UsageRow
from app.db.local import LocalQueries
from app.db.metrics import LagSummary, MetricQueries
from app.db.pool import lock_key
from app.db.projects import ProjectQueries
from app.db.rebuilds import RebuildProgress, RebuildQueries, RebuildRow
from app.db.requests import NewRequest, RequestQueries
from app.db.rows import HeadSeen, IndexRequestRow, JobCounts, KeyedPush, ProjectRow, StatusRow, SweepMarks
from app.db.runs import RunQueries
from app.db.status import StatusQueries
from app.db.sweeps import SweepQueries

__all__ = [
    "Coordinates",
    "Database",
    "HeadSeen",
    "IndexRequestRow",
    "JobCounts",
    "KeyedPush",
    "LagSummary",
    "LibraryRow",
    "NewRequest",
    "ProjectRow",
    "RebuildProgress",
    "RebuildRow",
    "StatusRow",
    "SweepMarks",
    "UsageRow",
    "lock_key",
]


class Database(
    DeliveryQueries,
    ProjectQueries,
    SweepQueries,
    RunQueries,
    BackfillQueries,
    RebuildQueries,
    MetricQueries,
    StatusQueries,
    RequestQueries,
    DependencyQueries,
    LocalQueries,
):
    """Queries over one asyncpg pool."""
