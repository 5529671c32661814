"""The Store API (`/store/...`): items, searches and namespaces over DuckLM's memory."""
