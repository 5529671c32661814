"""A run's stream as the LangGraph server sends it: the modes' events, their ids, joins."""
