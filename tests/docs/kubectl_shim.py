"""A stand-in for `kubectl` in the docs' command test: `create secret generic` checks what the pods would read.

`kubectl -n NS create secret generic NAME --from-literal=KEY=VALUE...` loads the JAVAKB_* keys into the
settings model exactly as a pod's environment would be, and fails as the pod would (a ValidationError)
on a malformed value. Every other use is refused: the test has no cluster.
"""

from __future__ import annotations

import os
import sys

from pydantic import ValidationError


def main(argv: list[str]) -> int:
    """Check the literals of `create secret generic`; exit 1 on a value the service would refuse."""
    args = [a for i, a in enumerate(argv) if a != "-n" and (i == 0 or argv[i - 1] != "-n")]
    if args[:3] != ["create", "secret", "generic"] or len(args) < 4:
        print(f"kubectl (docs test stand-in): not simulated: {' '.join(argv)}", file=sys.stderr)
        return 2
    literals = dict(
        a.removeprefix("--from-literal=").split("=", 1) for a in args[4:] if a.startswith("--from-literal=")
    )
    for key in [k for k in os.environ if k.startswith("JAVAKB_")]:
        del os.environ[key]
    os.environ.update({k: v for k, v in literals.items() if k.startswith("JAVAKB_")})
    from app.core.settings import Settings

    try:
        Settings()
    except ValidationError as exc:
        print(f"the pods would not start: {exc}", file=sys.stderr)
        return 1
    empty = [k for k, v in literals.items() if not v]
    if empty:
        print(f"empty values: {', '.join(empty)}", file=sys.stderr)
        return 1
    print(f"secret/{args[3]} created")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
