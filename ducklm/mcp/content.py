"""An MCP tool result as the model reads it, and as the events carry it.

A result is a list of content blocks (text, image, audio, resource link, embedded
resource) and maybe `structuredContent`. The model gets one text that says what was
there: text blocks apart, each other block a bracketed line naming its kind; images,
audio and blobs are saved (0600) under `<data dir>/mcp/media/` and named by their path,
so the model can refer to them and the person can open them. The events get the same
blocks as small dicts (`parts`, paths instead of bytes: the audit keeps every event); a
saved file's `file` is the name the web chat shows it by (`media.py`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ducklm.stores.private import create_private_file

SEPARATOR = "\n\n"
EMPTY = "(the tool returned no content)"
MEDIA = "[{kind} {mime}, {size} bytes, saved at {path}]"
BAD_MEDIA = "[{kind} {mime}: the server sent data that is not base64]"
LINK = "[resource link: {uri}{name}{mime}{description}]"
RESOURCE_TEXT = "[resource {uri}{mime}]\n{text}"
STRUCTURED = "[structured content]\n{json}"
UNKNOWN = "[{kind} content, not shown]"


@dataclass
class Rendered:
    """A result in words for the model, and its blocks for the events."""

    text: str
    parts: list[dict[str, Any]] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False

    def artifact(self) -> dict[str, Any]:
        """The facts the tool step adds to `tool_call_finished` (`mcp_content`)."""
        found: dict[str, Any] = {"parts": self.parts}
        if self.structured is not None:
            found["structured"] = self.structured
        return {"mcp_content": found}


def render_result(result: Any, media_dir: Path) -> Rendered:
    """`result` (an SDK `CallToolResult`) rendered; images and blobs saved. Blocking."""
    texts, parts = [], []
    for block in result.content or ():
        text, part = _block(block, media_dir)
        texts.append(text)
        parts.append(part)
    structured = result.structured_content
    if structured is not None and not _repeats(structured, texts):
        texts.append(STRUCTURED.format(json=json.dumps(structured, ensure_ascii=False, indent=1)))
    return Rendered(SEPARATOR.join(texts) or EMPTY, parts, structured, bool(result.is_error))


def _block(block: Any, media_dir: Path) -> tuple[str, dict[str, Any]]:
    kind = getattr(block, "type", "unknown")
    if kind == "text":
        return block.text, {"type": "text", "text": block.text}
    if kind in ("image", "audio"):
        return _media(kind, block.mime_type, block.data, media_dir)
    if kind == "resource_link":
        return _link(block)
    if kind == "resource":
        return _resource(block.resource, media_dir)
    return UNKNOWN.format(kind=kind), {"type": kind}


def _media(kind: str, mime: str, data: str, media_dir: Path) -> tuple[str, dict[str, Any]]:
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return BAD_MEDIA.format(kind=kind, mime=mime), {"type": kind, "mime_type": mime}
    path = _save(raw, mime, media_dir)
    text = MEDIA.format(kind=kind, mime=mime, size=len(raw), path=path)
    part = {"type": kind, "mime_type": mime, "path": str(path), "file": path.name}
    return text, {**part, "size": len(raw)}


def _link(block: Any) -> tuple[str, dict[str, Any]]:
    uri = str(block.uri)
    text = LINK.format(
        uri=uri,
        name=f", {block.name}" if block.name else "",
        mime=f", {block.mime_type}" if block.mime_type else "",
        description=f": {block.description}" if block.description else "",
    )
    part = {"type": "resource_link", "uri": uri, "name": block.name, "mime_type": block.mime_type}
    return text, part


def _resource(resource: Any, media_dir: Path) -> tuple[str, dict[str, Any]]:
    uri, mime = str(resource.uri), resource.mime_type or ""
    if getattr(resource, "text", None) is not None:
        text = RESOURCE_TEXT.format(uri=uri, mime=f", {mime}" if mime else "", text=resource.text)
        return text, {"type": "resource", "uri": uri, "mime_type": mime, "text": resource.text}
    text, part = _media("resource", mime or "application/octet-stream", resource.blob, media_dir)
    return f"{text[:-1]} from {uri}]", {**part, "uri": uri}


def _save(raw: bytes, mime: str, media_dir: Path) -> Path:
    # Named by content: the same image returned twice is one file.
    suffix = mimetypes.guess_extension(mime.split(";", maxsplit=1)[0].strip()) or ".bin"
    path = media_dir / f"{hashlib.sha256(raw).hexdigest()[:24]}{suffix}"
    if not path.exists():
        create_private_file(path)
        path.write_bytes(raw)
    return path


def _repeats(structured: Any, texts: list[str]) -> bool:
    """Whether a text block already says `structured` (as JSON, or FastMCP's wrapper)."""
    for text in texts:
        if structured == {"result": text}:
            return True
        try:
            if json.loads(text) == structured:
                return True
        except ValueError:
            continue
    return False
