"""Where an API key may go, and how keys and URLs may be shown: decided with a real URL parser
(httpx.URL), never by splitting strings. Used by the config, the CLI and the HTTP model alike."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Imported where a URL is parsed: an offline run parses none, and httpx costs ~70 ms to load.
    import httpx

DEFAULT_PORTS = {"http": 80, "https": 443}


_SECRET_SHAPES = re.compile(
    r"(sk-[A-Za-z0-9_\-]{6,}|Bearer\s+[A-Za-z0-9._\-]{6,}|(?<=://)[^/@\s]+:[^/@\s]+(?=@))"
)


def masked(secret: str) -> str:
    """A secret as it may be shown: never more than its last 4 characters (none of a short
    one)."""
    return "****" + secret[-4:] if len(secret) > 8 else "****"


def redact(text: str, secrets: Iterable[str]) -> str:
    """The text with the given secrets, and anything shaped like a key or URL credentials,
    masked."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "****")
    return _SECRET_SHAPES.sub("****", text)


def url_secrets(url: str) -> list[str]:
    """What of a URL may be a credential: its user name, its password and its query values
    (`?api_key=...`); empty for a URL httpx cannot read."""
    import httpx

    try:
        parsed = httpx.URL(url)
        return [parsed.username, parsed.password, *(v for _, v in parsed.params.multi_items())]
    except (httpx.InvalidURL, ValueError):  # idna raises ValueErrors
        return []


def key_problem(key: str) -> str | None:
    """What stops a key from going in an HTTP header, in words that never quote it."""
    if not key.strip():
        return "is blank"
    if key.endswith(("\n", "\r")):
        return "ends with a newline"  # `echo key > file` and `$(cat file)` habits
    unfit = [(index, what) for index, char in enumerate(key) if (what := _unfit(char))]
    if not unfit:
        return None
    index, what = unfit[-1] if unfit[-1][0] == len(key) - 1 else unfit[0]
    if index == len(key) - 1:
        return f"ends with {what}"
    return f"starts with {what}" if index == 0 else f"contains {what}"


def _unfit(char: str) -> str | None:
    names = {" ": "a space", "\t": "a tab", "\n": "a line break", "\r": "a line break"}
    if char in names:
        return names[char]
    if ord(char) < 32 or ord(char) == 127:
        return "a control character"
    if ord(char) > 126:
        return "a non-ASCII character"
    return None


def base_url_problem(url: str) -> str | None:
    """Why a base URL cannot be used, or None. It must be http(s) with a host and a valid port,
    and hold nothing a request could not carry."""
    import httpx

    if any(char.isspace() or not char.isprintable() for char in url):
        return "contains a space, line break or control character"
    if "#" in url:
        # Nothing after a # is sent, so what is written there is not where the request goes.
        return "has a #fragment, which an API URL never has; remove it"
    try:
        parsed = httpx.URL(url)
        host = parsed.host  # decoding checks an xn-- (IDNA) name
    except (httpx.InvalidURL, ValueError) as error:  # idna's errors are ValueErrors
        return f"is not a valid URL: {error}"
    if parsed.scheme not in ("http", "https") or not host:
        return "must be an http(s) URL, e.g. http://localhost:11434/v1"
    if parsed.port is not None and not 0 < parsed.port < 65536:
        return f"has an invalid port {parsed.port}"
    return None


def url_origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) as httpx will connect, or None for a URL no key may go to.

    The host is compared in its ASCII (IDNA) form, without case and without the root's trailing
    dot (`api.openai.com.` is the same name)."""
    import httpx

    if "#" in url:
        return None
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError):  # idna raises ValueErrors
        return None
    if parsed.scheme not in DEFAULT_PORTS or not parsed.raw_host:
        return None
    port = parsed.port if parsed.port is not None else DEFAULT_PORTS[parsed.scheme]
    if not 0 < port < 65536:
        return None
    host = parsed.raw_host.decode("ascii", errors="replace").lower().removesuffix(".")
    return parsed.scheme, host, port


_SHOWN_URL_CHARS = 300


def display_url(url: str | httpx.URL) -> str:
    """A URL as it may be shown: rebuilt from its parsed parts, so the host is the one a request
    would go to; `user:password@` shows as `****@`, every query value and any fragment as
    `****`. Showing a URL never raises: what httpx cannot read is masked by pattern."""
    import httpx

    text = url if isinstance(url, str) else str(url)
    try:
        parsed = httpx.URL(url)
        return _cut(_rebuilt(parsed, fragment="#" in text))
    except (httpx.InvalidURL, ValueError):  # idna raises ValueErrors
        return _cut(_masked_unparsed(text))


def _rebuilt(parsed: httpx.URL, *, fragment: bool) -> str:
    # The ASCII (IDNA) form, as the request uses it: a look-alike Unicode host shows as xn--...
    host = parsed.raw_host.decode("ascii", errors="replace")
    host = f"[{host}]" if ":" in host else host
    default = DEFAULT_PORTS.get(parsed.scheme)
    port = f":{parsed.port}" if parsed.port not in (None, default) else ""
    credentials = "****@" if parsed.userinfo else ""
    path = parsed.copy_with(query=None, fragment=None).raw_path.decode("ascii", errors="replace")
    params = [f"{name}=****" if value else "****" for name, value in parsed.params.multi_items()]
    query = "?" + "&".join(params) if parsed.query else ""
    return f"{parsed.scheme}://{credentials}{host}{port}{path}{query}{'#****' if fragment else ''}"


def _masked_unparsed(text: str) -> str:
    """A URL httpx cannot read, shown without anything that could be credentials."""
    text = re.sub(r"(?<=://)[^/?#]*@", "****@", text)
    return re.sub(r"[?#].*", "?****", text, flags=re.DOTALL)


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN_URL_CHARS else text[: _SHOWN_URL_CHARS - 1] + "…"
