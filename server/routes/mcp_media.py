"""`GET /v1/mcp/media/{name}`: an image, audio or blob an MCP tool returned, for its card.

The web chat's tool card shows a result's images and audio from here (`ui/mcp-content.js`).
Only files `ducklm/mcp/content.py` saved, by their name (`ducklm/mcp/media.py` refuses
any other). What a server sent is untrusted: the answer may never run as a page of
this origin (an SVG's script, an HTML blob), so it carries a sandboxing policy, and a
type the page would not show inline is sent as a download.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Path, Response, status

from ducklm.mcp.media import media_folder, read_media
from ducklm.server.deps import Duck
from ducklm.server.responses import errors

router = APIRouter(tags=["mcp"])
# Nothing in a served file may load, run or frame anything; an SVG in <img> still draws.
MEDIA_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
MediaName = Annotated[str, Path(min_length=1, max_length=64)]


@router.get(
    "/mcp/media/{name}",
    response_class=Response,
    responses={
        200: {"description": "The file, with the MIME type it was saved under."},
        **errors(404, 422),
    },
)
async def mcp_media(name: MediaName, duck: Duck) -> Response:
    """A saved MCP media file, by the `file` name of its `mcp_content` part."""
    try:
        media = await read_media(media_folder(duck.settings.files.mcp_logs), name)
    except ValueError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
    except LookupError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from None
    shown = "inline" if media.inline else "attachment"
    return Response(
        media.data,
        media_type=media.mime_type,
        headers={
            "Content-Disposition": f"{shown}; filename*=UTF-8''{quote(media.name)}",
            "Content-Security-Policy": MEDIA_CSP,
            # Named by its content: the same name is always the same bytes.
            "Cache-Control": "private, max-age=86400, immutable",
        },
    )
