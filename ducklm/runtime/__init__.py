"""The one run service behind every door: the library facade, the runner, recovery, audit."""
