"""Where an API key may go, and how URLs and keys are shown: through `toolcall run` and
`toolcall config show` against a real server on 127.0.0.1 that records what it received."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai import Answer, FakeOpenAI, completion
from typer.testing import CliRunner

from toolcall_cli.app._model_choice import ModelChoice, get_model
from toolcall_cli.cli import app
from toolcall_cli.config import ConfigError, load_config, resolve
from toolcall_cli.models.openai_compat import OpenAICompatModel

OPENAI_KEY = "sk-openai-SECRET-0123456789"
DEEPSEEK_KEY = "sk-deepseek-SECRET-0123456789"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        fake.answers += [Answer(json_body=completion("hello")) for _ in range(3)]
        yield fake


def toolcall(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a bug in the command: its own traceback says more
    return result.exit_code, result.stdout, result.stderr


def port_of(server: FakeOpenAI) -> int:
    return int(server.base_url.rsplit(":", 1)[1].split("/")[0])


def authorizations(server: FakeOpenAI) -> list[str | None]:
    return [headers.get("authorization") for headers in server.headers]


# --- the key never goes to a host its source does not vouch for --------------------------------

CRAFTED = [
    "http://127.0.0.1:{port}?@api.openai.com/v1",
    "http://127.0.0.1:{port}/v1?@api.openai.com",
    "http://api.openai.com@127.0.0.1:{port}/v1",
    "http://api.openai.com:443@127.0.0.1:{port}/v1",
    "http://127.0.0.1:{port}/api.openai.com/v1",
    "http://127.0.0.1:{port}/v1?next=https://api.openai.com/v1",
    "HTTP://127.0.0.1:{port}/v1",
]


@pytest.mark.parametrize("crafted", CRAFTED)
def test_the_openai_key_never_reaches_a_crafted_base_url(server: FakeOpenAI, crafted: str) -> None:
    url = crafted.format(port=port_of(server))
    code, out, err = toolcall(
        "run", "hi", "--model", "m", "--base-url", url, "-q", env={"OPENAI_API_KEY": OPENAI_KEY}
    )
    assert server.headers, "the request reached the loopback server"
    # (user info in a URL goes as Basic auth, which httpx sends: that is not the key)
    assert not any(OPENAI_KEY in value for h in server.headers for value in h.values())
    assert OPENAI_KEY not in out + err
    assert code == 0 and out.strip() == "hello", err


@pytest.mark.parametrize(
    "crafted", ["http://127.0.0.1:{port}#@api.openai.com/v1", "http://127.0.0.1:{port}/v1#x"]
)
def test_a_base_url_with_a_fragment_is_a_usage_error(server: FakeOpenAI, crafted: str) -> None:
    url = crafted.format(port=port_of(server))
    code, out, err = toolcall(
        "run", "hi", "--model", "m", "--base-url", url, env={"OPENAI_API_KEY": OPENAI_KEY}
    )
    assert code == 2 and err.count("\n") == 1 and "fragment" in err, err
    assert server.headers == []
    assert OPENAI_KEY not in out + err


def test_the_openai_key_goes_where_openai_base_url_points(server: FakeOpenAI) -> None:
    env = {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": server.base_url}
    code, out, err = toolcall("run", "hi", "--model", "m", "-q", env=env)
    assert code == 0, err
    assert authorizations(server) == [f"Bearer {OPENAI_KEY}"]
    assert OPENAI_KEY not in out + err


def test_the_same_host_spelled_in_capitals_is_the_same_host(server: FakeOpenAI) -> None:
    env = {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": server.base_url}
    shouted = server.base_url.replace("http://", "HTTP://").replace("/v1", "/v1/")
    code, _, err = toolcall("run", "hi", "--model", "m", "--base-url", shouted, "-q", env=env)
    assert code == 0, err
    assert authorizations(server) == [f"Bearer {OPENAI_KEY}"]


def test_openai_base_url_does_not_vouch_for_another_port(server: FakeOpenAI) -> None:
    other = f"http://127.0.0.1:{port_of(server) + 1}/v1"
    env = {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": other}
    code, _, err = toolcall(
        "run", "hi", "--model", "m", "--base-url", server.base_url, "-q", env=env
    )
    assert code == 0, err
    assert authorizations(server) == [None]


@pytest.mark.parametrize(
    ("profile", "env"),
    [
        ("openai", {"OPENAI_API_KEY": OPENAI_KEY}),
        ("deepseek", {"DEEPSEEK_API_KEY": DEEPSEEK_KEY, "OPENAI_API_KEY": OPENAI_KEY}),
    ],
)
def test_a_profile_key_stays_with_the_profile_host(
    server: FakeOpenAI, profile: str, env: dict[str, str]
) -> None:
    code, out, err = toolcall(
        "run", "hi", "-p", profile, "-m", "m", "--base-url", server.base_url, "-q", env=env
    )
    assert code == 0, err
    assert authorizations(server) == [None]
    assert OPENAI_KEY not in out + err and DEEPSEEK_KEY not in out + err


def test_a_config_profile_key_goes_to_its_own_host_only(server: FakeOpenAI, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[profiles.box]\nbase_url = "{server.base_url}"\nkey_env = "BOX_KEY"\nmodel = "q"\n'
        '[profiles.far]\nbase_url = "http://far.example/v1"\nkey_env = "BOX_KEY"\nmodel = "q"\n',
        encoding="utf-8",
    )
    env = {"TOOLCALL_CONFIG": str(config), "BOX_KEY": "box-SECRET-123456"}
    assert toolcall("run", "hi", "-p", "box", "-q", env=env)[0] == 0
    assert toolcall("run", "hi", "-p", "far", "--base-url", server.base_url, "-q", env=env)[0] == 0
    assert authorizations(server) == ["Bearer box-SECRET-123456", None]


def test_an_api_key_flag_goes_wherever_it_is_told(server: FakeOpenAI) -> None:
    code, out, err = toolcall(
        "run", "hi", "-m", "m", "--base-url", server.base_url, "--api-key", "flag-SECRET-1234", "-q"
    )
    assert code == 0, err
    assert authorizations(server) == ["Bearer flag-SECRET-1234"]
    assert "flag-SECRET" not in out + err


@pytest.mark.parametrize(
    ("base_url", "sent"),
    [
        ("https://api.openai.com/v1", True),
        ("HTTPS://API.OPENAI.COM/v1/", True),
        ("https://api.openai.com:443/v1", True),
        ("https://api.openai.com./v1", True),  # the same DNS name, fully qualified
        ("http://api.openai.com/v1", False),  # never in clear text
        ("https://api.openai.com:8443/v1", False),
        ("https://api.openai.com.evil.com/v1", False),
        ("https://evil.com/api.openai.com/v1", False),
        ("https://api.openai.com@evil.com/v1", False),
        ("https://evil.com?@api.openai.com/v1", False),
        ("https://evil.com#@api.openai.com/v1", False),
        ("https://evil.com:443#@api.openai.com:443/v1", False),
        ("https://xn--pi-openai-.com/v1", False),
        ("not a url at all", False),
        ("https://api.openai.com:99999/v1", False),
    ],
)
def test_the_openai_key_decision_reads_the_url_with_a_real_parser(
    base_url: str, sent: bool
) -> None:
    resolved = resolve(flags={"model": "m", "base_url": base_url}, environ={"OPENAI_API_KEY": "k"})
    assert (resolved.api_key == "k") is sent


@pytest.mark.parametrize(
    ("base_url", "sent"),
    [
        ("https://api.openai.com/v1", True),
        # httpx reads `evil.com\` as user info: the request does go to api.openai.com
        ("https://evil.com\\@api.openai.com/v1", True),
        ("https://api.openai.com\\@evil.com/v1", False),
        ("https://evil.com%40api.openai.com/v1", False),
        ("https://api.openai.com%2eevil.com/v1", False),
    ],
)
def test_the_key_decision_and_the_request_agree_on_the_host(base_url: str, sent: bool) -> None:
    """Whatever the parser makes of an odd URL, the key goes only where the request goes."""
    resolved = resolve(flags={"model": "m", "base_url": base_url}, environ={"OPENAI_API_KEY": "k"})
    assert (resolved.api_key == "k") is sent
    choice = ModelChoice(name="m", base_url=resolved.base_url, api_key=resolved.api_key)
    model = get_model(choice)
    assert isinstance(model, OpenAICompatModel)
    try:
        target = (model.url.scheme, model.url.host, model.url.port)
    finally:
        model.close()
    assert (target == ("https", "api.openai.com", None)) is sent


def test_a_profile_key_follows_its_own_host_on_any_path() -> None:
    env = {"DEEPSEEK_API_KEY": DEEPSEEK_KEY}
    same = resolve(
        flags={"profile": "deepseek", "base_url": "https://API.deepseek.com/beta"}, environ=env
    )
    assert same.api_key == DEEPSEEK_KEY
    other = resolve(
        flags={"profile": "deepseek", "base_url": "https://api.deepseek.com.evil/v1"}, environ=env
    )
    assert other.api_key is None


def test_config_defaults_base_url_gets_no_openai_key(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[defaults]\nbase_url = "http://box:8000/v1"\nmodel = "q"\n', encoding="utf-8")
    resolved = resolve(flags={}, environ={"OPENAI_API_KEY": "k"}, config=load_config(path))
    assert resolved.base_url == "http://box:8000/v1" and resolved.api_key is None


# --- a malformed key is a usage error that says what is wrong, never the key ---------------------


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        (OPENAI_KEY + "\n", "ends with a newline"),
        (OPENAI_KEY + "\r\n", "ends with a newline"),
        (" " + OPENAI_KEY, "starts with a space"),
        (OPENAI_KEY + " ", "ends with a space"),
        (OPENAI_KEY[:8] + " " + OPENAI_KEY[8:], "contains a space"),
        (OPENAI_KEY[:8] + "\t" + OPENAI_KEY[8:], "contains a tab"),
        (OPENAI_KEY[:8] + "\x1b" + OPENAI_KEY[8:], "contains a control character"),
        (OPENAI_KEY[:8] + "\x7f" + OPENAI_KEY[8:], "contains a control character"),
        (OPENAI_KEY[:8] + "é" + OPENAI_KEY[8:], "contains a non-ASCII character"),
        (OPENAI_KEY[:8] + "\u200b" + OPENAI_KEY[8:], "contains a non-ASCII character"),
    ],
)
def test_a_malformed_key_from_the_environment_is_one_clear_line(
    server: FakeOpenAI, key: str, problem: str
) -> None:
    env = {"OPENAI_API_KEY": key, "OPENAI_BASE_URL": server.base_url}
    code, out, err = toolcall("run", "hi", "--model", "m", env=env)
    assert code == 2, err
    assert err == f"toolcall: error: the API key from $OPENAI_API_KEY {problem}\n"
    assert OPENAI_KEY[8:] not in out + err
    assert server.headers == []


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("sk-ü-123456789", "contains a non-ASCII character"),
        ("sk-\x00-123456789", "contains a control character"),
    ],
)
def test_a_malformed_key_flag_names_the_flag(server: FakeOpenAI, key: str, problem: str) -> None:
    code, _, err = toolcall("run", "hi", "-m", "m", "--base-url", server.base_url, "--api-key", key)
    assert code == 2 and f"the API key from --api-key {problem}" in err
    assert "123456789" not in err


def test_a_malformed_key_in_a_profile_variable_names_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"\$DEEPSEEK_API_KEY ends with a newline"):
        resolve(flags={"profile": "deepseek"}, environ={"DEEPSEEK_API_KEY": "sk-123456789\n"})


def test_a_malformed_key_that_is_not_used_does_not_stop_an_offline_run() -> None:
    code, out, err = toolcall("run", "What's 2+3?", "-q", env={"OPENAI_API_KEY": "sk-x\n"})
    assert code == 0 and "5" in out, err


# --- the URL shown is the real one, with credentials masked --------------------------------------


def show(*args: str, env: dict[str, str] | None = None) -> str:
    code, out, err = toolcall("config", "show", *args, env=env)
    assert code == 0, err
    return next(line for line in out.splitlines() if line.startswith("base_url"))


def test_config_show_masks_credentials_and_query_values() -> None:
    line = show(
        "-m", "m", "--base-url", "http://user:pw-SECRET@127.0.0.1:8/v1?api-version=2024&key=sk-Q"
    )
    assert "http://****@127.0.0.1:8/v1?api-version=****&key=****" in line
    assert "SECRET" not in line and "sk-Q" not in line


@pytest.mark.parametrize(
    ("base_url", "shown"),
    [
        ("http://127.0.0.1:8?@api.openai.com/v1", "http://127.0.0.1:8/?****"),
        ("http://api.openai.com@127.0.0.1:8/v1", "http://****@127.0.0.1:8/v1"),
        ("HTTP://Example.COM:80/v1", "http://example.com/v1"),
        ("http://[::1]:8/v1", "http://[::1]:8/v1"),
    ],
)
def test_config_show_names_the_real_host(base_url: str, shown: str) -> None:
    line = show("-m", "m", "--base-url", base_url)
    assert line.split()[1] == shown


def test_an_error_naming_the_endpoint_shows_the_real_host_masked(refusing_port: int) -> None:
    port = refusing_port
    url = f"http://u:pw-SECRET@127.0.0.1:{port}/v1?key=q-SECRET"
    code, out, err = toolcall("run", "hi", "-m", "m", "--base-url", url, "-q")
    assert code == 1
    assert f"http://****@127.0.0.1:{port}/v1?key=****" in err
    assert "SECRET" not in out + err


def test_a_query_string_is_kept_after_the_path(server: FakeOpenAI) -> None:
    url = server.base_url + "/?api-version=2024-02-01"
    code, _, err = toolcall("run", "hi", "-m", "m", "--base-url", url, "-q")
    assert code == 0, err
    assert server.paths == ["/v1/chat/completions?api-version=2024-02-01"]


def test_reprs_never_show_url_credentials() -> None:
    choice = ModelChoice(name="m", base_url="http://u:pw-SECRET@h/v1?key=q-SECRET", api_key="k")
    assert "SECRET" not in repr(choice)
    model = get_model(choice)
    assert isinstance(model, OpenAICompatModel)
    try:
        assert "SECRET" not in repr(model.endpoint)
    finally:
        model.close()


@pytest.mark.parametrize(
    ("env", "args", "needle"),
    [
        ({}, ["--base-url", "https://xn--pi-openai-.com/v1"], "--base-url 'https://xn--pi"),
        ({}, ["--base-url", "http://127.0.0.1:8/v1 "], "contains a space"),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:8/v1\n"}, [], "$OPENAI_BASE_URL"),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:8/v1#x"}, [], "$OPENAI_BASE_URL"),
        ({}, ["-p", "ollama", "--base-url", "ftp://x/v1"], "must be an http(s) URL"),
        # Quoted as typed, not rebuilt into 'localhost://11434/v1'; credentials still masked.
        ({}, ["--base-url", "localhost:11434/v1"], "--base-url 'localhost:11434/v1' must be"),
        ({}, ["--base-url", "u:pw-SECRET@h:8/v1"], "--base-url '****@h:8/v1' must be"),
    ],
)
def test_a_base_url_that_cannot_be_used_is_a_usage_error_naming_its_source(
    env: dict[str, str], args: list[str], needle: str
) -> None:
    code, _, err = toolcall("run", "hi", "-m", "m", *args, env=env)
    assert code == 2 and err.count("\n") == 1 and needle in err, err


def test_an_unusable_openai_base_url_does_not_stop_an_offline_run() -> None:
    code, out, err = toolcall("run", "What's 2+3?", "-q", env={"OPENAI_BASE_URL": "http://x\n"})
    assert code == 0 and "5" in out, err
