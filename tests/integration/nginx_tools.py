"""nginx outside a stack's own (harness.py re-exports these): another nginx from
scripts/nginx-start in front of a stack's worker, with settings of its own (start_nginx,
stop_nginx; Stack starts its own nginx with start_nginx too), and `nginx -t` of the shipped
drop-ins laid out as an existing Debian nginx holds them (nginx_t). Python 3 standard library
only."""

import os
import subprocess
from pathlib import Path

from harness_base import REPO, SCRIPTS, StackError, _free_port, _run


def start_nginx(prefix, fcgi_socket, env=None):
    """scripts/nginx-start in `prefix` (the shipped drop-ins) on a free loopback port, in front
    of the worker listening on fcgi_socket; `env`: NGINX_CONNECTOR_* settings (none: as shipped).
    Returns the port; stop_nginx(prefix) stops it. Raises StackError when it does not start."""
    for attempt in range(3):  # the free port can be taken between picking and binding
        port = _free_port()
        try:
            _run([SCRIPTS / "nginx-start", prefix, port, fcgi_socket],
                 env={**os.environ, **(env or {})})
            return port
        except StackError:
            if attempt == 2:
                raise


def stop_nginx(prefix):
    """scripts/nginx-stop of the nginx start_nginx started in `prefix`."""
    subprocess.run([str(SCRIPTS / "nginx-stop"), str(prefix)], timeout=60,
                   stdin=subprocess.DEVNULL, capture_output=True)


def nginx_t(tmp, conf_d, snippets, moved, server_includes, modules=(), quiet=False):
    """`nginx -t` (-q if quiet) of the shipped drop-ins (REPO/nginx) as an existing Debian nginx
    holds them, all in the directory tmp: the files named in conf_d in tmp/conf.d/ (included at
    the http level), those in snippets in tmp/snippets/, each with every string of `moved`
    ({production path: its place in tmp}) replaced; a minimal nginx.conf, `modules` (its
    load_module lines) first, with one server that includes snippets/<name> for each name of
    server_includes, its pid, logs and temporary files in tmp. Returns (that nginx.conf's path,
    nginx's CompletedProcess)."""
    tmp = Path(tmp)
    for folder, names in (("conf.d", conf_d), ("snippets", snippets)):
        (tmp / folder).mkdir(exist_ok=True)
        for name in names:
            text = (REPO / "nginx" / name).read_text()
            for old, new in moved.items():
                text = text.replace(old, new)
            (tmp / folder / name).write_text(text)
    includes = "".join(f"\n        include snippets/{name};" for name in server_includes)
    conf = tmp / "nginx.conf"
    conf.write_text("\n".join(modules) + f"""
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{}}
http {{
    client_body_temp_path {tmp}/client_body;
    fastcgi_temp_path {tmp}/fastcgi;
    proxy_temp_path {tmp}/proxy;
    scgi_temp_path {tmp}/scgi;
    uwsgi_temp_path {tmp}/uwsgi;
    include conf.d/*.conf;
    server {{
        listen 127.0.0.1:{_free_port()} default_server;
        server_name api.example.com;{includes}
    }}
}}
""")
    result = subprocess.run(["nginx", "-t", *(["-q"] if quiet else []), "-p", f"{tmp}/",
                             "-c", str(conf), "-e", str(tmp / "error.log")],
                            capture_output=True, text=True, timeout=30)
    return conf, result
