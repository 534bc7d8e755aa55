"""Memory suite archives: reading untrusted zips safely and validating their content.

The rules are the MemoryCloud reference's (contracts sheet, ``archives``), so that every
archive it imports imports here too, legacy ones (a manifest without a ``files`` map) included:

- every member name: no leading ``/``, no ``..`` segment, only ``[A-Za-z0-9._/-]`` (400);
- manifest.json at the root, a JSON object, schema ``amp.memory.v1``, a title and a license of
  at least 2 characters, a semver version (default 1.0.0), ``provenance.source_type`` (400);
- a non-blank MEMORY.md or at least one ``memory/<name>.md`` (400); other members are kept
  (in the stored zip) but not read.

Our own protections stay where they guard against a real harm, not a style: links (an
extracted link escapes the target directory), duplicate names, also differing only in case,
and ``.``/empty segments (two names for one file: what is verified is not what is installed),
encrypted members, sizes counted while decompressing (zip bombs; the headers are not trusted),
a ``files`` map that does not match the members (when a map is given it is verified, whole),
Markdown/JSON that is not UTF-8, and anything that looks like a secret. Two extensions are
accepted besides the reference's names: ``provenance.source`` (our earlier name) for
``source_type`` and a ``files`` map of plain sha256 strings (our earlier form) besides
``{sha256, bytes}``. Validation finishes before anything is stored.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from state.errors import InvalidRequest, PayloadTooLarge

MAX_UPLOAD_BYTES = 15 * 1024 * 1024  # the reference's MAX_UPLOAD_BYTES: larger uploads are 413
MAX_FILES = 5000  # ten years of daily work memory, and then some
MAX_FILE_BYTES = 16 * 1024 * 1024  # uncompressed, counted while inflating
MAX_TOTAL_BYTES = 64 * 1024 * 1024
FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # canonical zips: same content, same bytes

NAME = re.compile(r"^[A-Za-z0-9._/\-]+$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:[-+][A-Za-z0-9._-]+)?$")  # the reference's rule, whole
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$")
WORK_DAY = re.compile(r"^memory/([^/]+)\.md$")
# Members that are read, so must be UTF-8; any other member is kept as it came.
READ_MEMBERS = (
    "manifest.json",
    "suite/manifest.json",
    "MEMORY.md",
    "DREAMS.md",
    "agent.instructions.md",
    "install/openclaw.json",
    "README.md",
)
ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)

# Common key and password shapes; suites are shared, so they must not carry them.
SECRET_PATTERNS = {
    "AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "private key": re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP )?PRIVATE KEY-----"),
    "OpenAI-style API key": re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}"),
    "GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "Slack token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "MemoryCloud key": re.compile(r"\b(?:mca|mco|amp_live)_[A-Za-z0-9_-]{20,}"),
    "password assignment": re.compile(
        r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|token)\s*[:=]\s*['\"]?[^\s'\"]{8,}"
    ),
}


class ArchiveRefused(InvalidRequest):
    """The archive or its content is not an acceptable memory suite (400, as the reference)."""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_read_member(name: str) -> bool:
    return name in READ_MEMBERS or WORK_DAY.fullmatch(name) is not None


def check_name(name: str) -> str:
    """A member name the reference accepts and that names one file only (400 otherwise)."""
    if not name or "\x00" in name:
        raise ArchiveRefused("the archive has an entry with an empty or invalid name")
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise ArchiveRefused(f"absolute path in the archive: {name!r}")
    if "\\" in name:
        raise ArchiveRefused(f"backslash in an archive path: {name!r}")
    parts = name.rstrip("/").split("/")
    if any(part in ("..", ".") for part in parts):
        raise ArchiveRefused(f"path traversal in the archive: {name!r}")
    if not NAME.fullmatch(name):
        raise ArchiveRefused(
            f"archive member {name!r}: names may hold only ASCII letters, digits, '.', '_', '/' and '-'"
        )
    if "" in parts:
        raise ArchiveRefused(f"empty path segment in the archive: {name!r}")
    return name


def read_zip(data: bytes, *, max_compressed: int = MAX_UPLOAD_BYTES) -> dict[str, bytes]:
    """The archive's members as bytes, in archive order, or a refusal; every name is checked
    before anything is read, and decompression is bounded as it runs."""
    if len(data) > max_compressed:
        raise PayloadTooLarge(f"the archive is {len(data)} bytes; the limit is {max_compressed}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, EOFError):
        raise ArchiveRefused("the upload is not a zip archive") from None
    for info in infos:
        check_name(info.filename)
    entries = [i for i in infos if not i.is_dir()]
    if len(entries) > MAX_FILES:
        raise PayloadTooLarge(f"the archive has {len(entries)} files; the limit is {MAX_FILES}")
    members: dict[str, bytes] = {}
    seen: set[str] = set()
    total = 0
    for info in entries:
        name = info.filename
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ArchiveRefused(f"links are not allowed in an archive: {name!r}")
        if name.casefold() in seen:
            raise ArchiveRefused(f"duplicate file name in the archive: {name!r}")
        seen.add(name.casefold())
        if info.flag_bits & 0x1:
            raise ArchiveRefused(f"{name} is encrypted; suites are plain archives")
        if info.compress_type not in ZIP_METHODS:
            raise ArchiveRefused(f"{name} uses an unsupported compression method")
        try:
            with archive.open(info) as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)  # never trust the header's size
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            RuntimeError,
            NotImplementedError,
            ValueError,
            OSError,
        ) as exc:
            raise ArchiveRefused(f"{name} cannot be read from the archive: {exc}") from None
        if len(raw) > MAX_FILE_BYTES:
            raise PayloadTooLarge(f"{name} is larger than {MAX_FILE_BYTES} bytes uncompressed")
        total += len(raw)
        if total > MAX_TOTAL_BYTES:
            raise PayloadTooLarge(f"the archive is larger than {MAX_TOTAL_BYTES} bytes uncompressed")
        members[name] = raw
    if "manifest.json" not in members:
        raise ArchiveRefused("the archive has no manifest.json")
    return members


def decode_members(members: dict[str, bytes]) -> dict[str, str]:
    """The members as text: those the daemon reads must be UTF-8 (400); others are kept as
    text when they are, and otherwise left to the stored zip alone."""
    files: dict[str, str] = {}
    for name, raw in members.items():
        try:
            files[name] = raw.decode("utf-8")
        except UnicodeDecodeError:
            if is_read_member(name):
                raise ArchiveRefused(f"{name} is not UTF-8 text") from None
    return files


def write_zip(files: dict[str, str]) -> bytes:
    """A canonical zip: sorted entries, DEFLATE, fixed times and modes (same files, same bytes)."""
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


def json_object(text: str, path: str) -> dict[str, Any]:
    """A member's JSON object, or a refusal naming the member and the problem."""
    try:
        value = json.loads(text)
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


def normalize_tags(tags: Any) -> list[str]:
    """The reference's tags: lower-cased, trimmed, de-duplicated, 32 characters, 12 at most; a
    comma-separated string is a list."""
    if isinstance(tags, str):
        tags = tags.split(",")
    if tags is None:
        return []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ArchiveRefused("manifest.json: 'tags' must be a list of strings", details={"field": "tags"})
    out: list[str] = []
    for tag in tags:
        tag = tag.strip().lower()[:32]
        if tag and tag not in out:
            out.append(tag)
    return out[:12]


def source_type(provenance: Any) -> str | None:
    """provenance.source_type (or our earlier provenance.source), if it is given."""
    if not isinstance(provenance, dict):
        return None
    for key in ("source_type", "source"):
        value = provenance.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def check_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The reference's manifest rules; returns the manifest with its defaults filled
    (version, tags; the rest of the defaults are the stored manifest's, see suite_build)."""
    if manifest.get("schema") != "amp.memory.v1":
        raise ArchiveRefused("manifest.json: schema must be 'amp.memory.v1'", details={"field": "schema"})
    title = manifest.get("title")
    if not isinstance(title, str) or len(title.strip()) < 2:
        raise ArchiveRefused(
            "manifest.json: 'title' must have at least 2 characters", details={"field": "title"}
        )
    version = manifest.get("version", "1.0.0")
    if not isinstance(version, str) or not SEMVER.fullmatch(version):
        raise ArchiveRefused(
            "manifest.json: 'version' must be a semantic version like 1.0.0", details={"field": "version"}
        )
    license_ = manifest.get("license")
    if not isinstance(license_, str) or len(license_.strip()) < 2:
        raise ArchiveRefused(
            "manifest.json: 'license' must have at least 2 characters", details={"field": "license"}
        )
    provenance = manifest.get("provenance")
    if provenance is not None and not isinstance(provenance, dict):
        raise ArchiveRefused("manifest.json: 'provenance' must be an object", details={"field": "provenance"})
    if source_type(provenance) is None:
        raise ArchiveRefused(
            "manifest.json: 'provenance.source_type' is required", details={"field": "provenance"}
        )
    summary = manifest.get("summary", "")
    if not isinstance(summary, str):
        raise ArchiveRefused("manifest.json: 'summary' must be text", details={"field": "summary"})
    slug = manifest.get("slug")
    if slug is not None and (not isinstance(slug, str) or not SLUG.fullmatch(slug)):
        raise ArchiveRefused(
            f"manifest.json: slug {slug!r} must be 3-64 lower-case letters, digits and dashes",
            details={"field": "slug"},
        )
    return {
        **manifest,
        "title": title.strip(),
        "version": version,
        "license": license_.strip(),
        "summary": summary,
        "tags": normalize_tags(manifest.get("tags")),
    }


def _declared_sha(entry: Any) -> str | None:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
        return entry["sha256"]
    return None


def check_files_map(manifest: dict[str, Any], members: dict[str, bytes]) -> None:
    """A ``files`` map, when the manifest has one, must list every other member with its
    sha256 (a map that vouches for part of an archive vouches for nothing)."""
    declared = manifest.get("files")
    if declared is None or declared == {}:
        return
    if not isinstance(declared, dict):
        raise ArchiveRefused(
            "manifest.json: 'files' must map every file to its sha256", details={"field": "files"}
        )
    actual = {p: sha256_bytes(raw) for p, raw in members.items() if p != "manifest.json"}
    missing = sorted(set(actual) - set(declared))
    extra = sorted(set(declared) - set(actual))
    wrong = sorted(p for p in actual if p in declared and _declared_sha(declared[p]) != actual[p])
    if missing or extra or wrong:
        raise ArchiveRefused(
            "manifest.json: the sha256 list does not match the files"
            + (f"; not listed: {', '.join(missing)}" if missing else "")
            + (f"; listed but absent: {', '.join(extra)}" if extra else "")
            + (f"; sha256 mismatch: {', '.join(wrong)}" if wrong else ""),
            details={"missing": missing, "extra": extra, "mismatch": wrong},
        )


def work_memory_paths(files: dict[str, str]) -> list[str]:
    return sorted(p for p in files if WORK_DAY.fullmatch(p))


def check_content(files: dict[str, str]) -> None:
    """Memory to install: a non-blank MEMORY.md or work memory (400), and no secrets."""
    if not files.get("MEMORY.md", "").strip() and not work_memory_paths(files):
        raise ArchiveRefused(
            "the suite has no memory: MEMORY.md is missing or blank and there is no memory/<date>.md",
            details={"field": "MEMORY.md"},
        )
    secrets = find_secrets(files)
    if secrets:
        raise ArchiveRefused(
            "suites must not carry secrets: " + "; ".join(secrets), details={"secrets": secrets}
        )


@dataclass(frozen=True)
class SuiteContent:
    """A validated suite version: its text files, the stored manifest (defaults filled), the
    suite manifest when the archive has one, and the uploaded zip when it is kept verbatim."""

    manifest: dict[str, Any]
    files: dict[str, str]
    suite_manifest: dict[str, Any] | None
    archive: bytes | None = None
    declared_files: list[str] = field(default_factory=list)

    @property
    def legacy(self) -> bool:
        return self.suite_manifest is None

    @property
    def slug(self) -> str | None:
        """The slug the manifest asks for (ours), or None: one is made from the title."""
        return self.manifest.get("slug")

    @property
    def file_sha256(self) -> dict[str, str]:
        return {path: sha256_text(text) for path, text in self.files.items()}


def validate_files(
    files: dict[str, str], members: dict[str, bytes] | None = None, archive: bytes | None = None
) -> SuiteContent:
    """The same rules for an uploaded zip (``members``: its bytes), a suite built from JSON
    fields and a sync's rebuild."""
    for name in files:
        check_name(name)
        try:
            files[name].encode("utf-8")
        except UnicodeEncodeError:
            raise ArchiveRefused(f"{name} contains invalid Unicode") from None
    if "manifest.json" not in files:
        raise ArchiveRefused("the archive has no manifest.json")
    manifest = check_manifest(json_object(files["manifest.json"], "manifest.json"))
    check_files_map(
        manifest, members if members is not None else {p: t.encode("utf-8") for p, t in files.items()}
    )
    suite_manifest = None
    if "suite/manifest.json" in files:
        suite_manifest = json_object(files["suite/manifest.json"], "suite/manifest.json")
        if suite_manifest.get("schema") != "amp.memory-suite.v1":
            raise ArchiveRefused("suite/manifest.json: schema must be 'amp.memory-suite.v1'")
    if "install/openclaw.json" in files:
        json_object(files["install/openclaw.json"], "install/openclaw.json")
    check_content(files)
    declared = manifest.get("files")
    return SuiteContent(
        manifest, files, suite_manifest, archive, sorted(declared) if isinstance(declared, dict) else []
    )


def validate_archive(data: bytes, *, max_compressed: int = MAX_UPLOAD_BYTES) -> SuiteContent:
    """An uploaded zip, read and validated; its bytes are kept to be served verbatim."""
    members = read_zip(data, max_compressed=max_compressed)
    return validate_files(decode_members(members), members, data)


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60].strip("-")
    if len(slug) < 3:
        slug = "suite-" + hashlib.sha256(title.encode()).hexdigest()[:8]
    return slug


def today_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")
