"""Tool vectors kept between sessions in one JSON file of the user state directory, by the
hash of the tool's spec and the embedding model: a tool is embedded again only when it changes."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolcall_cli.messages import ToolSpec

MAX_VECTORS = 20_000
"""Past this many, the file starts over: vectors of tools long gone must not grow it forever."""


def spec_hash(spec: ToolSpec, model: str) -> str:
    """sha256 of the spec's canonical JSON (sorted keys, no spaces) and the model's name."""
    canonical = json.dumps(
        {"spec": spec.to_openai()["function"], "model": model},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class VectorFile:
    """A VectorStore in a JSON file (`{"hash": [floats], ...}`). A file that cannot be read or
    written is no failure: the vectors are asked for again, and `problem` says why once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None
        self._vectors: dict[str, list[float]] | None = None

    def get(self, key: str) -> list[float] | None:
        return self._loaded().get(key)

    def put(self, vectors: Mapping[str, list[float]]) -> None:
        held = self._loaded()
        if len(held) + len(vectors) > MAX_VECTORS:
            held.clear()
        held.update(vectors)
        try:
            self._write(held)
        except OSError as error:
            self.problem = f"cannot keep tool vectors in {self.path}: {error.strerror or error}"

    def _loaded(self) -> dict[str, list[float]]:
        if self._vectors is None:
            self._vectors = self._read()
        return self._vectors

    def _read(self) -> dict[str, list[float]]:
        try:
            data: Any = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            self.problem = f"the tool vector cache {self.path} could not be read ({error}); "
            self.problem += "vectors are asked for again"
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            key: value
            for key, value in data.items()
            if isinstance(value, list) and all(isinstance(x, (int, float)) for x in value)
        }

    def _write(self, vectors: dict[str, list[float]]) -> None:
        # Written whole to a temporary file and renamed: a crash never leaves half a file.
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=self.path.parent, prefix=".vectors-", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(vectors, file, separators=(",", ":"))
            os.replace(name, self.path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
