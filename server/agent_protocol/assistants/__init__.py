"""Assistants: `/info`, `/assistants` (named DuckLM configurations) and the graph Studio draws."""
