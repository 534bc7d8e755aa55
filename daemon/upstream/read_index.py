"""What the read-endpoint pull learns from an AMP upstream, in one shape.

Two answers describe a workspace's records: the memory map's ``assets`` (every kind of
record, newest first, without their full text) and the memory query's ``items`` (one memory
type at a time, with it). MemoryCloud's reference server and this daemon fill them
differently; this module reads both into :class:`Incoming`:

* this daemon's items carry the record as it is (``content``, ``content_sha256``,
  ``written_by``, ``provenance``): the content is *exact*, equal to the upstream's own;
* the reference's items carry ``compiled_markdown`` (its rendering of an adaptive memory), and
  its memory deltas appear only as map assets (``title``: the summary cut to 96 characters,
  ``summary``: why it matters, cut to 220) with no detail endpoint: the content is derived.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Map assets the pull takes. Summary cards repeat a delta (the reference makes one per
# delta), graph nodes and published packages are not workspace memory records.
PULLED_KINDS = frozenset({"adaptive_memory", "memory_delta", "memory"})
CUT = "…"  # the reference's mark of a shortened map text


@dataclass
class Incoming:
    """One upstream record as seen in this round."""

    upstream_id: str
    asset_kind: str  # adaptive_memory | memory_delta | memory
    kind: str  # its memory type
    updated_at: str
    title: str = ""
    content: str | None = None  # None until fetched
    exact: bool = False  # content is the upstream's own text, not a rendering
    truncated: bool = False  # content is a shortened map text (nothing fuller exists)
    importance: int = 3
    project_key: str | None = None
    triggers: list[str] = field(default_factory=list)
    source: str = "upstream"
    author: str | None = None
    origin: str | None = None  # origin_memory_id: a record some companion pushed
    detail_path: str | None = None  # where the full record can be read, if anywhere
    provenance: dict[str, Any] = field(default_factory=dict)
    gone: bool = False  # listed, but no longer readable: nothing to take

    @property
    def order(self) -> tuple[str, str]:
        return self.updated_at, self.upstream_id


def _source(asset_kind: str, given: Any) -> str:
    if isinstance(given, str) and given:
        return given
    return {"adaptive_memory": "adaptive_memory", "memory_delta": "memory_delta"}.get(asset_kind, "upstream")


def _object(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (upstream fields may be anything)."""
    return value if isinstance(value, dict) else {}


def origin_of(provenance: dict[str, Any]) -> str | None:
    """The local id a companion daemon sent the record with (memory-delta detail_payload)."""
    payload = _object(provenance.get("payload"))
    found = provenance.get("origin_memory_id") or payload.get("origin_memory_id")
    return found if isinstance(found, str) else None


def _detail_path(endpoint: Any, upstream_id: str) -> str | None:
    """Memory detail (GET /api/agent/memories/{id}) serves the full record; other endpoints
    (the reference's bootstrap/context for a delta) do not."""
    if isinstance(endpoint, str) and "/api/agent/memories/" in endpoint:
        return f"/api/agent/memories/{upstream_id}"
    return None


def from_asset(asset: dict[str, Any]) -> Incoming | None:
    """A memory-map asset, or None for what the pull does not take."""
    kind = asset.get("kind")
    upstream_id = asset.get("source_id")
    if kind not in PULLED_KINDS or not isinstance(upstream_id, str) or not asset.get("updated_at"):
        return None
    found = Incoming(
        upstream_id=upstream_id,
        asset_kind=kind,
        kind=str(asset.get("type") or kind),
        updated_at=str(asset["updated_at"]),
        title=str(asset.get("title") or ""),
        importance=int(asset.get("importance") or 3),
        project_key=asset.get("project_key") or None,
        triggers=[str(t) for t in asset.get("triggers") or [] if t][:20],
        source=_source(kind, None),
        author=asset.get("written_by"),
        detail_path=_detail_path(asset.get("detail_endpoint"), upstream_id),
    )
    if found.detail_path is None and kind == "memory_delta":
        # Nothing fuller exists there: the map's text is the record (the reference's deltas).
        summary, why = found.title, str(asset.get("summary") or "")
        found.content = summary if why in ("", summary) else f"{summary}\n\nWhy it matters: {why}"
        found.truncated = summary.endswith(CUT) or why.endswith(CUT)
    return found


def from_item(item: dict[str, Any], asset_kind: str | None = None) -> Incoming:
    """A memory-query item or a memory-detail ``memory``, with its full text."""
    provenance = _object(item.get("provenance"))
    exact = isinstance(item.get("content"), str)
    content = item["content"] if exact else str(item.get("compiled_markdown") or item.get("summary") or "")
    kind = asset_kind or (
        "adaptive_memory"
        if item.get("source") in (None, "adaptive_memory")
        else "memory_delta"
        if item.get("source") in ("memory_delta", "brief_event")
        else "memory"
    )
    return Incoming(
        upstream_id=str(item["id"]),
        asset_kind=kind,
        kind=str(item.get("memory_type") or kind),
        updated_at=str(item.get("updated_at") or item.get("created_at") or ""),
        title=str(item.get("title") or ""),
        content=content,
        exact=exact,
        importance=int(item.get("importance") or 3),
        project_key=item.get("project_key") or None,
        triggers=[str(t) for t in item.get("retrieval_triggers") or [] if t][:20],
        source=_source(kind, item.get("source")),
        author=item.get("written_by"),
        origin=origin_of(provenance),
        detail_path=f"/api/agent/memories/{item['id']}",
        provenance=provenance,
    )


def merge(seen: Incoming, full: Incoming) -> Incoming:
    """The map's entry completed by the item that holds its text."""
    full.asset_kind = seen.asset_kind
    full.updated_at = full.updated_at or seen.updated_at
    full.author = full.author or seen.author
    return full
