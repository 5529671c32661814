"""Packaged prompts: one system prompt file per model role under `roles/`."""
