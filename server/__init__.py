"""The FastAPI server and SSE adapter (arrives with the server issue, #5)."""
