"""The docstring check: every public name documented in the one style, its parameters named, its example run.

Run it on modules to see what is missing (``python tests/docstring_check.py src/sentinel_memory/memory.py``);
``tests/test_reference.py`` runs it on every module of the package and fails on any finding.

A public name is one in a module's ``__all__``; for a class, also each method and property it defines
whose name does not start with ``_``. Each must have a docstring; a callable's parameters (but ``self``
and ``cls``) must each be named in its ``Args:`` section; no docstring may hold reST roles or fields
(``:param``, ``:returns:``, ``:class:``) or mkdocstrings link syntax (``[`X`][path]``), which ``help()``
would print raw; and every ``>>>`` example runs, with the names of ``sentinel_memory``, ``sm``, ``core``,
``mem`` (a fresh memory on a fixed clock) and ``tmp`` (a fresh folder) defined.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "sentinel_memory"

FORBIDDEN = re.compile(r":(param|returns?|raises?|rtype|type|class|func|meth|attr|mod)\b|\[`[^`\]]+`\]\[[\w.]+\]")


#: The public namespaces: the package's names, the pure core (the Extending page), the framework adapters, the
#: model's memory tools, the examples' fake clock.
NAMESPACES = (
    "sentinel_memory",
    "sentinel_memory.core",
    "sentinel_memory.integrations.langchain",
    "sentinel_memory.integrations.pydantic_ai",
    "sentinel_memory.integrations.openai_agents",
    "sentinel_memory.integrations.tools.operations",
    "sentinel_memory.integrations.tools.mcp",
    "sentinel_memory.integrations.tools.anthropic",
    "sentinel_memory.integrations.tools.langchain",
    "sentinel_memory.integrations.tools.pydantic_ai",
    "sentinel_memory.integrations.tools.openai_agents",
    "sentinel_memory.fakeclock",
)


def public(namespaces: tuple[str, ...] = NAMESPACES) -> Iterator[tuple[str, object, str]]:
    """``(name, object, file)`` of every public name and public method of a public class, each once."""
    seen: set[int] = set()
    for namespace in namespaces:
        module = importlib.import_module(namespace)
        for name in module.__all__:
            obj = getattr(module, name)
            if id(obj) in seen or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            seen.add(id(obj))
            yield f"{namespace}.{name}", obj, inspect.getsourcefile(obj) or ""
            if inspect.isclass(obj):
                # Its own methods and those it inherits from the package (the reads both memories share).
                for owner in inspect.getmro(obj):
                    if not owner.__module__.startswith("sentinel_memory"):
                        continue
                    for member, value in vars(owner).items():
                        if member.startswith("_") or (owner is not obj and member in vars(obj)):
                            continue
                        function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
                        if (inspect.isfunction(function) or isinstance(function, property)) and id(
                            function
                        ) not in seen:
                            seen.add(id(function))
                            yield f"{namespace}.{name}.{member}", function, inspect.getsourcefile(owner) or ""


def parameters(obj: object) -> list[str]:
    protocol = getattr(obj, "_is_protocol", False)
    if inspect.isclass(obj) and (protocol or ("__init__" not in vars(obj) and not hasattr(obj, "__attrs_attrs__"))):
        return []  # a protocol, or an exception taking a message: no parameters of its own to document
    target = obj.__init__ if inspect.isclass(obj) else obj  # type: ignore[misc]
    if isinstance(obj, property) or not callable(target):
        return []
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    names = []
    for parameter in signature.parameters.values():
        if parameter.name in ("self", "cls"):
            continue
        prefix = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(parameter.kind, "")
        names.append(prefix + parameter.name)
    return names


def documented_args(doc: str) -> set[str]:
    """The names an ``Args:`` (or ``Attributes:``) section lists."""
    names: set[str] = set()
    for header in re.finditer(r"^([ \t]*)(Args|Attributes):[ \t]*$", doc, re.MULTILINE):
        indent = len(header.group(1))
        for line in doc[header.end() :].splitlines()[1:]:
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            match = re.match(r"\s*(\*{0,2}\w+)(\s*\([^)]*\))?:", line)
            if match and len(line) - len(line.lstrip()) == indent + 4:
                names.add(match.group(1))
    return names


def findings(name: str, obj: object) -> list[str]:
    doc = inspect.getdoc(obj) if not isinstance(obj, property) else (obj.__doc__ or "")
    if not doc or not doc.strip():
        return [f"{name}: no docstring"]
    found = []
    if FORBIDDEN.search(doc):
        found.append(f"{name}: reST or link syntax: {FORBIDDEN.search(doc).group(0)!r}")  # type: ignore[union-attr]
    if inspect.isclass(obj) and getattr(obj, "__attrs_attrs__", None) is not None and "Attributes:" in doc:
        return found  # a value class lists its fields as attributes
    missing = [
        p for p in parameters(obj) if p not in documented_args(doc) and p.lstrip("*") not in documented_args(doc)
    ]
    if missing:
        found.append(f"{name}: parameters not in Args: {', '.join(missing)}")
    return found


def run_examples(name: str, obj: object) -> list[str]:
    doc = obj.__doc__ if isinstance(obj, property) else inspect.getdoc(obj)
    if not doc or ">>>" not in doc:
        return []
    import sentinel_memory as sm
    from sentinel_memory import core

    with tempfile.TemporaryDirectory() as folder:
        globs = {**vars(sm), "sm": sm, "core": core, "tmp": Path(folder)}
        globs["mem"] = sm.create_memory(clock=lambda: 1_792_310_400_000)
        test = doctest.DocTestParser().get_doctest(doc, globs, name, None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        out: list[str] = []
        runner.run(test, out=out.append)
        globs["mem"].close()
    return [f"{name}: example failed\n{''.join(out)}"] if runner.failures else []


def check(files: set[str] | None = None) -> list[str]:
    """Every finding for the public names, or for those defined in ``files``."""
    problems: list[str] = []
    for name, obj, source in public():
        if files is not None and str(Path(source).resolve()) not in files:
            continue
        problems += findings(name, obj)
        problems += run_examples(name, obj)
    return problems


def main(paths: list[str]) -> int:
    files = {str(Path(p).resolve()) for p in paths} or None
    problems = check(files)
    print("\n".join(problems) or "no findings")
    print(f"{len(problems)} findings")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tests"))
    sys.exit(main(sys.argv[1:]))
