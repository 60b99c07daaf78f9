"""OpenAI-compatible LLM client shared by every LLM judge and extractor."""
