"""The Agent Protocol door's tables (`ap_*`): what its clients keep that DuckLM has no column for.

Threads' metadata and TTLs, the door's runs and its run queue, stored assistants, the
Store API's index, crons and webhook deliveries. The door (`ducklm.server.agent_protocol`)
opens each on DuckLM's `Database`, SQLite or PostgreSQL, like every other table here.
"""
