"""The Python client pointed at a hostile or wrong URL (standard library only; needs no toolsel
serve: the servers are started here). A redirect must not carry the API key (or anything) to
where it points; an answer too large, endless or dripping must fail with a named error without
being read whole.

Run with the rest: ``python3 -m unittest discover -s clients/python/tests``.
"""

from __future__ import annotations

import http.server
import sys
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolsel import DEFAULT_MAX_RESPONSE_BYTES, ToolselClient, ToolselError  # noqa: E402

CHUNK = b"a" * 65536
MIB = 1024 * 1024


class _Recorder(http.server.BaseHTTPRequestHandler):
    """The redirect's target: records each request's headers."""

    requests: List[Dict[str, Any]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        _Recorder.requests.append({"method": self.command, "headers": dict(self.headers), "body": body})
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "16")
        self.end_headers()
        self.wfile.write(b'{"libraries":[]}')

    do_GET = do_PUT = do_POST = do_DELETE = _answer

    def log_message(self, *args: Any) -> None:
        pass


class _Hostile(http.server.BaseHTTPRequestHandler):
    """The first path segment picks the attack, as test/helpers/hostile-server.ts does."""

    protocol_version = "HTTP/1.1"
    target = ""
    written = 0

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        attack = self.path.split("/")[1]
        try:
            if attack.startswith("redirect-"):
                self.send_response(int(attack[-3:]))
                self.send_header("location", f"{_Hostile.target}/v1/libraries")
                self.send_header("content-length", "0")
                self.end_headers()
            elif attack == "huge-length":
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(10 * 1024**3))
                self.end_headers()
                self._endless()
            elif attack in ("endless", "endless-error"):
                self.send_response(200 if attack == "endless" else 500)
                self.send_header("content-type", "application/json")
                self.send_header("connection", "close")  # no length: the body ends when the socket does
                self.end_headers()
                if attack == "endless-error":
                    self.wfile.write(b'{"error":{"code":"INTERNAL","message":"')
                self._endless()
            elif attack == "drip":
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "1000000")
                self.end_headers()
                self.wfile.write(b'{"libraries":"')
                for _ in range(1000):
                    self.wfile.write(b"a")
                    self.wfile.flush()
                    time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _endless(self) -> None:
        _Hostile.written = 0
        while _Hostile.written < 4 * 1024 * MIB:
            self.wfile.write(CHUNK)
            _Hostile.written += len(CHUNK)

    do_GET = do_PUT = do_POST = do_DELETE = _answer

    def log_message(self, *args: Any) -> None:
        pass


def _start(handler: type) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class HostileServerTest(unittest.TestCase):
    target: http.server.ThreadingHTTPServer
    hostile: http.server.ThreadingHTTPServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.target = _start(_Recorder)
        _Hostile.target = f"http://127.0.0.1:{cls.target.server_address[1]}"
        cls.hostile = _start(_Hostile)

    @classmethod
    def tearDownClass(cls) -> None:
        for server in (cls.hostile, cls.target):
            server.shutdown()
            server.server_close()

    def client(self, attack: str, **options: Any) -> ToolselClient:
        port = self.hostile.server_address[1]
        return ToolselClient(
            f"http://127.0.0.1:{port}/{attack}",
            api_key="sk-secret",
            headers={"x-gateway-key": "gw-secret"},
            **options,
        )

    def failure(self, call: Any, *args: Any) -> ToolselError:
        with self.assertRaises(ToolselError) as caught:
            call(*args)
        return caught.exception

    def test_redirects_are_not_followed_and_name_the_location(self) -> None:
        for status in (301, 302, 303, 307, 308):
            with self.subTest(status=status):
                before = len(_Recorder.requests)
                client = self.client(f"redirect-{status}")
                error = self.failure(client.list_libraries)
                self.assertEqual(error.code, "BAD_RESPONSE")
                self.assertEqual(error.status, status)
                self.assertIn(f"{_Hostile.target}/v1/libraries", error.message)
                self.assertIn("redirect", error.message)
                # A PUT with the library's tools is refused the same way.
                error = self.failure(client.put_library, "x", [{"name": "a", "description": "b"}])
                self.assertEqual(error.code, "BAD_RESPONSE")
                self.assertEqual(_Recorder.requests[before:], [])

    def test_a_content_length_of_10_gb_is_refused_unread(self) -> None:
        error = self.failure(self.client("huge-length", max_response_bytes=MIB).list_libraries)
        self.assertEqual(error.code, "BAD_RESPONSE")
        self.assertIn(f"larger than {MIB} bytes", error.message)
        self.assertIn("max_response_bytes", error.message)

    def test_an_endless_body_is_cut_at_the_limit(self) -> None:
        error = self.failure(self.client("endless", max_response_bytes=MIB).list_libraries)
        self.assertEqual(error.code, "BAD_RESPONSE")
        self.assertIn(f"larger than {MIB} bytes", error.message)
        time.sleep(0.2)
        self.assertLess(_Hostile.written, 64 * MIB)

    def test_the_default_limit_is_64_mib(self) -> None:
        self.assertEqual(DEFAULT_MAX_RESPONSE_BYTES, 64 * MIB)
        error = self.failure(self.client("endless").list_libraries)
        self.assertEqual(error.code, "BAD_RESPONSE")
        self.assertIn(f"larger than {64 * MIB} bytes", error.message)

    def test_an_endless_error_body_is_cut_at_1_mib(self) -> None:
        error = self.failure(self.client("endless-error").list_libraries)
        self.assertEqual(error.code, "BAD_RESPONSE")
        self.assertEqual(error.status, 500)
        self.assertIn(f"larger than {MIB} bytes", error.message)

    def test_the_timeout_covers_a_dripping_body(self) -> None:
        # urllib's timeout is per socket read: one byte every 50 ms never trips a 0.6 s one.
        error = self.failure(self.client("drip", timeout=0.6).list_libraries)
        self.assertEqual(error.code, "CLIENT_TIMEOUT")

    def test_a_bad_limit_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            ToolselClient("http://127.0.0.1:1", max_response_bytes=0)


if __name__ == "__main__":
    unittest.main()
