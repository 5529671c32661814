"""The local model server DuckLM can start: llama.cpp through llama-cpp-python.

`supervisor` and `dispatch` run as scripts (`python -I path`) and use the standard
library only.
"""
