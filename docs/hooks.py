"""mkdocs hook: render rules that live as data, and the spec files, into the pages that show them."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from html import escape as html_escape
from pathlib import Path
from typing import Any

from mkdocs.utils import get_relative_url

from sentinel_memory.core.options import NUMBER_RULES

MARKER = "<!-- number-rules-table -->"
DIAGRAM = "<!-- concept-diagram -->"
ROOT = Path(__file__).resolve().parent.parent
# `<!-- include: spec/PROTOCOL.md -->` puts that file here, so spec/ stays the one copy (docs/rules.md is a
# symbolic link instead: RULES.md links to no other file).
INCLUDE = re.compile(r"<!-- include: (spec/[A-Za-z.]+) -->")
# Links between spec files become links between the pages that show them, or to the files in the repository.
SPEC_LINKS = {"RULES.md": "rules.md", "PROTOCOL.md": "protocol.md"}


def number_rules_table() -> str:
    """NUMBER_RULES as a markdown table (NUM-3)."""
    lines = ["| option | accepted | default |", "|---|---|---|"]
    for name, rule in NUMBER_RULES.items():
        default = f"none ({rule.none_means})" if rule.default is None else f"`{rule.default:_}`".replace("_", ",")
        lines.append(f"| `{name}` | {rule.describe()} | {default} |")
    return "\n".join(lines)


def _spec_file(match: re.Match[str]) -> str:
    text = (ROOT / match.group(1)).read_text(encoding="utf-8")

    def link(found: re.Match[str]) -> str:
        label, target = found.group(1), found.group(2)
        if target in SPEC_LINKS:
            return f"[{label}]({SPEC_LINKS[target]})"
        return f"`spec/{target}`"

    return re.sub(r"\[([^\]]+)\]\(([A-Za-z.\-]+\.(?:md|json))\)", link, text)


def _rule_ids() -> list[str]:
    return re.findall(r"^- \*\*([A-Z]+-[0-9]+)\*\*", (ROOT / "spec" / "RULES.md").read_text(encoding="utf-8"), re.M)


RULE_IDS = set(_rule_ids())
RULE_ID = re.compile(r"\b([A-Z]+-[0-9]+)\b")


def on_page_markdown(markdown: str, page: Any, **_: object) -> str:
    markdown = INCLUDE.sub(_spec_file, markdown).replace(MARKER, number_rules_table())
    if page.file.src_uri == "rules.md":
        # Each rule gets an anchor of its own ID, so other pages can link to it.
        markdown = re.sub(r"^- \*\*([A-Z]+-[0-9]+)\*\*", r'- <a id="\1"></a>**\1**', markdown, flags=re.M)
    return markdown


@functools.cache
def concept_diagram() -> str:
    """docs/concepts.py's drawing of a live memory's parts, as inline SVG in a figure (drawn once per build)."""
    spec = importlib.util.spec_from_file_location("concepts", Path(__file__).with_name("concepts.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    caption = (
        "The parts of a memory, drawn from a live one when the site is built: what the app calls, the "
        "long-term entries with their importance and retention, the two short-lived memories, the store, "
        "and what a prompt is built from. The course takes them one at a time: entries, importance, "
        "retention and what on_evict hears in lessons 1 to 3, the prompt in 2 and 6, the cache and the "
        "working memory in 4, the store in 7."
    )
    return f'<figure class="concept-diagram">{module.concept_diagram()}<figcaption>{caption}</figcaption></figure>'


IMAGE = re.compile(r'(?:<p>\s*)?(<img\b[^>]*\balt="([^"]*)"[^>]*>)(?:\s*</p>)?')
TABLE = re.compile(r"<table>.*?</table>", re.DOTALL)
#: A table of this many columns or more gets narrow cells that wrap (docs/stylesheets/extra.css), so no column
#: is pushed past the content column's edge.
WIDE_TABLE = 7


def captioned(html: str) -> str:
    """Every image as a figure whose caption, under it, is its description (the alt text), numbered on the page."""
    count = 0

    def figure(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return (
            f'<figure class="captioned">{match.group(1)}'
            f"<figcaption>Figure {count}. {match.group(2)}</figcaption></figure>"
        )

    return IMAGE.sub(figure, html)


def wide_tables_wrap(html: str) -> str:
    """A table of WIDE_TABLE columns or more sits in a ``div.wide-table``, whose cells wrap instead of overflowing."""

    def wrap(match: re.Match[str]) -> str:
        table = match.group(0)
        header = re.search(r"<tr>(.*?)</tr>", table, re.DOTALL)
        columns = 0 if header is None else len(re.findall(r"<th\b", header.group(1)))
        return f'<div class="wide-table">{table}</div>' if columns >= WIDE_TABLE else table

    return TABLE.sub(wrap, html)


def on_page_content(html: str, page: Any, **_: object) -> str:
    """Figures get captions and wide tables wrap; see ``_page_content`` for the rest."""
    return wide_tables_wrap(captioned(_page_content(html, page)))


def _page_content(html: str, page: Any) -> str:
    """A notebook page offers its .ipynb; on the API reference, every rule ID cited by a docstring links to that rule."""
    if page.file.src_uri.endswith(".ipynb"):
        # mkdocs-jupyter copies the notebook next to its page (include_source), so the link is its bare name.
        name = page.file.src_uri.rsplit("/", 1)[-1]
        link = (
            f'<p class="notebook-download"><a href="{name}" download>Download this notebook ({name})</a> '
            "and run it with Jupyter: every output below is re-computed when it runs.</p>"
        )
        # Each figure is described by its cell's "alt" metadata (notebooks/build.py), in the order drawn.
        notebook = json.loads(Path(page.file.abs_src_path).read_text(encoding="utf-8"))
        alts = iter(
            html_escape(cell.get("metadata", {}).get("alt", "A figure drawn by the cell above"))
            for cell in notebook["cells"]
            for output in cell.get("outputs", [])
            if "image/png" in output.get("data", {})
        )
        html = re.sub(
            r'alt="No description has been provided for this image"',
            lambda _: f'alt="{next(alts, "A figure drawn by the cell above")}"',
            html,
        )
        # A notebook links to the next one by its file name, which works in Jupyter; on the site it is a page.
        html = re.sub(r'href="(\d\d-[a-z-]+)\.ipynb"', r'href="../\1/"', html)
        return link + html
    if DIAGRAM in html:
        html = html.replace(DIAGRAM, concept_diagram())
    if page.file.src_uri != "reference.md":
        return html
    rules = get_relative_url("rules/", page.url)
    parts = re.split(r"(<[^>]+>)", html)
    for i in range(0, len(parts), 2):  # text between tags only, never inside one
        parts[i] = RULE_ID.sub(
            lambda m: f'<a href="{rules}#{m.group(1)}">{m.group(1)}</a>' if m.group(1) in RULE_IDS else m.group(0),
            parts[i],
        )
    return "".join(parts)
