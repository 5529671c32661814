"""Packaged configuration: `models.yaml` (model roles) and JSON schemas kept in the repo."""
