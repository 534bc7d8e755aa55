"""No API key leaks: a full session through every dialect, then everything it produced is
scanned for every key it used.

The session: agents made by the CLI, by the owner's API and by pairing; AMP bootstrap,
deltas and briefs; a startup item and its launcher (fallback cache); Memory Stores and a
mount; agent-memory1.0; MCP over HTTP; a suite created and exported; refused requests that
carried keys. Afterwards no key is in the database (only its sha256), the logs, the startup
items, the caches, the export or any error message. The two places meant to hold keys (the
owner's secrets file and the launcher's credentials file) are readable by their user only.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys

import httpx

from tests.e2e.conftest import cli

STORES = "/api/v1/cloud/memory_stores"


def test_no_key_in_anything_a_full_session_produces(daemon, agent_key, tmp_path):
    home = daemon.home
    owner_key = json.loads((home / "config/secrets.json").read_text())["owner_key"]
    keys = {"owner": owner_key, "cli agent": agent_key}
    answers: list[str] = []  # every response body of the session

    def call(method: str, path: str, key: str, **kwargs) -> httpx.Response:
        response = httpx.request(
            method,
            daemon.url + path,
            headers={"Authorization": f"Bearer {key}", **kwargs.pop("headers", {})},
            timeout=20,
            **kwargs,
        )
        answers.append(response.text)
        return response

    created = call("POST", "/api/local/agents", owner_key, json={"name": "api-agent"})
    answers.pop()  # the one answer meant to show a key, once
    keys["api agent"] = created.json()["api_key"]
    code = json.loads(cli("agent", "pair", "--name", "paired", "--runtime", "codex", "--json").stdout)
    keys["paired agent"] = httpx.post(
        f"{daemon.url}/api/agent/register", json={"pairing_code": code["pairing_code"]}
    ).json()["api_key"]

    pack = call("POST", "/api/agent/bootstrap/context", agent_key, json={"project_key": "hygiene"}).json()
    call(
        "POST",
        "/api/agent/memory-delta",
        agent_key,
        json={"summary": "a normal decision"},
        headers={"X-AMP-Context-Receipt": pack["receipt_id"]},
    )
    brief = call("POST", "/api/agent/memory-brief", keys["api agent"], json={"task": "t"}).json()
    call(
        "POST",
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        keys["api agent"],
        json={"summary": "an event"},
    )
    store = call("POST", STORES, keys["paired agent"], json={"name": "notes"}).json()
    call(
        "POST",
        f"{STORES}/{store['id']}/memories",
        keys["paired agent"],
        json={"path": "a.md", "content": "stores content"},
    )
    call(
        "POST",
        "/add_messages/",
        agent_key,
        json={"user_id": "u", "scope_id": "s", "messages": [{"role": "user", "content": "hi"}]},
    )
    init = call(
        "POST",
        "/mcp",
        agent_key,
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    remembered = call(
        "POST",
        "/mcp",
        agent_key,
        headers={"Mcp-Session-Id": init.headers["Mcp-Session-Id"]},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"summary": "via mcp"}},
        },
    )
    assert remembered.status_code == 200 and "error" not in remembered.json(), remembered.text
    suite = call(
        "POST",
        "/api/memories",
        agent_key,
        json={
            "title": "Hygiene",
            "summary": "s",
            "license": "MIT",
            "long_term_markdown": "# Facts\n- one",
            "provenance": {"source": "test", "author": "me"},
        },
    )
    assert suite.status_code == 200, suite.text
    export = call("GET", f"/api/catalog/{suite.json()['slug']}/download", agent_key)
    assert export.status_code == 200
    (tmp_path / "export.zip").write_bytes(export.content)

    repo = tmp_path / "repo"
    repo.mkdir()
    cli("connect", "--runtime", "claude_code", "--repo", str(repo), "--yes", "--json")
    env = {k: v for k, v in os.environ.items() if k != "MEMORYCLOUD_API_KEY"}
    launched = subprocess.run(
        [sys.executable, "-S", str(repo / ".amp/launcher.py"), "--runtime", "claude_code"],
        input="{}",
        capture_output=True,
        text=True,
        timeout=20,
        env=env,
    )
    assert launched.returncode == 0 and (repo / ".amp/cache").is_dir(), launched.stderr
    cli("mount", store["id"], str(tmp_path / "mounted"), "--once", "--json")

    # Refusals that carried keys: wrong scope, owner-only, unknown and revoked keys.
    call("POST", "/api/local/updates", agent_key, json={"title": "t", "summary": "s"})
    call("GET", "/api/local/status", keys["api agent"])
    call("GET", "/api/me", agent_key + "x")
    cli("agent", "remove", "paired")
    call("GET", "/api/me", keys["paired agent"])
    answers.append(cli("agent", "list", "--json").stdout + cli("doctor", "--json").stdout)
    credentials = json.loads((home / "config/credentials.json").read_text())
    keys |= {f"credential {ref}": key for ref, key in credentials.items()}
    daemon.stop()

    assert len(set(keys.values())) == len(keys) >= 5 and all(len(k) >= 32 for k in keys.values())
    for answer in answers:
        for name, key in keys.items():
            assert key not in answer, f"the {name} key is in a response: {answer[:200]}"
            assert key + "x" not in answer
    meant_for_keys = {home / "config/secrets.json", home / "config/credentials.json"}
    for path in meant_for_keys:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{path} is readable by others"
    scanned = 0
    for root in (home, repo, tmp_path / "mounted", tmp_path):
        for path in root.rglob("*"):
            if not path.is_file() or path in meant_for_keys:
                continue
            data = path.read_bytes()
            scanned += 1
            for name, key in keys.items():
                assert key.encode() not in data, f"the {name} key is in {path}"
    assert scanned >= 15
    database = (home / "data/memorycloud.db").read_bytes()
    for name in ("owner", "cli agent", "api agent", "paired agent"):
        digest = hashlib.sha256(keys[name].encode()).hexdigest().encode()
        assert digest in database, f"the {name} key is not stored as its sha256"
