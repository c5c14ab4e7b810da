"""A benchmark's module, for the tests that check benchmarks: ``benchmarks`` is a package at the
repository's root (importable as the tests run, ``python -m pytest`` from the root)."""

from __future__ import annotations

import importlib
from types import ModuleType


def benchmark_module(name: str) -> ModuleType:
    """``benchmarks.NAME``, imported as ``python -m benchmarks NAME`` imports it."""
    return importlib.import_module(f"benchmarks.{name}")
