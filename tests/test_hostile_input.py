"""The runner, serve and answer fed hostile input: each bad line or answer costs one case or one answer, in bounded
time, and the next one runs (PROTOCOL.md sections 1, 4 and 10)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sentinel_memory.conformance import backend, runner, wire

ROOT = Path(__file__).resolve().parent.parent
NEXT = '{"id": "next", "config": {}, "steps": [{"op": "size", "now": 0}]}'


def cli(*args: str, stdin: bytes | None = None, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "sentinel_memory.conformance", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        check=False,
        timeout=timeout,
    )


def misbehaving_backend(tmp_path: Path, first: bytes, *, then_hang: bool = False) -> str:
    """A backend that writes ``first`` as its answer to the run's first case, then answers as the reference does."""
    script, done = tmp_path / "backend.py", tmp_path / "misbehaved"
    script.write_text(
        "import json, sys, time\n"
        "from sentinel_memory.conformance.backend import handshake, run_case\n"
        "out = sys.stdout.buffer\n"
        "import pathlib\n"
        f"done = pathlib.Path({str(done)!r})\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    if request.get('op') == 'start':\n"
        "        out.write(json.dumps(handshake()).encode() + b'\\n'); out.flush()\n"
        "        continue\n"
        "    if not done.exists():\n"
        "        done.write_text('yes')\n"
        f"        out.write({first!r}); out.flush()\n"
        + ("        time.sleep(60)\n" if then_hang else "        continue\n")
        + "    out.write(json.dumps(run_case(request)).encode() + b'\\n'); out.flush()\n",
        encoding="utf-8",
    )
    return f"{sys.executable} {script}"


@pytest.mark.parametrize(
    ("first", "then_hang", "reason"),
    [
        (b'{"id": "entries-recent-1", "results": [NaN]}\n', False, "NaN is not JSON"),
        (b'{"id": "entries-recent-1", "results": [Infinity]}\n', False, "Infinity is not JSON"),
        (b'{"id": "entries-recent-1", "results": ["\xff"]}\n', False, "not UTF-8"),
        (b"\xff\xfe\n", True, "not UTF-8"),
        (b"\xff", True, "no answer within"),
    ],
)
def test_a_bad_answer_costs_one_case_and_the_run_goes_on(tmp_path, first, then_hang, reason):
    """PROTOCOL section 10: a bare NaN or a byte that is not UTF-8 in an answer errors that case; the runner restarts the backend, runs the rest and prints the summary."""
    command = misbehaving_backend(tmp_path, first, then_hang=then_hang)
    started = time.monotonic()
    result = cli("run", "--backend", command, "--only", "entries-recent-*", "--timeout", "3", "--quiet")
    out = result.stdout.decode()
    assert time.monotonic() - started < 60
    assert result.returncode == 1 and "Traceback" not in result.stderr.decode(), result.stderr.decode()[-2000:]
    assert reason in out and out.count("ERRORED") == 1, out
    assert out.rstrip().endswith("0 failed, 0 skipped, 1 errored") and " passed" in out.splitlines()[-1]
    assert int(out.splitlines()[-1].split()[0]) > 0


def test_parse_answer_refuses_what_no_backend_may_write():
    """PROTOCOL sections 1 and 4: an answer is UTF-8 JSON without bare NaN or Infinity, an object; a long integer is read in bounded time."""
    for raw in (b"NaN\n", b'{"a": -Infinity}', b"[1]", b"\xc3\x28", b"{", b"[" * 100_000 + b"]" * 100_000):
        with pytest.raises(runner.BackendError):
            runner.parse_answer(raw)
    started = time.monotonic()
    answer = runner.parse_answer(b'{"id": "x", "results": [{"ok": ' + b"9" * 1_000_000 + b"}]}")
    assert answer["results"][0]["ok"] == 10**1_000_000 - 1 and time.monotonic() - started < 10


HOSTILE = [
    b"hello",
    b"[1,2]",
    b"null",
    b"true",
    b"5",
    b'"a string"',
    b"{}{",
    b"}",
    b'{"id": "t", "config": {}, "steps": [{"op": "size"',
    b'{"id": "nul\x00", "steps": []}',
    b"\x00",
    b'\xef\xbb\xbf{"id": "bom", "config": {}, "steps": []}',
    b'{"id": "s", "steps": 5}',
    b'{"id": "s", "steps": "size"}',
    b'{"id": "s", "steps": [5]}',
    b'{"id": "s", "steps": [null]}',
    b'{"id": "c", "config": 5, "steps": []}',
    b'{"id": "c", "config": [], "steps": []}',
    b'{"id": "o", "steps": [{"op": 5}]}',
    b'{"id": "o", "steps": [{"args": {}}]}',
    b'{"id": "a", "steps": [{"op": "size", "args": [1]}]}',
    b'{"id": "n", "steps": [{"op": "size", "now": NaN}]}',
    b'{"id": "n", "steps": [{"op": "get", "args": {"key": "a", "default": {"$number": "bogus"}}, "now": 0}]}',
    b'{"id": "n", "steps": [{"op": "get", "args": {"key": "a"}, "now": {"$number": []}}]}',
    b'{"id": "m", "steps": [{"op": "size", "memory": "two", "now": 0}]}',
    b'{"id": "m", "steps": [{"op": "size", "memory": 0, "now": 0}]}',
    b'{"id": "x", "steps": [{"op": "size", "now": 0}]} trailing',
    b"\xff\xfe not UTF-8",
    b'{"id": "\xed\xa0\x80", "steps": []}',
    b'{"id": "deep", "steps": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
]


def test_serve_answers_every_hostile_line_and_then_the_next_request():
    """PROTOCOL section 1: each line that is no request (not UTF-8, not JSON, no object, steps that are no steps) gets one answer, and the request after it is answered as usual."""
    lines = [b'{"op": "start", "protocol": 2}']
    for line in HOSTILE:
        lines += [line, NEXT.encode()]
    result = cli("serve", stdin=b"\n".join(lines) + b"\n")
    assert result.returncode == 0 and not result.stderr, result.stderr.decode()[-2000:]
    answers = [json.loads(line) for line in result.stdout.decode("ascii").splitlines()]
    assert len(answers) == 1 + 2 * len(HOSTILE)
    for line, answer, after in zip(HOSTILE, answers[1::2], answers[2::2], strict=True):
        assert after == {"id": "next", "results": [{"ok": 0}]}, line
        refused = answer.get("error") == "E_UNSUPPORTED" or {"error": "E_UNSUPPORTED"} in answer.get("results", [])
        assert refused, (line, answer)


def test_serve_answers_a_line_cut_off_at_the_end_of_input():
    """PROTOCOL section 1: a last line without its newline, cut short, is answered before serve exits."""
    result = cli("serve", stdin=b'{"op": "start", "protocol": 2}\n' + NEXT.encode() + b'\n{"id": "cut", "steps": [')
    answers = result.stdout.decode().splitlines()
    assert result.returncode == 0 and len(answers) == 3
    assert json.loads(answers[2])["error"] == "E_UNSUPPORTED"


MILLION = "7" * 1_000_000


def test_serve_reads_and_writes_a_million_digit_integer_in_bounded_time():
    """PROTOCOL section 4: an integer literal of 1,000,000 digits is read and echoed as a $number well within the default 10 s timeout, and the next request runs."""
    case = (
        '{"id": "big", "config": {}, "steps": [{"op": "get", "args": {"key": "k", "default": DIGITS}, "now": 0},'
        ' {"op": "remember", "args": {"key": "k", "data": DIGITS}, "now": DIGITS}]}'
    ).replace("DIGITS", MILLION)
    started = time.monotonic()
    result = cli("serve", stdin=("\n".join(['{"op": "start", "protocol": 2}', case, NEXT]) + "\n").encode())
    elapsed = time.monotonic() - started
    answers = result.stdout.decode().splitlines()
    assert result.returncode == 0 and len(answers) == 3, result.stderr.decode()[-2000:]
    assert json.loads(answers[1]) == {"id": "big", "results": [{"ok": {"$number": MILLION}}, {"error": "E_TYPE"}]}
    assert json.loads(answers[2]) == {"id": "next", "results": [{"ok": 0}]}
    assert elapsed < 30, elapsed  # it was 12 s of parsing alone, quadratic; now about 2 s on a slow machine


def test_answer_reads_a_million_digit_integer_in_bounded_time(tmp_path):
    """PROTOCOL section 10: answer CASE.json with a 1,000,000-digit literal prints its $number in bounded time."""
    path = tmp_path / "case.json"
    path.write_text(
        '{"id": "big", "config": {}, "steps": [{"op": "get", "args": {"key": "k", "default": DIGITS}, "now": 0}]}'.replace(
            "DIGITS", MILLION
        )
    )
    started = time.monotonic()
    result = cli("answer", str(path))
    assert result.returncode == 0 and time.monotonic() - started < 30
    assert json.loads(result.stdout) == {"id": "big", "results": [{"ok": {"$number": MILLION}}]}


def test_answer_writes_a_case_whose_id_is_a_lone_surrogate(tmp_path):
    """PROTOCOL section 10: answer on a case whose id (or a result) holds a lone surrogate prints it escaped, no traceback."""
    path = tmp_path / "case.json"
    path.write_text(
        '{"id": "\\ud800", "config": {}, "steps": [{"op": "get", "args": {"key": "a", "default": "\\udfff"}, "now": 0}]}'
    )
    result = cli("answer", str(path))
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert json.loads(result.stdout) == {"id": "\ud800", "results": [{"ok": "\udfff"}]}


@pytest.mark.parametrize("digits", ["0", "-0", "7", "-12345", "1" + "0" * 4300, "-" + "9" * 4301, "31" * 20_000])
def test_integers_are_read_and_written_exactly(digits):
    """PROTOCOL section 4: the fast integer reading and writing give Python's own digits, signs included."""
    sys.set_int_max_str_digits(0)
    try:
        value = wire.integer_of(digits)
        assert value == int(digits) and wire.integer_digits(value) == str(int(digits))
    finally:
        sys.set_int_max_str_digits(4300)
    for bad in ("", "-", "1.5", "1e5", "١٢"):
        with pytest.raises(ValueError):
            wire.integer_of(bad)


def test_a_document_with_a_long_integer_is_put_into_the_store_with_every_digit():
    """PROTOCOL section 8: stored writes a document's integer of any length with every digit, and a text that cannot be one of ours keeps its own characters."""
    long = 10**5000 + 7
    text = backend.document_text({"a": [long, "\x000\x00", float("nan")]})
    assert text.startswith('{"a": [1' + "0" * 100) and text.endswith('7, "\\u00000\\u0000", NaN]}')


def test_run_report_writes_a_table_per_group_and_a_badge(tmp_path):
    """PROTOCOL section 10: run --report DIR writes a pass table per group of vectors and a shields.io endpoint badge naming protocol and vectors' version."""
    serve = f"{sys.executable} -m sentinel_memory.conformance serve"
    result = cli("run", "--backend", serve, "--only", "time-*", "--only", "sessions-*", "--report", str(tmp_path / "r"))
    assert result.returncode == 0, result.stdout.decode()[-2000:]
    table = (tmp_path / "r" / "conformance.md").read_text(encoding="utf-8")
    badge = json.loads((tmp_path / "r" / "badge.json").read_text(encoding="utf-8"))
    version = re.search(r"vectors (\S+),", table).group(1)
    counts = {
        group: len(json.loads((ROOT / "spec" / "vectors" / f"{group}.json").read_text(encoding="utf-8"))["cases"])
        for group in ("time", "sessions")
    }
    assert f"| time | {counts['time']}/{counts['time']} | 0 | 0 | 0 | 0 |" in table and "Protocol 2" in table
    assert f"| sessions | {counts['sessions']}/{counts['sessions']} |" in table
    assert badge == {
        "schemaVersion": 1,
        "label": "sentinel-memory conformance",
        "message": f"{sum(counts.values())}/{sum(counts.values())} passed, protocol 2, vectors {version}",
        "color": "brightgreen",
    }
    broken = cli(
        "run", "--backend", f"{serve} --bug now-read-as-double", "--only", "time-*", "--report", str(tmp_path / "b")
    )
    assert broken.returncode == 1
    assert json.loads((tmp_path / "b" / "badge.json").read_text(encoding="utf-8"))["color"] == "red"
    assert "| time | 8/9 | 1 |" in (tmp_path / "b" / "conformance.md").read_text(encoding="utf-8")
