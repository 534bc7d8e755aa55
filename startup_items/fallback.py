"""The fallback cache: the context summary on disk, for when the daemon cannot answer.

One JSON file per runtime under ``.amp/cache/`` (git-ignored), already cut to that runtime's
output cap minus room for the launcher's "cached, N min old" line. Written atomically, so a
launcher never reads half a cache.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from startup_items.runtimes import CACHE_DIR, RECEIPT_PATH, RuntimeSpec
from state.atomic import write_atomic


def write_cache(root: Path, spec: RuntimeSpec, summary: str, *, workspace_id: str, project_key: str) -> Path:
    now = datetime.now(UTC)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
    target = root / spec.cache_path()
    write_atomic(
        target,
        json.dumps(
            {
                "schema": "memorycloud.fallback-cache.v1",
                "runtime": spec.name,
                "generated_at": stamp,
                "workspace_id": workspace_id,
                "project_key": project_key,
                "summary_markdown": summary,
            },
            ensure_ascii=False,
            indent=2,
        )
        + "\n",
    )
    return target


def remove_caches(root: Path, spec: RuntimeSpec, *, last: bool) -> None:
    """Delete this runtime's cache; with ``last``, also the receipt and the empty cache dir."""
    (root / spec.cache_path()).unlink(missing_ok=True)
    if last:
        (root / RECEIPT_PATH).unlink(missing_ok=True)
        try:
            (root / CACHE_DIR).rmdir()
        except OSError:
            pass
