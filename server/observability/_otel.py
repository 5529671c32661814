"""The OpenTelemetry side of tracing, imported only when an OTLP endpoint is set.

OpenInference's LangChain instrumentor turns LangChain's callbacks into spans: the
graph's run (with DuckLM's `run_id` and the `thread_id` in its metadata, the thread
also as `session.id`), each node, each model call (model, token counts) and each tool
call. What people said and tools read stays out unless `DUCK_TRACE_CONTENT` is on:
prompts, answers and tool inputs and outputs are masked before a span is exported.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from openinference.instrumentation import TraceConfig
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

DEFAULT_SERVICE = "ducklm"


def start_tracing(*, show_content: bool) -> Callable[[], None]:
    """Instrument LangChain to export spans over OTLP/HTTP; returns a blocking stop.

    The provider is DuckLM's own, not the process-wide one: another library's
    tracing setup is left as it was. The instrumentor is process-wide (LangChain's
    callbacks are), so a second app in one process traces through the first one's.
    """
    service = os.environ.get("OTEL_SERVICE_NAME") or DEFAULT_SERVICE
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    hidden = not show_content
    config = TraceConfig(
        hide_inputs=hidden,
        hide_outputs=hidden,
        hide_input_messages=hidden,
        hide_output_messages=hidden,
    )
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider, config=config)

    def stop() -> None:
        instrumentor.uninstrument()
        provider.shutdown()  # flushes what is left

    return stop
