"""Webhooks of the door's runs: the URL policy (`policy`), the body (`outcome`), delivery."""
