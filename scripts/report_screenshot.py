"""Write the policy report's pictures for the documentation: ``docs/img/report-3x3x3.png`` (a
screenshot of the page, by headless Chromium) and ``docs/img/heatmap-3x3x3.png`` (one heat map).

    python scripts/report_screenshot.py        # needs matplotlib (the plot extra) and Chromium

The policy is a tabular Q agent trained for 2,000 seeded episodes against the random player: a
weak one, so the page has losing lines and blunders to show. Chromium is ``$CHROMIUM`` or the
first of chromium, chromium-browser, google-chrome on the PATH (Debian: apt-get install chromium).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "docs" / "img"
EPISODES, SEED = 2000, 0
WINDOW = (1100, 1500)  # pixels: the summary, the opening and the first losing line
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")


def browser() -> str | None:
    """The Chromium to run, or None."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def trained_agent():
    from agents.tabular.q_learning import QLearningAgent
    from gym_tictactoe.envs.env import TicTacToeEnv

    agent = QLearningAgent(seed=SEED)
    agent.train(TicTacToeEnv(opponent="random"), EPISODES, seed=SEED)
    return agent


def screenshot(chromium: str, page: Path, path: Path) -> None:
    """``page`` as Chromium shows it in a ``WINDOW`` window, saved to ``path``."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}",
                        f"--screenshot={path}", f"--window-size={WINDOW[0]},{WINDOW[1]}",
                        page.as_uri()], check=True, capture_output=True, timeout=120)


def main() -> int:
    chromium = browser()
    if chromium is None:
        print("report_screenshot.py: error: needs Chromium (apt-get install chromium, or set "
              "CHROMIUM to a Chrome or Chromium binary)", file=sys.stderr)
        return 1
    from gym_tictactoe.evaluation.policy_report import HEAT_CELL, policy_heatmap, write_report
    from gym_tictactoe.extras import MissingExtra

    try:
        agent = trained_agent()
        heat = policy_heatmap(agent, [1, 0, 0, 0, 2, 0, 0, 0, 0], cell_size=HEAT_CELL)
    except MissingExtra as error:
        print(f"report_screenshot.py: error: {error}", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    heat.savefig(OUT / "heatmap-3x3x3.png")
    with tempfile.TemporaryDirectory() as folder:
        index = write_report(agent, Path(folder) / "report",
                             title=f"q-learning, {EPISODES:,} episodes, seed {SEED}")
        screenshot(chromium, index, OUT / "report-3x3x3.png")
    for name in ("report-3x3x3.png", "heatmap-3x3x3.png"):
        print(f"{(OUT / name).relative_to(OUT.parents[1])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
