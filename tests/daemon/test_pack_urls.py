"""The URLs a context pack's retrieval handles carry (daemon/runtime/context_packs.py): the same
text urllib's quote() and urlencode() write, whichever way they are made."""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pytest

from daemon.runtime.context_packs import memory_url, search_url

PARTS = [
    "mem_01a24d7910c77825f745123866af8cfd",
    "",
    "a b",
    "记忆云 配置",
    "a/b?c#d",
    "~x_y.z-1",
    "a&b=c+d",
    "100%",
    "Größe",
]


@pytest.mark.parametrize("part", PARTS)
def test_a_memory_url_escapes_its_id_as_quote_does(part: str) -> None:
    assert (
        memory_url("http://127.0.0.1:7077", part)
        == f"http://127.0.0.1:7077/api/agent/memories/{quote(part, safe='')}"
    )


@pytest.mark.parametrize("query", PARTS)
@pytest.mark.parametrize("project_key", [None, "", "api", "my project/x"])
def test_a_search_url_is_the_query_string_urlencode_writes(query: str, project_key: str | None) -> None:
    params = {"q": query, **({"project_key": project_key} if project_key else {})}
    expected = f"http://h/api/workspaces/{quote('wsp 1', safe='')}/memory/query?" + urlencode(
        params, quote_via=quote
    )
    assert search_url("http://h", "wsp 1", query, project_key) == expected
