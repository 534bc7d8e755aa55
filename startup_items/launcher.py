#!/usr/bin/env python3
"""MemoryCloud startup-item launcher (written into a repository as .amp/launcher.py).

Run by an agent runtime's session-start hook. It asks the local MemoryCloud daemon for a
Runtime Context Pack, prints the summary in the runtime's format, saves the receipt to
.amp/receipt.json for memory deltas, and exits 0. If the daemon is down or slow, or anything
is wrong, it prints the fallback cache instead, marked as cached with its age, explains the
problem in one line on stderr, and still exits 0: a session must never fail to start
because of memory.

Standard library only, so any python3 >= 3.8 runs it; hooks start it with ``python3 -S`` and
it speaks HTTP over a plain socket, because interpreter start-up and importing urllib are most
of a launcher's time (bench/RESULTS.md). It never contains a key: the
key is found through credential_ref (the MEMORYCLOUD_API_KEY environment variable, or the
user's MemoryCloud credentials file: MEMORYCLOUD_HOME's, the one .amp/local.json names, the
platform default's, in that order).

Nothing it adds to the output contains '<' or '>': Gemini CLI escapes them (a Markdown quote
'> ...' reaches the model as '&gt; ...').
"""

import json
import os
import socket
import sys
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "memory-config.json")
RECEIPT = os.path.join(HERE, "receipt.json")
LOCAL_CONFIG = os.path.join(HERE, "local.json")
DEFAULT_TIMEOUT = 1.5
# Tells the daemon that a runtime's hook ran this launcher (not an agent calling by hand), so
# `memorycloud setup list` can say whether the startup item works.
LAUNCHER_HEADER = "X-MemoryCloud-Launcher"


class SandboxRefused(Exception):
    """The runtime's sandbox refused the connection (EPERM): the daemon may well be running."""


def credentials_files():
    """Where to look for launcher keys, in order: MEMORYCLOUD_HOME's credentials file, the one
    .amp/local.json names (this machine's home, for runtimes that start hooks without
    MEMORYCLOUD_HOME), the platform's default (mirrors platformdirs' config dir)."""
    files = []
    home = os.environ.get("MEMORYCLOUD_HOME")
    if home:
        files.append(os.path.join(os.path.expanduser(home), "config", "credentials.json"))
    try:
        with open(LOCAL_CONFIG, encoding="utf-8") as handle:
            named = json.load(handle).get("credentials_file")
        if isinstance(named, str) and named:
            files.append(os.path.expanduser(named))
    except (OSError, ValueError, AttributeError):
        pass
    files.append(default_credentials_file())
    return files


def default_credentials_file():
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support")
    elif os.name == "nt":
        base = os.environ.get("APPDATA") or os.path.expanduser("~")
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(base, "memorycloud", "credentials.json")


def load_config():
    with open(CONFIG, encoding="utf-8") as handle:
        config = json.load(handle)
    if not isinstance(config, dict) or "daemon_url" not in config:
        raise ValueError(".amp/memory-config.json has no daemon_url")
    return config


def find_key(credential_ref):
    key = os.environ.get("MEMORYCLOUD_API_KEY")
    if key:
        return key
    for path in credentials_files():
        try:
            with open(path, encoding="utf-8") as handle:
                key = json.load(handle).get(credential_ref)
        except (OSError, ValueError, AttributeError):
            key = None
        if isinstance(key, str) and key:
            return key
    raise LookupError("no key for credential_ref %r (set MEMORYCLOUD_API_KEY or run"
                      " `memorycloud connect`)" % credential_ref)


def error_message(body, fallback=None):
    """The human message of an error answer's decoded JSON ``body``, whichever envelope it
    comes in: AMP's and Memory Stores' ``{"error": {"message": ...}}``, FastAPI's and
    agent-memory1.0's ``{"detail": ...}`` (a string, an object, or a list of ``{"loc", "msg"}``);
    otherwise ``fallback``, or the body itself cut to 300 characters.

    Every client of the daemon (the CLI's owner client, the TUI, the MCP server, the upstream
    client) imports this one: the launcher must stay standard library only and alone in a
    repository, so it is the lowest module each of them may import (tests/test_architecture.py).
    """
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
            return error["message"]
        detail = body.get("detail")
        if isinstance(detail, str) and detail:
            return detail
        if isinstance(detail, dict):
            return str(detail.get("message") or detail.get("status") or detail)
        if isinstance(detail, list) and detail and all(isinstance(d, dict) and "msg" in d for d in detail):
            return "; ".join(
                "%s: %s" % (".".join(str(p) for p in d.get("loc") or [] if p != "body") or "request", d["msg"])
                for d in detail)
        if detail is not None:
            return str(detail)
    if fallback is not None:
        return fallback
    return str(body)[:300]


class HttpError(Exception):
    def __init__(self, status, message):
        Exception.__init__(self, "daemon answered %s: %s" % (status, message))
        self.status = status


def _dechunk(data):
    out = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out, data = out + data[:size], data[size + 2:]
    return out


def request(method, url, headers, body, timeout):
    """One HTTP/1.1 request over a socket (http:// only; the daemon listens on loopback)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError("only http:// daemon URLs are supported: %s" % url)
    path = parts.path.lstrip("/") + ("?" + parts.query if parts.query else "")
    payload = json.dumps(body).encode("utf-8") if body is not None else b""
    lines = ["%s /%s HTTP/1.1" % (method, path), "Host: %s" % parts.netloc, "Connection: close",
             "Content-Type: application/json", "Content-Length: %d" % len(payload)]
    lines += ["%s: %s" % item for item in headers.items()]
    try:
        sock = socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout)
    except PermissionError as exc:
        # EPERM/EACCES on connect to loopback: a sandbox (Codex's workspace-write, seatbelt,
        # seccomp) forbids the connection; a daemon that is down answers ECONNREFUSED instead.
        raise SandboxRefused("the sandbox this runs in refused the connection to the daemon"
                             " at %s (%s)" % (parts.netloc, exc.strerror or exc))
    with sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    raw = b"".join(chunks)
    head, _, data = raw.partition(b"\r\n\r\n")
    status_line, _, header_block = head.decode("latin-1").partition("\r\n")
    status = int(status_line.split()[1])
    if "transfer-encoding: chunked" in header_block.lower():
        data = _dechunk(data)
    try:
        decoded = json.loads(data.decode("utf-8")) if data else {}
    except ValueError:
        decoded = {}
    if status >= 400:
        raise HttpError(status, error_message(decoded, status_line))
    return decoded


def post(url, key, body, timeout, event=None):
    headers = {"Authorization": "Bearer " + key}
    if event:
        headers[LAUNCHER_HEADER] = event
    return request("POST", url, headers, body, timeout)


def write_json_atomic(path, data):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False, indent=2)
    os.replace(tmp, path)


def fetch_live(config, runtime, source, hook_event=None):
    options = config.get("runtimes", {}).get(runtime, {})
    key = find_key(options.get("credential_ref") or config.get("credential_ref") or "memorycloud_default")
    body = {"project_binding_id": config.get("project_binding_id"),
            "workspace_id": config.get("workspace_id"),
            "project_key": config.get("project_key"),
            "runtime": runtime, "reason": "agent_startup" if source in ("", "startup") else "session_" + source}
    for name in ("max_summary_chars", "max_summary_tokens"):
        if options.get(name):
            body[name] = options[name]
    pack = post(config["daemon_url"].rstrip("/") + "/api/agent/bootstrap/context", key, body,
                float(config.get("timeout_seconds", DEFAULT_TIMEOUT)),
                event="%s; runtime=%s" % (hook_event, runtime) if hook_event else None)
    write_json_atomic(RECEIPT, {
        "receipt_id": pack["receipt_id"], "context_pack_id": pack["context_pack_id"],
        "expires_at": pack.get("expires_at"), "runtime": runtime,
        "memory_delta": config["daemon_url"].rstrip("/") + "/api/agent/memory-delta",
        "header": "X-AMP-Context-Receipt"})
    return pack["summary_markdown"]


def cached(config, runtime, problem, sandboxed=False):
    """The fallback cache for this runtime, marked as cached with its age and the true reason."""
    cache_dir = os.path.join(HERE, config.get("fallback_cache_dir", "cache") if config else "cache")
    path = os.path.join(cache_dir, "%s.json" % runtime)
    from datetime import datetime, timezone  # only the fallback path needs it

    try:
        with open(path, encoding="utf-8") as handle:
            cache = json.load(handle)
        written = datetime.fromisoformat(cache["generated_at"].replace("Z", "+00:00"))
    except (OSError, ValueError, KeyError):
        if sandboxed:
            return ("# MemoryCloud memory unavailable here\n\nThis sandbox does not allow"
                    " connecting to the MemoryCloud daemon (%s), and no cached context exists yet."
                    " Use the memorycloud MCP server's tools instead (context_pack, search,"
                    " remember): MCP servers run outside the sandbox." % problem)
        return ("# MemoryCloud memory unavailable\n\nThe MemoryCloud daemon could not be reached"
                " (%s) and no cached context exists yet. Start it with `memorycloud daemon start`."
                % problem)
    age = max(0, int((datetime.now(timezone.utc) - written).total_seconds()))
    if age < 120:
        age_text = "%d s" % age
    elif age < 7200:
        age_text = "%d min" % (age // 60)
    else:
        age_text = "%.1f h" % (age / 3600)
    if sandboxed:
        reason = ("this sandbox does not allow connecting to the daemon (%s); the memorycloud MCP"
                  " server's tools (context_pack, search, remember) give the live memory" % problem)
    else:
        reason = "the daemon could not be reached (%s)" % problem
    # No '<' or '>' here: Gemini CLI would show the model '&gt;' (module docstring).
    return ("MemoryCloud: CACHED context from %s (%s old): %s. It may be stale.\n\n%s"
            % (cache["generated_at"], age_text, reason.replace("<", "(").replace(">", ")"),
               cache["summary_markdown"]))


def render(runtime, text, style):
    if style == "hook_json":
        event = "SessionStart"
        return json.dumps({"hookSpecificOutput": {"hookEventName": event,
                                                  "additionalContext": text}}, ensure_ascii=False)
    return text


def read_hook_input():
    """The JSON a hook runtime sends on stdin (empty when run by hand)."""
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    try:
        data = sys.stdin.read()
        return json.loads(data) if data.strip() else {}
    except (OSError, ValueError):
        return {}


def hook_event_of(hook_input, event):
    """The event to report in the launcher header: only when a runtime's hook started us (it
    sends its hook JSON on stdin), never for an agent or a person running the launcher."""
    return event if hook_input.get("hook_event_name") else None


def checkpoint(config, runtime, hook_input):
    """PreCompact: record where the session stood, so compaction loses nothing important."""
    with open(RECEIPT, encoding="utf-8") as handle:
        receipt = json.load(handle)
    options = config.get("runtimes", {}).get(runtime, {})
    key = find_key(options.get("credential_ref") or config.get("credential_ref") or "memorycloud_default")
    last_prompt = ""
    transcript = hook_input.get("transcript_path")
    if transcript and os.path.exists(transcript):
        with open(transcript, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                message = entry.get("message") if isinstance(entry, dict) else None
                if isinstance(message, dict) and message.get("role") == "user":
                    content = message.get("content")
                    if isinstance(content, str):
                        last_prompt = content
    summary = "Session context compacted (%s)." % (hook_input.get("trigger") or "manual")
    if last_prompt:
        summary += " Last request: " + " ".join(last_prompt.split())[:500]
    headers = {"Authorization": "Bearer " + key, "X-AMP-Context-Receipt": receipt["receipt_id"]}
    if hook_event_of(hook_input, "pre-compact"):
        headers[LAUNCHER_HEADER] = "pre-compact; runtime=%s" % runtime
    request("POST", receipt["memory_delta"], headers,
            {"delta_type": "checkpoint", "summary": summary, "importance": 2,
             "retrieval_triggers": ["compaction checkpoint"]},
            float(config.get("timeout_seconds", DEFAULT_TIMEOUT)))


def main(argv):
    runtime = "generic"
    event = "session-start"
    forced_style = None
    args = list(argv)
    while args:
        flag = args.pop(0)
        if flag == "--runtime" and args:
            runtime = args.pop(0)
        elif flag == "--event" and args:
            event = args.pop(0)
        elif flag == "--format" and args:
            forced_style = args.pop(0) if args[0] in ("text", "hook_json") else None
    hook_input = read_hook_input()
    config, problem = None, None
    try:
        config = load_config()
    except (OSError, ValueError) as exc:
        problem = "cannot read .amp/memory-config.json: %s" % exc
    # Hook commands pass --format, so a broken config never changes the output format.
    style = forced_style or (config or {}).get("runtimes", {}).get(runtime, {}).get("output", "text")
    if event == "pre-compact":
        try:
            checkpoint(config, runtime, hook_input)
        except Exception as exc:  # never block compaction
            print("memorycloud launcher: checkpoint not saved: %s" % exc, file=sys.stderr)
        return 0
    sandboxed = False
    if config is not None:
        try:
            text = fetch_live(config, runtime, str(hook_input.get("source", "")),
                              hook_event_of(hook_input, event))
        except SandboxRefused as exc:
            sandboxed = True
            problem = str(exc)
            print("memorycloud launcher: %s; the daemon may be running. Printing the fallback"
                  " cache; use the memorycloud MCP server's tools (context_pack, search, remember),"
                  " which run outside the sandbox." % problem, file=sys.stderr)
        except Exception as exc:
            problem = "using the fallback cache: %s" % (str(exc) or type(exc).__name__)
    if problem is not None:
        if not sandboxed:
            print("memorycloud launcher: " + problem, file=sys.stderr)
        text = cached(config, runtime, problem, sandboxed)
    sys.stdout.write(render(runtime, text, style) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as exc:  # the last guard: a session must always start
        print("memorycloud launcher: %s" % exc, file=sys.stderr)
        sys.exit(0)
