"""Threads (DuckLM's conversations): create, search, copy, state, history, TTLs, deletes."""
