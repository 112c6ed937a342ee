"""The built site reads as it should: no raw markup, no dead link or anchor, a figure on every notebook page.

These checks read the HTML that ``mkdocs build`` writes, because each defect they look for
was invisible in the sources: a docstring that parses as a type, a pipe escaped for a
table, a heading whose anchor differs from the table of contents' link.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def pages(site: Path) -> list[Path]:
    """Every page of the docs, without the theme's own (search, 404)."""
    return sorted(p for p in site.rglob("index.html") if "search" not in p.relative_to(site).parts)


class Links(HTMLParser):
    """The ids a page defines and the links it makes."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            if tag == "a" and name == "href" and value:
                self.hrefs.append(value)


def parsed(path: Path, cache: dict[Path, Links]) -> Links:
    if path not in cache:
        links = Links()
        links.feed(path.read_text(encoding="utf-8"))
        cache[path] = links
    return cache[path]


def prose(html: str) -> str:
    """What a page says outside its code blocks and scripts (a code block may show anything)."""
    return re.sub(r"<(pre|script|style)\b.*?</\1>", "", html, flags=re.DOTALL)


def test_no_raw_restructuredtext_or_escaped_pipe(site):
    """No page shows reST markup (double backticks, ``:param``) or a backslash before a pipe, in text or in a table cell."""
    found = []
    for page in pages(site):
        text = prose(page.read_text(encoding="utf-8"))
        for raw in ("``", ":param", ":returns:", ":rtype:", "\\|"):
            if raw in text:
                i = text.index(raw)
                found.append(f"{page.relative_to(site)}: {raw!r} in {text[max(0, i - 80) : i + 40]!r}")
    assert not found, "\n".join(found)


def test_defaults_in_tables_agree_with_their_text(site):
    """A parameter whose Default cell is None does not say it "Defaults to" something else."""
    rows = re.compile(r'<tr class="doc-section-item">(.*?)</tr>', re.DOTALL)
    cells = re.compile(r"<td>(.*?)</td>", re.DOTALL)
    found = []
    for name in ("reference", "extending"):
        html = (site / name / "index.html").read_text(encoding="utf-8")
        for row in rows.findall(html):
            parts = [re.sub(r"<[^>]+>", "", c).strip() for c in cells.findall(row)]
            if len(parts) == 4 and parts[3] == "None":
                said = re.search(r"Defaults to\s+(\S+)", parts[2])
                if said and not said.group(1).startswith("None"):
                    found.append(f"{name}: {parts[0]}: {parts[2][:80]!r}")
    assert not found, "\n".join(found)


def test_every_internal_link_and_anchor_resolves(site):
    """Each link between pages reaches a page, and each #anchor an element with that id."""
    cache: dict[Path, Links] = {}
    broken = []
    for page in pages(site):
        for href in parsed(page, cache).hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)} -> {href} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in parsed(target, cache).ids:
                    broken.append(f"{page.relative_to(site)} -> {href} (no such anchor)")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_notebook_page_shows_a_figure_and_offers_its_notebook(site, name):
    """Each notebook page has at least one figure drawn when it ran, and a link to download its .ipynb."""
    html = (site / "notebooks" / name / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<img[^>]*src="data:image/png', html), f"{name}: no figure"
    assert "No description has been provided" not in html, f"{name}: a figure without a description"
    assert re.search(rf'href="[^"]*{re.escape(name)}\.ipynb"[^>]*download', html), f"{name}: no download link"


def test_the_performance_page_opens_with_its_summary(site):
    """The summary (its plot and the met and missed table) comes before the full tables, and the workloads list nests."""
    html = (site / "performance" / "index.html").read_text(encoding="utf-8")
    assert html.index('id="summary"') < html.index('id="targets"')
    assert 'src="../performance-summary.png"' in html
    assert re.search(r"<li>Workload:[^<]*<ul>\s*<li><em>seven</em>", html), "the workloads list is flattened"


@pytest.mark.parametrize("page", sorted((ROOT / "docs" / "guide").glob("*.md")), ids=lambda p: p.name)
def test_guide_pages_keep_rule_ids_out_of_the_prose(page):
    """A guide page cites rules in a Rules line per section, linked to the rules page, not in parentheses mid-sentence."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    prose = "\n".join(line for line in text.splitlines() if not line.startswith(("**Rules:**", "|")))
    rules = set(re.findall(r"^- \*\*([A-Z]+-\d+)\*\*", (ROOT / "spec" / "RULES.md").read_text(encoding="utf-8"), re.M))
    cited = [p for p in re.findall(r"\([^()]*\)", prose) if rules & set(re.findall(r"[A-Z]+-\d+", p))]
    assert not cited, f"{page.name}: {cited}"
    assert re.search(r"^\*\*Rules:\*\* \[[A-Z]+-\d+\]\(\.\./rules\.md#[A-Z]+-\d+\)", text, re.M), page.name
