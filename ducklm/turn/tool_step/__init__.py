"""One tool step: plan each call, ask every question, then run the decided calls."""
