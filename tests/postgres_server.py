"""A PostgreSQL server for the tests (Debian's ``postgresql``, which scripts/test and
scripts/cpython install): a new cluster made by ``initdb`` in a temporary folder and run on a
free loopback port with its socket in that folder, for one test module; removed afterwards.

PostgreSQL refuses to run as root: as root, the cluster is made and run as the ``postgres``
user the Debian package creates."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any, Iterator

from queue_helpers import free_port


def _binary(name: str) -> str:
    """Debian keeps the server's programs out of PATH, under /usr/lib/postgresql/VERSION/bin."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda path: int(path.split("/")[4]),
    )
    assert candidates, f"{name} is missing (scripts/test installs Debian's postgresql)"
    return candidates[-1]


def postgres_server() -> Iterator[str]:
    """Runs a fresh PostgreSQL cluster; yields its SQLAlchemy URL (psycopg 3, user postgres,
    trust authentication, database postgres)."""
    as_root = os.geteuid() == 0
    run_as: dict[str, Any] = {}
    folder = tempfile.mkdtemp(prefix="polycodec-postgres-")
    if as_root:
        account = pwd.getpwnam("postgres")
        os.chown(folder, account.pw_uid, account.pw_gid)
        run_as = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
    data = os.path.join(folder, "data")
    env = {name: value for name, value in os.environ.items() if name != "LD_PRELOAD"}
    env["LC_ALL"] = "C"
    subprocess.run(
        [
            _binary("initdb"),
            "-D",
            data,
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        ],
        check=True,
        capture_output=True,
        cwd=folder,
        env=env,
        **run_as,
    )
    port = free_port()
    log = open(os.path.join(folder, "server.log"), "wb")
    process = subprocess.Popen(
        [
            _binary("postgres"),
            "-D",
            data,
            "-p",
            str(port),
            "-h",
            "127.0.0.1",
            "-k",
            folder,
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=folder,
        env=env,
        **run_as,
    )
    try:
        import psycopg

        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(
                    host="127.0.0.1",
                    port=port,
                    user="postgres",
                    dbname="postgres",
                    connect_timeout=2,
                ).close()
                break
            except psycopg.OperationalError:
                pass
            assert process.poll() is None, open(os.path.join(folder, "server.log")).read()[-3000:]
            assert time.monotonic() < deadline, "postgres did not accept connections"
            time.sleep(0.1)
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        process.send_signal(signal.SIGINT)  # fast shutdown
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        log.close()
        shutil.rmtree(folder, ignore_errors=True)
