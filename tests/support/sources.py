"""Small Java sources the sync tests push: one definition each, shared by the test files."""

from __future__ import annotations


def service_java(name: str, body: str = "return 1;") -> str:
    """A `@Service` class with one method `run()` whose body is `body`."""
    return (
        f"package com.acme;\n\n@Service\npublic class {name} {{\n    public int run() {{\n        {body}\n    }}\n}}\n"
    )


def repo_service_java(name: str, body: str = "return 1;") -> str:
    """A documented `@Service` with an injected `Repo` and a `compute(int)` that calls it, then `body`."""
    return (
        f"package com.acme;\n\n/** The {name} service. */\n@Service\npublic class {name} {{\n"
        f"    private final Repo repo;\n\n    {name}(Repo repo) {{ this.repo = repo; }}\n\n"
        f"    /** Computes things. */\n    public int compute(int x) {{\n"
        f"        repo.find(x);\n        {body}\n    }}\n}}\n"
    )


def plain_java(name: str) -> str:
    """A plain class with one method named after it, lowercased."""
    return f"package com.acme;\npublic class {name} {{\n    public int {name.lower()}() {{ return 1; }}\n}}\n"
