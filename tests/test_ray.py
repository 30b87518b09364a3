"""Ray: typed values and codecs on a local Ray cluster (``ray.init()`` in a subprocess, one
cluster for the module: Ray starts slowly), the ways a model class reaches the workers that the
Ray recipe on the Streams page describes, and what ``from __future__ import annotations``
needs. Ray publishes no wheel for CPython 3.15 yet, so the module is skipped there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 15):
    pytest.skip("Ray publishes no wheel for CPython 3.15 yet", allow_module_level=True)

# A module the workers import by name (the driver's folder is on their path): its classes travel
# by reference, so their string annotations resolve in it there.
MODELS = """
from __future__ import annotations

import dataclasses
import datetime


@dataclasses.dataclass
class Chunk:
    name: str
    nbytes: int


@dataclasses.dataclass
class Archive:
    label: str
    created: datetime.datetime
    contents: list[Chunk]
"""

# Classes defined in the driver script (its __main__), which cloudpickle ships by value.
SCRIPT = """
import dataclasses
import datetime
import json
import os
import typing

import ray

import polycodec
from models import Archive, Chunk


@dataclasses.dataclass
class Reading:  # annotations evaluated here: real types travel with the class
    sensor: str
    taken: datetime.datetime
    chunk: Chunk


exec(
    "from __future__ import annotations\\n"
    "@dataclasses.dataclass\\n"
    "class Postponed:\\n"
    "    sensor: str\\n"
    "    taken: datetime.datetime\\n"
)
exec(
    "from __future__ import annotations\\n"
    "@dataclasses.dataclass\\n"
    "class Resolved:\\n"
    "    sensor: str\\n"
    "    taken: datetime.datetime\\n"
)
# What the recipe says to do for a class with postponed annotations shipped by value: resolve
# them in the driver, where their names are known.
Resolved.__annotations__ = typing.get_type_hints(Resolved, include_extras=True)


@ray.remote
def decode_by_type(data, tp, fmt):
    value = polycodec.decode_one(data, tp, fmt)
    return polycodec.encode_one(value, fmt), type(value).__name__, os.getpid()


@ray.remote
def decode_with_codec(codec, data):
    value = codec.decode_one(data)
    return codec.encode_one(value), type(value).__name__


@ray.remote
def echo(value):
    return value


def attempt(remote, *args):
    try:
        return {"ok": ray.get(remote.remote(*args))}
    except Exception as exc:  # a RayTaskError carries the worker's exception as text
        return {"error": str(exc)[-2000:]}


def main():
    ray.init(num_cpus=1, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    when = datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc)
    archive = Archive("backup", when, [Chunk("a.bin", 1024)])
    out = {"driver": os.getpid()}
    for fmt in ["json", "msgpack", "avro", "pickle"]:
        data = polycodec.encode_one(archive, fmt)
        got = attempt(decode_by_type, data, Archive, fmt)
        out[f"module-{fmt}"] = [got["ok"][0] == data, got["ok"][1], got["ok"][2]]
    out["echo"] = ray.get(echo.remote(archive)) == archive
    for name, value in [
        ("reading", Reading("s1", when, Chunk("b", 2))),
        ("postponed", Postponed("s1", when)),
        ("resolved", Resolved("s1", when)),
    ]:
        codec = polycodec.Codec(type(value), "msgpack")
        data = codec.encode_one(value)
        got = attempt(decode_with_codec, codec, data)
        out[name] = [got["ok"][0] == data, got["ok"][1]] if "ok" in got else got["error"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
"""


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("ray")
    (folder / "models.py").write_text(MODELS)
    (folder / "driver.py").write_text(textwrap.dedent(SCRIPT))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    env["RAY_AUTH_MODE"] = "disabled"  # a private single-machine cluster, started and stopped here
    run = subprocess.run(
        [sys.executable, "driver.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("fmt", ["json", "msgpack", "avro", "pickle"])
def test_module_classes_decode_on_workers(cluster_run: Any, fmt: str) -> None:
    same_bytes, name, pid = cluster_run[f"module-{fmt}"]
    assert same_bytes and name == "Archive"
    assert pid != cluster_run["driver"], "decoded in a worker process"
    assert cluster_run["echo"]


def test_script_class_with_evaluated_annotations_travels_by_value(cluster_run: Any) -> None:
    assert cluster_run["reading"] == [True, "Reading"]


def test_postponed_annotations_by_value_fail_with_polycodecs_error(cluster_run: Any) -> None:
    error = cluster_run["postponed"]
    assert isinstance(error, str)
    assert "polycodec cannot resolve the annotations of 'Postponed'" in error
    assert "name 'datetime' is not defined" in error


def test_postponed_annotations_resolved_in_the_driver_travel(cluster_run: Any) -> None:
    assert cluster_run["resolved"] == [True, "Resolved"]
