"""The context window of a server: where to ask for it (llama.cpp's /props, Ollama's
/api/show), how to read what it says, and how to recognise its answer when a request did not
fit. Whatever a server sends here is checked: a window that is not a sane whole number is no
window."""

from __future__ import annotations

import re
from typing import Any

import httpx

from toolcall_cli.wire import ModelError

MAX_WINDOW = 100_000_000
"""Far beyond any model's window: a larger number is a server's nonsense, not a window."""
MIN_WINDOW = 16


def tokens_in(value: Any) -> int | None:
    """`value` as a window size, or None when it cannot be one (a bool, a string, -1, 1e100)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if MIN_WINDOW <= value <= MAX_WINDOW else None


def server_root(base_url: str) -> httpx.URL:
    """The server's own root, where llama.cpp and Ollama serve their native endpoints:
    the base URL without its query and without a trailing `/v1`."""
    base = httpx.URL(base_url).copy_with(query=None, fragment=None)
    return base.copy_with(raw_path=base.raw_path.rstrip(b"/").removesuffix(b"/v1"))


def endpoint_url(root: httpx.URL, name: str) -> httpx.URL:
    return root.copy_with(raw_path=root.raw_path.rstrip(b"/") + b"/" + name.encode())


LLAMA_SERVER_PROPS = ("default_generation_settings", "total_slots", "build_info")
"""Keys only llama.cpp's /props answer holds (a bare n_ctx could be any server's)."""


def is_llama_server(data: Any) -> bool:
    return isinstance(data, dict) and any(key in data for key in LLAMA_SERVER_PROPS)


OLLAMA_SHOW = ("model_info", "modelfile")
"""Keys only Ollama's /api/show answer holds (its GGUF metadata; the model file)."""


def is_ollama(data: Any) -> bool:
    return isinstance(data, dict) and any(key in data for key in OLLAMA_SHOW)


def window_from_props(data: Any) -> int | None:
    """llama.cpp's /props: `default_generation_settings.n_ctx`, or `n_ctx` at the top in some
    versions."""
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    nested = settings.get("n_ctx") if isinstance(settings, dict) else None
    return tokens_in(nested) or tokens_in(data.get("n_ctx"))


_NUM_CTX = re.compile(r"(?m)^[ \t]*num_ctx[ \t]+(\d{1,9})[ \t]*$")


def window_from_show(data: Any) -> tuple[int, str] | None:
    """Ollama's /api/show: `num_ctx` among the model's parameters when set (what the server
    actually runs with), else the model's `*.context_length`; with the words for where."""
    if not isinstance(data, dict):
        return None
    parameters = data.get("parameters")
    if isinstance(parameters, str):
        match = _NUM_CTX.search(parameters)
        found = tokens_in(int(match.group(1))) if match else None
        if found is not None:
            return found, "num_ctx in Ollama's /api/show"
    info = data.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            found = tokens_in(value)
            if isinstance(key, str) and key.endswith(".context_length") and found is not None:
                return found, "Ollama's /api/show"
    return None


_OVERFLOW = re.compile(
    r"context_length_exceeded|exceed_context_size|exceeds? the (?:available|maximum) context"
    r"|maximum context length|context length|context size|context window|num_ctx"
    r"|prompt is too long|prompt too long|input is too long|too many tokens"
    r"|longer than the model'?s context",
    re.IGNORECASE,
)
_WINDOW_SAID = re.compile(
    r"(?:maximum context length|context (?:length|size|window)|n_ctx)"
    r"(?: of the model)?(?: is| of)?\s*[:=(]?\s*(\d[\d,]{0,12})",
    re.IGNORECASE,
)
_PROMPT_SAID = re.compile(
    r"(?:request|resulted in|requested|input|prompt|messages)\D{0,24}?[(]?(\d[\d,]{0,12})"
    r"\s*(?:input )?tokens",
    re.IGNORECASE,
)


def overflow_error(status: int, body: Any, detail: str) -> ModelError | None:
    """The ModelError for an answer saying the request did not fit the context window, or None
    when the answer says something else. llama.cpp gives its numbers as fields (`n_ctx`,
    `n_prompt_tokens`); OpenAI, vLLM and others only in their message."""
    error = body.get("error", body) if isinstance(body, dict) else None
    fields = error if isinstance(error, dict) else {}
    said = " ".join([detail, *(str(fields.get(k, "")) for k in ("type", "code"))])
    if not _OVERFLOW.search(said):
        return None
    window = tokens_in(fields.get("n_ctx")) or _number(_WINDOW_SAID, detail)
    prompt = _count(fields.get("n_prompt_tokens")) or _number(_PROMPT_SAID, detail)
    numbers = ""
    if prompt and window:
        numbers = f" ({prompt:,} > {window:,} tokens)"
    elif window:
        numbers = f" (the window is {window:,} tokens)"
    return ModelError(
        f"the request is longer than the model's context window{numbers} "
        f"(HTTP {status}): {detail or 'no detail given'}",
        kind="context_length",
        window=window,
        prompt_tokens=prompt,
    )


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_WINDOW * 10:
        return None
    return value


def _number(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.search(text)
    return _count(int(match.group(1).replace(",", ""))) if match else None
