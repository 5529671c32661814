"""The error a tool raises when it cannot do what was asked."""


class ToolError(Exception):
    """A tool could not do what was asked; the message is shown to the model."""
