"""The spec's own checks: every rule is cited by a test, and the runtime dependency is attrs alone."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rule_ids() -> list[str]:
    text = (ROOT / "spec" / "RULES.md").read_text(encoding="utf-8")
    return re.findall(r"^- \*\*([A-Z][A-Z0-9]*-[0-9]+)\*\*", text, flags=re.MULTILINE)


# A citation is one of the spec's prefixes and a number, so "UTF-16" is not one.
PREFIXES = sorted({rule.split("-")[0] for rule in rule_ids()})
RULE_ID = re.compile(r"\b((?:" + "|".join(PREFIXES) + r")-[0-9]+)\b")


def cited_ids(folder: str = "tests") -> set[str]:
    """IDs named in a test's name or docstring (tests, state-machine rules, invariants).

    The store kit's tests (``sentinel_memory.testing``) are tests too: every store's test module runs them.
    """
    cited: set[str] = set()
    paths = list((ROOT / folder).rglob("*.py"))
    if folder == "tests":
        paths.append(ROOT / "src" / "sentinel_memory" / "testing.py")
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = node.name.upper().replace("_", "-")
                doc = ast.get_docstring(node) or ""
                cited.update(RULE_ID.findall(doc))
                cited.update(RULE_ID.findall(name))
    return cited


def test_rule_ids_are_unique():
    """RULES.md never gives two rules one ID."""
    ids = rule_ids()
    assert ids, "no rules found"
    assert len(ids) == len(set(ids))


def test_every_rule_is_cited_by_a_test():
    """Every rule ID in spec/RULES.md is named by at least one test's name or docstring."""
    cited = cited_ids()
    missing = [rule for rule in rule_ids() if rule not in cited]
    assert missing == []


def test_every_rule_is_checked_by_a_property_or_state_machine():
    """Every rule is also cited by a hypothesis property or state-machine check in tests/spec, not only by examples."""
    cited = cited_ids("tests/spec")
    missing = [rule for rule in rule_ids() if rule not in cited]
    assert missing == []


def test_tests_cite_only_existing_rules():
    """A test never cites a rule ID that spec/RULES.md does not define."""
    unknown = cited_ids() - set(rule_ids())
    assert unknown == set()


def test_dep_1_runtime_dependency_is_attrs_alone():
    """DEP-1: [project].dependencies lists attrs and nothing else."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.split(r"[<>=!~ ;\[]", dep, maxsplit=1)[0].lower() for dep in project["dependencies"]]
    assert names == ["attrs"]
