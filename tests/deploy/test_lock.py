"""constraints.txt pins every dependency of pyproject.toml, and both installs use it (issue 15: reproducible)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def pins() -> dict[str, Version]:
    found: dict[str, Version] = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            found[canonicalize_name(name)] = Version(version)
    return found


def declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    return [Requirement(r) for r in names]


def test_every_declared_dependency_is_pinned_within_its_range() -> None:
    pinned = pins()
    unpinned = [str(r) for r in declared() if canonicalize_name(r.name) not in pinned]
    assert unpinned == [], "run scripts/lock after changing pyproject.toml"
    outside = [str(r) for r in declared() if pinned[canonicalize_name(r.name)] not in r.specifier]
    assert outside == [], "run scripts/lock after changing pyproject.toml"


def test_every_line_is_an_exact_pin_and_the_build_tools_are_pinned_too() -> None:
    pinned = pins()
    assert {"pip", "setuptools", "wheel"} <= set(pinned)
    assert Version("69") <= pinned["setuptools"]  # pyproject's build-system requirement


def test_bootstrap_and_the_image_install_from_the_same_constraints() -> None:
    bootstrap = (ROOT / "scripts" / "bootstrap").read_text(encoding="utf-8")
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert 'pip install -q -c constraints.txt -e ".[dev]"' in bootstrap
    assert "PIP_CONSTRAINT=/srv/java-kb-indexer/constraints.txt" in dockerfile
    assert "COPY constraints.txt" in dockerfile


def test_the_wheels_installed_without_dependencies_are_pinned_and_installed_by_both() -> None:
    lines = (ROOT / "requirements-nodeps.txt").read_text(encoding="utf-8").splitlines()
    wanted = [line for line in lines if line.strip() and not line.startswith("#")]
    assert wanted and all("==" in line for line in wanted)  # exact pins, as constraints.txt's
    bootstrap = (ROOT / "scripts" / "bootstrap").read_text(encoding="utf-8")
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "pip install -q --no-deps -r requirements-nodeps.txt" in bootstrap
    assert "pip install -q --no-deps -r requirements-nodeps.txt" in dockerfile
    assert "python -m app.store.distilled" in bootstrap and "python -m app.store.distilled" in dockerfile
