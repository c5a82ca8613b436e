"""A headless Chromium driven over the DevTools protocol on a pipe, with the standard library only.

``chromium --remote-debugging-pipe`` reads commands on its fd 3 and writes replies and events on its fd 4, each
message one JSON object ended by a NUL byte. :class:`Browser` starts it with those two pipes, attaches to one page
(flattened sessions: every page command carries the ``sessionId``) and keeps the events it sees (``events``) so a
test can ask what the page requested. :func:`png_size` and :func:`png_colours` read a screenshot with ``zlib``.
"""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import struct
import subprocess
import time
import zlib

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
         "--disable-sync", "--disable-component-update", "--mute-audio")


def chromium() -> str | None:
    """The Chromium program (Debian's ``chromium`` package), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class CdpError(RuntimeError):
    pass


class Browser:
    def __init__(self, program: str, user_data_dir: str, timeout: float = 20.0):
        self.timeout = timeout
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the child's fd 3 reads our commands, its fd 4 writes to us (dup'd into place before exec)
        self.proc = subprocess.Popen(
            [program, *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=_fds_3_and_4(to_browser_r, from_browser_w))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session: str | None = None

    # --- the wire ---------------------------------------------------------------------------------------------
    def _send(self, message: dict) -> None:
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._to_browser, data):]

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise CdpError("no answer from chromium in time")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise CdpError(f"chromium closed the pipe (exit {self.proc.poll()})")
            self._buf += chunk
        message, self._buf = self._buf.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: bool = True, **params) -> dict:
        """Send a command (to the attached page unless ``session=False``) and return its result; events that
        arrive meanwhile are kept in ``events``."""
        self._next_id += 1
        message: dict = {"id": self._next_id, "method": method, "params": params}
        if session and self.session is not None:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        """The first event ``method`` (kept or still to come)."""
        for event in self.events:
            if event.get("method") == method:
                return event
        deadline = time.monotonic() + self.timeout
        while True:
            event = self._receive(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    # --- a page -----------------------------------------------------------------------------------------------
    def open_page(self, width: int = 1200, height: int = 900) -> None:
        target = self.call("Target.createTarget", session=False, url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", session=False, targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Network.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)

    def navigate(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise CdpError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def move_mouse(self, x: float, y: float) -> None:
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)

    def screenshot(self, width: int, height: int) -> bytes:
        """The top left ``width`` x ``height`` CSS pixels of the page, as PNG."""
        clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
        return base64.b64decode(self.call("Page.captureScreenshot", format="png", clip=clip)["data"])

    def requested_urls(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        try:
            self.call("Browser.close", session=False)
        except (CdpError, OSError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)


def _fds_3_and_4(read_end: int, write_end: int):
    def place() -> None:  # in the child, before exec: our pipe ends become its fds 3 and 4
        r, w = os.dup(read_end), os.dup(write_end)  # (above 4 first, so neither is overwritten before it is used)
        os.dup2(r, 3)
        os.dup2(w, 4)
        os.set_inheritable(3, True)
        os.set_inheritable(4, True)
    return place


# --- PNG, read with zlib ---------------------------------------------------------------------------------------
def _chunks(png: bytes):
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos = 8
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        yield kind, png[pos + 8:pos + 8 + length]
        pos += 12 + length


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR chunk."""
    kind, data = next(_chunks(png))
    assert kind == b"IHDR"
    return struct.unpack(">II", data[:8])


def png_colours(png: bytes, rows: int = 64) -> set[bytes]:
    """The distinct pixels of ``rows`` rows spread over the image (8-bit RGB or RGBA, filters undone)."""
    header = dict(_chunks(png))[b"IHDR"]
    width, height, depth, colour_type = struct.unpack(">IIBB", header[:10])
    if depth != 8 or colour_type not in (2, 6):
        raise ValueError(f"PNG of depth {depth}, colour type {colour_type}: not read here")
    bpp = 3 if colour_type == 2 else 4
    raw = zlib.decompress(b"".join(data for kind, data in _chunks(png) if kind == b"IDAT"))
    stride = width * bpp
    previous = bytearray(stride)
    wanted = {height * i // rows for i in range(rows)}
    seen: set[bytes] = set()
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, up_left = previous[i], previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 0xFF
        if y in wanted:
            seen.update(bytes(line[i:i + bpp]) for i in range(0, stride, bpp))
        previous = line
    return seen
