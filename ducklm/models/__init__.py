"""Model roles, their chat clients and prompts, token counting, model errors, local server."""
