"""What DuckLM learns across turns: skills and the skill proposals the critic writes."""
