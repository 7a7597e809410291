"""repro.common.parquetsplit against a real HTTP server on 127.0.0.1: a split's listed shards
fetched in shard order and locked one by one; a partial or empty listing refused."""

import hashlib
import json

import pytest

from repro.common.download import DownloadError
from repro.common.downloadlock import read_lock
from repro.common.parquetsplit import fetch_split, shard_files


def _listing(root, base, shards, partial=False):
    files = []
    for name, data in shards.items():
        (root / name).write_bytes(data)
        files.append({"url": f"{base}/{name}", "filename": name, "size": len(data)})
    (root / "parquet").write_text(json.dumps({"parquet_files": files, "partial": partial}))
    return f"{base}/parquet?dataset=x/y&config=default&split=test"


def test_every_listed_shard_is_fetched_in_order_and_locked(tmp_path, http_server):
    root, base = http_server
    shards = {"0001.parquet": b"second" * 50, "0000.parquet": b"first" * 70}  # listed unsorted
    url = _listing(root, base, shards)
    lock = tmp_path / "lock.yaml"
    paths = fetch_split("s", url, tmp_path / "out" / "shards", lock_path=lock, strict=False)
    assert [p.name for p in paths] == ["0000.parquet", "0001.parquet"]
    assert shard_files([tmp_path / "out" / "shards"]) == [str(p) for p in paths]
    assert [p.read_bytes() for p in paths] == [shards["0000.parquet"], shards["0001.parquet"]]
    locked = read_lock(lock)
    assert {k: v.sha256 for k, v in locked.items()} == {
        f"s/{n}": hashlib.sha256(d).hexdigest() for n, d in shards.items()
    }


@pytest.mark.parametrize(
    ("shards", "partial", "message"),
    [({"0000.parquet": b"x"}, True, "only part of this split"), ({}, False, "lists no shard")],
)
def test_a_partial_or_empty_listing_is_refused_and_leaves_nothing(
    tmp_path, http_server, shards, partial, message
):
    root, base = http_server
    url = _listing(root, base, shards, partial)
    with pytest.raises(DownloadError, match=message):
        fetch_split("s", url, tmp_path / "out" / "shards", lock_path=tmp_path / "l", strict=False)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
