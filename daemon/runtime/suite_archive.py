"""Memory suite archives: reading untrusted zips safely, validating, and writing canonical zips.

An uploaded zip is untrusted. It is refused, with a message naming the problem, if it has
path traversal, absolute paths, links, duplicate names, too many files, too many bytes
(compressed or uncompressed, checked while decompressing, not trusted from the headers),
files outside the suite layout, Markdown or JSON that is not UTF-8, a manifest that does not
validate, a sha256 that does not match, or anything that looks like a secret. Validation
finishes before anything is stored.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any

from state.errors import InvalidRequest, PayloadTooLarge
from daemon.validation import ValidationFailed

MAX_FILES = 200
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_TOTAL_BYTES = 8 * 1024 * 1024
FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # canonical zips: same content, same bytes

LAYOUT = re.compile(
    r"^(manifest\.json|suite/manifest\.json|MEMORY\.md|DREAMS\.md|agent\.instructions\.md"
    r"|install/openclaw\.json|README\.md|memory/\d{4}-\d{2}-\d{2}\.md)$")
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$")

# Common key and password shapes; public suites must not carry them.
SECRET_PATTERNS = {
    "AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "private key": re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY-----"),
    "OpenAI-style API key": re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "MemoryCloud key": re.compile(r"\b(?:mca|mco|amp_live)_[A-Za-z0-9_-]{20,}"),
    "password assignment": re.compile(r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|token)\s*[:=]\s*['\"]?[^\s'\"]{8,}"),
}


class ArchiveRefused(ValidationFailed):
    """The archive or its content is not an acceptable memory suite (422)."""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _safe_name(name: str) -> str:
    if not name or "\x00" in name:
        raise ArchiveRefused("the archive has an entry with an empty or invalid name")
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise ArchiveRefused(f"absolute path in the archive: {name!r}")
    if "\\" in name:
        raise ArchiveRefused(f"backslash in an archive path: {name!r}")
    if any(part in ("..", ".") for part in name.split("/")):
        raise ArchiveRefused(f"path traversal in the archive: {name!r}")
    return name


def read_zip(data: bytes, *, max_compressed: int) -> dict[str, str]:
    """The archive's files as text, or a refusal; decompression is bounded as it runs."""
    if len(data) > max_compressed:
        raise PayloadTooLarge(f"the archive is {len(data)} bytes; the limit is {max_compressed}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InvalidRequest("the upload is not a zip archive") from None
    entries = [i for i in archive.infolist() if not i.is_dir()]
    if len(entries) > MAX_FILES:
        raise PayloadTooLarge(f"the archive has {len(entries)} files; the limit is {MAX_FILES}")
    files: dict[str, str] = {}
    seen: set[str] = set()
    total = 0
    for info in entries:
        name = _safe_name(info.filename)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise ArchiveRefused(f"links are not allowed in an archive: {name!r}")
        if name.casefold() in seen:
            raise ArchiveRefused(f"duplicate file name in the archive: {name!r}")
        seen.add(name.casefold())
        if not LAYOUT.fullmatch(name):
            raise ArchiveRefused(f"unexpected file {name!r}: a suite holds only manifest.json,"
                                 " suite/manifest.json, MEMORY.md, memory/YYYY-MM-DD.md, DREAMS.md,"
                                 " agent.instructions.md, install/openclaw.json and README.md")
        if info.flag_bits & 0x1:
            raise ArchiveRefused(f"{name} is encrypted; suites are plain archives")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ArchiveRefused(f"{name} uses an unsupported compression method")
        try:
            with archive.open(info) as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)  # never trust the header's size
        except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError,
                ValueError) as exc:
            raise ArchiveRefused(f"{name} cannot be read from the archive: {exc}") from None
        if len(raw) > MAX_FILE_BYTES:
            raise PayloadTooLarge(f"{name} is larger than {MAX_FILE_BYTES} bytes uncompressed")
        total += len(raw)
        if total > MAX_TOTAL_BYTES:
            raise PayloadTooLarge(f"the archive is larger than {MAX_TOTAL_BYTES} bytes uncompressed")
        try:
            files[name] = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ArchiveRefused(f"{name} is not UTF-8 text") from None
    if "manifest.json" not in files:
        raise ArchiveRefused("the archive has no manifest.json")
    return files


def write_zip(files: dict[str, str]) -> bytes:
    """A canonical zip: sorted entries, fixed times and modes (same files -> same bytes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            info = zipfile.ZipInfo(path, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            archive.writestr(info, files[path].encode("utf-8"))
    return buffer.getvalue()


def find_secrets(files: dict[str, str]) -> list[str]:
    found = []
    for path, text in sorted(files.items()):
        for label, pattern in SECRET_PATTERNS.items():
            if pattern.search(text):
                found.append(f"{path}: looks like a {label}")
    return found


@dataclass(frozen=True)
class SuiteContent:
    """A validated suite version: its files, manifest and suite manifest."""

    slug: str
    manifest: dict[str, Any]
    suite_manifest: dict[str, Any]
    files: dict[str, str]
    legacy: bool

    @property
    def file_sha256(self) -> dict[str, str]:
        return {path: sha256_text(text) for path, text in self.files.items()}


def _json_file(files: dict[str, str], path: str) -> dict[str, Any]:
    try:
        value = json.loads(files[path])
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # lone surrogates cannot be stored
    except json.JSONDecodeError as exc:
        raise ArchiveRefused(f"{path} is not valid JSON (line {exc.lineno}): {exc.msg}") from None
    except RecursionError:
        raise ArchiveRefused(f"{path} is nested too deeply") from None
    except UnicodeEncodeError:
        raise ArchiveRefused(f"{path} contains invalid Unicode (a lone surrogate escape)") from None
    if not isinstance(value, dict):
        raise ArchiveRefused(f"{path} must hold a JSON object")
    return value


def validate(files: dict[str, str]) -> SuiteContent:
    """Check the layout, schema strings, semver, license, provenance, tags, every sha256 and
    secrets: the same rules for a zip, a suite built from JSON fields and a sync."""
    outside = sorted(p for p in files if not LAYOUT.fullmatch(p))
    if outside:
        raise ArchiveRefused(f"files outside the suite layout: {', '.join(outside)}")
    for path, text in files.items():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ArchiveRefused(f"{path} contains invalid Unicode") from None
    manifest = _json_file(files, "manifest.json")
    if manifest.get("schema") != "amp.memory.v1":
        raise ArchiveRefused("manifest.json: schema must be 'amp.memory.v1'",
                             details={"field": "schema"})
    for field in ("title", "summary", "license"):
        if not isinstance(manifest.get(field), str) or not manifest[field].strip():
            raise ArchiveRefused(f"manifest.json: '{field}' is required", details={"field": field})
    if not isinstance(manifest.get("version"), str) or not SEMVER.fullmatch(manifest["version"]):
        raise ArchiveRefused("manifest.json: 'version' must be a semantic version like 1.0.0",
                             details={"field": "version"})
    tags = manifest.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ArchiveRefused("manifest.json: 'tags' must be a list of strings", details={"field": "tags"})
    provenance = manifest.get("provenance")
    if not isinstance(provenance, dict) or not provenance.get("source"):
        raise ArchiveRefused("manifest.json: 'provenance' must be an object with a 'source'",
                             details={"field": "provenance"})
    legacy = "suite/manifest.json" not in files
    suite_manifest = {} if legacy else _json_file(files, "suite/manifest.json")
    if not legacy and suite_manifest.get("schema") != "amp.memory-suite.v1":
        raise ArchiveRefused("suite/manifest.json: schema must be 'amp.memory-suite.v1'")
    if "install/openclaw.json" in files:
        _json_file(files, "install/openclaw.json")
    declared = manifest.get("files")
    actual = {p: sha256_text(t) for p, t in files.items() if p != "manifest.json"}
    if declared is not None or not legacy:
        if not isinstance(declared, dict):
            raise ArchiveRefused("manifest.json: 'files' must map every file to its sha256")
        missing = sorted(set(actual) - set(declared))
        extra = sorted(set(declared) - set(actual))
        wrong = sorted(p for p in actual if p in declared and declared[p] != actual[p])
        if missing or extra or wrong:
            raise ArchiveRefused(
                "manifest.json: the sha256 list does not match the files"
                + (f"; not listed: {', '.join(missing)}" if missing else "")
                + (f"; listed but absent: {', '.join(extra)}" if extra else "")
                + (f"; sha256 mismatch: {', '.join(wrong)}" if wrong else ""),
                details={"missing": missing, "extra": extra, "mismatch": wrong})
    secrets = find_secrets(files)
    if secrets:
        raise ArchiveRefused("public content must not carry secrets: " + "; ".join(secrets),
                             details={"secrets": secrets})
    slug = str(manifest.get("slug") or suite_manifest.get("slug") or slugify(manifest["title"]))
    if not SLUG.fullmatch(slug):
        raise ArchiveRefused(f"slug {slug!r} must be 3-64 lower-case letters, digits and dashes")
    return SuiteContent(slug, manifest, suite_manifest, files, legacy)


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:64].strip("-")
    if len(slug) < 3:
        slug = "suite-" + hashlib.sha256(title.encode()).hexdigest()[:8]
    return slug
