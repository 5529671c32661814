"""The `ducklm` command: its subcommands, how it shows events, and its server client.

Kept free of imports: a CLI that talks to a running server must not load the graph.
"""
