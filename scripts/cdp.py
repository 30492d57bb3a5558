"""A minimal Chrome DevTools Protocol client over a standard-library WebSocket (no extra packages).

Why our own: the screenshot script must run from a plain engramdb checkout, and
neither selenium nor a WebSocket package is a dependency of engramdb. CDP needs
little of WebSocket: text frames, client masking, fragmented replies (base64
screenshots are large), ping/pong.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import urllib.parse
from typing import Any


class DevToolsError(RuntimeError):
    """Chromium answered a command with an error, or the connection closed."""


class DevTools:
    """One WebSocket connection to a page target; :meth:`call` sends a command and returns its result."""

    def __init__(self, ws_url: str, timeout: float = 60.0) -> None:
        url = urllib.parse.urlparse(ws_url)
        self.sock = socket.create_connection((url.hostname, url.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {url.path} HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise DevToolsError("DevTools closed the connection during the WebSocket handshake")
            response += chunk
        head, _, self._buffer = response.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise DevToolsError(f"WebSocket handshake refused: {head.decode(errors='replace')[:200]}")
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        try:
            self._send(b"", opcode=0x8)
        except OSError:
            pass
        self.sock.close()

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its reply (events that arrive meanwhile are kept in ``events``)."""
        self._next_id += 1
        message_id = self._next_id
        self._send(json.dumps({"id": message_id, "method": method, "params": params}).encode())
        while True:
            message = json.loads(self._receive())
            if message.get("id") == message_id:
                if "error" in message:
                    raise DevToolsError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise DevToolsError(
                f"JavaScript failed: {result['exceptionDetails'].get('text')} in {expression[:80]}"
            )
        return result.get("result", {}).get("value")

    # ------------------------------------------------------------------ frames
    def _send(self, payload: bytes, opcode: int = 0x1) -> None:
        header = bytearray([0x80 | opcode])
        size = len(payload)
        if size < 126:
            header.append(0x80 | size)
        elif size < 1 << 16:
            header.append(0x80 | 126)
            header += struct.pack(">H", size)
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", size)
        mask = os.urandom(4)
        header += mask
        masked = (
            (int.from_bytes(payload, "big") ^ int.from_bytes((mask * (size // 4 + 1))[:size], "big"))
            if size
            else 0
        )
        self.sock.sendall(bytes(header) + (masked.to_bytes(size, "big") if size else b""))

    def _exact(self, count: int) -> bytes:
        while len(self._buffer) < count:
            chunk = self.sock.recv(max(65536, count - len(self._buffer)))
            if not chunk:
                raise DevToolsError("DevTools closed the connection")
            self._buffer += chunk
        data, self._buffer = self._buffer[:count], self._buffer[count:]
        return data

    def _receive(self) -> str:
        parts: list[bytes] = []
        while True:
            first, second = self._exact(2)
            opcode, size = first & 0x0F, second & 0x7F
            if size == 126:
                size = struct.unpack(">H", self._exact(2))[0]
            elif size == 127:
                size = struct.unpack(">Q", self._exact(8))[0]
            mask = self._exact(4) if second & 0x80 else None
            payload = self._exact(size)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise DevToolsError("DevTools closed the connection")
            if opcode == 0x9:
                self._send(payload, opcode=0xA)
                continue
            if opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if first & 0x80:
                    return b"".join(parts).decode()
