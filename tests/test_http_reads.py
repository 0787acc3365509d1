"""Every HTTP request of the package goes out through one sender and every answer is read
through one capped reader (toolcall_cli/models/_body.py): httpx's own readers take a whole body,
however large it inflates, before anything can count it. The source is read with `ast`, so a new
request or read that goes around the reader fails here, naming its file and line; the embeddings
endpoint (whose URL the model's server may choose) is held to --max-response-bytes."""

from __future__ import annotations

import ast
import sys
import threading
import tracemalloc
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from in_process import Finished, toolcall

import toolcall_cli

PACKAGE = Path(toolcall_cli.__file__).parent
READER = PACKAGE / "models" / "_body.py"
"""The one module that may send a request and read a body, each in one place."""
LEFT_OUT = {
    PACKAGE / "eject": "programs `toolcall eject` prints for the user to run: never imported "
    "or run by toolcall, each a standalone loop of the standard library and httpx",
}

SENDS = {"get", "post", "put", "patch", "delete", "head", "options", "request", "stream", "send"}
"""Client methods that make a request (all but a streamed `send` read the whole body)."""
MODULE_SENDS = SENDS - {"send"}
"""httpx.get(...) and its kin: a request and a whole body at once."""
READS = {
    "read", "aread", "json", "text", "content", "iter_bytes", "iter_text", "iter_lines",
    "iter_raw", "aiter_bytes", "aiter_text", "aiter_lines", "aiter_raw",
}  # fmt: skip
"""What reads a response's body (the `.text` and `.content` properties too)."""
OTHER_CLIENTS = {"urllib.request", "http.client", "requests", "aiohttp", "urllib3", "httpcore"}
"""HTTP clients that would go around httpx, and so around the reader, altogether."""


@dataclass(frozen=True)
class Bypass:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


class HttpScan(ast.NodeVisitor):
    """The requests and body reads of one module. A client is what httpx.Client(...) or
    AsyncClient(...) made, or what is annotated as one; a response is what is annotated as
    httpx.Response or came from a client's method; both are known by the expression that
    names them (`client`, `self._client`), wherever in the module it is used."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.httpx: set[str] = set()
        """The names the httpx module goes by here (`httpx`, or an alias)."""
        self.imported: dict[str, str] = {}
        """Names imported from httpx: `Client` -> `httpx.Client`."""
        self.clients: set[str] = set()
        self.responses: set[str] = set()
        self.found: list[Bypass] = []

    def scan(self, tree: ast.Module) -> list[Bypass]:
        for node in ast.walk(tree):  # first what names are clients and responses, then uses
            self._learn(node)
        self.visit(tree)
        return self.found

    # --- what each name is ---

    def _httpx_name(self, node: ast.AST) -> str | None:
        """`httpx.X` for an expression naming httpx's X, else None."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return f"httpx.{node.attr}" if node.value.id in self.httpx else None
        if isinstance(node, ast.Name):
            return self.imported.get(node.id)
        return None

    def _is_client_type(self, node: ast.expr | None) -> bool:
        return node is not None and any(
            self._httpx_name(n) in ("httpx.Client", "httpx.AsyncClient") for n in ast.walk(node)
        )

    def _is_response_type(self, node: ast.expr | None) -> bool:
        return node is not None and any(
            self._httpx_name(n) == "httpx.Response" for n in ast.walk(node)
        )

    def _is_client_call(self, node: ast.expr | None) -> bool:
        return isinstance(node, ast.Call) and self._is_client_type(node.func)

    def _is_request_call(self, node: ast.expr | None) -> bool:
        """A client's method called (`client.post(...)`, `client.send(...)`)."""
        return (
            bool(self.clients)
            and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and ast.unparse(node.func.value) in self.clients
        )

    def _learn(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "httpx":
                    self.httpx.add(alias.asname or "httpx")
        elif isinstance(node, ast.ImportFrom) and node.module == "httpx":
            for alias in node.names:
                self.imported[alias.asname or alias.name] = f"httpx.{alias.name}"
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind(target, node.value)
        elif isinstance(node, ast.AnnAssign):
            self._bind(node.target, node.value, node.annotation)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, item.context_expr)
        elif isinstance(node, ast.arg):  # a parameter, annotated as a client or a response
            self._bind(ast.Name(id=node.arg), None, node.annotation)

    def _bind(self, target: ast.expr, value: ast.expr | None, annotation: Any = None) -> None:
        if self._is_client_call(value) or self._is_client_type(annotation):
            self.clients.add(ast.unparse(target))
        elif self._is_request_call(value) or self._is_response_type(annotation):
            self.responses.add(ast.unparse(target))

    # --- how they are used ---

    def _report(self, node: ast.AST, what: str) -> None:
        self.found.append(Bypass(self.path, getattr(node, "lineno", 0), what))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name in OTHER_CLIENTS:
                self._report(node, f"imports {alias.name}, an HTTP client besides httpx")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module in OTHER_CLIENTS or f"{node.module}.".startswith(
            tuple(f"{c}." for c in OTHER_CLIENTS)
        ):
            self._report(node, f"imports from {node.module}, an HTTP client besides httpx")
        elif node.module == "urllib" and any(alias.name == "request" for alias in node.names):
            self._report(node, "imports urllib.request, an HTTP client besides httpx")

    def visit_Call(self, node: ast.Call) -> None:
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr in SENDS:
            owner = ast.unparse(function.value)
            if self._httpx_name(function) in {f"httpx.{m}" for m in MODULE_SENDS}:
                self._report(node, f"httpx.{function.attr}() reads the whole answer at once")
            elif (
                owner in self.clients
                and function.attr in SENDS
                and not self._is_streamed_send(node)
            ):
                self._report(node, f"{owner}.{function.attr}() outside the one sender")
        elif isinstance(function, ast.Name) and self.imported.get(function.id) in {
            f"httpx.{m}" for m in MODULE_SENDS
        }:
            self._report(node, f"{function.id}() from httpx reads the whole answer at once")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in READS and self.responses:
            owner = ast.unparse(node.value)
            if owner in self.responses and not self._is_the_reader(node):
                self._report(node, f"{owner}.{node.attr} reads a body outside the capped reader")
        self.generic_visit(node)

    def _is_streamed_send(self, node: ast.Call) -> bool:
        """The one send allowed: `client.send(request, stream=True)` in the reader's module."""
        streamed = any(
            k.arg == "stream" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords
        )
        assert isinstance(node.func, ast.Attribute)
        return self.path == str(READER) and node.func.attr == "send" and streamed

    def _is_the_reader(self, node: ast.Attribute) -> bool:
        """The reader reads the raw stream, or the body a test's transport built in memory."""
        return self.path == str(READER) and node.attr in ("iter_raw", "content")


def bypasses(source: str, path: str) -> list[Bypass]:
    return HttpScan(path).scan(ast.parse(source, filename=path))


def package_sources() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if not any(path.is_relative_to(folder) for folder in LEFT_OUT):
            yield path


def test_every_request_and_body_read_in_the_package_goes_through_the_capped_reader() -> None:
    found = [
        bypass
        for path in package_sources()
        for bypass in bypasses(path.read_text(encoding="utf-8"), str(path))
    ]
    assert found == [], "\n".join(str(bypass) for bypass in found)


def test_the_reader_itself_is_where_the_scan_looks() -> None:
    source = READER.read_text(encoding="utf-8")
    scan = HttpScan(str(READER))
    assert scan.scan(ast.parse(source)) == []
    assert "client" in scan.clients and "response" in scan.responses
    assert "client.send(request, stream=True)" in source and "response.iter_raw()" in source


BYPASSES = {
    "import httpx\nhttpx.get('http://x')": "httpx.get()",
    "import httpx as h\nh.post('http://x')": "httpx.post()",
    "from httpx import stream\nstream('GET', 'http://x')": "stream() from httpx",
    "import httpx\nc = httpx.Client()\nc.post('http://x')": "c.post()",
    "import httpx\nwith httpx.Client() as c:\n    r = c.get('u')": "c.get()",
    "import httpx\nclass M:\n    def __init__(self):\n        self._c = httpx.Client()\n"
    "    def ask(self):\n        return self._c.send(self._c.build_request('GET', 'u'))": (
        "self._c.send()"
    ),
    "import httpx\ndef f(c: httpx.Client):\n    c.stream('GET', 'u')": "c.stream()",
    "import httpx\ndef f(c: httpx.AsyncClient):\n    c.request('GET', 'u')": "c.request()",
    "import httpx\ndef f(r: httpx.Response):\n    return r.json()": "r.json",
    "import httpx\ndef f(r: httpx.Response | None):\n    return r.content": "r.content",
    "from httpx import Response\ndef f(r: Response):\n    return r.text": "r.text",
    "import httpx\ndef f(r: httpx.Response):\n    return r.read()": "r.read",
    "import httpx\ndef f(r: httpx.Response):\n    yield from r.iter_bytes()": "r.iter_bytes",
    "import httpx\ndef f(r: httpx.Response):\n    return r.iter_raw()": "r.iter_raw",
    "import httpx\nc = httpx.Client()\nr = c.send(q, stream=True)\nr.read()": "c.send()",
    "import urllib.request": "urllib.request",
    "from urllib import request": "urllib.request",
    "from http.client import HTTPConnection": "http.client",
}


@pytest.mark.parametrize("source", list(BYPASSES))
def test_the_scan_names_each_way_around_the_reader_by_file_and_line(source: str) -> None:
    found = bypasses(source, "toolcall_cli/somewhere.py")
    assert found, source
    assert BYPASSES[source] in str(found[0])
    assert str(found[-1]).startswith("toolcall_cli/somewhere.py:")
    assert found[-1].line == len(source.splitlines())


def test_the_scan_leaves_dicts_and_messages_alone() -> None:
    source = (
        "import httpx\nc = httpx.Client()\nrequest = c.build_request('GET', 'u')\n"
        "def f(message, data: dict):\n    return message.content, data.get('x'), "
        "message.text, data.json()\n"
    )
    assert bypasses(source, "toolcall_cli/somewhere.py") == []


# --- the embeddings endpoint ----------------------------------------------------------------------

MiB = 1 << 20
INFLATED = 48 * MiB
"""What the bomb inflates to: far past the lowered cap, and past any memory bound asserted."""
CAP = 1 * MiB


@pytest.fixture(scope="module")
def embeddings_bomb() -> bytes:
    """About 50 KB of gzip that inflates to 48 MiB: `{"data": [` and then spaces."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    parts = [packer.compress(b'{"data": [')]
    block = b" " * MiB
    parts += [packer.compress(block) for _ in range(INFLATED // MiB)]
    return b"".join([*parts, packer.flush()])


class QuietServer(ThreadingHTTPServer):
    """Says nothing when a client hangs up (as one does at its cap)."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class BombServer:
    """An embeddings endpoint on 127.0.0.1 that answers every POST with `body` as gzip."""

    def __init__(self, body: bytes) -> None:
        self.asked = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.asked += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)  # the client stops reading at its cap, and hangs up

        self._http = QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.01,))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def __enter__(self) -> BombServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join()


def test_an_embeddings_gzip_bomb_stops_at_the_response_cap_in_bounded_memory(
    embeddings_bomb: bytes, tmp_path: Path
) -> None:
    def ask(server: BombServer) -> Finished:
        return toolcall(
            "run", "What's 2+3?", "--no-trace",
            "--retriever", "embed", "--embed-url", server.url, "--embed-model", "e",
            "--retrieve", "2", "--retrieve-over", "0", "--max-response-bytes", str(CAP),
            cwd=tmp_path,
        )  # fmt: skip

    with BombServer(embeddings_bomb) as server:
        ask(server)  # once first, so the modules a run imports are not counted below
        tracemalloc.start()
        try:
            done = ask(server)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 8 * MiB, f"reading the bomb took {peak / MiB:.0f} MiB"
    assert server.asked == 2  # each run asked once, and not again after it failed
    assert done.returncode == 0 and "answer: 2+3 = 5" in done.stdout, done.stderr
    warning = next(line for line in done.stdout.splitlines() if "embeddings" in line)
    assert "larger than 1 MiB (after decompression)" in warning, done.stdout
    assert "--max-response-bytes raises the cap" in warning
