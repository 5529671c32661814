"""An Agent Protocol conformance suite: a LangGraph-compatible server, driven over HTTP only.

See `README.md` for how to run it against any server.
"""
