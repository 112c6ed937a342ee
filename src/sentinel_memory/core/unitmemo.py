"""What the stable cut remembers between calls: each unit's count, oldest first, kept with the index (MSG-17).

The stable cut (MSG-11) places its marks by the tokens before each unit,
counted from the oldest unit of the history, so read literally it reads
every stored turn on every request, where the newest-first fill reads only
the units the budget reaches. A ``UnitMemo`` holds, for one tokenizer (and
one set of excluded tools), every unit's first turn, whether it opens with a
user message, its count whole and with its tool results cleared (MSG-15),
and their running sums. With it, the marks among the units a request takes
follow from two subtractions each, so a stable request reads no more turns
than the newest-first fill does.

The memo is an optimisation only: the request is the one the reference
(``cut.stable_taken`` over every unit) gives. It is kept with the index's
``Split`` (``Split.memos``), carried by each change that leaves the units
it holds as they were: turns added after every turn it read, facts changed,
or the oldest turns removed (an eviction); any other change of the turns
drops it, and it is built again on the next request. A memo read turns at
one moment: it is used only while every turn it read is as live, or as
expired, as it was (``valid_at``). The counts are exact integers; a
tokenizer that counts in floats is never memoised (``exact``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from .expiry import is_past

__all__ = ["MEMOS_KEPT", "Key", "UnitMemo", "carried", "empty", "kept"]

#: A turn's place in the turns' order (MSG-2): ``(N, updated_at, seq)``.
Key = tuple[int, Any, int]

#: How many memos (tokenizers, or sets of excluded tools) one state keeps; the oldest goes first.
MEMOS_KEPT = 4


@attrs.frozen(eq=False)
class UnitMemo:
    """Every unit of the live turns, oldest first, as one tokenizer counts it, and what it read.

    Of the lists, the first ``size`` units are this memo's: ``heads[j]`` is
    the key of unit ``j``'s first turn, ``users[j]`` whether that is a user
    message, ``whole[j]`` and ``cleared[j]`` the running sums of the units'
    counts before ``j`` (``size + 1`` of each), and ``before_user[j]`` the
    index of the newest unit older than ``j`` that opens with a user message
    (-1 when none does). A memo read on from this one appends to the same
    lists when it is the first to claim ``size`` in ``claims`` (another
    copies them), so a request pays for the units it adds, not for the ones
    kept; the lists never change below a memo's ``size``. ``last`` is the newest turn read,
    ``frontier`` the newest message read that is not a tool result (units
    opening before it are final: a message after them closed them; None when
    there is none), ``live_until`` the earliest deadline of a live turn read
    and ``dead_since`` the latest of an expired one. ``drop`` is the newest
    turn removed from the start since the memo was made: the units opening
    at or before it are gone. ``exact`` is False when a count was not an int.
    """

    heads: list[Key]
    users: list[bool]
    whole: list[int | float]
    cleared: list[int | float]
    before_user: list[int]
    size: int
    #: Which memo appends to the lists from a size on: the first to claim it.
    claims: dict[int, object]
    last: Key | None
    frontier: Key | None
    live_until: int | float | None
    dead_since: int | float | None
    exact: bool
    drop: Key | None = None

    def valid_at(self, now: int | float) -> bool:
        """Whether every turn the memo read is as live at ``now`` as when it was read (EXP-2)."""
        return not is_past(self.live_until, now) and (self.dead_since is None or is_past(self.dead_since, now))

    def start(self) -> int:
        """The index of the oldest unit still stored (those at or before ``drop`` are gone)."""
        return 0 if self.drop is None else bisect.bisect_right(self.heads, self.drop, 0, self.size)

    def extended(
        self,
        units: Sequence[tuple[Key, bool, int | float, int | float]],
        last: Key | None,
        frontier: Key | None,
        deadlines: Iterable[tuple[int | float | None, bool]],
    ) -> UnitMemo:
        """The memo with its units from ``frontier`` on replaced by ``units`` (oldest first) read again.

        ``units`` are ``(head, opens with a user message, count whole, count
        cleared)``; ``deadlines`` the ``(expires_at, expired)`` of the turns
        read again. The units gone from the start (``drop``) go for good here.
        Units read again as they were are kept, so the new ones are appended.
        """
        size = self.size
        first = self.start()
        end = size if self.frontier is None else bisect.bisect_left(self.heads, self.frontier, 0, size)
        end = max(first, end)
        same = 0  # the units read again that the memo holds as they are
        while (
            same < len(units)
            and end + same < size
            and self.heads[end + same] == units[same][0]
            and self.users[end + same] == units[same][1]
            and self.whole[end + same + 1] - self.whole[end + same] == units[same][2]
            and self.cleared[end + same + 1] - self.cleared[end + same] == units[same][3]
        ):
            same += 1
        end += same
        units = units[same:]
        claims = self.claims
        token = object()
        if first == 0 and end == size and claims.setdefault(size, token) is token:
            # The first to read on from this size appends to the lists (``setdefault`` is atomic: of two
            # threads reading on at once, one appends and the other copies).
            heads, users, before_user = self.heads, self.users, self.before_user
            whole, cleared = self.whole, self.cleared
        elif first == 0:
            claims = {}
            heads, users, before_user = self.heads[:end], self.users[:end], self.before_user[:end]
            whole, cleared = self.whole[: end + 1], self.cleared[: end + 1]
        else:  # the sums start again at the oldest unit kept
            claims = {}
            heads, users = self.heads[first:end], self.users[first:end]
            base_whole, base_cleared = self.whole[first], self.cleared[first]
            whole = [w - base_whole for w in self.whole[first : end + 1]]
            cleared = [c - base_cleared for c in self.cleared[first : end + 1]]
            before_user = [b - first if b >= first else -1 for b in self.before_user[first:end]]
        newest_user = next((j for j in range(end - first - 1, -1, -1) if users[j]), -1)
        exact = self.exact
        for head, user, cost, cost_cleared in units:
            exact = exact and type(cost) is int and type(cost_cleared) is int
            before_user.append(newest_user)
            if user:
                newest_user = len(heads)
            heads.append(head)
            users.append(user)
            whole.append(whole[-1] + cost)
            cleared.append(cleared[-1] + cost_cleared)
        live_until, dead_since = self.live_until, self.dead_since
        for deadline, expired in deadlines:
            if deadline is None:
                continue
            if expired:
                dead_since = deadline if dead_since is None else max(dead_since, deadline)
            else:
                live_until = deadline if live_until is None else min(live_until, deadline)
        return UnitMemo(
            heads=heads,
            users=users,
            whole=whole,
            cleared=cleared,
            before_user=before_user,
            size=len(heads),
            claims=claims,
            last=last,
            frontier=frontier,
            live_until=live_until,
            dead_since=dead_since,
            exact=exact,
        )


def empty() -> UnitMemo:
    """A memo of no turns read yet, with lists of its own."""
    return UnitMemo(
        heads=[],
        users=[],
        whole=[0],
        cleared=[0],
        before_user=[],
        size=0,
        claims={},
        last=None,
        frontier=None,
        live_until=None,
        dead_since=None,
        exact=True,
    )


def carried(
    memos: dict[Any, UnitMemo], removed: Sequence[Key], added: Sequence[Key], below_newest_removed: int
) -> dict[Any, UnitMemo]:
    """The memos a state keeps after a change of its turns: ``removed`` and ``added`` are the turns' keys.

    A memo stays when every added turn comes after every turn it read, and
    the removed turns are the oldest turns (``below_newest_removed``, how
    many turns came before the newest removed one, is one less than how many
    were removed); it then forgets the units that opened at or before the
    newest removed turn. Any other change of the turns drops it.
    """
    if not memos or (not removed and not added):
        return dict(memos)
    newest_removed = max(removed) if removed else None
    if newest_removed is not None and below_newest_removed != len(removed) - 1:
        return {}  # a turn in the middle left: the units after it may be others
    oldest_added = min(added) if added else None
    out: dict[Any, UnitMemo] = {}
    for key, memo in memos.items():
        if oldest_added is not None and memo.last is not None and oldest_added <= memo.last:
            continue
        if newest_removed is not None:
            drop = newest_removed if memo.drop is None else max(memo.drop, newest_removed)
            out[key] = attrs.evolve(memo, drop=drop)
        else:
            out[key] = memo
    return out


def kept(memos: dict[Any, UnitMemo], key: Any, memo: UnitMemo) -> None:
    """Keeps ``memo`` under ``key`` in ``memos``, forgetting the oldest when more than ``MEMOS_KEPT`` are kept."""
    memos.pop(key, None)
    memos[key] = memo
    while len(memos) > MEMOS_KEPT:
        del memos[next(iter(memos))]
