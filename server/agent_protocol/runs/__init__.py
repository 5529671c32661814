"""Runs: launched or queued, double-texting, cancel, join, and the relay between workers."""
