"""`kata check` against a kata file that attacks it: raising its limits back, leaving processes
behind in a session of their own, forging the verdict, signalling the CLI, reading secrets.
Each attack is a file a user could be handed; each must end in an honest report.

The checks run twice where the sandbox has two forms: with namespaces (where the machine
allows them; otherwise the same fallback), and with namespaces refused (`Limits(namespace=
False)`), which is what a machine without them gets."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from in_process import Finished, toolcall

from toolcall_cli.kata import CheckRun, Limits, conformance_dir, find_kata, run_check, solution_text

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the kata sandbox is POSIX's")

SECRET = "sk-test-KATA-SECRET-0123456789"


def check(tmp_path: Path, source: str, *flags: str, env: dict[str, str] | None = None) -> Finished:
    path = tmp_path / "mine.py"
    path.write_text(source, encoding="utf-8")
    return toolcall("kata", "check", str(path), *flags, cwd=tmp_path, env=env)


def check_without_namespaces(tmp_path: Path, source: str, kata: str = "parse") -> CheckRun:
    path = tmp_path / "mine.py"
    path.write_text(source, encoding="utf-8")
    return run_check(find_kata(kata), path, conformance_dir(None), Limits(namespace=False))


def sandbox_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(("sandbox:", "limits"))]


PARSE_STUB = "\n\ndef parse_tool_calls(text):\n    return []\n"

# --- the limits are hard -----------------------------------------------------------------------

LIMIT_PROBE = """
import json, resource
found = {}
for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE"):
    which = getattr(resource, name)
    soft, hard = resource.getrlimit(which)
    try:
        resource.setrlimit(which, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        raised = True
    except (ValueError, OSError):
        raised = False
    found[name] = {"soft": soft, "hard": hard, "raised": raised}
open(MARKER, "w").write(json.dumps(found))
"""


def assert_hard(found: dict[str, dict[str, int]], memory_mb: int) -> None:
    assert found, "the probe did not run"
    for name, limit in found.items():
        assert not limit["raised"], f"{name} was raised back: {limit}"
        assert limit["soft"] == limit["hard"], f"{name} is soft: {limit}"
    assert found["RLIMIT_AS"]["hard"] == memory_mb << 20
    assert found["RLIMIT_CPU"]["hard"] == 600
    assert found["RLIMIT_FSIZE"]["hard"] == 64 << 20
    assert 0 < found["RLIMIT_NOFILE"]["hard"] <= 128
    assert found["RLIMIT_CORE"]["hard"] == 0


def test_the_code_cannot_raise_its_limits_and_the_report_states_them(tmp_path: Path) -> None:
    marker = tmp_path / "limits.json"
    probe = f"MARKER = {str(marker)!r}\n{LIMIT_PROBE}{PARSE_STUB}"
    done = check(tmp_path, probe, "--kata", "parse", "--memory", "300")
    assert done.returncode == 1, done.stdout
    assert_hard(json.loads(marker.read_text()), 300)
    lines = sandbox_lines(done.stdout)
    assert lines and lines[0].startswith("sandbox: "), done.stdout
    assert lines[1].startswith("limits (hard: the code cannot raise them): 300 MiB of address")
    assert "600 s of CPU · 64 MiB per file written · 128 open files · no core files" in lines[1]


# --- nothing it starts outlives the check --------------------------------------------------------

LEAVER = """
import os, time
ready_read, ready_write = os.pipe()
if os.fork() == 0:
    os.setsid()  # a session of its own: out of the reach of a process-group kill
    if os.fork() == 0:  # and an orphan, its parent gone
        writer = os.open(FIFO, os.O_WRONLY)
        os.write(writer, b"alive")
        os.write(ready_write, b"x")
        time.sleep(20)
    os._exit(0)
os.read(ready_read, 1)  # the orphan is up before the check goes on
"""


def leaver(tmp_path: Path) -> tuple[str, int]:
    """A kata file that leaves a process behind, and the read end of the FIFO it holds open:
    EOF there once the check is over means every writer, the orphan included, is gone."""
    fifo = tmp_path / "orphan.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    return f"FIFO = {str(fifo)!r}\n{LEAVER}{PARSE_STUB}", reader


def orphan_alive(reader: int) -> bool:
    heard = b""
    try:
        while chunk := os.read(reader, 64):
            heard += chunk
    except BlockingIOError:  # no EOF: a writer is still there
        return True
    finally:
        os.close(reader)
    assert heard == b"alive", "the orphan never started"
    return False


def test_a_process_in_a_session_of_its_own_ends_with_the_check(tmp_path: Path) -> None:
    source, reader = leaver(tmp_path)
    done = check(tmp_path, source, "--kata", "parse")
    assert done.returncode == 1, done.stdout
    assert not orphan_alive(reader)


# --- the verdict is the judge's ----------------------------------------------------------------

FORGED_RECORDS = {
    "all pass": [
        {
            "kind": "battery",
            "conformance": "",
            "coverage": "",
            "cases": [{"category": "single call", "source": "built-in", "name": "forged"}],
        },
        {"kind": "start", "index": 0, "limit": 3},
        {"kind": "result", "index": 0, "outcome": "pass", "expected": "", "got": ""},
        {"kind": "done"},
    ],
    "a result for no case": [
        {"kind": "result", "index": 10**6, "outcome": "pass", "expected": "", "got": ""}
    ],
    "a battery that is not a list": [
        {"kind": "battery", "cases": 5, "conformance": 1, "coverage": 2},
        {"kind": "stopped", "why": "memory", "index": "x"},
    ],
}

WRITES_EVERYWHERE = """
import os
for fd in range(3, 256):  # the results pipe, wherever it is
    try:
        os.write(fd, FORGED)
    except OSError:
        pass
"""


@pytest.mark.parametrize("records", FORGED_RECORDS.values(), ids=FORGED_RECORDS.keys())
def test_lines_written_to_every_descriptor_forge_nothing(
    tmp_path: Path, records: list[object]
) -> None:
    forged = "".join(json.dumps(record) + "\n" for record in records).encode()
    done = check(
        tmp_path, f"FORGED = {forged!r}\n{WRITES_EVERYWHERE}{PARSE_STUB}", "--kata", "parse"
    )
    assert done.returncode == 1, done.stdout
    assert "✓ all" not in done.stdout
    stopped = [line for line in done.stdout.splitlines() if line.startswith("stopped: ")]
    assert stopped == [
        "stopped: the grader process sent what toolcall cannot read (an answer to no request)"
    ], done.stdout


PATCHES_THE_GRADER = """
import sys
import toolcall_cli.kata._battery as battery

def passes(*args, **kwargs):
    return "pass", battery.Verdict(True)

sys.modules["__main__"].run_case = passes  # whatever grades, in this process
battery.agree = lambda expected, got: battery.Verdict(True)
battery.canonical = lambda value: ""
"""


def test_code_that_patches_the_grader_in_its_process_passes_nothing(tmp_path: Path) -> None:
    done = check(tmp_path, PATCHES_THE_GRADER + PARSE_STUB, "--kata", "parse")
    assert done.returncode == 1, done.stdout
    assert "✓ all" not in done.stdout
    assert re.search(r"✗ \d+ of \d+ cases pass", done.stdout), done.stdout


def test_a_loop_that_never_asks_the_model_passes_nothing(tmp_path: Path) -> None:
    lazy = "def agent_loop(chat, tools, question, max_iterations=5, **options):\n"
    done = check(tmp_path, lazy + '    return "another request"\n', "--kata", "loop")
    assert done.returncode == 1, done.stdout
    assert re.search(r"✗ 0 of \d+ cases pass", done.stdout), done.stdout


BAD_RECORDS = [
    "not an object",
    {"kind": "result", "index": 10**6, "outcome": "pass", "expected": "", "got": ""},
    {"kind": "result", "index": True, "outcome": "pass", "expected": "", "got": ""},
    {"kind": "result", "index": 0, "outcome": "passed", "expected": "", "got": ""},
    {"kind": "result", "index": 0, "outcome": "pass", "expected": None, "got": ""},
    {"kind": "battery", "cases": 5, "conformance": 1, "coverage": 2},
    {"kind": "battery", "cases": [{"source": "elsewhere"}], "conformance": "", "coverage": ""},
    {"kind": "stopped", "problem": ["a", "list"]},
    {"kind": "start", "index": 0, "limit": float("nan")},
    {"kind": "start", "index": 0, "limit": "3"},
    {"kind": "all pass"},
]


@pytest.mark.parametrize("record", BAD_RECORDS, ids=[str(r)[:40] for r in BAD_RECORDS])
def test_a_line_the_judge_never_writes_is_refused_not_a_crash(record: object) -> None:
    from toolcall_cli.kata._sandbox import BadRecord, started, take

    check_run = CheckRun(find_kata("parse"), Path("mine.py"))
    take(
        {
            "kind": "battery",
            "conformance": "",
            "coverage": "",
            "cases": [{"category": "single call", "source": "built-in", "name": "one"}],
        },
        check_run,
    )
    with pytest.raises(BadRecord):
        if take(record, check_run) == "start":
            started(record)  # type: ignore[arg-type]


# --- signals from the code end neither the check nor its report --------------------------------


@pytest.mark.parametrize("name", ["SIGTERM", "SIGKILL"])
def test_a_signal_to_its_parent_does_not_end_the_check(tmp_path: Path, name: str) -> None:
    """A real CLI process: on failure, the signal must end that process, not the tests."""
    source = solution_text(find_kata("parse")) + (
        f"\nimport os, signal\nos.kill(os.getppid(), signal.{name})\n"
    )
    path = tmp_path / "kata_parse.py"
    path.write_text(source, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "toolcall_cli", "kata", "check", str(path), "--kata", "parse"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert re.search(r"✓ all \d+ cases pass", done.stdout), done.stdout


# --- no secret reaches the code ----------------------------------------------------------------

SPY = """
import json, os
seen = [name for name, value in os.environ.items() if SECRET in value]
for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            if SECRET.encode() in environ.read():
                seen.append(f"/proc/{pid}/environ")
    except OSError:
        pass
open(MARKER, "w").write(json.dumps({"seen": seen, "names": sorted(os.environ)}))
"""


def test_the_code_gets_an_environment_without_secrets(tmp_path: Path) -> None:
    marker = tmp_path / "environment.json"
    env = {"OPENAI_API_KEY": SECRET, "TOOLCALL_API_KEY": SECRET, "MY_SERVICE_TOKEN": SECRET}
    source = f"SECRET = {SECRET!r}\nMARKER = {str(marker)!r}\n{SPY}{PARSE_STUB}"
    done = check(tmp_path, source, "--kata", "parse", env=env)
    assert done.returncode == 1, done.stdout
    found = json.loads(marker.read_text())
    assert found["seen"] == []
    assert "PATH" in found["names"] and "OPENAI_API_KEY" not in found["names"]


# --- where the machine allows it: no network ----------------------------------------------------


def test_in_its_namespaces_the_code_has_no_network(tmp_path: Path) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    marker = tmp_path / "network.txt"
    probe = (
        f"import socket\ntry:\n"
        f"    socket.create_connection(('127.0.0.1', {listener.getsockname()[1]}), timeout=5)\n"
        f"    reached = 'reached'\nexcept OSError as error:\n    reached = str(error)\n"
        f"open({str(marker)!r}, 'w').write(reached)\n"
    )
    with listener:
        done = check(tmp_path, probe + PARSE_STUB, "--kata", "parse")
    if not any("no network" in line for line in sandbox_lines(done.stdout)):
        pytest.skip("this machine gives the sandbox no network namespace")
    assert marker.read_text() != "reached"


# --- and without namespaces: the fallback holds the same line ----------------------------------


ANCESTORS = """
import os
reached, pid = [], os.getppid()
for _ in range(3):  # its keeper, the judge, the CLI (in namespaces: none of them in sight)
    if pid <= 1:
        break
    for what in ("mem", "environ"):
        try:
            open(f"/proc/{pid}/{what}", "rb").close()
            reached.append(f"{pid}/{what}")
        except OSError:
            pass
    with open(f"/proc/{pid}/stat", "rb") as stat:
        pid = int(stat.read().rsplit(b")", 1)[1].split()[1])
open(REACHED, "w").write(" ".join(reached))
"""


def test_without_namespaces_the_sandbox_still_holds(tmp_path: Path) -> None:
    """Limits raised back, a process left in a session of its own, its keeper signalled, the
    memory of the processes above it opened: the check still ends with a report, nothing of
    the code is left running, and no process above it was within its reach."""
    marker, reached = tmp_path / "limits.json", tmp_path / "reached.txt"
    source, reader = leaver(tmp_path)
    signals = "import os, signal\nos.kill(os.getppid(), signal.SIGTERM)\n"
    attacks = (
        f"MARKER, REACHED = {str(marker)!r}, {str(reached)!r}\n"
        f"{LIMIT_PROBE}\n{ANCESTORS}\n{signals}\n{source}"
    )
    done = check_without_namespaces(tmp_path, attacks)
    assert done.cases and done.problem is None, done.problem
    assert not done.passed  # the stub parser passes nothing, and says so
    assert done.sandbox and not done.sandbox[0].startswith("sandbox: a PID namespace")
    assert_hard(json.loads(marker.read_text()), 1024)
    assert not orphan_alive(reader)
    if sys.platform.startswith("linux"):
        assert reached.read_text() == ""


def test_without_namespaces_killing_its_keeper_still_ends_in_a_report(tmp_path: Path) -> None:
    source = solution_text(find_kata("parse"))
    killer = "\nimport os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
    done = check_without_namespaces(tmp_path, source + killer)
    assert done.passed, done.problem
