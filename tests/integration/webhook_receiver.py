"""A webhook receiver on loopback for the alert tests: records every
request (path, headers, body) and answers what the test scripts — a
status per request in order, a redirect, or a hang until released."""

import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self):
        self.requests = []
        self.script = []  # statuses for the next requests, then 200
        self.hold = threading.Event()
        self.hold.set()  # cleared: requests wait until it is set again
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with receiver.lock:
                    receiver.requests.append({"path": self.path,
                                              "headers": dict(self.headers.items()),
                                              "body": body})
                    status = receiver.script.pop(0) if receiver.script else 200
                receiver.hold.wait(60)
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", f"http://127.0.0.1:{receiver.port}/elsewhere")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path="/hook"):
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self):
        self.hold.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def bodies(self, path="/hook"):
        with self.lock:
            return [json.loads(r["body"]) for r in self.requests if r["path"] == path]

    def events(self, type_=None, path="/hook"):
        return [b for b in self.bodies(path) if type_ is None or b.get("type") == type_]

    def wait(self, predicate, seconds=20):
        deadline = time.time() + seconds
        while time.time() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.1)
        return predicate()


def signature(secret, body):
    """What X-Stallscope-Signature must say of BODY: recomputed here from
    the secret the test chose, never taken from the server."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
