"""Shared test set-up: no test may reach beyond this machine, and every scripted model's
script is played to its end."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from conformance import DIR_VARIABLE, MISSING_MARK, OUTSIDE_DIR, OUTSIDE_MARK, own_cases
from hypothesis import HealthCheck, settings

from toolcall_cli.models.scripted import Reply, ScriptedModel

# Hypothesis times each example by the wall clock: past its 200 ms deadline an example fails,
# and one that passes when replayed fails the test as Flaky; slow data generation fails a
# health check. A loaded machine does both with no fault in toolcall, and no test here asserts
# a speed (the others already said deadline=None). Hypothesis's own CI profile, loaded where it
# sees a CI variable, does the same; this holds without one, on top of whichever is loaded.
_loaded = settings()  # the profile loaded now: Hypothesis's default, or its CI one
settings.register_profile(
    "toolcall",
    settings(
        _loaded,
        deadline=None,
        suppress_health_check=list(
            dict.fromkeys([*_loaded.suppress_health_check, HealthCheck.too_slow])
        ),
    ),
)
settings.load_profile("toolcall")

_real_connect = socket.socket.connect
_real_getaddrinfo = socket.getaddrinfo


def _is_loopback(host: Any) -> bool:
    if isinstance(host, (bytes, bytearray)):
        host = host.decode()
    if not isinstance(host, str):
        return True  # AF_UNIX paths and the like stay on this machine
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if not _is_loopback(host):
        raise AssertionError(f"test tried to reach the network: {address!r}")
    return _real_connect(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host is not None and not _is_loopback(host):
        raise AssertionError(f"test tried to resolve a network name: {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


def pytest_report_header() -> str:
    """Which real outputs the parser tests read (tests/conformance.py)."""
    own = f"real outputs: {len(own_cases())} of the repository's own (toolcall_cli/data)"
    if OUTSIDE_DIR is None:
        return f"{own}; no outside corpus ({DIR_VARIABLE} unset: its extra checks left out)"
    return f"{own}, and the outside corpus in {OUTSIDE_DIR} ({DIR_VARIABLE})"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Said at the end too (the header is hidden under -q): what the run left out, and why."""
    if OUTSIDE_DIR is None:
        terminalreporter.write_line(
            f"real outputs: the repository's own; the outside corpus's extra checks were left "
            f"out ({DIR_VARIABLE} names no folder)"
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests that read only the outside corpus leave the run when it is not named: they are
    extra checks, not tests skipped for data the repository should hold."""
    outside = [item for item in items if item.get_closest_marker(OUTSIDE_MARK) is not None]
    if outside:
        config.hook.pytest_deselected(items=outside)
        items[:] = [item for item in items if item.get_closest_marker(OUTSIDE_MARK) is None]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test whose data is missing from the outside corpus named (CI) fails, saying why."""
    mark = item.get_closest_marker(MISSING_MARK)
    if mark is not None:
        pytest.fail(str(mark.args[0]), pytrace=False)


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any non-loopback connection or name lookup fails the test (as pydantic-ai's
    ALLOW_MODEL_REQUESTS = False does for models)."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
    yield


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test gets its own config and state dirs (so the traces every run writes never
    land in the user's own) and no provider keys from the developer's shell."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    # The probe of a loopback server answers in milliseconds, but a loaded test machine can take
    # longer than the product's 3 s, and then the window and the server's kind stay unknown.
    monkeypatch.setenv("TOOLCALL_PROBE_TIMEOUT", "60")
    # An MCP server written in Python imports the mcp SDK before it answers: 0.85 s of CPU, but
    # 10-13 s of wall clock while a llama-server held the cores, against the product's 15 s. A
    # test about the start-up timeout sets its own.
    monkeypatch.setenv("TOOLCALL_MCP_TIMEOUT", "120")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("TOOLCALL_STATE_DIR", str(home / "state"))
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "TOOLCALL_MODEL",
        "TOOLCALL_PROFILE",
        "TOOLCALL_STRATEGY",
        "TOOLCALL_CONFIG",
        "TOOLCALL_TEMPERATURE",
        "TOOLCALL_TOP_P",
        "TOOLCALL_SEED",
        "DEEPSEEK_API_KEY",
        "DASHSCOPE_API_KEY",
        # The width of the terminal the suite was started from, where a shell exported it:
        # rich and lint-imports wrap their tables to it (COLUMNS=50 failed a dozen tests that
        # read a table's rows). A test that needs a width sets its own.
        "COLUMNS",
        "LINES",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def scripts_played_to_the_end(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Every ScriptedModel a test makes, directly or through `--model scripted`, must have been
    asked for each of its replies when the test ends: a run that stopped earlier than its script
    expected passes its assertions for the wrong reason. A test about the script itself, which
    never plays it, is marked `script_not_played`; one about telling the user that a run left
    replies unused, `script_left_unused`."""
    made: list[ScriptedModel] = []
    init = ScriptedModel.__init__

    def tracked(self: ScriptedModel, replies: Sequence[Reply], **more: Any) -> None:
        init(self, replies, **more)
        made.append(self)

    monkeypatch.setattr(ScriptedModel, "__init__", tracked)
    yield
    unplayed = ("script_not_played", "script_left_unused")
    if not any(request.node.get_closest_marker(mark) for mark in unplayed):
        for model in made:
            model.assert_complete()


@pytest.fixture
def refusing_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections: bound but not listening, and held for the
    whole test, so no other server (a parallel test's) can be given it meanwhile."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        port: int = holder.getsockname()[1]
        yield port
