"""OpenTelemetry traces of the server's runs, only when an OTLP endpoint is set.

`OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is the variable
every collector documents (Phoenix, Langfuse, Jaeger, LangSmith's OTel endpoint): set, the
server sends a span per run, node, model call and tool call there over OTLP/HTTP
(`_otel`); unset, nothing of OpenTelemetry is imported and the runs pay nothing.
The exporter reads the rest of the standard variables itself (headers, timeout).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager

from ducklm.config.settings import Settings

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def tracing_wanted(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether an OTLP endpoint is set for traces."""
    return any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)


@asynccontextmanager
async def traced(settings: Settings) -> AsyncIterator[None]:
    """Trace the runs while open, if `tracing_wanted`; the spans left are sent at the end."""
    if not tracing_wanted():
        yield
        return
    # Importing the SDK and detecting the resource read files and join threads: not on the loop.
    stop = await asyncio.to_thread(_start, settings.trace_content)
    try:
        yield
    finally:
        # Flushing sends the last spans over HTTP: a blocking call, off the event loop.
        await asyncio.to_thread(stop)


def _start(show_content: bool) -> Callable[[], None]:
    from ducklm.server.observability._otel import start_tracing  # noqa: PLC0415  only when set

    return start_tracing(show_content=show_content)
