"""``python -m benchmarks NAME [args]``: run one benchmark; without a name, list them."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from benchmarks import BENCHMARKS


def usage() -> str:
    width = max(map(len, BENCHMARKS))
    lines = [f"  {name:{width}}  {about}" for name, about in BENCHMARKS.items()]
    return "\n".join(["usage: python -m benchmarks NAME [--help | args]", "", "benchmarks:",
                      *lines])


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in BENCHMARKS:
        print(f"python -m benchmarks: unknown benchmark {name!r}; choose from "
              f"{', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"benchmarks.{name}")
    return module.main(rest)


if __name__ == "__main__":
    sys.exit(main())
