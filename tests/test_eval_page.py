"""`toolcall eval --html` opened in a real headless Chromium (Debian's package; skipped, with the
reason, where it is not installed): no console error, the DOM holds the table, the grid and the
failing run drawn from its trace, and the screenshot is not blank where the table is."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from in_process import toolcall

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium here (Debian: apt-get install -y chromium)"
)

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--window-size=1200,900",
)


def chromium(tmp_path: Path, page: Path, *asked: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *asked, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def console_errors(stderr: str) -> list[str]:
    """What the page logged to its console (Chromium writes `CONSOLE(line)] "message"`)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def pixels(png: bytes) -> tuple[int, int, list[bytes]]:
    """A PNG's width, height and rows of RGB(A) bytes (8 bits a channel, as Chromium saves)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, data = 8, b""
    width = height = channels = 0
    while at < len(png):
        (size,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + size]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8
            channels = {2: 3, 6: 4}[color]
        elif kind == b"IDAT":
            data += body
        at += size + 12
    raw, stride, rows = zlib.decompress(data), width * channels, []
    previous = bytearray(stride)
    for y in range(height):
        rule, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if rule == 1:
                line[x] = (line[x] + left) & 255
            elif rule == 2:
                line[x] = (line[x] + up) & 255
            elif rule == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif rule == 4:
                p = left + up - corner
                near = min((abs(p - left), left), (abs(p - up), up), (abs(p - corner), corner))[1]
                line[x] = (line[x] + near) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def dark_pixels(rows: list[bytes], channels: int, top: int, bottom: int) -> int:
    return sum(
        1
        for row in rows[top:bottom]
        for x in range(0, len(row), channels)
        if sum(row[x : x + 3]) < 3 * 128
    )


def test_the_html_report_opens_in_chromium_without_errors_and_shows_the_table(
    tmp_path: Path,
) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "sum", "question": "What is 2+3?", "answer": {"numbers": [5]}}\n'
        '{"id": "off", "question": "What is 2+2?", "answer": {"numbers": [5]}}\n',
        encoding="utf-8",
    )
    page = tmp_path / "report.html"
    done = toolcall("eval", str(cases), "--strategy", "regex,schema", "--html", str(page),
                    "--out", str(tmp_path / "out"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = page.read_text(encoding="utf-8")
    assert "<script" not in html and "http" not in html.split("<body>")[1]  # self-contained

    dom = chromium(tmp_path, page, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert '<table id="summary">' in dom.stdout and '<table id="grid">' in dom.stdout
    assert dom.stdout.count("<details>") == 2  # the wrong run, under each strategy
    assert "2+2" in dom.stdout.split("<details>")[1]  # the run drawn from its trace
    assert console_errors(dom.stderr) == []

    shot = tmp_path / "shot.png"
    taken = chromium(tmp_path, page, f"--screenshot={shot}")
    assert taken.returncode == 0 and shot.exists(), taken.stderr[-2000:]
    width, height, rows = pixels(shot.read_bytes())
    channels = len(rows[0]) // width
    assert dark_pixels(rows, channels, 0, height // 3) > 2000  # the heading and the table


def test_the_console_check_sees_an_error_when_there_is_one(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>throw new Error('boom')</script></body></html>")
    assert any(
        "boom" in line for line in console_errors(chromium(tmp_path, page, "--dump-dom").stderr)
    )
