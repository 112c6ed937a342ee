"""Spans tied to a user by a hash and nested under the app's span, for any user id (OTL-9, OTL-10)."""

from __future__ import annotations

import hashlib
import tempfile

import pytest

pytest.importorskip("opentelemetry.sdk")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from telemetry_support import recording

import sentinel_memory as sm
from sentinel_memory import telemetry

NOW = 1_792_310_400_000


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(user=st.text(min_size=1, max_size=20), changes=st.integers(1, 3))
def test_otl_9_otl_10_any_users_spans_carry_its_hash_under_the_apps_span(user, changes):
    """OTL-9, OTL-10: every span of a folder's memory after open carries the id's SHA-256 prefix and is under the app's span."""
    expected = hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    assert telemetry.conversation_id(user) == expected
    with tempfile.TemporaryDirectory() as folder:
        mem = sm.MemoryFolder(folder, clock=lambda: NOW).open(user)
        with recording() as exporter:
            tracer = trace.get_tracer("app", tracer_provider=telemetry._SETTINGS.provider)
            with tracer.start_as_current_span("app") as app:
                for n in range(changes):
                    mem.remember(f"k{n}", n)
                mem.get_context(token_budget=50)
            spans = [s for s in exporter.get_finished_spans() if s.name.startswith(telemetry.PREFIX)]
    assert spans and all(s.attributes.get("gen_ai.conversation.id") == expected for s in spans)
    ids = {s.context.span_id: s for s in spans}
    for span in spans:
        parent = span.parent
        assert parent is not None
        while parent.span_id in ids:
            parent = ids[parent.span_id].parent
        assert parent.span_id == app.get_span_context().span_id
