"""mkdocs hook: render rules that live as data into the pages that describe them."""

from __future__ import annotations

from sentinel_memory.options import NUMBER_RULES

MARKER = "<!-- number-rules-table -->"


def number_rules_table() -> str:
    """NUMBER_RULES as a markdown table (NUM-3)."""
    lines = ["| option | accepted | default |", "|---|---|---|"]
    for name, rule in NUMBER_RULES.items():
        default = "none (no expiry)" if rule.default is None else f"`{rule.default:_}`".replace("_", ",")
        lines.append(f"| `{name}` | {rule.describe()} | {default} |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, **_: object) -> str:
    return markdown.replace(MARKER, number_rules_table())
