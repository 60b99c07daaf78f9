"""Judges defined outside the auditor package, as a user's plugin would be."""
