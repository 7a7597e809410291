"""One split of a Hugging Face dataset as every parquet shard the Hub's dataset viewer lists.

A split's shard count is not known before its conversion is listed (SUN397's 19,850 test
images fill several shards), so a ``downloads`` entry with ``parquet_split: true`` names the
viewer's listing (``https://datasets-server.huggingface.co/parquet?dataset=D&config=C&split=S``,
JSON ``{"parquet_files": [{"url", "filename", "size", ...}], "partial": bool}``) instead of a
file: the listing is read at download time and each shard is fetched into one folder, checked
against the download lock under the name ``<entry>/<filename>`` like any other download.
"""

from __future__ import annotations

import json
import logging
import os
import pathlib
import shutil
import tempfile
import urllib.request

from repro.common.download import USER_AGENT, DownloadError
from repro.common.downloadlock import locked_fetch

log = logging.getLogger(__name__)


def read_listing(url: str, timeout: float = 60.0) -> list[dict]:
    """The listed shards of one split, in shard order; a partial conversion (the viewer
    converted only the start of a large split) is refused."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            listing = json.load(response)
    except (OSError, ValueError) as e:
        raise DownloadError(f"the parquet listing {url} could not be read: {e}") from e
    shards = sorted(listing.get("parquet_files") or [], key=lambda s: s["filename"])
    if not shards:
        raise DownloadError(f"the parquet listing {url} lists no shard")
    if listing.get("partial"):
        raise DownloadError(f"{url}: the viewer converted only part of this split (partial)")
    return shards


def fetch_split(
    name: str, url: str, out_dir: str | os.PathLike, *, lock_path, strict: bool, **download_kw
) -> list[pathlib.Path]:
    """Every shard of the split listed at ``url`` into ``out_dir`` (made whole or not at all:
    a temporary folder renamed at the end); returns the shard paths in order."""
    out_dir = pathlib.Path(out_dir)
    shards = read_listing(url)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}."))
    try:
        for shard in shards:
            locked_fetch(
                f"{name}/{shard['filename']}",
                shard["url"],
                tmp / shard["filename"],
                pinned=None,
                lock_path=lock_path,
                strict=strict,
                **download_kw,
            )
        tmp.chmod(0o755)  # mkdtemp creates 0700
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.info("downloads.%s: %d shard(s) in %s", name, len(shards), out_dir)
    return [out_dir / s["filename"] for s in shards]


def shard_files(paths) -> list[str]:
    """Parquet files in order: a folder (a fetched split) stands for its sorted shards."""
    files = []
    for path in map(pathlib.Path, paths):
        files += sorted(map(str, path.glob("*.parquet"))) if path.is_dir() else [str(path)]
    return files
