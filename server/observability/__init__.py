"""What an operator sees from outside: Prometheus metrics and OpenTelemetry traces.

`metrics.RunMetrics` watches every run through the facade's one observer hook
(`ducklm.runtime.observer`) and keeps its numbers in a registry of its own, one per
app; `scrape` serves them at `/metrics` behind the API token. `tracing` sends spans of
each run, node, model call and tool call over OTLP/HTTP, only when
`OTEL_EXPORTER_OTLP_ENDPOINT` is set (nothing of OpenTelemetry is imported otherwise).
"""
