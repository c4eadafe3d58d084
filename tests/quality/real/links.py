"""Cross-service links over real checkouts (issue 29): every call site's targets, as `find_callees`-style lines.

    .venv/bin/python -m tests.quality.real.links owner/name=DIR [owner/name=DIR ...]

Each DIR (a checkout) is indexed under its name into one in-memory collection (lexical-only); then every
chunk that makes an outbound HTTP call is asked for its targets (`EndpointLinks.targets`), and each call
is printed with the handlers it reaches, whether the service matched, and the first evidence line. The
counts at the end are what docs/performance.md reports; whether a link is right is checked by reading the code.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from app.auth.access import LOCAL
from app.search.links import EndpointLinks
from app.search.scoping import Filters
from app.sync.local_index import index_directory
from entry.deps import open_deps
from tests.quality.corpus import quality_settings


async def report(checkouts: list[tuple[str, Path]]) -> None:
    """Index the checkouts, print every call site's targets and the totals."""
    async with open_deps(quality_settings(None, None)) as deps:
        for name, root in checkouts:
            await index_directory(deps, root, name)
        links = EndpointLinks(deps.search)
        calls = linked = matched = 0
        for repo, _ in checkouts:
            sites = [h for h in await deps.search.lookup(LOCAL, Filters(repo=repo)) if h.chunk.outbound]
            for hit in sites:
                found = await links.targets(LOCAL, hit.qualified_name, repo)
                calls += found.calls
                best = [t for t in found.targets if t.service_match] or found.targets
                linked += bool(found.targets)
                matched += bool(best and best[0].service_match)
                print(f"{repo} {hit.qualified_name}: {', '.join(hit.chunk.outbound)}")
                for t in best[:3]:
                    print(f"    -> {t.hit.repo_path} {t.hit.qualified_name} service_match={t.service_match}")
                    print(f"       {' | '.join(t.evidence)}")
        print(f"call sites {calls}, with a target {linked}, with a target of the named service {matched}")


def main() -> None:
    """`owner/name=DIR` arguments."""
    pairs = [arg.split("=", 1) for arg in sys.argv[1:]]
    asyncio.run(report([(name, Path(path)) for name, path in pairs]))


if __name__ == "__main__":
    main()
