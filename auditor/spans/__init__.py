"""spans."""
