#!/usr/bin/env python3
"""A real HTTP server on 127.0.0.1 for harvest's tests: serves files from ROOT and injects
faults on request, by a path prefix /f/<fault>/<path>:
  500x2      the first 2 requests get HTTP 500, then the file
  429        the first request gets 429 with "Retry-After: 1", then the file
  ratelimit  the first request gets 403 with x-ratelimit-remaining: 0 and a reset 1 s ahead
  reset      the first request sends headers and half the body, then resets the connection;
             later requests are served (with Range support, so a client can resume)
  slow       the body comes in 8 pieces, 0.15 s apart
  stall      headers, a few bytes, then nothing for 30 s (a client must time out)
  hang       reads the request, then answers nothing for 60 s (a git server that stalls)
  redirN     a chain of N redirects before the file (redir3 -> redir2 -> ... -> file)
  truncgz    the file minus its last 100 bytes, as a complete response
  half       the first half of the file, as a complete response (Content-Length of the half)
  norange    ignores Range: always 200 and the whole file
  404 410 451 500   always that status
Also a fake GitHub search API at /search/repositories (q=language:X pushed:A..B, page,
per_page) over the repositories listed in ROOT/search.json ([{full_name, id, pushed_at,
language, description}]), with the 1,000-result cap and Link headers.
Usage: fault_server.py ROOT PORTFILE LOGFILE   (writes the port to PORTFILE when ready; each
request is logged as "METHOD PATH RANGE auth|noauth UNIXTIME IN_FLIGHT" to LOGFILE)"""
import email.utils
import http.server
import json
import os
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse

ROOT, PORTFILE, LOGFILE = sys.argv[1], sys.argv[2], sys.argv[3]
counts = {}
active = [0]  # requests in flight, logged with each request
lock = threading.Lock()


def bump(key):
    with lock:
        counts[key] = counts.get(key, 0) + 1
        return counts[key]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def log_request_line(self):
        with lock, open(LOGFILE, "a") as f:
            f.write("%s %s %s %s %.3f %d\n" % (
                self.command, self.path, self.headers.get("Range", "-"),
                "auth" if self.headers.get("Authorization") else "noauth", time.time(), active[0]))

    def send_status(self, code, headers=None, body=b""):
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        with lock:
            active[0] += 1
        try:
            self.log_request_line()
            self.get()
        finally:
            with lock:
                active[0] -= 1

    def get(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/search/repositories":
            return self.search(urllib.parse.parse_qs(url.query))
        parts = url.path.split("/")
        if len(parts) > 3 and parts[1] == "f":
            return self.fault(parts[2], "/".join(parts[3:]))
        return self.serve("/".join(parts[1:]))

    def fault(self, fault, rel):
        n = bump(fault + "/" + rel)
        if fault == "hang":  # never answers: an hour is longer than any test waits
            self.close_connection = True
            time.sleep(3600)
            return
        if fault in ("404", "410", "451", "500"):
            return self.send_status(int(fault), body=b"no")
        if fault.startswith("500x") and n <= int(fault[4:]):
            return self.send_status(500, body=b"try again")
        if fault == "429" and n == 1:
            return self.send_status(429, {"Retry-After": "1"}, b"slow down")
        if fault == "ratelimit" and n == 1:
            return self.send_status(403, {"x-ratelimit-remaining": "0",
                                          "x-ratelimit-reset": str(int(time.time()) + 1)}, b"rl")
        if fault.startswith("redir"):
            hops = int(fault[5:])
            loc = "/" + rel if hops <= 1 else "/f/redir%d/%s" % (hops - 1, rel)
            return self.send_status(302, {"Location": loc})
        return self.serve(rel, fault, n)

    def serve(self, rel, fault="", n=0):
        path = os.path.realpath(os.path.join(ROOT, rel))
        if not path.startswith(os.path.realpath(ROOT)) or not os.path.isfile(path):
            return self.send_status(404, body=b"not found")
        with open(path, "rb") as f:
            data = f.read()
        if fault == "truncgz":
            data = data[:-100]
        if fault == "half":
            data = data[: len(data) // 2]
        start = 0
        rng = self.headers.get("Range") if fault != "norange" else None
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(data):
                return self.send_status(416, {"Content-Range": "bytes */%d" % len(data)})
        body = data[start:]
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if fault == "reset" and n == 1:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            # linger 0 + close: the kernel sends RST now (a "connection reset by peer")
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            os.close(os.dup(self.connection.fileno()))
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault == "stall":
            self.wfile.write(body[:10])
            self.wfile.flush()
            time.sleep(3600)  # the rest never comes
            return
        if fault == "slow":
            step = max(1, len(body) // 8 + 1)
            for i in range(0, len(body), step):
                self.wfile.write(body[i:i + step])
                self.wfile.flush()
                time.sleep(0.15)
            return
        self.wfile.write(body)

    def search(self, qs):
        q = qs.get("q", [""])[0]
        page = int(qs.get("page", ["1"])[0])
        per_page = int(qs.get("per_page", ["30"])[0])
        lang, lo, hi = None, "0000", "9999"
        for term in q.split():
            if term.startswith("language:"):
                lang = term[9:]
            if term.startswith("pushed:"):
                lo, hi = term[7:].split("..")
        with open(os.path.join(ROOT, "search.json")) as f:
            repos = json.load(f)
        hits = [r for r in repos if (lang is None or (r.get("language") or "").lower() == lang.lower())
                and lo <= r["pushed_at"][:10] <= hi]
        hits.sort(key=lambda r: r["pushed_at"], reverse=True)
        total = len(hits)
        capped = hits[:1000]
        items = capped[(page - 1) * per_page: page * per_page]
        headers = {"Content-Type": "application/json", "x-ratelimit-remaining": "29"}
        if page * per_page < len(capped):
            nxt = "http://%s/search/repositories?%s" % (self.headers["Host"], urllib.parse.urlencode(
                {"q": q, "per_page": per_page, "page": page + 1}))
            headers["Link"] = '<%s>; rel="next", <%s>; rel="last"' % (nxt, nxt)
        body = json.dumps({"total_count": total, "incomplete_results": False, "items": items}).encode()
        self.send_status(200, headers, body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # clients that give up mid-body (timeouts, kills) are expected here


srv = Server(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
