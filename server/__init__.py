"""The FastAPI server: app factory, routes, SSE adapter, security, Agent Protocol door."""

from ducklm.server.app import create_app

__all__ = ["create_app"]
