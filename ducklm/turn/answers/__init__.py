"""The answer a person reads: straight from a tool result, and free of DuckLM's own prompts."""
