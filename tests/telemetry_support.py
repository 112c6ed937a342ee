"""Helpers of the telemetry tests: an SDK tracer provider with the in-memory exporter, and spans as plain data."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from sentinel_memory import telemetry


@contextlib.contextmanager
def recording() -> Iterator[InMemorySpanExporter]:
    """Every memory's spans go to an in-memory exporter for the block (OTL-1); the global provider is never set."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.instrument(provider)
    try:
        yield exporter
    finally:
        telemetry.uninstrument()
        provider.shutdown()


def as_data(span: Any, *, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """A finished span as what it says: name, status, attributes and events, without ids and times."""
    return {
        "name": span.name,
        "status": span.status.status_code.name,
        "attributes": {k: v for k, v in span.attributes.items() if k not in drop},
        "events": [(event.name, dict(event.attributes)) for event in span.events],
    }


def tree(spans: Any, *, drop: tuple[str, ...] = ()) -> list[Any]:
    """The spans as nested data: each root in end order, with its children (``as_data`` of each)."""
    by_parent: dict[Any, list[Any]] = {}
    ids = {span.context.span_id for span in spans}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None and span.parent.span_id in ids else None
        by_parent.setdefault(parent, []).append(span)

    def node(span: Any) -> dict[str, Any]:
        data = as_data(span, drop=drop)
        data["children"] = [node(child) for child in by_parent.get(span.context.span_id, [])]
        return data

    return [node(span) for span in by_parent.get(None, [])]
