"""The conformance suite: this library's rules as data any implementation can be checked against.

A *backend* is any program that speaks the protocol of ``spec/PROTOCOL.md``:
JSON Lines on stdin and stdout, one case per line, each case a fresh memory
driven through explicit steps with explicit times. The *vectors* are the
cases with the results this library gives, reviewed and kept in
``spec/vectors``. The *runner* sends the vectors to a backend and compares.

``python -m sentinel_memory.conformance`` is the command line:

* ``run --backend CMD`` checks a backend against the vectors;
* ``serve`` is this library as a backend;
* ``dump`` prints every vector as one JSON document;
* ``regen`` re-derives the expectations from this library and shows the diff.

Modules: ``.wire`` (values on the wire), ``.backend`` (this library
behind the protocol), ``.vectors`` (the files), ``.compare`` (what
"equal" means), ``.runner`` (driving a backend), ``.bugs`` (deliberate
bugs that prove the suite catches them), ``.cli``.
"""

#: The protocol version this runner and this backend speak (PROTOCOL.md).
PROTOCOL = 2

#: Every backend supports these; a backend lacking one cannot be run.
REQUIRED_GROUPS = ("entries", "expiry", "compaction", "numbers", "recall", "context", "text")

#: A case needing one of these is skipped by a backend that lacks it.
OPTIONAL_GROUPS = ("cache", "working", "persistence", "messages", "sessions", "bm25")

#: The stable error codes a step may answer (PROTOCOL.md, "Errors").
ERROR_CODES = ("E_TYPE", "E_RANGE", "E_PARSE", "E_CONFLICT", "E_UNSUPPORTED")

__all__ = ["ERROR_CODES", "OPTIONAL_GROUPS", "PROTOCOL", "REQUIRED_GROUPS"]
