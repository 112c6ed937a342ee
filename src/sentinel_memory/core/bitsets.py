"""Sets of small non-negative ints as one Python int, and how many of several sets hold each member (REC-7).

A posting list (the entries holding a word, by ``seq``) is a set of ints.
Written as one int whose bit ``k`` is set when ``k`` is a member, the
commonest word's list of 10,000 entries is 1,250 bytes, and an ``&``, ``|``
or ``^`` of two such lists is one C loop over them. So how many of a query's
lists hold each entry is worked out for every entry at once, without a step
per posting: the counts are kept *bit-sliced*, plane ``j`` holding bit ``j``
of every entry's count, and adding a list is a ripple-carry addition over
the planes (two operations per plane it carries into). The entries holding
exactly ``c`` lists are then one ``&`` per plane away (``with_count``), and
their members come out of the int's binary digits (``members``).

Everything here is exact integer work: the results are those of counting
each posting one by one (the readable reference is ``counts_of``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["bits_of", "counts_of", "members", "planes_of", "with_count"]


def bits_of(members_: Iterable[int]) -> int:
    """The set of ``members_`` (ints >= 0) as an int: bit ``k`` set for each member ``k``."""
    keys = list(members_)
    if not keys:
        return 0
    if min(keys) < 0:
        raise ValueError("a bit set holds ints >= 0 only")
    # One byte array filled in place, then read as one int: a step per member, not a big-int copy each.
    laid = bytearray((max(keys) >> 3) + 1)
    for key in keys:
        laid[key >> 3] |= 1 << (key & 7)
    return int.from_bytes(laid, "little")


def members(bits: int) -> list[int]:
    """The members of the set ``bits`` (>= 0), ascending: a C-speed search of its binary digits for each."""
    if bits < 0:
        raise ValueError("a bit set is an int >= 0")
    digits = bin(bits)[:1:-1]  # the binary digits, bit 0 first
    found: list[int] = []
    at = digits.find("1")
    while at >= 0:
        found.append(at)
        at = digits.find("1", at + 1)
    return found


def planes_of(sets: Iterable[int]) -> list[int]:
    """How many of ``sets`` hold each int, bit-sliced: bit ``k`` of plane ``j`` is bit ``j`` of ``k``'s count.

    Each set is added to the planes by a ripple-carry addition: the plane
    takes the sum's bit (``^``) and the carry (``&``) goes on to the next
    plane, until nothing is carried. The planes never end in an empty one.
    """
    planes: list[int] = []
    for added in sets:
        carry = added
        for j, plane in enumerate(planes):
            if not carry:
                break
            planes[j], carry = plane ^ carry, plane & carry
        if carry:
            planes.append(carry)
    return planes


def with_count(planes: Sequence[int], count: int) -> int:
    """The set of the ints that ``planes`` (``planes_of``) count exactly ``count`` times (``count`` >= 1)."""
    if count < 1:
        raise ValueError("with_count finds counts of 1 or more")
    if count >> len(planes):
        return 0  # more than the planes can count
    found = -1  # every int, until the planes narrow it
    for j, plane in enumerate(planes):
        found &= plane if count >> j & 1 else ~plane
    return found


def counts_of(sets: Iterable[int]) -> dict[int, int]:
    """How many of ``sets`` hold each int, counted member by member: the readable reference of ``planes_of``."""
    counts: dict[int, int] = {}
    for bits in sets:
        for key in members(bits):
            counts[key] = counts.get(key, 0) + 1
    return counts
