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
    """The text with the given secrets (see SecretMask), and anything shaped like a key or URL
    credentials, masked."""
    return _SECRET_SHAPES.sub(MASK, SecretMask(secrets).redact(text))


MASK = "****"

SHORTEST_SECRET_WITH_OPENING = 16
"""A secret this long (a key or token, not `2024-02-01` in a URL's query) has its opening masked
as well: a server that echoes a key without its last characters has still shown the key."""
SHORTEST_MASKED_OPENING = 8
"""The shortest opening masked on its own (or half the secret, if that is longer)."""

_JSON_ESCAPES = {'"': '"', "\\": "\\", "/": "/"}
_HEX = frozenset("0123456789abcdefABCDEF")


class SecretMask:
    """Finds a session's secrets in text as a reader would see them, and masks them.

    A secret counts where it is written plainly or with JSON escapes (`\\u0073` for `s`, `\\/`
    for `/`): tool-call arguments are JSON, and a parser decodes the escapes back into the key.
    A long secret's opening counts too (half of it, at least SHORTEST_MASKED_OPENING characters);
    a short one only whole. Used whole on text that is complete, and through `streaming()` on
    text that arrives in pieces."""

    def __init__(self, secrets: Iterable[str]) -> None:
        found = sorted({secret for secret in secrets if secret}, key=len, reverse=True)
        self.secrets = tuple(found)
        self._finder = (
            re.compile("|".join(f"(?:{_opening(secret)})" for secret in found)) if found else None
        )
        self._reach = 6 * max((len(secret) for secret in found), default=0)
        """The most characters a partly written secret can take (every one escaped)."""
        starts = sorted({secret[0] for secret in found} | {"\\"})
        self._starts = re.compile("|".join(re.escape(char) for char in starts))
        """Where a secret may begin: its first character, or an escape."""

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def redact(self, text: str) -> str:
        """`text`, complete, with every secret and every secret's opening masked."""
        if self._finder is None or self._finder.search(text) is None:
            return text  # the common case, decided in one search
        masked, _ = self._scan(text, final=True)
        return masked

    def streaming(self) -> StreamRedactor:
        """A redactor for one field that arrives in pieces."""
        return StreamRedactor(self)

    def _scan(self, text: str, *, final: bool) -> tuple[str, int]:
        """`text` up to where it is decided, masked, and where the undecided rest begins: a
        tail that may still turn out to be a secret once more text comes (none when `final`)."""
        assert self._finder is not None
        out: list[str] = []
        done = 0
        while (found := self._finder.search(text, done)) is not None:
            end, cut = self._longest_match(text, found.start())
            if cut and not final:
                held = min(found.start(), self._undecided_from(text, done))
                out.append(text[done:held])
                return "".join(out), held
            out += [text[done : found.start()], MASK]
            done = max(end, found.end())
        held = len(text) if final else self._undecided_from(text, done)
        out.append(text[done:held])
        return "".join(out), held

    def _longest_match(self, text: str, start: int) -> tuple[int, bool]:
        """Where the longest secret written from `start` ends, and whether the text ran out
        while it still matched (more text could lengthen it)."""
        best, running_out = start, False
        for secret in self.secrets:
            matched, end, cut = _match(text, start, secret)
            if matched and (end > best or cut):
                best, running_out = max(best, end), running_out or cut
        return best, running_out

    def _undecided_from(self, text: str, done: int) -> int:
        """The start of the longest tail of `text` (after `done`) that could still become a
        secret, or len(text)."""
        lowest = max(done, len(text) - self._reach)
        for start in self._starts.finditer(text, lowest):
            at = start.start()
            if any(_match(text, at, secret)[2] for secret in self.secrets):
                return at
        return len(text)


class StreamRedactor:
    """Masks secrets in one field that arrives in pieces (a reply's content, a call's
    arguments): a secret split over any number of pieces is masked whole. Only a tail that
    could still be the start of a secret is held back, and `flush()` gives it at the end."""

    def __init__(self, mask: SecretMask) -> None:
        self._mask = mask
        self._held = ""

    def feed(self, piece: str) -> str:
        """What of the text so far is decided, masked."""
        if not self._mask:
            return piece
        text = self._held + piece
        shown, held = self._mask._scan(text, final=False)
        self._held = text[held:]
        return shown

    def flush(self) -> str:
        """The held tail, masked: the field is complete."""
        held, self._held = self._held, ""
        return self._mask.redact(held) if held else ""

    @property
    def holding(self) -> bool:
        return bool(self._held)


def _opening(secret: str) -> str:
    """A regex for the shortest opening of `secret` that is masked on its own."""
    shortest = len(secret)
    if shortest >= SHORTEST_SECRET_WITH_OPENING:
        shortest = max(SHORTEST_MASKED_OPENING, (len(secret) + 1) // 2)
    return "".join(_written(char) for char in secret[:shortest])


def _written(char: str) -> str:
    """A regex for `char` as JSON text may write it: itself, `\\uXXXX` (either case), `\\/`."""
    code = "".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in f"{ord(char):04x}")
    forms = [re.escape(char), r"\\u" + code]
    if char in _JSON_ESCAPES:
        forms.append(re.escape("\\" + char))
    return "(?:" + "|".join(forms) + ")"


def _match(text: str, start: int, secret: str) -> tuple[int, int, bool]:
    """How many of `secret`'s characters `text` writes from `start` on (JSON escapes read as
    the character they stand for), where that stops, and whether the text ended while it
    still matched (an escape cut short counts if it can still become the next character)."""
    at = start
    for matched, want in enumerate(secret):
        if at >= len(text):
            return matched, at, True
        char, width, cut = _character(text, at, want)
        if cut:
            return matched, at, True
        if char != want:
            return matched, at, False
        at += width
    return len(secret), at, False


def _character(text: str, at: int, want: str) -> tuple[str, int, bool]:
    """The character text writes at `at`, how many characters it takes, and whether it is an
    escape cut short by the end of the text that could still write `want`."""
    char = text[at]
    if char != "\\":
        return char, 1, False
    escaped = text[at + 1 : at + 2]
    if not escaped:
        return char, 1, True  # a lone backslash at the end: an escape may follow
    if escaped in _JSON_ESCAPES:
        return _JSON_ESCAPES[escaped], 2, False
    if escaped == "u":
        digits = text[at + 2 : at + 6]
        if not all(d in _HEX for d in digits):
            return char, 1, False
        if len(digits) == 4:
            return chr(int(digits, 16)), 6, False
        return char, 1, f"{ord(want):04x}".startswith(digits.lower())
    return char, 1, False


def url_secrets(url: str) -> list[str]:
    """What of a URL may be a credential: its user name, its password and its query values
    (`?api_key=...`); empty for a URL httpx cannot read."""
    parsed = parsed_url(url)
    if parsed is None:
        return []
    return [parsed.username, parsed.password, *(v for _, v in parsed.params.multi_items())]


def parsed_url(url: str) -> httpx.URL | None:
    """`url` as httpx reads it, and so as a request would go; None when httpx cannot read it."""
    import httpx

    try:
        return httpx.URL(url)
    except (httpx.InvalidURL, ValueError):  # idna raises ValueErrors
        return None


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
    parsed = None if "#" in url else parsed_url(url)
    if parsed is None or parsed.scheme not in DEFAULT_PORTS or not parsed.raw_host:
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
    except (httpx.InvalidURL, ValueError):  # idna raises ValueErrors
        return _cut(_masked_unparsed(text))
    if parsed.scheme not in DEFAULT_PORTS or not parsed.raw_host:
        # No request goes there, so no real host to name: rebuilt, `localhost:11434/v1` read
        # as 'localhost://11434/v1' and `foo` as '://foo', not what was typed.
        return _cut(_masked_unparsed(text))
    return _cut(_rebuilt(parsed, fragment="#" in text))


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
    text = re.sub(r"^([^/?#]*://)?[^/?#]*@", r"\1****@", text)  # with a scheme or without
    text = re.sub(r"[?#].*", "?****", text, flags=re.DOTALL)
    return _SECRET_SHAPES.sub(MASK, text)  # a key pasted where the URL goes


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN_URL_CHARS else text[: _SHOWN_URL_CHARS - 1] + "…"
