from auditor.extract.rules import RuleExtractor as LLMExtractor  # placeholder
