"""``/docs`` loads with no way out to the internet: every file the page references is served
by the service itself (issue 29), so nothing points at a CDN."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx

REFERENCE = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")
#: Swagger UI's bundle reads the document from a JavaScript argument, not an attribute.
DOCUMENT = re.compile(r"""url:\s*['"]([^'"]+)['"]""")


async def test_docs_page_loads_everything_from_the_service(api: httpx.AsyncClient) -> None:
    page = await api.get("/docs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    references = REFERENCE.findall(page.text) + DOCUMENT.findall(page.text)
    # The script, the stylesheet, the icon and the document, at least.
    assert len(references) >= 4, references
    for ref in references:
        parts = urlsplit(ref)
        assert not parts.scheme and not parts.netloc, f"{ref} is not served by the service"
        answer = await api.get(ref)
        assert answer.status_code == 200, ref
        assert answer.content, ref


async def test_docs_assets_stay_out_of_the_openapi_document(api: httpx.AsyncClient) -> None:
    paths = (await api.get("/openapi.json")).json()["paths"]
    assert not [p for p in paths if p.startswith("/docs")]
