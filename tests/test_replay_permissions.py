"""Nothing read from a trace grants a permission. A shared trace is anybody's text: what a replay
may do (--allow, --yes), where it sends the conversation and the tools' results (the base URL)
and which tools it has come from the replaying user's own flags, environment and config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fake_openai import Answer, FakeOpenAI, completion
from in_process import Finished, toolcall

from toolcall_cli.trace import read_trace

ADMIN_PLUGIN = '''
from pathlib import Path

from toolcall_cli import tool

RAN = Path({ran!r})


@tool(permission="admin")
def reboot() -> str:
    """Reboot the machine."""
    RAN.write_text("rebooted", encoding="utf-8")
    return "rebooting"
'''

CALLS_REBOOT = [
    {"tool_calls": [{"name": "reboot", "arguments": {}}]},
    "Done.",
]


def admin_tool(tmp_path: Path) -> Path:
    """./tools.d/reboot.py, an admin tool that leaves a file when it runs; the file's path."""
    ran = tmp_path / "ran"
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "reboot.py").write_text(
        ADMIN_PLUGIN.format(ran=str(ran)), encoding="utf-8"
    )
    return ran


def recorded_reboot(tmp_path: Path, *flags: str) -> Path:
    """A run whose (scripted) model calls the admin tool, recorded."""
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(CALLS_REBOOT), encoding="utf-8")
    trace = tmp_path / "recorded.jsonl"
    done = toolcall(
        "run", "Reboot it.", "-m", "scripted", "--script", str(script), "-s", "schema",
        "--trace", str(trace), "-q", *flags, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return trace


def with_settings(trace: Path, **settings: Any) -> None:
    """The trace's header changed as whoever shared it likes."""
    lines = trace.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["settings"].update(settings)
    trace.write_text(
        "".join(line + "\n" for line in [json.dumps(header), *lines[1:]]), encoding="utf-8"
    )


def replayed(tmp_path: Path, trace: Path, *flags: str) -> tuple[Finished, dict[str, Any]]:
    done = toolcall("replay", str(trace), "--json", "--no-trace", *flags, cwd=tmp_path)
    assert done.returncode in (0, 5), done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return done, data


def results(data: dict[str, Any]) -> list[str]:
    return [
        line
        for item in data["questions"][0]["items"]
        if item["what"] == "results"
        for line in item["replayed"]
    ]


def test_a_trace_that_says_allow_admin_runs_no_admin_tool(tmp_path: Path) -> None:
    ran = admin_tool(tmp_path)
    trace = recorded_reboot(tmp_path)  # --allow write: the call was refused
    assert not ran.exists()
    with_settings(trace, allow="admin")
    done, data = replayed(tmp_path, trace, "--model", "scripted")
    assert not ran.exists(), "an admin tool ran on a trace's word"
    assert done.returncode == 0 and "needs admin permission" in results(data)[0]
    assert "recorded with --allow admin, replayed with --allow write: a trace never grants a " \
           "permission" in data["remarks"]  # fmt: skip


def test_a_recording_made_with_allow_admin_replays_with_the_user_s_own_allow(
    tmp_path: Path,
) -> None:
    ran = admin_tool(tmp_path)
    trace = recorded_reboot(tmp_path, "--allow", "admin")
    assert ran.read_text(encoding="utf-8") == "rebooted"
    ran.unlink()
    done, data = replayed(tmp_path, trace, "--model", "scripted")
    assert not ran.exists()
    assert done.returncode == 5 and "needs admin permission" in results(data)[0]
    # The user's own flag still grants it.
    done, data = replayed(tmp_path, trace, "--model", "scripted", "--allow", "admin")
    assert done.returncode == 0 and ran.exists() and data["remarks"] == []


def test_a_trace_never_chooses_where_a_replay_is_sent(tmp_path: Path) -> None:
    call = '<tool_call>{"name": "calculate", "arguments": {"expression": "2+2"}}</tool_call>'
    with FakeOpenAI() as theirs, FakeOpenAI() as ours:
        theirs.answers += [Answer(json_body=completion(call)), Answer(json_body=completion("ok"))]
        trace = tmp_path / "shared.jsonl"
        done = toolcall(
            "run", "What's 2+2?", "-m", "qwen-test", "--base-url", theirs.base_url,
            "--trace", str(trace), "-q", cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        # No endpoint of the user's own: the replay asks nobody.
        bare = toolcall("replay", str(trace), "--no-trace", cwd=tmp_path)
        assert bare.returncode == 2 and bare.stderr.count("\n") == 1, bare.stderr
        assert "needs an endpoint" in bare.stderr
        # The user's own endpoint (their environment): asked, and the trace's is not.
        ours.answers += [Answer(json_body=completion(call)), Answer(json_body=completion("ok"))]
        done = toolcall(
            "replay", str(trace), "--json", "--no-trace", cwd=tmp_path,
            env={"OPENAI_BASE_URL": ours.base_url},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert len(theirs.requests) == 2 and len(ours.requests) == 2
    remarks = json.loads(done.stdout)["remarks"]
    assert remarks == [
        f"recorded against the endpoint {theirs.base_url}, which is not asked: the base URL "
        "comes from your flags and config, never from a trace"
    ]
    assert (read_trace(trace).header or {})["settings"]["base_url"] == theirs.base_url


def test_a_trace_never_chooses_whose_key_a_replay_spends(tmp_path: Path) -> None:
    admin_tool(tmp_path)
    trace = recorded_reboot(tmp_path)
    # The user has a DeepSeek key for other work; the trace names DeepSeek's built-in profile.
    with_settings(trace, model="deepseek-chat", profile="deepseek")
    env = {"DEEPSEEK_API_KEY": "sk-deepseek-SECRET-1234"}
    done = toolcall("replay", str(trace), "--no-trace", cwd=tmp_path, env=env)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "model 'deepseek-chat' needs an endpoint" in done.stderr
