"""The judges: each votes on one claim against its evidence (0 supported, 1 not, 0.5 abstain).

- :mod:`auditor.judges.base`: the interface every judge implements (:class:`Judge`,
  :class:`LocalJudge`);
- :mod:`auditor.judges.catalog`: the built-in judges by name, :func:`build_judge`;
- :mod:`auditor.judges.panel`: a panel of judges from a TOML file;
- one module per built-in judge, named as the judge (``content_overlap``,
  ``embedding_similarity``, ``numeric_consistency``, ``negation_polarity``,
  ``entity_consistency``, ``bm25_alignment``, ``bigram_overlap``, ``entailment``,
  ``llm``);
- :mod:`auditor.judges.wordlists`: the phrase rules, one text file per rule group.

The text analyses the judges share with the label step and the reports are
:mod:`auditor.text`. docs/extending.md says how to add a judge.
"""
