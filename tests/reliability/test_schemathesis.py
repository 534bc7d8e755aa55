"""An outside fuzzer agrees with the daemon's own document: schemathesis (PyPI) runs every
check it has (``--checks all``: no 5xx, status codes, content types and response schemas as
documented, schema-valid requests accepted, schema-violating ones refused, Allow on 405,
authentication enforced) on GET /api/openapi.json of the real aiohttp server on a loopback
port, with an agent key, for a bounded number of examples (a fixed seed: the same cases on
every run; bench/fuzz_soak.py and `st run` by hand go further).

Every operation is run but MCP's transport (JSON-RPC errors, a session) and those of
test_api_fuzz.EXCLUDED. For the operations in REFUSES_VALID, one check is off: that a request
valid by the document is accepted. Each refuses some such requests for a rule no document can
say, because it depends on data: a pairing code or challenge that was issued, update ids that
exist, the fields of a form run, the content of a zip. Every other check, the refusal of
invalid requests among them, still runs on them. Rules that a schema can say are in the request
models (some only as documentation, where the service's refusal keeps its status and message).
A value from the store that a request needs, the memory delta's receipt, is supplied instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from state.paths import Paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from tests.reliability.test_api_fuzz import EXCLUDED, ThreadedDaemon

ST = Path(sys.executable).with_name("st")
LEFT_OUT = {"/mcp": "MCP's transport answers JSON-RPC errors and needs a session"}
REFUSES_VALID = {
    "/api/agent/register": "a solved challenge or a pairing code is required",
    "/api/agent/updates/ack": "update ids must name real updates",
    "/api/memories/import": "the body is a zip archive",
    "/api/memories/import/validate": "the body is a zip archive",
    "/api/memories/{slug}/persona-distill/upload": "the body is multipart 'file' parts",
    "/api/memory/forms/{run_id}/submit": "the payload holds the fields of the run's own form",
}


def _path_regex(paths: list[str]) -> str:
    escaped = [p.replace("{", r"\{").replace("}", r"\}").replace(".", r"\.") for p in paths]
    return "^(" + "|".join(escaped) + ")$"


def config(refuses_valid: dict[str, str], supplied: dict[str, dict[str, str]] | None = None) -> str:
    """schemathesis.toml: every check on, but positive_data_acceptance off for each of these
    operations (the CLI's --checks would override a per-operation setting, so checks are
    chosen here); ``supplied`` gives operations parameter values from the store (a receipt)."""
    lines = ["checks.enabled = true"]
    for path, reason in refuses_valid.items():
        lines += ["", f"# {reason}", "[[operations]]", f"include-path = {json.dumps(path)}"]
        lines.append("checks.positive_data_acceptance.enabled = false")
    for path, parameters in (supplied or {}).items():
        values = ", ".join(f"{json.dumps(name)} = {json.dumps(value)}" for name, value in parameters.items())
        lines += ["", "[[operations]]", f"include-path = {json.dumps(path)}", f"parameters = {{ {values} }}"]
    return "\n".join(lines) + "\n"


def test_schemathesis_finds_no_failure_in_the_documented_operations(tmp_path):
    paths = Paths(tmp_path / "config", tmp_path / "data", tmp_path / "state", tmp_path / "cache").ensure()
    daemon = ThreadedDaemon(paths).start()
    try:
        owner = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
        agent = httpx.post(
            f"{daemon.url}/api/local/agents",
            json={"name": "schemathesis"},
            headers={"Authorization": f"Bearer {owner}"},
        ).json()["api_key"]
        # A memory delta needs a receipt this agent was given: every generated delta sends it.
        pack = httpx.post(
            f"{daemon.url}/api/agent/bootstrap/context", json={}, headers={"Authorization": f"Bearer {agent}"}
        ).json()
        receipt = {"/api/agent/memory-delta": {"X-AMP-Context-Receipt": pack["receipt"]["receipt_id"]}}
        (tmp_path / "schemathesis.toml").write_text(config(REFUSES_VALID, receipt))  # read from the cwd
        answer = subprocess.run(
            [
                str(ST),
                "run",
                f"{daemon.url}/api/openapi.json",
                "-H",
                f"Authorization: Bearer {agent}",
                "--exclude-path-regex",
                "^(" + "|".join(EXCLUDED) + ")",
                "--exclude-path-regex",
                _path_regex(list(LEFT_OUT)),
                "--phases",
                "examples,coverage,fuzzing",
                "--max-examples",
                "4",
                "--seed",
                "17",
                "--workers",
                "1",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,  # its config, and its .schemathesis/ cache, out of the checkout
        )
    finally:
        daemon.stop()
    found = answer.stdout.find("FAILURES")
    summary = answer.stdout[found : answer.stdout.find("SUMMARY", found)][:6000] if found >= 0 else ""
    assert answer.returncode == 0, summary or answer.stderr[-3000:]
    # The configuration was read, and every operation but those left out was run.
    assert "schemathesis.toml" in answer.stdout, answer.stdout[:2000]
    tested = int(answer.stdout.split("Tested:")[1].split()[0])
    assert tested >= 130, answer.stdout[-2000:]


def test_the_config_turns_off_one_check_for_the_named_operations_only():
    text = config({"/a/{slug}": "why a"})
    assert text.startswith("checks.enabled = true\n")
    assert '# why a\n[[operations]]\ninclude-path = "/a/{slug}"\n' in text
    assert text.endswith("checks.positive_data_acceptance.enabled = false\n")


def test_the_config_supplies_parameter_values_to_the_named_operation():
    text = config({}, {"/b": {"X-Receipt": "rcpt_1"}})
    assert text.endswith('[[operations]]\ninclude-path = "/b"\nparameters = { "X-Receipt" = "rcpt_1" }\n')
