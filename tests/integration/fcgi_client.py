"""A minimal FastCGI client for tests that talk to connector-worker's socket directly, the way
nginx does: one request per connection (or several with FCGI_KEEP_CONN), the responder role,
FCGI_BEGIN_REQUEST, FCGI_PARAMS, an empty FCGI_STDIN, then FCGI_STDOUT records up to
FCGI_END_REQUEST. Python 3 standard library only.

    status, headers, body = fcgi_get(stack.fcgi_socket, "/v1/networks")
"""

import socket
import struct

VERSION = 1
BEGIN_REQUEST, ABORT_REQUEST, END_REQUEST, PARAMS, STDIN, STDOUT, STDERR = 1, 2, 3, 4, 5, 6, 7
RESPONDER = 1
KEEP_CONN = 1
HEADER = struct.Struct("!BBHHBx")  # version, type, request id, content length, padding


def record(kind, request_id, content=b""):
    """One FastCGI record, padded to a multiple of 8 bytes as nginx pads them."""
    padding = -len(content) % 8
    return HEADER.pack(VERSION, kind, request_id, len(content), padding) + content + \
        b"\0" * padding


def _length(n):
    return bytes([n]) if n < 128 else struct.pack("!I", n | 0x80000000)


def encode_params(params):
    out = b""
    for name, value in params.items():
        name, value = name.encode("latin-1"), value.encode("latin-1")
        out += _length(len(name)) + _length(len(value)) + name + value
    return out


def request_params(path, query="", method="GET", request_id="0123456789abcdef"):
    """The parameters the worker reads, as nginx's fastcgi-connector.params sends them."""
    return {"REQUEST_METHOD": method, "DOCUMENT_URI": path, "QUERY_STRING": query,
            "REQUEST_URI": path + (f"?{query}" if query else ""), "REQUEST_ID": request_id}


def request_bytes(params, request_id=1, keep_conn=False):
    """A whole request: begin (responder), the parameters, their end, an empty stdin."""
    begin = struct.pack("!HB5x", RESPONDER, KEEP_CONN if keep_conn else 0)
    return (record(BEGIN_REQUEST, request_id, begin) +
            record(PARAMS, request_id, encode_params(params)) + record(PARAMS, request_id) +
            record(STDIN, request_id))


def connect(address, source=None, timeout=10):
    """A connection to a unix socket path (str or Path) or a (host, port) pair; for TCP,
    `source` is the local address to connect from (e.g. "127.0.0.2")."""
    if isinstance(address, tuple):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        if source is not None:
            sock.bind((source, 0))
        sock.connect(address)
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(str(address))
    return sock


def _exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError(f"the worker closed the connection ({len(data)} of {n} bytes)")
        data += chunk
    return data


def read_response(sock):
    """The answer to one request: (status, {header: value}, body). Raises ConnectionError when
    the worker closes the connection first."""
    stdout = b""
    while True:
        _version, kind, _rid, length, padding = HEADER.unpack(_exactly(sock, HEADER.size))
        content = _exactly(sock, length + padding)[:length]
        if kind == STDOUT:
            stdout += content
        elif kind == END_REQUEST:
            break
    head, _, body = stdout.partition(b"\r\n\r\n")
    headers = {}
    for line in head.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    status = int(headers.get("status", "200").split()[0])
    return status, headers, body


def fcgi_get(address, path, query="", source=None, timeout=10):
    """One GET on a connection of its own: (status, headers, body)."""
    with connect(address, source=source, timeout=timeout) as sock:
        sock.sendall(request_bytes(request_params(path, query)))
        return read_response(sock)


def closed_by_peer(sock, timeout):
    """True when the worker closes the connection within `timeout` seconds without sending
    anything (recv returns b"" or the connection is reset); False if it stays open that long.
    Raises AssertionError if the worker sends data instead."""
    sock.settimeout(timeout)
    try:
        data = sock.recv(4096)
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True
    if data:
        raise AssertionError(f"the worker answered: {data[:100]!r}")
    return True
