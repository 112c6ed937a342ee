"""The built site reads as it should: no raw markup, no dead link or anchor, a figure on every notebook page.

These checks read the HTML that ``mkdocs build`` writes, because each defect they look for
was invisible in the sources: a docstring that parses as a type, a pipe escaped for a
table, a heading whose anchor differs from the table of contents' link.
"""

from __future__ import annotations

import json
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
    """What a page says outside its code blocks, code spans and scripts (code may show anything)."""
    return re.sub(r"<(pre|code|script|style)\b.*?</\1>", "", html, flags=re.DOTALL)


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


def test_no_list_item_merged_into_a_paragraph(site):
    """No paragraph holds a line that starts with a list marker: a list that lost its blank line shows literal ``*``."""
    found = []
    for page in pages(site):
        text = re.sub(r"<(pre|code|script|style)\b.*?</\1>", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        for paragraph in re.findall(r"<p>(.*?)</p>", text, flags=re.DOTALL):
            plain = re.sub(r"<[^>]+>", "", paragraph)
            marker = re.search(r"(?:^|\n)[ \t]*(?:[*+-]|\d+\.)[ \t]+\S.*", plain)
            if marker:
                found.append(f"{page.relative_to(site)}: {marker.group(0).strip()[:80]!r}")
    assert not found, "\n".join(found)


def _columns(table: str) -> int:
    header = re.search(r"<tr>(.*?)</tr>", table, re.DOTALL)
    return 0 if header is None else len(re.findall(r"<th\b", header.group(1)))


def test_wide_tables_wrap_in_the_content_column(site):
    """A table of many columns sits in a div.wide-table, whose cells the stylesheet lets shrink and wrap (no column hidden)."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from hooks import WIDE_TABLE
    finally:
        sys.path.remove(str(ROOT / "docs"))
    css = (ROOT / "docs" / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    cells = re.search(r"\.wide-table table:not\(\[class\]\) td \{(.*?)\}", css, re.DOTALL)
    headers = re.search(r"\.wide-table table:not\(\[class\]\) th \{(.*?)\}", css, re.DOTALL)
    assert cells and "min-width: 0" in cells.group(1), "the cells of a wide table may not shrink"
    assert headers and "overflow-wrap: anywhere" in headers.group(1), "the headers of a wide table do not wrap"
    wide, unwrapped = 0, []
    for page in pages(site):
        html = page.read_text(encoding="utf-8")
        for found in re.finditer(r"(<div class=\"wide-table\">)?<table>(.*?)</table>", html, re.DOTALL):
            if _columns(found.group(2)) >= WIDE_TABLE:
                wide += 1
                if not found.group(1):
                    unwrapped.append(str(page.relative_to(site)))
    assert wide >= 3 and not unwrapped, unwrapped  # the performance page's tables of ten columns among them


def test_wide_tables_fit_when_a_browser_lays_them_out(site, tmp_path):
    """In headless Chromium at 1280 px, no table on the performance pages is wider than its column (skipped without Chromium)."""
    import shutil

    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        pytest.skip("no Chromium to lay the page out")
    probe = (
        "<script>window.addEventListener('load', () => setTimeout(() => {"
        "const over = [...document.querySelectorAll('article table')].filter("
        "t => t.getBoundingClientRect().right > document.querySelector('article').getBoundingClientRect().right + 1);"
        "document.body.setAttribute('data-overflowing', String(over.length));"
        "document.body.setAttribute('data-tables', String(document.querySelectorAll('article table').length));"
        "}, 300));</script>"
    )
    for name in ("performance", "performance-tokenizers"):
        page = site / name / "index.html"
        probed = page.with_name("probe.html")
        probed.write_text(page.read_text(encoding="utf-8").replace("</body>", probe + "</body>"), encoding="utf-8")
        result = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--window-size=1280,900",
                "--virtual-time-budget=5000",
                f"--user-data-dir={tmp_path / name}",
                "--dump-dom",
                probed.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        found = re.search(r'data-overflowing="(\d+)" data-tables="(\d+)"', result.stdout)
        assert found, result.stderr[-2000:]
        assert int(found.group(2)) > 0 and found.group(1) == "0", f"{name}: {found.group(1)} tables overflow"


def test_every_figure_has_a_visible_caption(site):
    """Every image on every page is a figure with a caption under it (its description), and the concept diagram has one."""
    missing, figures = [], 0
    for page in pages(site):
        html = re.sub(r"<(script|style)\b.*?</\1>", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
        content = html[html.find("<article") :]
        for image in re.finditer(r"<img\b[^>]*>", content):
            if "md-logo" in content[max(0, image.start() - 200) : image.start()]:
                continue
            figures += 1
            after = content[image.end() : image.end() + 2000]
            caption = re.match(r"\s*<figcaption>(.*?)</figcaption>", after, re.DOTALL)
            if not caption or len(re.sub(r"<[^>]+>", "", caption.group(1)).strip()) < 20:
                missing.append(f"{page.relative_to(site)}: {image.group(0)[:60]}")
            elif "A figure drawn by the cell above" in caption.group(1):
                missing.append(f"{page.relative_to(site)}: a figure with no description of its own")
    assert figures >= len(NOTEBOOKS) and not missing, "\n".join(missing)
    home = (site / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<figure class="concept-diagram">.*?</svg>\s*<figcaption>\w', home, re.DOTALL)


def _lesson(name: str) -> tuple[list[str], int]:
    notebook = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    markdown = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"]
    solutions = sum("solution" in c.get("metadata", {}).get("tags", []) for c in notebook["cells"])
    return markdown, solutions


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_lesson_has_a_banner_exercises_a_build_it_and_a_recap(name):
    """Each lesson says what it teaches, what it needs (with the install line) and how long; has exercises, a build-it exercise, checked solutions and a recap."""
    markdown, solutions = _lesson(name)
    banner = markdown[1]
    assert (
        "**You will learn**" in banner
        and "**You need**" in banner
        and re.search(r"\*\*Time\*\* about \d+ minutes", banner)
    )
    assert "pip install -e '.[course]'" in banner
    assert any("## Exercises" in m for m in markdown) and any("## Build it" in m for m in markdown)
    assert solutions >= 2, "a checked solution for the exercises and one for the build-it exercise"
    assert markdown[-2].startswith("## Recap\n") and markdown[-2].count("\n* ") >= 3


def test_the_course_follows_getting_started_in_the_navigation_in_order():
    """At least eleven lessons, listed in the navigation right after Getting started, in the order of their numbers."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)["nav"]
    titles = [next(iter(item)) for item in nav]
    assert titles[titles.index("Getting started") + 1].startswith("Course")
    course = nav[titles.index("Getting started") + 1]
    listed = [next(iter(lesson.values())) for lesson in next(iter(course.values()))]
    assert listed == [f"notebooks/{name}.ipynb" for name in NOTEBOOKS] and len(NOTEBOOKS) >= 11


def test_the_course_extra_brings_every_import_of_the_notebooks():
    """What the notebooks import (beyond the standard library, the package and their figures module) comes with the [course] extra."""
    import ast
    import tomllib
    from importlib.metadata import packages_distributions

    from packaging.requirements import Requirement

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]

    def closure(extra: str) -> set[str]:
        names: set[str] = set()
        for line in extras[extra]:
            requirement = Requirement(line)
            if requirement.name == "sentinel-memory":
                for inner in requirement.extras:
                    names |= closure(inner)
            else:
                names.add(requirement.name.lower())
        return names

    course = closure("course")
    assert {"jupyterlab", "matplotlib", "bpe-openai"} <= course
    imported: set[str] = set()
    for name in NOTEBOOKS:
        notebook = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            if cell["cell_type"] != "code" or "nbval-skip" in cell.get("metadata", {}).get("tags", []):
                continue  # the optional real-model cell imports what its reader chooses to install
            tree = compile("".join(cell["source"]), name, "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    imported |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"sentinel_memory", "figures"}
    owners = packages_distributions()
    missing = {
        module: owners.get(module) for module in third_party if not {d.lower() for d in owners.get(module, [])} & course
    }
    assert third_party and not missing, missing
