"""LLM judges (being written)."""
