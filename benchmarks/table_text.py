"""What every docs table is made with: results files read, a Markdown table, and the figures
written the same way on every table (percentages, ratios)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TIMES = "\N{MULTIPLICATION SIGN}"


def load(results: Path, name: str) -> dict[str, Any]:
    return json.loads((results / name).read_text())


def percent(rate: float, digits: int = 2) -> str:
    return f"{100 * rate:.{digits}f}%"


def ratio(value: float) -> str:
    return f"{value:.1f}{TIMES}" if value >= 10 else f"{value:.2g}{TIMES}"


def markdown(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, one line per row, with a newline at the end."""
    lines = [header, ["---"] * len(header), *rows]
    return "".join("| " + " | ".join(cells) + " |\n" for cells in lines)
