"""Sampling settings (--temperature, --top-p, --seed, and --max-tokens): sent in the request
body only when set, checked wherever they come from, resolved flags > environment > profile,
and recorded in the run's first event and the view's header."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion
from in_process import toolcall

SAMPLING_FIELDS = ("temperature", "top_p", "seed", "max_tokens")


def answered_by_server(
    tmp_path: Path, *flags: str, env: dict[str, str | None] | None = None
) -> dict[str, Any]:
    """Run one question against a real server on 127.0.0.1; the request body it received."""
    with FakeOpenAI() as server:
        server.answers.append(Answer(json_body=completion("Forty-two.")))
        done = toolcall(
            "run", "hi", "--base-url", server.base_url, "--model", "m", "-q", *flags,
            cwd=tmp_path, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        (body,) = server.requests
    body_: dict[str, Any] = body
    return body_


@pytest.mark.parametrize("strategy", ["regex", "schema", "stream"])
def test_the_body_carries_the_sampling_flags_when_given(tmp_path: Path, strategy: str) -> None:
    flags = ("--temperature", "0", "--top-p", "0.9", "--seed", "7", "--max-tokens", "64")
    body = answered_by_server(tmp_path, *flags, "-s", strategy)
    assert (body["temperature"], body["top_p"], body["seed"], body["max_tokens"]) == (0, 0.9, 7, 64)


def test_the_body_carries_no_sampling_fields_when_none_is_set(tmp_path: Path) -> None:
    body = answered_by_server(tmp_path)
    assert not set(SAMPLING_FIELDS) & set(body), body


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--temperature", "2.5"), "--temperature must be from 0 to 2"),
        (("--temperature", "-0.1"), "--temperature must be from 0 to 2"),
        (("--temperature", "nan"), "--temperature must be a number"),
        (("--top-p", "0"), "--top-p must be above 0 and at most 1"),
        (("--top-p", "1.01"), "--top-p must be above 0 and at most 1"),
        (("--top-p", "inf"), "--top-p must be a number"),
        (("--seed", "-1"), "--seed must be a whole number from 0"),
        (("--max-tokens", "0"), "--max-tokens must be a whole number from 1"),
    ],
)
def test_a_value_out_of_range_is_a_one_line_usage_error(
    tmp_path: Path, flags: tuple[str, str], named: str
) -> None:
    done = toolcall("run", "hi", *flags, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("toolcall: error: "), done.stderr
    assert named in lines[0]
    assert "Traceback" not in done.stderr + done.stdout


def test_an_environment_variable_that_is_not_a_number_is_a_usage_error(tmp_path: Path) -> None:
    done = toolcall("run", "hi", cwd=tmp_path, env={"TOOLCALL_TEMPERATURE": "warm"})
    assert done.returncode == 2
    assert (
        done.stderr.strip() == "toolcall: error: $TOOLCALL_TEMPERATURE must be a number, not 'warm'"
    )


def write_profile(tmp_path: Path, base_url: str, extra: str) -> Path:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.local]\nbase_url = "{base_url}"\nmodel = "m"\n{extra}\n', encoding="utf-8"
    )
    return config


def test_a_profile_sets_sampling_and_flags_and_environment_come_first(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        config = write_profile(
            tmp_path, server.base_url, "temperature = 0\ntop_p = 0.5\nseed = 3\nmax_tokens = 99"
        )
        server.answers += [Answer(json_body=completion("ok")) for _ in range(2)]
        env: dict[str, str | None] = {"TOOLCALL_CONFIG": str(config)}
        from_profile = toolcall("run", "hi", "-p", "local", "-q", cwd=tmp_path, env=env)
        env["TOOLCALL_TOP_P"] = "0.8"
        env["TOOLCALL_MAX_TOKENS"] = "512"
        overridden = toolcall(
            "run", "hi", "-p", "local", "-q", "--temperature", "1.2", cwd=tmp_path, env=env
        )
        assert (from_profile.returncode, overridden.returncode) == (0, 0), overridden.stderr
        first, second = server.requests
    assert (first["temperature"], first["top_p"], first["seed"], first["max_tokens"]) == (
        0,
        0.5,
        3,
        99,
    )
    assert (second["temperature"], second["top_p"], second["seed"], second["max_tokens"]) == (
        1.2, 0.8, 3, 512,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("temperature = 3", "temperature must be from 0 to 2"),
        ('top_p = "high"', "top_p must be a number"),
        ("seed = 1.5", "seed must be a whole number"),
        ("max_tokens = 2.5", "max_tokens must be a whole number"),
    ],
)
def test_a_bad_profile_value_is_a_usage_error(tmp_path: Path, line: str, problem: str) -> None:
    config = write_profile(tmp_path, "http://127.0.0.1:9/v1", line)
    done = toolcall("run", "hi", "-p", "local", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(config)})
    assert done.returncode == 2
    assert problem in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_run_records_its_sampling_in_json_and_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    done = toolcall(
        "run", "What's 12*5+3?", "--json", "--trace", str(trace), "--temperature", "0.2",
        "--seed", "5", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    started = json.loads(done.stdout.splitlines()[0])
    assert started["kind"] == "run_started"
    assert started["sampling"] == {"temperature": 0.2, "seed": 5}
    header, traced = map(json.loads, trace.read_text(encoding="utf-8").splitlines()[:2])
    assert traced["sampling"] == {"temperature": 0.2, "seed": 5}
    assert header["settings"]["sampling"] == {"temperature": 0.2, "seed": 5}


def test_the_header_shows_the_sampling(tmp_path: Path) -> None:
    done = toolcall("run", "What's 12*5+3?", "--top-p", "0.7", "--seed", "1234567", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0]
    assert "model offline, strategy regex, top_p 0.7, seed 1234567, tools:" in header


def test_the_prompt_command_shows_the_sampling_it_would_send(tmp_path: Path) -> None:
    done = toolcall("prompt", "hi", "--temperature", "0", "--seed", "9", cwd=tmp_path)
    body = json.loads(done.stdout)
    assert (body["temperature"], body["seed"]) == (0, 9) and "top_p" not in body


def test_the_seed_still_seeds_the_offline_model_alone(tmp_path: Path) -> None:
    """--seed keeps its first job: the offline model's faults are drawn from it (and the body's
    own `seed` field does not change the draws)."""
    runs = [
        toolcall(
            "run", "What's 12*5+3?", "--json", "--faults", "single_quotes", "--fault-rate",
            "0.5", "--seed", str(seed), cwd=tmp_path,
        ).stdout
        for seed in range(6)
    ]  # fmt: skip
    assert len(set(runs)) > 1, "the seed changed nothing"


def test_config_show_says_where_each_sampling_setting_comes_from(tmp_path: Path) -> None:
    config = write_profile(tmp_path, "http://127.0.0.1:9/v1", "temperature = 0.3")
    env = {"TOOLCALL_CONFIG": str(config), "TOOLCALL_SEED": "11"}
    done = toolcall("config", "show", "-p", "local", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "temperature 0.3  [profile local]" in lines
    assert "seed        11  [env TOOLCALL_SEED]" in lines
    assert "top_p       (not set)  [-]" in lines


def test_the_live_header_shows_the_sampling() -> None:
    from test_render import render

    from toolcall_cli.events import RunStarted

    start = RunStarted(
        question="q",
        model="m",
        strategy="regex",
        tools=(),
        sampling={"temperature": 0.5, "seed": 4000000},
    )
    shown = render("live", [start])
    assert "strategy regex  ·  temperature 0.5  ·  seed 4000000" in shown
    assert "top_p" not in shown


def test_switching_strategy_in_a_chat_keeps_the_sampling_and_the_prompt_style() -> None:
    """/strategy builds the new strategy from the session's settings: what the flags chose
    (sampling, prompt style) must survive the switch."""
    from toolcall_cli.events import IterationStarted, RunStarted
    from toolcall_cli.offline import OfflineModel
    from toolcall_cli.session import Session
    from toolcall_cli.strategies import get_strategy
    from toolcall_cli.strategies.text_prompt import LIVE_DATA_RULE
    from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
    from toolcall_cli.wire import Sampling

    settings: dict[str, Any] = {"prompt_style": "compact", "sampling": Sampling(temperature=0.1)}
    session = Session(
        model=OfflineModel(),
        strategy=get_strategy("regex", **settings),
        registry=load_tools([bundled_tools_dir()]).registry,
        strategy_settings=settings,
    )
    session.use_strategy("schema")
    events = list(session.ask("What's 12*5+3?"))
    started = next(e for e in events if isinstance(e, RunStarted))
    request = next(e for e in events if isinstance(e, IterationStarted)).request
    assert (started.strategy, started.sampling) == ("schema", {"temperature": 0.1})
    assert request["temperature"] == 0.1 and "tools" in request
    assert LIVE_DATA_RULE in request["messages"][0]["content"]  # the compact style's hint


def test_a_profile_chooses_its_schema_mode_and_the_flag_comes_first(tmp_path: Path) -> None:
    """The llamacpp profile's measured default is JSON-schema output; --schema-mode wins."""

    def body(*args: str, env: dict[str, str | None] | None = None) -> dict[str, Any]:
        done = toolcall("prompt", "hi", *args, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        parsed: dict[str, Any] = json.loads(done.stdout)
        return parsed

    assert body("-p", "llamacpp")["response_format"]["type"] == "json_schema"
    shown = toolcall("config", "show", "-p", "llamacpp", cwd=tmp_path).stdout
    assert "schema_mode json  [profile llamacpp]" in shown
    assert "tools" in body("-p", "llamacpp", "--schema-mode", "tools")
    assert "tools" in body("-p", "openai") and "response_format" not in body("-p", "openai")
    config = write_profile(
        tmp_path, "http://127.0.0.1:9/v1", 'strategy = "schema"\nschema_mode = "required"'
    )
    env: dict[str, str | None] = {"TOOLCALL_CONFIG": str(config)}
    assert body("-p", "local", env=env)["tool_choice"] == "required"
    defaults = tmp_path / "defaults.toml"
    defaults.write_text('[defaults]\nstrategy = "schema"\nschema_mode = "json"\n', "utf-8")
    assert "response_format" in body(env={"TOOLCALL_CONFIG": str(defaults)})
    bad = write_profile(tmp_path, "http://127.0.0.1:9/v1", 'schema_mode = "grammar"')
    done = toolcall("prompt", "hi", "-p", "local", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(bad)})
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "schema_mode" in done.stderr


def test_config_show_says_what_a_llama_cpp_server_takes_where_nothing_was_chosen(
    tmp_path: Path,
) -> None:
    """The settings left unset show as unset, and one line says what a run on a llama.cpp
    server takes for them (the small model's defaults); a setting chosen leaves that line."""
    config = write_profile(tmp_path, "http://127.0.0.1:9/v1", "temperature = 0.3")
    env = {"TOOLCALL_CONFIG": str(config)}
    lines = toolcall("config", "show", "-p", "local", cwd=tmp_path, env=env).stdout.splitlines()
    (said,) = [line.strip() for line in lines if "llama.cpp server" in line]
    assert "max_tokens fitted to the window" in said and "temperature" not in said
    assert "strategy schema json" in said  # the profile chose no strategy
    offline = toolcall("config", "show", cwd=tmp_path, env=env).stdout
    assert "llama.cpp" not in offline  # the offline model takes no such defaults
    widths = {line.index("(not set)") for line in lines if "(not set)" in line}
    assert len(widths) == 1, lines  # one column, however long the key
