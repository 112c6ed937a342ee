"""When things stop being visible (EXP-1, EXP-2, L0-1).

One comparison serves entries and L0 cache items: both are gone from the
exact millisecond their deadline is reached, never "probably gone". The cart
note with a 15-minute ttl is there at minute 14 and gone at minute 15 sharp.
(The L1 working memory states its idle rule as ``now - updated_at >=
working_ttl`` instead; see ``core._working_idle``.)
"""

from __future__ import annotations

from .options import number_option

__all__ = ["deadline", "is_past"]


def deadline(now: int | float, ttl: object, *, option: str = "ttl", default: object = ...) -> int | float | None:
    """``now + ttl`` for a valid ttl, else the option's default applied the same way (EXP-1).

    For entries an invalid ttl means "no expiry" (``None``), and ``ttl=0`` is
    the documented way to say so, so only other invalid values warn (NUM-5);
    for the L0 cache it means the configured ``cache_ttl`` (L0-1), which the
    caller passes as ``default``. A timedelta counts in milliseconds (NUM-6).
    """
    if default is ...:
        valid = number_option(option, ttl, quiet=(0,))
    else:
        valid = number_option(option, ttl, default, instead="the memory's cache_ttl")
    return None if valid is None else now + valid


def is_past(deadline_at: int | float | None, now: int | float) -> bool:
    """True from the exact moment ``deadline_at`` is reached; ``None`` never passes (EXP-2)."""
    return deadline_at is not None and now >= deadline_at
