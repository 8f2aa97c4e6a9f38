#!/usr/bin/env python3
"""An OTLP/HTTP receiver for the export tests, standard library only.

    otlp_receiver.py DIR [STATUS]

Listens on a free port of 127.0.0.1, writes the port to DIR/port, and
records each POST as DIR/NNNN.json: {"path", "content_type", "body"},
the body decoded from JSON. Answers STATUS (200 by default) with "{}".
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

out = sys.argv[1]
status = int(sys.argv[2]) if len(sys.argv) > 2 else 200
count = 0


def write(name, text):
    """Whole files only: the test may read at any time."""
    tmp = os.path.join(out, "." + name)
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, os.path.join(out, name))


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        global count
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            decoded = json.loads(body)
        except ValueError:
            decoded = {"undecodable": body.decode("latin-1")}
        count += 1
        write("%04d.json" % count, json.dumps({
            "path": self.path,
            "content_type": self.headers.get("Content-Type"),
            "body": decoded,
        }))
        reply = b"{}"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


# one request at a time: the files are numbered in arrival order
server = HTTPServer(("127.0.0.1", 0), Handler)
write("port", str(server.server_address[1]))
server.serve_forever()
