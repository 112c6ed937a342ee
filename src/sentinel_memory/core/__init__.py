"""The functional core: every transition and every read, as pure functions.

Theory of operation
===================

A memory is one immutable value, a ``MemoryState``. It holds three
memories of different lifetimes, taken from the layered memory of the agent
this library descends from:

* **entries**, the long-term memory: ``key -> Entry`` with an importance in
  [0, 1], timestamps and an optional expiry. It is bounded by ``limit``.
* **L0 cache**: scratch values with a short ttl, never persisted.
* **L1 working memory**: one small dict for the task in progress, which
  resets once nobody has set it for ``working_ttl``.

Every function here takes the state and the current time ``now``
(milliseconds since the epoch) and returns a *new* state, or a value read
from it. Nothing in this package reads a clock, touches a file or calls back;
the stateful ``Memory`` does those things around
these calls. Because of that, any sequence of operations can be replayed
exactly: same states, same times, same results, on every machine and in
every port.

Three ideas carry the whole design:

**Visibility is a function of time.** An entry with ``expires_at = T`` is
visible at ``T - 1`` and invisible at ``T`` on every read path (EXP-2, EXP-3).
No read ever changes the state, so expiry is not an event that has to
happen: an expired entry simply stops being returned. It is physically
removed later, by ``compact``, ``clear`` or a new ``remember`` of its key,
and each of those says what it removed.

**Importance first, freshness as a tiebreaker.** When ``remember`` pushes
the stored count over ``limit``, ``compact`` runs: expired entries go, then
the entries of lowest ``retention = importance + 0.1 * freshness`` until the
live count fits (CMP-1). Freshness adds at most 0.1, so it only settles close
calls. Nothing disappears unreported: every transition that drops entries
returns them, next to the new state, as a ``Compaction``.

**Order is explicit.** Every remember stamps a sequence number, so "newer"
(the larger ``(updated_at, seq)``, ENT-6) is defined even within one
millisecond, and every tie in every ranking goes to the newer entry.

**Speed sits behind one seam: the index.** Every rule here is stated over
"every live entry", and the functions read that way. Where reading it
literally would scan the table, they ask ``state.index``
(``sentinel_memory.core.index``) instead: the lowest retention, the expired
entries, the start of a ranking, the entries by importance, the entries
that hold a word. Each of its
answers is, by construction and by property test, what the scan would have
found; ``sentinel_memory.core.retention``, ``sentinel_memory.core.lexical`` and
``sentinel_memory.core.prompt.fill_naive`` keep the reference formulas it is
compared with.

Illegal input raises before anything is built (a bad key, data that is not
JSON, a bad token budget); the state passed in is never changed, so "raised"
always means "nothing happened". A numeric *option* that is out of range is
not illegal: it falls back to its documented default (the number rule,
``sentinel_memory.core.options``).

What this package holds
=======================

Everything a port must reproduce, and nothing else. This module only tells
the story and re-exports the functions; each module beside it holds one part
of the rules, and each imports only modules listed before it, so the package
reads bottom-up from its first file (the ``core-layers`` contract in
``pyproject.toml`` holds this order):

* ``shown``, ``errors``, ``unicode14``, ``bitsets``, ``persistent``: how a
  bad value is named in a message, what is raised, the Unicode 14 tables,
  sets of ints as the bits of one int (how a query's words are counted for
  every entry at once), the persistent sorted runs and hash tables;
* ``message``, ``jsondata``: a chat message's stored form, and what counts
  as JSON data and how it renders as text;
* ``chat``, ``turns``: checking messages on their way in, and which entries
  are chat turns;
* ``maxscore``, ``lexical``, ``tokens``, ``bm25``, ``values``, ``options``,
  ``expiry``: the exact top-k search both rankings prune with, words and
  recall scores, token counts, the BM25 ranking, the immutable values
  (``Entry``, ``Config``, the results), the number rule, visibility in time;
* ``retention``, ``unitmemo``, ``cut``, ``linecounts``, ``prompt``: the
  reference formulas for ranking, the stable cut's marks and the memo of its
  units' counts, the lines' counts a counted fill keeps, and the context
  fill;
* ``table``, ``index``, ``state``: the seam where speed lives, equal to the
  formulas by property test, and ``MemoryState``, the memory as one value;
* ``document``: the saved document, written and checked;
* the transitions and reads, each a small module: ``basics`` (the checks of
  ``now`` and a key, the live view), ``config`` (``make_config``),
  ``entries`` (``remember``, ``compact``, ``forget``, ``clear``),
  ``conversation`` (``add_turn``, ``add_messages``, ``open_calls``),
  ``cache`` (L0), ``working`` (L1), ``reads`` (``get``, ``has``, ``size``,
  ``stats``, ...), ``ranking`` (which ranking a memory uses), ``search``
  (``recall``), ``window`` (``context``),
  ``request`` (``messages``) and ``persistence`` (``to_document``,
  ``changes``, ``from_document``).

What it may import: the standard library's pure modules and ``attrs``. Not
the shells (``memory``, ``aio``, ``folder``, ``cli``, ``shell``, ``logs``),
the stores, the integrations or the conformance suite, and no module that
does I/O, reads a clock, logs, or runs threads or an event loop (``os``,
``io``, ``time``, ``logging``, ``asyncio``, ``threading``, ``socket``,
``sqlite3``, ...). The import contracts in ``pyproject.toml`` check this in
CI, with no exception: where a memory's threads share something (the memo of
``LineCounter``'s line counts), the shell holds the lock.
"""

from __future__ import annotations

from .basics import _check_key as _check_key
from .basics import _check_now as _check_now
from .cache import cache_clear, cache_delete, cache_get, cache_put, cache_size
from .chat import ROLES as ROLES
from .chat import check_messages as check_messages
from .chat import check_role as check_role
from .chat import request_problems, validate_request
from .config import make_config
from .conversation import TURN_KEY, add_messages, add_turn, open_calls
from .conversation import _add_message as _add_message
from .entries import clear, compact, forget, remember, remembered
from .persistence import changes, from_document, to_document
from .reads import get, get_entry, get_recent, has, live_items, size, stats
from .request import MESSAGE_TOKENS as MESSAGE_TOKENS
from .request import SYSTEM_SEPARATOR as SYSTEM_SEPARATOR
from .request import _from_a_user as _from_a_user
from .request import _NewestUnits as _NewestUnits
from .request import handed_out as handed_out
from .request import messages
from .request import shared_messages as shared_messages
from .search import _by_holders as _by_holders
from .search import _matches as _matches
from .search import recall
from .state import MemoryState as MemoryState
from .state import largest_turn as largest_turn
from .turns import chat_message as chat_message
from .window import KINDS as KINDS
from .window import _kept_first as _kept_first
from .window import context
from .working import _working_idle as _working_idle
from .working import working_clear, working_get, working_set

__all__ = [
    "TURN_KEY",
    "add_messages",
    "add_turn",
    "cache_clear",
    "cache_delete",
    "cache_get",
    "cache_put",
    "cache_size",
    "changes",
    "clear",
    "compact",
    "context",
    "forget",
    "from_document",
    "get",
    "get_entry",
    "get_recent",
    "has",
    "live_items",
    "make_config",
    "messages",
    "open_calls",
    "recall",
    "remember",
    "remembered",
    "request_problems",
    "size",
    "stats",
    "to_document",
    "validate_request",
    "working_clear",
    "working_get",
    "working_set",
]
