"""The run kit: what every floor raises, emits or reads (events, secrets, workspaces, token)."""
