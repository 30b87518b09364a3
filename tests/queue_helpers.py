"""Shared by the queue tests: loading the workers in examples/ and running a redis-server."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Iterator

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name: str) -> ModuleType:
    """Imports examples/<name>.py as module `name` (registered, so its dataclasses resolve)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_server() -> Iterator[int]:
    """Runs Debian's redis-server on a free loopback port, without persistence; its port."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is missing (.ci/run installs Debian's redis-server)"
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # scripts/asan preloads ASan's runtime for the extension; in the server it would stop
        # at the first malloc_usable_size of redis's allocator, which ASan cannot vouch for.
        env={name: value for name, value in os.environ.items() if name != "LD_PRELOAD"},
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            assert process.poll() is None, "redis-server exited"
            assert time.monotonic() < deadline, "redis-server did not answer"
            time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
