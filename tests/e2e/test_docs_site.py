"""The documentation site as a reader meets it: built with ``mkdocs build --strict`` (what ``make
docs`` runs), opened from disk, its links must lead to pages, and the API reference must render
the env's docstring sections as lists, not as one paragraph with literal ``*`` (issue 29)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason='the docs extra: pip install ".[docs]"')
pytest.importorskip("mkdocstrings", reason='the docs extra: pip install ".[docs]"')

REPO = Path(__file__).resolve().parents[2]
HREF = re.compile(r'href="([^"#?]*)(?:#([^"?]*))?[^"]*"')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    # PYTHONPATH: mkdocstrings documents this checkout, whatever copy is installed.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
                           "-d", str(out)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return out


def test_every_link_of_the_site_opened_from_disk_leads_to_a_file_and_section(site: Path) -> None:
    # 404.html is for a web server only (its links are absolute).
    pages = sorted(page for page in site.glob("*.html") if page.name != "404.html")
    assert len(pages) > 10 and (site / "index.html").is_file()
    for page in pages:
        for link, anchor in HREF.findall(page.read_text(encoding="utf-8")):
            if "://" in link or link.startswith("mailto:"):
                continue
            target = (page.parent / link).resolve() if link else page
            assert target.is_file(), f"{page.name} links to {link!r}, which is no file"
            if anchor and target.suffix == ".html":  # a section of a page: it is there
                assert f'id="{anchor}"' in target.read_text(encoding="utf-8"), (page.name, anchor)


def test_the_reference_renders_the_env_docstring_lists_as_lists(site: Path) -> None:
    html = (site / "reference.html").read_text(encoding="utf-8")
    assert not re.search(r"^\* ", html, re.MULTILINE)  # a list item left as literal text
    for section in ("information", "arguments"):
        anchor = f'id="gym_tictactoe.envs.env.TicTacToeEnv--{section}"'
        assert anchor in html
        body = html[html.index(anchor):].split("<h4", 1)[0]  # up to the next section
        assert body.count("<li>") >= 6, section
