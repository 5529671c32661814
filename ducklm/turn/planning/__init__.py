"""Plans: their steps, how they read in prompts, and moving from one step to the next."""
