"""The web chat: static HTML, CSS and JavaScript served by `ducklm.server`."""
