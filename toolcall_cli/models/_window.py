"""The context window of a server: where to ask for it (llama.cpp's /props; Ollama's /api/show,
/api/ps and /api/version), how to read what it says, and how to recognise its answer when a
request did not fit. Whatever a server sends here is checked: a window that is not a sane whole
number is no window."""

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


def num_ctx_from_show(data: Any) -> int | None:
    """Ollama's /api/show: `num_ctx` among the model's parameters, when its model file sets it:
    the window Ollama runs the model with."""
    parameters = data.get("parameters") if isinstance(data, dict) else None
    match = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    return tokens_in(int(match.group(1))) if match else None


def trained_window(data: Any) -> int | None:
    """Ollama's /api/show: the model's `*.context_length`, the most it was made to take. Not
    what Ollama runs it with: that is num_ctx, by default far less."""
    info = data.get("model_info") if isinstance(data, dict) else None
    if isinstance(info, dict):
        for key, value in info.items():
            found = tokens_in(value)
            if isinstance(key, str) and key.endswith(".context_length") and found is not None:
                return found
    return None


def loaded_window(data: Any, model: str) -> int | None:
    """Ollama's /api/ps: the `context_length` `model` was loaded with, if it is loaded now (a
    request that sets no num_ctx runs with it)."""
    models = data.get("models") if isinstance(data, dict) else None
    for entry in models if isinstance(models, list) else ():
        if isinstance(entry, dict) and any(
            isinstance(entry.get(key), str) and same_model(entry[key], model)
            for key in ("model", "name")
        ):
            return tokens_in(entry.get("context_length"))
    return None


def same_model(named: str, asked: str) -> bool:
    """Ollama's names: `qwen2.5` is `qwen2.5:latest`."""
    return named.removesuffix(":latest") == asked.removesuffix(":latest")


_VERSION = re.compile(r"^v?(\d{1,4})\.(\d{1,4})\.(\d{1,4})")


def default_num_ctx(data: Any) -> tuple[int, str]:
    """The num_ctx Ollama gives a model whose file sets none, by the version its /api/version
    says: 2,048 before 0.6.7, 4,096 from it; from 0.15.5 it is 4,096, 32,768 or 262,144 by the
    GPU's memory, which no API says, so the least (the server's OLLAMA_CONTEXT_LENGTH, which
    no API says either, may set more). A version not told (0.0.0 is a build from source) is
    taken as the oldest: a window too small only compacts early, one too large has Ollama cut
    the prompt's start (the system prompt, the tools) without a word."""
    said = data.get("version") if isinstance(data, dict) else None
    match = _VERSION.match(said) if isinstance(said, str) else None
    version = tuple(int(part) for part in match.groups()) if match else (0, 0, 0)
    shown = ".".join(str(part) for part in version)  # the numbers only: a server's text is not
    if version < (0, 6, 7):
        known = f" in {shown}" if version > (0, 0, 0) else ""
        return 2048, f"Ollama's default num_ctx{known}"
    if version < (0, 15, 5):
        return 4096, f"Ollama's default num_ctx in {shown}"
    return 4096, f"Ollama's default num_ctx in {shown} with under 24 GiB of VRAM (more above)"


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
