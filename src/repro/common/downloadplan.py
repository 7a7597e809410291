"""What a config downloads, and how much: the `downloads` target's list and the size summary
printed before download jobs start (HEAD requests, where the server answers them)."""

from __future__ import annotations

import concurrent.futures
import socket
import urllib.error
import urllib.parse
import urllib.request

from repro.common.download import USER_AGENT

HEAD_TIMEOUT_S = 15.0
HEAD_WORKERS = 8


def referenced_downloads(config: dict) -> list[str]:
    """The `downloads` entries that an enabled paper's section names (as any string value, at
    any depth: `download`, `downloads`, `source`, `model_files`, ...), sorted."""
    names = set(config.get("downloads") or {})
    found: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
        elif isinstance(node, str) and node in names:
            found.add(node)

    for section in (config.get("papers") or {}).values():
        if section.get("enabled"):
            walk(section)
    return sorted(found)


def unresolved_hosts(urls) -> list[str]:
    """The hosts of these http(s) URLs that have no address here (no network, or a typo):
    their downloads could only fail, each after its retries."""
    hosts = sorted({urllib.parse.urlparse(u).hostname for u in urls if u.startswith("http")})

    def unresolved(host):
        try:
            socket.getaddrinfo(host, None)
        except (socket.gaierror, UnicodeError):
            return True
        return False

    with concurrent.futures.ThreadPoolExecutor(HEAD_WORKERS) as pool:
        return [h for h, bad in zip(hosts, pool.map(unresolved, hosts), strict=True) if bad]


class _KeepHead(urllib.request.HTTPRedirectHandler):
    """urllib turns a redirected HEAD into a GET; keep it a HEAD, and keep every hop's headers
    (the Hugging Face Hub names an LFS file's size in X-Linked-Size on its redirect)."""

    def __init__(self):
        self.hops = []

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        self.hops.append(headers)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None:
            new.method = req.get_method()
        return new


def remote_size(url: str, timeout: float = HEAD_TIMEOUT_S) -> int | None:
    """The size a HEAD request announces (Content-Length, else X-Linked-Size), or None when the
    server gives none or does not answer."""
    redirects = _KeepHead()
    req = urllib.request.Request(url, method="HEAD", headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.build_opener(redirects).open(req, timeout=timeout) as resp:
            hops = [resp.headers, *reversed(redirects.hops)]
    except (urllib.error.URLError, OSError, ValueError):
        return None
    for key in ("Content-Length", "X-Linked-Size"):
        value = next((h[key] for h in hops if (h.get(key) or "").isdigit()), None)
        if value is not None:
            return int(value)
    return None


def human(n: int) -> str:
    size = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


def summary(urls: dict[str, str], refused: dict[str, str] | None = None) -> str:
    """One line per download (name, size or '?', URL) and the total, sizes from HEAD requests
    in parallel; `refused` names the entries strict mode will refuse, with the reason."""
    with concurrent.futures.ThreadPoolExecutor(HEAD_WORKERS) as pool:
        sizes = dict(zip(urls, pool.map(remote_size, urls.values()), strict=True))
    known = [s for s in sizes.values() if s is not None]
    lines = [
        f"  {name}: {human(sizes[name]) if sizes[name] is not None else '? (no size from HEAD)'}"
        f"  {urls[name]}"
        for name in sorted(urls)
    ]
    unknown = len(urls) - len(known)
    total = f"downloads: {len(urls)} file(s) to fetch, {human(sum(known))} in total"
    total += f" ({unknown} of unknown size)" if unknown else ""
    lines += [f"  refused (downloads_lock: strict): {why}" for why in (refused or {}).values()]
    return "\n".join([total, *lines])
