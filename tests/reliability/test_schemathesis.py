"""An outside fuzzer agrees with the daemon's own document: schemathesis (PyPI) runs every
check it has (``--checks all``: no 5xx, status codes, content types and response schemas as
documented, schema-valid requests accepted, schema-violating ones refused, Allow on 405,
authentication enforced) on GET /api/openapi.json of the real aiohttp server on a loopback
port, with an agent key, for a bounded number of examples (a fixed seed: the same cases on
every run; bench/fuzz_soak.py and `st run` by hand go further).

Every operation is run but MCP's transport (JSON-RPC errors, a session) and those of
test_api_fuzz.EXCLUDED, with every check on. Values from the store that requests need are
supplied: the memory delta's receipt, a suite's slug for its sync and distillation. For the
operations in REFUSES_VALID, the check that a request valid by the document is accepted also
takes one more status: the one each answers for a rule no document can say, because it
depends on data (a receipt or a pairing code that was issued, update ids that exist, a form
run's own fields, the bytes of a zip, text files). Any other refusal of a valid request still
fails. Rules that a schema can say are in the request models (some only as documentation,
where the service's refusal keeps its status and message).
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
# The default statuses of positive_data_acceptance (schemathesis 4's), to which each of these
# operations adds the one status it answers for data the document cannot know.
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]
REFUSES_VALID = {
    # a receipt in the body wins over the supplied header (as in the reference): a made-up one
    "/api/agent/memory-delta": (428, "context_receipt_id must name a receipt this agent was given"),
    "/api/agent/register": (400, "a solved challenge or a pairing code is required"),
    "/api/agent/updates/ack": (400, "update ids must name real updates"),
    "/api/memories/import": (400, "the body is a zip archive"),
    "/api/memories/import/validate": (400, "the body is a zip archive"),
    "/api/memories/{slug}/persona-distill/upload": (422, "the 'file' parts are UTF-8 text"),
    "/api/memory/forms/{run_id}/submit": (422, "the payload holds the fields of the run's own form"),
}


def _path_regex(paths: list[str]) -> str:
    escaped = [p.replace("{", r"\{").replace("}", r"\}").replace(".", r"\.") for p in paths]
    return "^(" + "|".join(escaped) + ")$"


def config(
    refuses_valid: dict[str, tuple[int, str]], supplied: dict[str, dict[str, str]] | None = None
) -> str:
    """schemathesis.toml: every check on (the CLI's --checks would override a per-operation
    setting, so checks are chosen here); positive_data_acceptance also takes, for each of
    these operations, the one status it refuses data-dependent requests with; ``supplied``
    gives operations parameter values from the store (a receipt)."""
    lines = ["checks.enabled = true"]
    for path, (status, reason) in refuses_valid.items():
        lines += ["", f"# {reason}", "[[operations]]", f"include-path = {json.dumps(path)}"]
        lines.append(
            f"checks.positive_data_acceptance.expected-statuses = {json.dumps([*ACCEPTED, str(status)])}"
        )
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
        # A suite of this agent's, so that its sync and distillation reach their rules, not a 404.
        suite = httpx.post(
            f"{daemon.url}/api/memories",
            json={"title": "Fuzzed suite", "summary": "for schemathesis", "license": "MIT"},
            headers={"Authorization": f"Bearer {agent}"},
        ).json()
        supplied = {
            "/api/agent/memory-delta": {"X-AMP-Context-Receipt": pack["receipt"]["receipt_id"]},
            **{
                f"/api/memories/{{slug}}/{tail}": {"slug": suite["slug"]}
                for tail in ("sync", "persona-distill", "persona-distill/upload")
            },
        }
        (tmp_path / "schemathesis.toml").write_text(config(REFUSES_VALID, supplied))  # read from the cwd
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


def test_the_config_adds_one_accepted_status_for_the_named_operations_only():
    text = config({"/a/{slug}": (400, "why a")})
    assert text.startswith("checks.enabled = true\n")
    assert '# why a\n[[operations]]\ninclude-path = "/a/{slug}"\n' in text
    assert text.endswith(
        'checks.positive_data_acceptance.expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx", "400"]\n'
    )


def test_the_config_supplies_parameter_values_to_the_named_operation():
    text = config({}, {"/b": {"X-Receipt": "rcpt_1"}})
    assert text.endswith('[[operations]]\ninclude-path = "/b"\nparameters = { "X-Receipt" = "rcpt_1" }\n')
