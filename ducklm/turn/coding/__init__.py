"""The coder: what it is asked for a file, and the change it proposes."""
