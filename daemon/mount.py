"""``memorycloud mount STORE DIR``: a Memory Store as files (the seed's sandbox view), kept in
step both ways.

Each memory is the file ``DIR/<path>``. A sync pass compares three things per path: the
server's sha256, the file's sha256 and the sha256 both had at the last pass (kept in
``DIR/.memorycloud-mount.json``). Whoever changed wins; if both changed, the file is not
overwritten: the local edit is sent with the old sha256, the server answers 409 and keeps it
as a conflict for the person (sent once; a new edit of the file is sent again). A file deleted locally deletes the memory (its versions stay).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.owner_client import OwnerClient
from state.atomic import write_atomic
from state.errors import MemoryCloudError

STATE_FILE = ".memorycloud-mount.json"
BASE = "/api/v1/cloud/memory_stores"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class SyncReport:
    pulled: list[str] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    deleted_local: list[str] = field(default_factory=list)
    deleted_remote: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    pending_conflicts: list[str] = field(default_factory=list)  # reported earlier, unchanged

    def changed(self) -> bool:
        return any(getattr(self, f) for f in self.__dataclass_fields__ if f != "pending_conflicts")

    def to_dict(self) -> dict[str, list[str]]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


class Mount:
    def __init__(self, client: OwnerClient, store_id: str, directory: Path) -> None:
        self.client = client
        self.store_id = store_id
        self.root = directory.resolve()
        self.state_path = self.root / STATE_FILE

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        if state.get("store_id") not in (None, self.store_id):
            raise MemoryCloudError(f"{self.root} is a mount of {state['store_id']}, not {self.store_id}")
        return state.get("files", {})

    def _save(self, files: dict[str, dict[str, str]]) -> None:
        write_atomic(self.state_path, json.dumps({"store_id": self.store_id, "files": files}, indent=2))

    def _target(self, path: str) -> Path:
        target = (self.root / path).resolve()
        if self.root not in target.parents:
            raise MemoryCloudError(f"memory path {path!r} would leave {self.root}")
        return target

    def _remote(self) -> dict[str, dict[str, Any]]:
        memories: dict[str, dict[str, Any]] = {}
        cursor = None
        while True:
            params = {"limit": 100, **({"cursor": cursor} if cursor else {})}
            page = self.client.get(f"{BASE}/{self.store_id}/memories", **params)
            memories.update({m["path"]: m for m in page["data"]})
            if not page["has_more"]:
                return memories
            cursor = page["next_cursor"]

    def _local(self) -> dict[str, bytes]:
        files = {}
        for path in self.root.rglob("*"):
            if path.is_file() and path.name != STATE_FILE and not path.name.endswith(".tmp"):
                files[path.relative_to(self.root).as_posix()] = path.read_bytes()
        return files

    def _write(self, path: str, content: str) -> None:
        write_atomic(self._target(path), content)

    def sync(self) -> SyncReport:
        """One pass in both directions (see the module docstring)."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.client.get(f"{BASE}/{self.store_id}")  # a clear error for an unknown store
        report = SyncReport()
        state, remote, local = self._load(), self._remote(), self._local()
        new_state: dict[str, dict[str, Any]] = {}  # JSON state: a sha may be null
        for path in sorted(set(state) | set(remote) | set(local)):
            known = state.get(path, {}).get("sha256")
            server = remote.get(path)
            server_sha = server["content_sha256"] if server else None
            data = local.get(path)
            local_sha = _sha(data) if data is not None else None
            if server and data is None and known is None:  # new on the server
                memory = self.client.get(f"{BASE}/{self.store_id}/memories/{server['id']}")
                self._write(path, memory["content"])
                report.pulled.append(path)
                new_state[path] = {"memory_id": server["id"], "sha256": server_sha}
            elif server is None and data is not None and known is None:  # new file here
                created = self._push_new(path, data, report)
                if created:
                    new_state[path] = created
            elif server is None and known is not None:  # deleted on the server
                if data is not None and local_sha == known:
                    self._target(path).unlink()
                    report.deleted_local.append(path)
                elif data is not None:  # edited here, deleted there: keep the edit as new
                    created = self._push_new(path, data, report)
                    if created:
                        new_state[path] = created
            elif data is None and server is not None:  # deleted here
                if server_sha == known:
                    self.client.delete(f"{BASE}/{self.store_id}/memories/{server['id']}")
                    report.deleted_remote.append(path)
                else:  # changed there meanwhile: bring it back rather than lose it
                    memory = self.client.get(f"{BASE}/{self.store_id}/memories/{server['id']}")
                    self._write(path, memory["content"])
                    report.pulled.append(path)
                    new_state[path] = {"memory_id": server["id"], "sha256": server_sha}
            elif server is not None and data is not None:
                entry = {"memory_id": server["id"], "sha256": server_sha}
                if local_sha == server_sha:
                    new_state[path] = entry
                elif local_sha == known:  # only the server changed
                    memory = self.client.get(f"{BASE}/{self.store_id}/memories/{server['id']}")
                    self._write(path, memory["content"])
                    report.pulled.append(path)
                    new_state[path] = entry
                elif state.get(path, {}).get("conflict_local_sha") == local_sha:
                    # Already sent and kept as a conflict; wait for the person (or a new edit).
                    report.pending_conflicts.append(path)
                    new_state[path] = state[path]
                else:  # changed here (and maybe there): send with the sha we last saw
                    new_state[path] = self._push_update(path, server, data, known, report) or {
                        "memory_id": server["id"],
                        "sha256": known or server_sha,
                        "conflict_local_sha": local_sha,
                    }
        self._save(new_state)
        return report

    def _push_new(self, path: str, data: bytes, report: SyncReport) -> dict[str, str] | None:
        try:
            created = self.client.post(
                f"{BASE}/{self.store_id}/memories", {"path": path, "content": data.decode("utf-8")}
            )
        except (MemoryCloudError, UnicodeDecodeError) as exc:
            report.conflicts.append(f"{path}: not uploaded ({exc})")
            return None
        report.created.append(path)
        return {"memory_id": created["id"], "sha256": created["content_sha256"]}

    def _push_update(
        self, path: str, server: dict[str, Any], data: bytes, known: str | None, report: SyncReport
    ) -> dict[str, str] | None:
        body = {
            "content": data.decode("utf-8", errors="replace"),
            "content_sha256": known or server["content_sha256"],
        }
        try:
            updated = self.client.post(f"{BASE}/{self.store_id}/memories/{server['id']}", body)
        except MemoryCloudError as exc:
            report.conflicts.append(f"{path}: {exc.message}")
            return None
        report.pushed.append(path)
        return {"memory_id": updated["id"], "sha256": updated["content_sha256"]}

    def run(self, interval: float, echo) -> None:
        """Sync until interrupted, reporting each pass that changed something."""
        while True:
            report = self.sync()
            if report.changed():
                echo(report)
            time.sleep(interval)
