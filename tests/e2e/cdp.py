"""A headless Chromium driven over the DevTools protocol, for what ``--dump-dom`` cannot tell: the page's
layout (``scrollWidth`` at a given window width) and values read by script after it rendered.

No dependency: ``--remote-debugging-pipe`` makes Chromium read protocol commands from its fd 3 and write
answers to its fd 4, each JSON message ended by a NUL byte. One page per :class:`Browser`.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from typing import Any

import pytest

__all__ = ["Browser"]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no Chromium: apt-get install chromium (scripts/install-deps.sh installs it)")


class Browser:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        argv = [
            _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--hide-scrollbars", f"--window-size={width},{height}", "--remote-debugging-pipe",
            "about:blank",
        ]  # fmt: skip
        # Chromium's fd 3 reads our commands, its fd 4 writes its answers: bash moves them there (dash
        # only knows single-digit descriptors).
        wire = f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w}'
        self.proc = subprocess.Popen(
            ["bash", "-c", wire, *argv], pass_fds=(to_chrome_r, from_chrome_w),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.session = ""

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        os.close(self._to_chrome)
        os.close(self._from_chrome)
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> Any:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self._next_id:
                    if "error" in answer:
                        raise RuntimeError(f"{method}: {answer['error']}")
                    return answer.get("result", {})
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        raise TimeoutError(method)

    def open(self, url: str) -> None:
        """A new page at ``url``, ``width`` by ``height`` CSS pixels."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.call("Page.enable")
        self.call("Page.navigate", {"url": url})

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        """Polls ``expression`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(expression)
            time.sleep(0.2)

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])
