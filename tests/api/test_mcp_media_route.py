"""`GET /v1/mcp/media/{name}` over real HTTP: the saved media of MCP results, and only them.

The files are saved the way `ducklm/mcp/content.py` saves a result's image (its
`render_result` on an SDK result), beside a decoy the route must never serve: a file in
the data dir, reached by a `..` name or by a link named like a saved file.
"""

from __future__ import annotations

import base64
import os

import httpx
import pytest
from mcp import types

from ducklm.config.settings import Settings
from ducklm.mcp.content import render_result
from ducklm.mcp.media import media_folder
from tests.support.server import Served

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)


@pytest.fixture
def saved(settings: Settings) -> dict[str, str]:
    """An image and an HTML blob saved as a tool result's, and a link to the data dir."""
    folder = media_folder(settings.files.mcp_logs)
    image = types.ImageContent(
        type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"
    )
    page = types.EmbeddedResource(
        type="resource",
        resource=types.BlobResourceContents(
            uri="file:///x.html",
            mime_type="text/html",
            blob=base64.b64encode(b"<script>1</script>").decode(),
        ),
    )
    parts = render_result(types.CallToolResult(content=[image, page]), folder).parts
    secret = settings.data_dir / "secret.txt"
    secret.write_text("s" * 40)
    link = folder / ("a" * 24 + ".png")
    os.symlink(secret, link)
    return {"image": parts[0]["file"], "page": parts[1]["file"], "link": link.name}


async def test_a_saved_image_is_served_with_its_type_and_a_sandbox(
    served: Served, saved: dict[str, str]
) -> None:
    answer = await served.client.get(f"/v1/mcp/media/{saved['image']}")
    assert answer.status_code == 200, answer.text
    assert answer.content == PNG
    assert answer.headers["content-type"] == "image/png"
    assert answer.headers["content-disposition"].startswith("inline;")
    assert "sandbox" in answer.headers["content-security-policy"]
    assert answer.headers["x-content-type-options"] == "nosniff"

    # What a page would run (HTML from a server) is only ever a download.
    page = await served.client.get(f"/v1/mcp/media/{saved['page']}")
    assert page.status_code == 200
    assert page.headers["content-disposition"].startswith("attachment;")
    assert "default-src 'none'" in page.headers["content-security-policy"]


async def test_nothing_outside_the_folder_is_served(served: Served, saved: dict[str, str]) -> None:
    for name in ("..%2Fsecret.txt", "..%2F..%2Fdata%2Fsecret.txt", "secret.txt", "x" * 24 + ".png"):
        answer = await served.client.get(f"/v1/mcp/media/{name}")
        assert answer.status_code in (404, 422), (name, answer.status_code)
        assert "s" * 40 not in answer.text
    shaped = await served.client.get("/v1/mcp/media/%2E%2E%2Fsecret.txt")
    assert shaped.status_code in (404, 422)
    bad = await served.client.get("/v1/mcp/media/api_token")
    assert bad.status_code == 422
    assert bad.json()["detail"] == "'api_token' is not the name of a saved MCP media file"
    # A link named like a saved file, leading out of the folder: refused, not followed.
    link = await served.client.get(f"/v1/mcp/media/{saved['link']}")
    assert link.status_code == 404
    assert link.json()["detail"] == f"no saved MCP media file {saved['link']!r}"


async def test_the_route_wants_the_token_or_a_session(
    served: Served, saved: dict[str, str]
) -> None:
    async with httpx.AsyncClient(base_url=served.url) as bare:
        assert (await bare.get(f"/v1/mcp/media/{saved['image']}")).status_code == 401
        foreign = await bare.get(
            f"/v1/mcp/media/{saved['image']}", headers={**served.headers, "Host": "evil.example"}
        )
        assert foreign.status_code in (400, 403, 421)
