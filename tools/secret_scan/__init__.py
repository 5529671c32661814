"""One secret rule for every tool result: credentials found by content become markers.

`hide.py:hide_secrets` is what the tool step calls on every result before it becomes a
ToolMessage (`ducklm/turn/tool_step/run.py`); `formats.py` (detect-secrets' detectors)
and `keywords.py` (values of secret-like names, with an entropy test) find them;
`names.py` is the second line, secret files by name (`.env`, `*.pem`), which the file
tools obey by resolved path as the sandbox does.
"""
