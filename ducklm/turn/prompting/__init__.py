"""What a role sees: the transcript, the token budget, and asking a role for JSON."""
