"""A method a path does not serve is 405 with the ``Allow`` header RFC 9110 requires (the
methods it does serve), in the error envelope of the path's dialect, on every path of the
daemon (found by schemathesis: 110 such answers had no Allow, one was text/plain)."""

from __future__ import annotations

from daemon import keys

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _routes(api) -> dict[str, set[str]]:
    served: dict[str, set[str]] = {}
    for endpoint in api.client.app[keys.ENDPOINTS]:
        served.setdefault(endpoint.path, set()).add(endpoint.method)
    return served


async def test_every_path_answers_an_unserved_method_with_405_and_allow(api):
    checked = 0
    for path, methods in _routes(api).items():
        url = path.replace("{", "").replace("}", "")  # a placeholder becomes a literal segment
        for method in METHODS:
            if method in methods or (method == "HEAD" and "GET" in methods):
                continue
            response = await api.client.request(method, url, headers=api.auth())
            assert response.status == 405, (method, path, response.status)
            allowed = {m.strip() for m in response.headers.get("Allow", "").split(",") if m.strip()}
            assert allowed - {"HEAD"} == methods, (method, path, response.headers.get("Allow"))
            assert response.content_type == "application/json", (method, path)
            await response.json()
            checked += 1
    assert checked > 100


async def test_mcp_get_is_405_in_the_envelope(api):
    response = await api.client.get("/mcp", headers=api.auth())
    assert response.status == 405 and response.headers["Allow"] == "POST, DELETE"
    assert (await response.json())["error"]["type"]
