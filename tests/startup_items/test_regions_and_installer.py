"""Managed regions and the installer on real files in a temporary repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from startup_items.caps import estimate_tokens, truncate
from startup_items.installer import PlannedFile, apply_plan, remove_regions, verify_plan
from startup_items.regions import JsonEntries, MarkdownBlock, RegionError, WholeFile


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("original", ["", "# Rules\n", "# Rules\n- no trailing newline", "a\n\n\n"])
def test_markdown_block_round_trip(original):
    block = MarkdownBlock("startup-item:generic")
    written = block.apply(original or None, "## MemoryCloud\nrun the launcher")
    assert written.startswith(original)
    assert block.extract(written).endswith("<!-- memorycloud:end startup-item:generic -->")
    assert block.apply(written, "## MemoryCloud\nrun the launcher") == written  # idempotent
    replaced = block.apply(written, "## MemoryCloud\nsomething else")
    assert replaced.count("memorycloud:begin") == 1 and "something else" in replaced
    # Structural removal gives a missing final newline back; the installer restores an
    # untouched file byte for byte from the original instead.
    assert block.remove(written) in (original, original + "\n")


def test_two_blocks_in_one_file_are_independent():
    codex, generic = MarkdownBlock("startup-item:codex"), MarkdownBlock("startup-item:generic")
    text = generic.apply(codex.apply("# Team\n", "codex part"), "generic part")
    assert "codex part" in codex.extract(text) and "generic part" not in codex.extract(text)
    assert generic.remove(codex.remove(text)) == "# Team\n"


def test_json_merge_keeps_user_keys_and_indentation():
    region = JsonEntries(marker=".amp/launcher.py", array_paths=("hooks.SessionStart",))
    user = (
        '{\n    "theme": "dark",\n    "hooks": {"SessionStart": [{"hooks": [{"command": "echo hi"}]}]}\n}\n'
    )
    entry = {"matcher": "*", "hooks": [{"type": "command", "command": "python3 .amp/launcher.py"}]}
    written = region.apply(user, {"entries": {"hooks.SessionStart": [entry]}})
    data = json.loads(written)
    assert data["theme"] == "dark" and len(data["hooks"]["SessionStart"]) == 2
    assert '\n    "theme"' in written  # the user's 4-space indentation survives
    assert region.apply(written, {"entries": {"hooks.SessionStart": [entry]}}) == written
    assert json.loads(region.remove(written)) == json.loads(user)


def test_json_remove_prunes_containers_it_emptied():
    region = JsonEntries(marker="launcher", array_paths=("hooks.SessionStart", "hooks.PreCompact"))
    written = region.apply(
        '{"a": 1}',
        {"entries": {"hooks.SessionStart": [{"c": "launcher"}], "hooks.PreCompact": [{"c": "launcher"}]}},
    )
    assert json.loads(region.remove(written)) == {"a": 1}


def test_broken_json_is_refused_not_overwritten():
    with pytest.raises(RegionError, match="not valid JSON"):
        JsonEntries(marker="x", array_paths=("hooks.SessionStart",)).extract("{broken")


def _plan(root: Path) -> list[PlannedFile]:
    return [
        PlannedFile(
            "AGENTS.md",
            "startup-item:generic",
            MarkdownBlock("startup-item:generic"),
            "run the launcher",
            "instructions",
        ),
        PlannedFile(".amp/launcher.py", "launcher", WholeFile(), "print('hi')\n", "launcher"),
        PlannedFile(
            ".claude/settings.json",
            "hooks",
            JsonEntries(marker="launcher", array_paths=("hooks.SessionStart",)),
            {"entries": {"hooks.SessionStart": [{"command": "launcher"}]}},
            "hook",
        ),
    ]


def test_apply_is_idempotent_and_remove_restores_bytes(tmp_path):
    (tmp_path / "AGENTS.md").write_text("# Team rules\n- be kind\n")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"permissions": {"allow": []}}')
    before = snapshot(tmp_path)
    first = apply_plan(tmp_path, _plan(tmp_path), {})
    assert sorted(first.written) == [".amp/launcher.py", ".claude/settings.json", "AGENTS.md"]
    assert verify_plan(tmp_path, _plan(tmp_path)) == []
    again = apply_plan(tmp_path, _plan(tmp_path), first.records)
    assert again.written == [] and len(again.unchanged) == 3
    removed = remove_regions(tmp_path, _plan(tmp_path), again.records)
    assert removed.conflicts == []
    assert snapshot(tmp_path) == before
    assert not (tmp_path / ".amp").exists()


def test_hand_edit_is_a_conflict_and_nothing_is_written(tmp_path):
    first = apply_plan(tmp_path, _plan(tmp_path), {})
    agents = tmp_path / "AGENTS.md"
    edited = agents.read_text().replace("run the launcher", "run the launcher, my way")
    agents.write_text(edited)
    launcher_before = (tmp_path / ".amp" / "launcher.py").read_text()
    changed_plan = _plan(tmp_path)
    changed_plan[1] = PlannedFile(".amp/launcher.py", "launcher", WholeFile(), "print('v2')\n", "l")
    outcome = apply_plan(tmp_path, changed_plan, first.records)
    assert [(c.path, "edited by hand" in c.reason) for c in outcome.conflicts] == [("AGENTS.md", True)]
    assert agents.read_text() == edited
    assert (tmp_path / ".amp" / "launcher.py").read_text() == launcher_before  # all or nothing


def test_remove_after_user_edits_elsewhere_keeps_them(tmp_path):
    (tmp_path / "AGENTS.md").write_text("# Team rules\n")
    records = apply_plan(tmp_path, _plan(tmp_path), {}).records
    agents = tmp_path / "AGENTS.md"
    agents.write_text(agents.read_text() + "\n- a rule added later\n")
    remove_regions(tmp_path, _plan(tmp_path), records)
    text = agents.read_text()
    assert "memorycloud" not in text and "# Team rules" in text and "a rule added later" in text


def test_caps_count_chinese_characters():
    text = "# 标题\n" + "\n".join(f"- 第{i}条记忆：这是一条很长的中文记忆内容" for i in range(800))
    cut = truncate(text, max_tokens=2500)
    assert estimate_tokens(cut) <= 2500 and cut.endswith("_")
    assert len(truncate(text, max_chars=10_000)) <= 10_000
    assert estimate_tokens("记忆") == 2 and estimate_tokens("abcd") == 1
