#!/usr/bin/env python3
"""MemoryCloud startup-item launcher (written into a repository as .amp/launcher.py).

Run by an agent runtime's session-start hook. It asks the local MemoryCloud daemon for a
Runtime Context Pack, prints the summary in the runtime's format, saves the receipt to
.amp/receipt.json for memory deltas, and exits 0. If the daemon is down or slow, or anything
is wrong, it prints the fallback cache instead, marked as cached with its age, explains the
problem in one line on stderr, and still exits 0: a session must never fail to start
because of memory.

Standard library only, so any python3 >= 3.8 runs it quickly. It never contains a key: the
key is found through credential_ref (the MEMORYCLOUD_API_KEY environment variable, or the
user's MemoryCloud credentials file).
"""

import json
import os
import sys
import urllib.error
import urllib.request
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "memory-config.json")
RECEIPT = os.path.join(HERE, "receipt.json")
DEFAULT_TIMEOUT = 1.5


def credentials_file():
    """Where the MemoryCloud CLI keeps launcher keys (mirrors platformdirs' config dir)."""
    home = os.environ.get("MEMORYCLOUD_HOME")
    if home:
        return os.path.join(os.path.expanduser(home), "config", "credentials.json")
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
    path = credentials_file()
    try:
        with open(path, encoding="utf-8") as handle:
            key = json.load(handle).get(credential_ref)
    except (OSError, ValueError):
        key = None
    if not key:
        raise LookupError("no key for credential_ref %r (set MEMORYCLOUD_API_KEY or run"
                          " `memorycloud connect`)" % credential_ref)
    return key


def post(url, key, body, timeout):
    request = urllib.request.Request(
        url, data=json.dumps(body).encode("utf-8"), method="POST",
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read().decode("utf-8"))


def write_json_atomic(path, data):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, ensure_ascii=False, indent=2)
    os.replace(tmp, path)


def fetch_live(config, runtime, source):
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
                float(config.get("timeout_seconds", DEFAULT_TIMEOUT)))
    write_json_atomic(RECEIPT, {
        "receipt_id": pack["receipt_id"], "context_pack_id": pack["context_pack_id"],
        "expires_at": pack.get("expires_at"), "runtime": runtime,
        "memory_delta": config["daemon_url"].rstrip("/") + "/api/agent/memory-delta",
        "header": "X-AMP-Context-Receipt"})
    return pack["summary_markdown"]


def cached(config, runtime, problem):
    """The fallback cache for this runtime, marked as cached with its age."""
    cache_dir = os.path.join(HERE, config.get("fallback_cache_dir", "cache") if config else "cache")
    path = os.path.join(cache_dir, "%s.json" % runtime)
    try:
        with open(path, encoding="utf-8") as handle:
            cache = json.load(handle)
        written = datetime.fromisoformat(cache["generated_at"].replace("Z", "+00:00"))
    except (OSError, ValueError, KeyError):
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
    return ("> MemoryCloud: CACHED context from %s (%s old): the daemon could not be reached (%s)."
            " It may be stale.\n\n%s" % (cache["generated_at"], age_text, problem, cache["summary_markdown"]))


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
    request = urllib.request.Request(
        receipt["memory_delta"], method="POST",
        data=json.dumps({"delta_type": "checkpoint", "summary": summary, "importance": 2,
                         "retrieval_triggers": ["compaction checkpoint"]}).encode("utf-8"),
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json",
                 "X-AMP-Context-Receipt": receipt["receipt_id"]})
    with urllib.request.urlopen(request, timeout=float(config.get("timeout_seconds", DEFAULT_TIMEOUT))):
        pass


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
            forced_style = args.pop(0)
    hook_input = read_hook_input()
    config = None
    try:
        config = load_config()
        style = config.get("runtimes", {}).get(runtime, {}).get("output", "text")
    except (OSError, ValueError) as exc:
        print("memorycloud launcher: cannot read .amp/memory-config.json: %s" % exc, file=sys.stderr)
        style = "text"
    if forced_style in ("text", "hook_json"):
        style = forced_style
    if event == "pre-compact":
        try:
            checkpoint(config, runtime, hook_input)
        except Exception as exc:  # never block compaction
            print("memorycloud launcher: checkpoint not saved: %s" % exc, file=sys.stderr)
        return 0
    try:
        if config is None:
            raise RuntimeError("no usable configuration")
        text = fetch_live(config, runtime, str(hook_input.get("source", "")))
    except urllib.error.HTTPError as exc:
        try:
            detail = json.loads(exc.read().decode("utf-8"))["error"]["message"]
        except Exception:
            detail = exc.reason
        problem = "daemon answered %s: %s" % (exc.code, detail)
        print("memorycloud launcher: " + problem, file=sys.stderr)
        text = cached(config, runtime, problem)
    except Exception as exc:
        problem = getattr(exc, "reason", None) or exc
        problem = "%s" % problem
        print("memorycloud launcher: using the fallback cache: %s" % problem, file=sys.stderr)
        text = cached(config, runtime, problem)
    sys.stdout.write(render(runtime, text, style) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as exc:  # the last guard: a session must always start
        print("memorycloud launcher: %s" % exc, file=sys.stderr)
        sys.exit(0)
