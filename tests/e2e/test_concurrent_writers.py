"""Two writers change the same memory at the same moment, against the real daemon process:
exactly one wins, the other gets 409, and the loser's content is kept as a conflict.

The writers are an agent on the Memory Stores API and a person editing the same memory as a
file through `memorycloud mount` (the sandbox view of seed 001), released together by a
barrier; then two API clients race the same way. Each round checks who won from the outcome,
not from the timing, so either order must keep the promise.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx

from daemon.mount import Mount
from daemon.owner_client import OwnerClient
from state.paths import resolve_paths

BASE = "/api/v1/cloud/memory_stores"
ROUNDS = 5


def race(*actions) -> list[Any]:
    """Run the actions in threads released at the same instant; their results in order."""
    barrier = threading.Barrier(len(actions))
    results: list[Any] = [None] * len(actions)

    def run(index: int, action) -> None:
        barrier.wait()
        results[index] = action()

    threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(actions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def conflicts_for(owner: OwnerClient, memory_id: str) -> list[dict[str, Any]]:
    return [c for c in owner.get("/api/local/conflicts")["conflicts"] if c["subject_id"] == memory_id]


def test_api_and_mounted_file_race_for_one_memory(daemon, agent_key, tmp_path):
    http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {agent_key}"})
    owner = OwnerClient.for_installation(resolve_paths(), daemon.url)
    store_id = http.post(BASE, json={"name": "raced"}).json()["id"]
    mount = Mount(owner, store_id, tmp_path / "awareness")
    wins = {"api": 0, "file": 0}
    for i in range(ROUNDS):
        path = f"race/{i}.md"
        memory = http.post(f"{BASE}/{store_id}/memories", json={"path": path, "content": f"base {i}"}).json()
        assert mount.sync().pulled == [path]
        (tmp_path / "awareness" / path).write_text(f"file edit {i}")
        api_edit = f"api edit {i}"
        answer, report = race(
            lambda memory=memory, api_edit=api_edit: http.post(
                f"{BASE}/{store_id}/memories/{memory['id']}",
                json={"content": api_edit, "content_sha256": memory["content_sha256"]},
            ),
            mount.sync,
        )
        api_won, file_won = answer.status_code == 200, report.pushed == [path]
        assert api_won != file_won, (answer.status_code, report.to_dict())
        current = http.get(f"{BASE}/{store_id}/memories/{memory['id']}").json()
        assert current["version"] == 2
        kept = conflicts_for(owner, memory["id"])
        assert len(kept) == 1 and kept[0]["kind"] == "memory_store_occ"
        if api_won:
            wins["api"] += 1
            assert current["content"] == api_edit and report.conflicts
            assert kept[0]["incoming"] == f"file edit {i}"
        else:
            wins["file"] += 1
            assert current["content"] == f"file edit {i}"
            assert answer.status_code == 409 and answer.json()["error"]["type"] == "conflict_error"
            assert answer.json()["error"]["details"]["conflict_id"] == kept[0]["id"]
            assert kept[0]["incoming"] == api_edit
    assert sum(wins.values()) == ROUNDS


def test_two_api_clients_race_for_one_memory(daemon, agent_key):
    clients = [
        httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {agent_key}"}) for _ in range(2)
    ]
    owner = OwnerClient.for_installation(resolve_paths(), daemon.url)
    store_id = clients[0].post(BASE, json={"name": "raced"}).json()["id"]
    memory = clients[0].post(f"{BASE}/{store_id}/memories", json={"path": "a.md", "content": "v1"}).json()
    sha = memory["content_sha256"]
    for i in range(ROUNDS):
        contents = [f"writer {w} round {i}" for w in range(2)]
        answers = race(
            *[
                (
                    lambda c=c, text=text, sha=sha: c.post(
                        f"{BASE}/{store_id}/memories/{memory['id']}",
                        json={"content": text, "content_sha256": sha},
                    )
                )
                for c, text in zip(clients, contents, strict=True)
            ]
        )
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 409], [a.text for a in answers]
        winner = next(w for w, a in enumerate(answers) if a.status_code == 200)
        current = clients[0].get(f"{BASE}/{store_id}/memories/{memory['id']}").json()
        assert current["content"] == contents[winner] and current["version"] == i + 2
        loser = answers[1 - winner].json()["error"]["details"]["conflict_id"]
        assert [c["incoming"] for c in conflicts_for(owner, memory["id"]) if c["id"] == loser] == [
            contents[1 - winner]
        ]
        sha = current["content_sha256"]
