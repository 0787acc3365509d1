"""A question longer than the limit (limits.max_question_chars) is refused once, in one line,
before it is shown: by `run`, by a piped `chat` (whose transcript and history do not take it
in), and by `compare` (not once per strategy, and with the code `run` exits with)."""

from __future__ import annotations

from pathlib import Path

from in_process import toolcall

LONG = "a" * 100_000
REFUSED = "the question is 100,000 characters; the limit is 8,000"


def test_piped_chat_refuses_a_long_question_without_echoing_it(tmp_path: Path) -> None:
    history = tmp_path / "history"
    asked = f"{LONG}\nWhat's 2+2?\n"
    done = toolcall("chat", "--no-trace", "--history-file", str(history), cwd=tmp_path, stdin=asked)
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr
    assert "a" * 100 not in shown
    assert shown.count(REFUSED) == 1
    assert "you> aaaa" in done.stdout and "(100,000 characters)" in done.stdout
    assert "2+2 = 4" in done.stdout  # the chat goes on
    kept = history.read_text(encoding="utf-8")
    assert "What's 2+2?" in kept and "a" * 100 not in kept


def test_compare_refuses_a_long_question_once_with_the_code_run_exits_with(
    tmp_path: Path,
) -> None:
    compared = toolcall("compare", LONG, "--no-trace", cwd=tmp_path)
    ran = toolcall("run", LONG, "--no-trace", cwd=tmp_path)
    assert ran.returncode != 0 and compared.returncode == ran.returncode
    assert compared.stderr == f"toolcall: error: {REFUSED}\n"
    assert compared.stdout == ""  # no table of strategies each stopped at input_rejected


def test_a_question_of_bytes_that_are_not_utf8_is_a_usage_error_and_its_trace_kept(
    tmp_path: Path,
) -> None:
    # A GBK terminal's 北京 in a UTF-8 locale: Python hands its bytes over as lone surrogates,
    # which the offline model failed on ("model failed (internal): UnicodeEncodeError", exit 1).
    question = b"\xb1\xb1\xbe\xa9 weather".decode("utf-8", "surrogateescape")
    trace = tmp_path / "t.jsonl"
    done = toolcall("run", "--quiet", "--trace", str(trace), question, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "toolcall: error: the question is not UTF-8 text (a bad byte at character 1); "
        "is the terminal's encoding UTF-8?\n"
    )
    assert '"input_rejected"' in trace.read_text(encoding="utf-8")


def test_the_library_refuses_an_empty_question_as_the_command_line_does() -> None:
    import toolcall_cli as library
    from toolcall_cli.events import Notice, RunFinished

    events = list(library.ask("   ", tools=[]))
    assert [type(event) for event in events] == [Notice, RunFinished]
    assert isinstance(events[0], Notice) and events[0].message == "the question is empty"
    assert isinstance(events[1], RunFinished) and events[1].stop_reason == "input_rejected"
