"""Choosing the turn's tool by meaning: nearest exemplars, file names, the arguments' examples."""
