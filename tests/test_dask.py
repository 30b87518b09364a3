"""More than one machine: dask.distributed's LocalCluster (two worker processes) decodes a set
of files written by `write_file` in parallel; the codec travels to the workers by pickle."""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
from dask import distributed

import polycodec


@dataclass
class Row:
    id: int
    city: str
    temperature: float


def decode_file(path: str, codec: polycodec.Codec[Row]) -> tuple[int, int, str]:
    """Runs on a worker: reads one file lazily, a block or chunk at a time."""
    count = total = 0
    with open(path, "rb") as fp:
        for row in codec.iter_file(fp):
            count += 1
            total += row.id
    return count, total, str(os.getpid())


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as connection,
    ):
        yield connection


@pytest.mark.parametrize("fmt", ["avro", "msgpack", "json"])
def test_local_cluster_decodes_files_in_parallel(client: Any, tmp_path: Path, fmt: str) -> None:
    codec = polycodec.Codec(Row, fmt)
    assert pickle.loads(pickle.dumps(codec)).format == fmt
    paths = []
    for n in range(4):
        path = tmp_path / f"part-{n}.{fmt}"
        with open(path, "wb") as fp:
            rows = (Row(n * 1000 + i, f"c{i % 5}", i / 3) for i in range(500))
            codec.write_file(fp, rows, **({"sync_interval": 100} if fmt == "avro" else {}))
        paths.append(str(path))
    futures = client.map(decode_file, paths, codec=codec)
    distributed.wait(futures, timeout=60)
    results: list[tuple[int, int, str]] = client.gather(futures)
    assert [r[0] for r in results] == [500] * 4
    assert sum(r[1] for r in results) == sum(n * 1000 * 500 + 499 * 500 // 2 for n in range(4))
    assert str(os.getpid()) not in {r[2] for r in results}, "decoded in the worker processes"
