"""The API reference stays complete: every public name documented in one style, examples that run, honest install lines."""

from __future__ import annotations

import re
from pathlib import Path

import docstring_check

ROOT = Path(__file__).resolve().parent.parent


def test_every_public_name_has_its_arguments_documented_and_its_example_runs():
    """Every public name and method has a Google-style docstring naming each parameter, no raw markup, and examples that pass."""
    problems = docstring_check.check()
    assert problems == [], "\n".join(problems[:30]) + f"\n... {len(problems)} findings"


def test_the_check_finds_what_it_is_for():
    """The docstring check flags a missing docstring, an undocumented parameter, reST fields, link syntax and a failing example."""

    def bare(x):  # no docstring
        return x

    def fields(key, default=None):
        """Get it.

        :param key: the key
        """

    def linked(key):
        """See [`Memory`][sentinel_memory.memory.Memory].

        Args:
            key: The key.

        Example:
            >>> 1 + 1
            3
        """

    assert docstring_check.findings("bare", bare) == ["bare: no docstring"]
    found = docstring_check.findings("fields", fields)
    assert any("reST" in f for f in found) and any("key, default" in f for f in found)
    assert any("link syntax" in f or "reST or link" in f for f in docstring_check.findings("linked", linked))
    assert docstring_check.run_examples("linked", linked)


def test_the_site_and_the_readme_give_the_same_install_lines():
    """The install commands on the site's home page are the README's, which work without a package index."""

    def install(path: Path) -> str:
        text = path.read_text(encoding="utf-8")
        section = text.split("## Install", 1)[1]
        return re.search(r"```sh\n(.*?)```", section, re.DOTALL).group(1)  # type: ignore[union-attr]

    assert install(ROOT / "docs" / "index.md") == install(ROOT / "README.md")
    assert "pip install sentinel-memory\n" not in install(ROOT / "README.md")
