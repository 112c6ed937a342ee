"""The docs are tested: every Python block runs, and the site builds with --strict."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mktestdocs import check_md_file

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(p for p in (ROOT / "docs").rglob("*.md") if "notebooks" not in p.parts)])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_block_runs(page, tmp_path, monkeypatch, request):
    """Each page's Python blocks run in order, sharing names, in an empty folder; their asserts hold."""
    monkeypatch.chdir(tmp_path)
    if "REDIS_URL" in page.read_text(encoding="utf-8"):  # the Many app servers recipe runs against the tests' Redis
        monkeypatch.setenv("REDIS_URL", request.getfixturevalue("redis_server").url)
        request.getfixturevalue("redis_client")
    check_md_file(page, memory=True)


def test_site_builds_strictly(tmp_path):
    """mkdocs build --strict succeeds: no warning, no broken link, notebooks rendered, the reference free of raw markup and internals."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    numbers = (tmp_path / "site" / "guide" / "numbers" / "index.html").read_text(encoding="utf-8")
    assert "<td><code>recency_window</code></td>" in numbers  # rendered from NUMBER_RULES
    assert (tmp_path / "site" / "notebooks" / "01-restaurant" / "index.html").exists()
    reference = (tmp_path / "site" / "reference" / "index.html").read_text(encoding="utf-8")
    # Every public method is documented, cross-references render, internals stay out, rule IDs link to the rules.
    for name in (
        "Memory.get_context",
        "Memory.recall",
        "Memory.get",
        "Memory.has",
        "Memory.forget",
        "Memory.get_recent",
        "Memory.stats",
        "Memory.save",
        "Memory.add_turn",
        "CacheMemory.put",
        "WorkingMemory.set",
        "MemoryFolder.open",
        "tokens.upper_bound_tokens",
        "Memory.get_messages",
    ):
        assert f'.{name}"' in reference, name
    assert "ShapeDraft" not in reference and "utf16_len" not in reference and "index.Index" not in reference
    assert 'href="../rules/#ENT-12"' in reference
    extending = (tmp_path / "site" / "extending" / "index.html").read_text(encoding="utf-8")
    # Internals are on the Extending page, not in the user's reference.
    for name in (
        "core.context",
        "core.remembered",
        "core.changes",
        "values.Changes",
        "JsonFileStore.lock",
        "JsonFileStore.preserve",
    ):
        assert f'.{name}"' in extending and f'.{name}"' not in reference, name
    for page in (reference, extending):
        check_rendered(page)


def check_rendered(html: str) -> None:
    """No raw reST field or role, no unresolved cross-reference, no docstring section printed as plain text."""
    import re

    text = re.sub(r"<(pre|code)\b.*?</\1>", "", html, flags=re.DOTALL)  # what the page says outside code
    text = re.sub(r'<span class="doc-section-title">.*?</span>', "", text)  # a section's rendered title
    for raw in (":param", ":returns:", ":return:", ":raises", ":rtype:", ":class:", ":func:", ":meth:"):
        assert raw not in text, raw
    assert not re.search(r"\]\[sentinel_memory\.", text), "an unresolved cross-reference"
    for header in ("Args:", "Returns:", "Raises:", "Examples?:", "Attributes:", "Yields:"):
        assert not re.search(rf">\s*{header}", text), f"{header} printed as text"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_json_block_is_a_valid_document(page):
    """PER-1: each JSON block in the docs parses, and a shown memory document loads without dropping anything."""
    import json

    from mktestdocs import grab_code_blocks

    import sentinel_memory as sm

    for block in grab_code_blocks(page.read_text(encoding="utf-8"), lang="json"):
        document = json.loads(block)
        if "version" in document:
            _, result, _ = sm.core.from_document(sm.MemoryState(), document, now=0)
            assert result.dropped == 0 and result.loaded == len(document["entries"])


#: A Python block and the text block right after it (blank lines between at most): what the block prints.
BLOCK_AND_OUTPUT = re.compile(r"```python\n(.*?)\n```[ \t]*\n(?:[ \t]*\n)*(?:```text\n(.*?)\n```)?", re.DOTALL)


def run_blocks(text: str, until: str | None = None) -> list[tuple[str, str | None]]:
    """Run a page's Python blocks in order in one namespace; each block's printed text and the output the page shows.

    With ``until``, stop after the first block that contains it.
    """
    namespace: dict[str, object] = {"__name__": "__main__"}
    printed = []
    for found in BLOCK_AND_OUTPUT.finditer(text):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(found.group(1), "<block>", "exec"), namespace)  # the docs' own examples
        printed.append((out.getvalue(), found.group(2)))
        if until is not None and until in found.group(1):
            break
    return printed


SHOWN = [p for p in PAGES if any(m.group(2) for m in BLOCK_AND_OUTPUT.finditer(p.read_text(encoding="utf-8")))]


@pytest.mark.parametrize("page", SHOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_what_a_block_prints_is_the_output_shown_under_it(page, tmp_path, monkeypatch):
    """A text block right after a Python block is exactly what that block prints, so a page shows what it builds."""
    monkeypatch.chdir(tmp_path)
    for printed, shown in run_blocks(page.read_text(encoding="utf-8")):
        if shown is not None:
            assert printed.rstrip("\n") == shown.rstrip("\n")


@pytest.mark.parametrize("page", [ROOT / "README.md", ROOT / "docs" / "index.md"], ids=lambda p: p.name)
def test_the_tours_turn_key_is_the_one_its_comment_names_on_a_first_and_a_second_run(page, tmp_path, monkeypatch):
    """ENT-16: the tour prints the key add_turn gave, one past the largest chat:N stored; its comment names it for a first run and for a second run over the same file."""
    monkeypatch.chdir(tmp_path)
    text = page.read_text(encoding="utf-8")
    comment = re.search(r"print\(turn\.key\)  # (chat:\d+):.*\((chat:\d+) on a second run", text)
    assert comment, "the tour prints turn.key and names the key of a first and a second run"
    for expected in comment.groups():  # the same folder twice: the file keeps the first run's turn
        printed = "".join(out for out, _ in run_blocks(text, until="print(turn.key)"))
        assert re.findall(r"^chat:\d+$", printed, re.M)[-1] == expected


def test_every_count_of_port_mistakes_is_serve_bugs_list():
    """Each page that counts the deliberate port mistakes gives the number serve --bug chooses from (its BUGS)."""
    from sentinel_memory.conformance.bugs import BUGS

    counts = {}
    for page in PAGES:
        for found in re.finditer(r"(\d[\d,]*) deliberate port mistakes", page.read_text(encoding="utf-8")):
            counts[f"{page.relative_to(ROOT)}: {found.group(0)}"] = int(found.group(1).replace(",", ""))
    assert counts and all(count == len(BUGS) for count in counts.values()), (len(BUGS), counts)
