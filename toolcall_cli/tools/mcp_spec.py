"""Which MCP servers a session uses: from `--mcp 'COMMAND ARGS'` and `[mcp.servers.NAME]`.

Only descriptions live here, so the config file and the flags can be read without importing the
`mcp` SDK (it is imported when a server is started: see mcp_servers).
"""

from __future__ import annotations

import os
import re
import shlex
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from toolcall_cli.keys import masked, redact
from toolcall_cli.tools.schema import TOOL_NAME

PREFIX_SEPARATOR = "__"
"""Between a server's name and its tool's when names clash: `time__get_current_time`."""

START_TIMEOUT_ENV = "TOOLCALL_MCP_TIMEOUT"
DEFAULT_START_TIMEOUT = 15.0
"""Seconds a server has to start, initialise and list its tools."""

SERVER_KEYS = ("command", "args", "env", "url")


class McpSpecError(ValueError):
    """A server description that cannot be used; its message is one line."""


@dataclass(frozen=True)
class ServerSpec:
    """One MCP server: a command run over stdio, or a streamable-HTTP URL."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    """Variables set over toolcall's own environment for the server's process."""
    url: str | None = None

    @property
    def where(self) -> str:
        """The command line or the URL, as a user would recognise it."""
        if self.url is not None:
            from toolcall_cli.keys import display_url  # a URL's credentials are never shown

            return display_url(self.url)
        return shlex.join([self.command or "", *shown_args(self.args)])

    def environment(self, base: Mapping[str, str] = os.environ) -> dict[str, str]:
        """The server process's environment: the few variables of ours a program needs to run
        (INHERITED), with the server's own variables over them. Never the rest of ours: it
        holds the user's API keys, and a server is somebody else's code."""
        inherited = {name: base[name] for name in INHERITED if name in base}
        return {**inherited, **dict(self.env)}

    def traced(self) -> dict[str, Any]:
        """What a trace header records: env values masked like keys (they often hold one)."""
        from toolcall_cli.keys import display_url

        if self.url is not None:
            return {"name": self.name, "url": display_url(self.url)}
        env = {key: masked(value) for key, value in self.env}
        args = shown_args(self.args)
        return {"name": self.name, "command": self.command, "args": args, "env": env}


INHERITED = (
    *("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"),  # what the mcp SDK passes itself
    *("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"),  # how text and time read, where temp goes
    *("SYSTEMROOT", "APPDATA", "USERPROFILE", "TEMP"),  # what a Windows process needs to start
)
"""Variables of toolcall's environment a server gets; anything else it needs goes in its
`env` table. The mcp SDK passes a list like this by default; giving the whole environment, as
this once did, handed every server the user's OPENAI_API_KEY and the like."""


_SECRET_FLAG = re.compile(r"key|token|secret|passw|auth|credential", re.IGNORECASE)


def shown_args(args: Sequence[str]) -> list[str]:
    """A server's arguments as traces and messages show them: the value of a flag named like a
    secret (`--api-key VALUE`, `--token=VALUE`) and anything shaped like a key are masked. Many
    servers take their token on the command line."""
    shown: list[str] = []
    for i, arg in enumerate(args):
        flag, equals, value = arg.partition("=")
        if arg.startswith("-") and equals and _SECRET_FLAG.search(flag):
            shown.append(f"{flag}={masked(value)}")
        elif i and _secret_flag(args[i - 1]):
            shown.append(masked(arg))
        else:
            shown.append(redact(arg, ()))
    return shown


def _secret_flag(arg: str) -> bool:
    """A flag named like a secret whose value is the next argument (`--api-key VALUE`)."""
    return arg.startswith("-") and "=" not in arg and bool(_SECRET_FLAG.search(arg))


def server_from_flag(text: str) -> ServerSpec:
    """`--mcp 'mcp-server-time --local-timezone Asia/Tokyo'`: split as a shell would."""
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise McpSpecError(f"--mcp {text!r}: {error}") from None
    if not words:
        raise McpSpecError("--mcp needs a command, e.g. --mcp 'mcp-server-time'")
    return ServerSpec(name=name_from_words(words), command=words[0], args=tuple(words[1:]))


RUNNERS = {"python", "python3", "node", "npx", "uvx", "uv", "pipx", "bunx", "deno", "docker"}
"""Commands that run the server named after them: `uvx mcp-server-fetch` is the fetch server."""


def name_from_words(words: list[str]) -> str:
    """The server's name from its command line: the command's, or for a runner (python, npx,
    uvx...) its first argument that is not an option."""
    command = _base(words[0])
    if re.sub(r"[0-9.]+$", "", command) in RUNNERS:
        named = [word for word in words[1:] if not word.startswith("-") and word != "run"]
        if named:
            return name_from_command(named[0])
    return name_from_command(words[0])


def _base(path: str) -> str:
    return os.path.basename(path.rstrip("/\\")) or path


def name_from_command(command: str) -> str:
    """`mcp-server-time` → `time`, `/opt/bin/github-mcp` → `github`, `fixture_server.py` →
    `fixture`: the file name without `.py` and the like, and the `mcp-server-`, `mcp-`,
    `server-`, `-mcp` and `-server` affixes."""
    name = re.sub(r"\.(py|js|mjs|ts|exe)$", "", _base(command))
    for prefix in ("mcp-server-", "mcp_server_", "mcp-", "mcp_", "server-", "server_"):
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
            break
    for suffix in ("-mcp-server", "_mcp_server", "-mcp", "_mcp", "-server", "_server"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            break
    return safe_name(name).replace(PREFIX_SEPARATOR, "_") or "mcp"


def safe_name(text: str) -> str:
    """`text` with what a tool name may not hold turned into `_`, cut to 64 characters."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", text)[:64]


def tool_names(listed: Iterable[str]) -> dict[str, str]:
    """Each tool name the servers listed, as a model may be sent it. Names that only differ in
    what a tool name may not hold (查询库存 and 删除订单 are both `____`, two long names cut
    alike) each get a mark of the name they had, so they stay two tools. A name that needed no
    change keeps it (`a_b` beside `a.b`): the servers' prefixes tell two such apart."""
    safe = {name: safe_name(name) for name in listed}
    alike = Counter(safe.values())
    return {
        name: own if alike[own] == 1 or own == name else _marked(name, own)
        for name, own in safe.items()
    }


def _marked(name: str, own: str) -> str:
    mark = f"{zlib.crc32(name.encode('utf-8', 'replace')):08x}"
    return f"{own[: 64 - len(mark) - 1]}_{mark}"


def server_from_table(name: str, table: Any) -> ServerSpec:
    """A `[mcp.servers.NAME]` table: `command` (with `args` and `env`) or `url`."""
    table = _checked_table(name, table)
    if table.get("url") is not None:
        return _url_server(name, table)
    return _command_server(name, table)


def _checked_table(name: str, table: Any) -> dict[str, Any]:
    """The table, once its keys and the server's name are ones a server can be started from."""
    if not isinstance(table, dict):
        raise McpSpecError("must be a table with command or url")
    unknown = sorted(set(table) - set(SERVER_KEYS))
    if unknown:
        raise McpSpecError(
            f"has unknown key(s) {', '.join(unknown)}; it takes {', '.join(SERVER_KEYS)}"
        )
    if (table.get("command") is None) == (table.get("url") is None):
        raise McpSpecError("needs either command (a stdio server) or url (streamable HTTP)")
    if not TOOL_NAME.fullmatch(name) or PREFIX_SEPARATOR in name:
        raise McpSpecError(
            "its name must be 1-64 letters, digits, _ or - (no `__`): it prefixes tool names"
        )
    return table


def _url_server(name: str, table: dict[str, Any]) -> ServerSpec:
    url = table["url"]
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise McpSpecError(f"url must be an http:// or https:// URL, not {url!r}")
    if "args" in table or "env" in table:
        raise McpSpecError("args and env go with command; a url server takes neither")
    return ServerSpec(name=name, url=url)


def _command_server(name: str, table: dict[str, Any]) -> ServerSpec:
    command = table["command"]
    if not isinstance(command, str) or not command.strip():
        raise McpSpecError("command must be a non-empty string")
    args = table.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise McpSpecError("args must be a list of strings")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise McpSpecError("env must be a table of strings")
    return ServerSpec(name=name, command=command, args=tuple(args), env=tuple(sorted(env.items())))


def named_apart(servers: Iterable[ServerSpec]) -> list[ServerSpec]:
    """The servers, a repeated name numbered (`time`, `time-2`) so each prefix is its own."""
    seen: set[str] = set()
    named: list[ServerSpec] = []
    for server in servers:
        name, n = server.name, 1
        while name in seen:
            n += 1
            name = f"{server.name[:60]}-{n}"
        seen.add(name)
        named.append(server if name == server.name else replace(server, name=name))
    return named


def start_timeout(environ: Mapping[str, str] = os.environ) -> float:
    """$TOOLCALL_MCP_TIMEOUT, else 15 s; a value that is not a positive number is ignored."""
    text = environ.get(START_TIMEOUT_ENV, "")
    try:
        value = float(text)
    except ValueError:
        return DEFAULT_START_TIMEOUT
    return value if 0 < value < 86_400 else DEFAULT_START_TIMEOUT


@dataclass(frozen=True)
class ToolPolicyHints:
    """What a server's annotations say about one tool, as toolcall's policy."""

    dangerous: bool = False
    permission: str = "write"
    cacheable: bool = False


def policy_from_annotations(annotations: Any) -> ToolPolicyHints:
    """MCP annotations (hints, which a server may get wrong) onto toolcall's policy.

    - readOnlyHint → the "read" permission (it runs under --allow read); otherwise "write".
    - destructiveHint → dangerous (asks first), only when the server says so: the spec's
      default (true for a tool that is not read-only) would make every unannotated tool ask,
      and a run that cannot ask would then decline them all. `--allow read` keeps such tools
      out for a user who wants that.
    - cacheable: toolcall's cache hands a repeated call (same arguments, same run) the earlier
      result, so it must only hold for a tool whose answer cannot change and whose repeat does
      nothing new. openWorldHint (true by default) means the answer comes from an outside world
      that changes; idempotentHint false (the default) means a repeat acts again (a second
      message sent), so the model must get a real second call. Here the spec's defaults are
      taken: a wrongly reused result is silent and wrong, a needless second call only costs
      time. A read-only tool does nothing on a repeat, so it counts as idempotent.
    """
    read_only = bool(getattr(annotations, "read_only_hint", None))
    destructive = bool(getattr(annotations, "destructive_hint", None)) and not read_only
    idempotent = bool(getattr(annotations, "idempotent_hint", None)) or read_only
    open_world = getattr(annotations, "open_world_hint", None)
    open_world = True if open_world is None else bool(open_world)
    return ToolPolicyHints(
        dangerous=destructive,
        permission="read" if read_only else "write",
        cacheable=idempotent and not open_world,
    )
