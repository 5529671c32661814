"""One module per node of the cognitive cycle."""
