"""The real repositories of the suite, pinned, and how they are materialised into a git-ignored cache.

Nothing here is committed but the pins: each repository is exported at its commit with
`git archive` into `<cache>/<owner>+<name>` (a `.complete` marker names the commit, so a second run
reuses it). The source is a local mirror root (`<root>/<owner>+<name>/repo`, bare or not) when one
is given, else a shallow fetch of `https://github.com/<owner>/<name>` into the cache.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final


@dataclass(frozen=True, slots=True)
class Pin:
    """One repository at one commit; `repo_path` is the name it is indexed under."""

    owner: str
    name: str
    commit: str
    url: str | None = None

    @property
    def repo_path(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def slug(self) -> str:
        return f"{self.owner}+{self.name}"

    @property
    def source_url(self) -> str:
        return self.url or f"https://github.com/{self.owner}/{self.name}"


MALL: Final = Pin("macrozheng", "mall", "74eebe067d4f17b2d0b61691bef2748e3a7daf80")
ELADMIN: Final = Pin("elunez", "eladmin", "be2f1370f3b9cd2e9c1369a8026f3a54073edda5")
JHIPSTER: Final = Pin("jhipster", "jhipster-sample-app", "f8da577c944ecc4db46fc961a1ba022d5bbf8964")
PIGGY: Final = Pin("sqshq", "piggymetrics", "6bb2cf9ddbca980b664d3edbb6ff775d75369278")
PINS: Final[tuple[Pin, ...]] = (MALL, ELADMIN, JHIPSTER, PIGGY)

DEFAULT_CACHE: Final = Path(__file__).resolve().parents[3] / ".cache" / "quality"
MARKER: Final = ".complete"
MIRRORS_ENV: Final = "JAVAKB_QUALITY_MIRRORS"
"""The environment variable naming a local mirror root (`<owner>+<name>/repo`) for the benchmarks that fetch."""


class FetchError(RuntimeError):
    """A repository could not be materialised at its pinned commit."""


def materialise(pin: Pin, cache: Path, mirrors: Path | None = None, paths: Sequence[str] = ()) -> Path:
    """The checkout of `pin` at its commit under `cache`, exported now unless already there.

    `paths` exports only those folders or files of the tree (a mirror may lack blobs outside them: ktor's
    prebuilt native libraries); the marker names them, so a partial export is never taken for a whole one.
    """
    target = cache / pin.slug
    marker = target / MARKER
    wanted = "\n".join([pin.commit, *paths])
    if marker.is_file() and marker.read_text().strip() == wanted:
        return target
    git_dir = _mirror(pin, mirrors) if mirrors is not None else _clone(pin, cache)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    with tempfile.TemporaryFile() as archive:
        _git(git_dir, "archive", "--format=tar", pin.commit, "--", *paths, stdout=archive)
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(target, filter="data")
    marker.write_text(wanted + "\n")
    return target


def _mirror(pin: Pin, mirrors: Path) -> Path:
    for candidate in (mirrors / pin.slug / "repo", mirrors / pin.slug):
        if candidate.is_dir():
            return candidate
    raise FetchError(f"no mirror of {pin.repo_path} under {mirrors} (expected {mirrors / pin.slug / 'repo'})")


def _clone(pin: Pin, cache: Path) -> Path:
    git_dir = cache / ".git-objects" / pin.slug
    if not git_dir.is_dir():
        git_dir.mkdir(parents=True)
        _git(git_dir, "init", "--bare", "--quiet")
    if not _has_commit(git_dir, pin.commit):
        _git(git_dir, "fetch", "--quiet", "--depth=1", pin.source_url, pin.commit)
    return git_dir


def _has_commit(git_dir: Path, commit: str) -> bool:
    result = subprocess.run(
        ["git", "-C", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True, check=False
    )
    return result.returncode == 0


def _git(git_dir: Path, *args: str, stdout: IO[bytes] | None = None) -> None:
    result = subprocess.run(
        ["git", "-C", str(git_dir), *args],
        stdout=stdout if stdout is not None else subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=False,
    )
    if result.returncode != 0:
        raise FetchError(f"git {' '.join(args)} failed in {git_dir}: {result.stderr.decode(errors='replace').strip()}")


def source_arguments(parser: argparse.ArgumentParser, cache: Path) -> None:
    """`--mirrors` (default from `MIRRORS_ENV`) and `--cache` (default `cache`): where checkouts come from and go."""
    parser.add_argument(
        "--mirrors",
        type=Path,
        default=os.environ.get(MIRRORS_ENV),
        help=f"local mirror root (<owner>+<name>/repo), else fetched from GitHub (env {MIRRORS_ENV})",
    )
    parser.add_argument("--cache", type=Path, default=cache, help="where checkouts go (git-ignored)")
