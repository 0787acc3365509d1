"""`toolcall parse`: the black-box interface to the parsers, batch vs streamed, text vs SSE."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conformance import cases, needs, params, real_outputs
from in_process import Finished, toolcall

from toolcall_cli.parse_command import parse_output, parse_sse


def parse_cli(*args: str, stdin: str) -> dict[str, Any]:
    done = toolcall("parse", *args, cwd=Path.cwd(), stdin=stdin)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def names_and_arguments(result: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(c["name"], c["arguments"]) for c in result["calls"]]


def test_cli_batch_and_one_char_chunks_agree() -> None:
    text = (
        '我来查。<tool_call>{"name": "get_weather", "arguments": {"city": "北京"}}</tool_call>'
        "\n```json\n{'name': 'calculate', 'arguments': {'expression': '1+2',}}\n```\n好的"
    )
    batch = parse_cli(stdin=text)
    streamed = parse_cli("--strategy", "stream", "--chunk", "1", stdin=text)
    seeded = parse_cli("--strategy", "stream", "--seed", "3", stdin=text)
    assert names_and_arguments(batch) == [
        ("get_weather", {"city": "北京"}),
        ("calculate", {"expression": "1+2"}),
    ]
    assert batch["calls"][1]["repaired"] is True
    for other in (streamed, seeded):
        assert names_and_arguments(other) == names_and_arguments(batch)
        assert other["text"] == batch["text"]
    assert batch["text"].startswith("我来查。") and batch["text"].endswith("好的")
    assert "tool_call" not in batch["text"] and "```" not in batch["text"]
    assert streamed["chunks"] == len(text) and batch["chunks"] == 1


def test_cli_reports_a_truncated_call() -> None:
    result = parse_cli(stdin='Checking.\n<tool_call>{"name": "get_weather", "arguments": {"ci')
    assert result["calls"] == [] and result["text"] == "Checking."
    assert result["errors"][0]["truncated"] is True


def test_cli_usage_errors(tmp_path: Path) -> None:
    done = toolcall("parse", "--chunk", "2", cwd=tmp_path, stdin="x")
    assert done.returncode == 2 and "--strategy stream" in done.stderr
    missing = toolcall("parse", str(tmp_path / "nope.txt"), cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


@pytest.mark.parametrize("case", real_outputs(lambda c: c["format"] != "openai_tool_calls_json"))
def test_parse_and_stream_chunk_1_print_the_same_calls(case: dict[str, Any]) -> None:
    batch = parse_output(case["text"])
    streamed = parse_output(case["text"], chunk=1)
    assert names_and_arguments(streamed) == names_and_arguments(batch)
    assert streamed["errors"] == batch["errors"] and streamed["text"] == batch["text"]


SSE_STREAMS = "sse_streams.jsonl"


def sse_text(case: dict[str, Any]) -> str:
    lines = []
    for chunk in case["chunks"]:
        if isinstance(chunk, str) and chunk.startswith("data:"):
            lines.append(chunk)
        else:
            tool_calls = json.loads(chunk) if isinstance(chunk, str) else chunk
            delta = {"tool_calls": tool_calls} if tool_calls else {}
            lines.append("data: " + json.dumps({"choices": [{"index": 0, "delta": delta}]}))
    return "\n\n".join(lines) + "\n\n"


@pytest.mark.parametrize("case", params(SSE_STREAMS))
def test_parse_sse_yields_the_expected_calls(case: dict[str, Any]) -> None:
    result = parse_sse(sse_text(case))
    expected = [(c["name"], c["arguments"]) for c in case["expected_calls"]]
    assert names_and_arguments(result) == expected
    assert [c["id"] for c in result["calls"]] == [c["id"] for c in case["expected_calls"]]


@needs(SSE_STREAMS)
def test_cli_sse() -> None:
    case = cases(SSE_STREAMS)[0]
    result = parse_cli("--sse", stdin=sse_text(case))
    assert names_and_arguments(result) == [
        (c["name"], c["arguments"]) for c in case["expected_calls"]
    ]


@pytest.mark.parametrize("case", real_outputs(lambda c: c["format"] == "openai_tool_calls_json"))
def test_native_messages_in_the_corpus_parse_to_their_calls(case: dict[str, Any]) -> None:
    from toolcall_cli.parse_command import parse_message

    result = parse_message(case["text"])
    assert names_and_arguments(result) == [
        (c["name"], c["arguments"]) for c in case["expected_calls"]
    ]
    assert result["errors"] == []


def test_cli_schema_reads_a_native_message() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
            {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{'b': 2,}"}},
        ],
    }
    result = parse_cli("--strategy", "schema", stdin=json.dumps(message))
    assert names_and_arguments(result) == [("f", {"a": 1}), ("g", {"b": 2})]
    assert [c["repaired"] for c in result["calls"]] == [False, True]


def parse_bytes(*args: str, stdin: bytes | None = None) -> Finished:
    return toolcall("parse", *args, cwd=Path.cwd(), stdin=stdin)


def real_parse(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    """`toolcall parse` in its own process, reading a real pipe on its stdin."""
    return subprocess.run(
        [sys.executable, "-m", "toolcall_cli", "parse", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b"ab\xffcd", 2),  # a byte UTF-8 never uses
        ("好的".encode() + b"\xe5\xa5", 6),  # a character cut off at the end
        (b"x\xed\xa0\x80y", 1),  # an encoded surrogate (what surrogateescape lets through)
        (b"\xc0\xafok", 0),  # an overlong encoding
    ],
)
def test_invalid_utf8_is_the_same_usage_error_from_stdin_and_from_a_file(
    tmp_path: Path, data: bytes, offset: int
) -> None:
    source = tmp_path / "reply.txt"
    source.write_bytes(data)
    from_file = parse_bytes(str(source))
    from_stdin = parse_bytes(stdin=data)
    for done, name in ((from_file, str(source)), (from_stdin, "stdin")):
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr == (
            f"toolcall: error: {name} is not valid UTF-8: "
            f"a bad byte (0x{data[offset]:02x}) at byte offset {offset}\n"
        )


def test_a_real_pipe_on_stdin_is_read_by_the_same_rule() -> None:
    """The process's own stdin, not a test's stand-in: its bytes, never a decoding that
    replaces what it cannot read."""
    bad = real_parse(stdin=b"ab\xffcd")
    assert bad.returncode == 2 and bad.stdout == b""
    assert bad.stderr.decode() == (
        "toolcall: error: stdin is not valid UTF-8: a bad byte (0xff) at byte offset 2\n"
    )


def test_valid_input_reads_the_same_from_stdin_and_a_file(tmp_path: Path) -> None:
    data = '天气\r\n<tool_call>{"name": "f", "arguments": {"a": "é"}}</tool_call>\r\n'.encode()
    source = tmp_path / "reply.txt"
    source.write_bytes(data)
    from_file, from_stdin = parse_bytes(str(source)), parse_bytes(stdin=data)
    assert from_file.returncode == 0 and from_file.stdout == from_stdin.stdout
    result = json.loads(from_file.stdout)
    assert result["calls"][0]["arguments"] == {"a": "é"} and result["text"] == "天气"


def test_parse_help_states_the_utf8_rule(tmp_path: Path) -> None:
    done = toolcall("parse", "--help", cwd=tmp_path)
    words = " ".join(done.stdout.split())  # however the help is wrapped
    assert done.returncode == 0 and "UTF-8" in words and "byte offset" in words


def test_parse_with_stdin_closed_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolcall_cli", "parse"],
        stdin=None,
        capture_output=True,
        text=True,
        timeout=60,
        close_fds=True,
        preexec_fn=lambda: os.close(0),
    )
    assert done.returncode == 2 and "stdin" in done.stderr and done.stderr.count("\n") == 1


def test_a_bare_carriage_return_is_data_and_kept(tmp_path: Path) -> None:
    """A \r inside a string is an argument's character; read as a line end it became \n."""
    data = b'Done.\r<tool_call>{"name": "f", "arguments": {"text": "a\rb\r\nc"}}</tool_call>'
    source = tmp_path / "reply.txt"
    source.write_bytes(data)
    for done in (
        parse_bytes(str(source)),
        parse_bytes(stdin=data),
        parse_bytes("--strategy", "stream", "--chunk", "1", stdin=data),
        real_parse(stdin=data),
    ):
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert names_and_arguments(result) == [("f", {"text": "a\rb\r\nc"})]
        assert result["text"] == "Done."


def test_an_sse_stream_is_cut_into_lines_only_where_the_format_ends_them() -> None:
    """U+2028 and U+0085 may stand raw in an event's JSON string; a bare \r ends a line."""
    content = "line\u2028sep\x85next"
    event = {"choices": [{"index": 0, "delta": {"content": content}}]}
    stream = f"data: {json.dumps(event, ensure_ascii=False)}\r\rdata: [DONE]\r"
    result = parse_cli("--sse", stdin=stream)
    assert result["errors"] == [] and result["text"] == content


class TerminalStdin:
    """stdin as a terminal: what `toolcall parse` typed alone reads from."""

    def __init__(self, typed: bytes) -> None:
        import io

        self.buffer = io.BytesIO(typed)

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("platform", "keys"),
    [("linux", "Ctrl-D"), ("darwin", "Ctrl-D"), ("win32", "Ctrl-Z, then Enter")],
)
def test_parse_from_a_terminal_says_it_is_reading_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], platform: str, keys: str
) -> None:
    """`toolcall parse` alone waited for input without a word, and looked hung. The keys that
    end it are the platform's: a console on Windows ends input at Ctrl-Z and Enter."""
    from toolcall_cli.cli._commands import stdin_bytes

    monkeypatch.setattr(sys, "stdin", TerminalStdin(b"hello"))
    monkeypatch.setattr(sys, "platform", platform)
    assert stdin_bytes() == b"hello"
    assert capsys.readouterr().err == (
        f"toolcall: reading the model's output from stdin; end it with {keys}\n"
    )
