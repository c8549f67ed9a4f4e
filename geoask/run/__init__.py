"""One question run: the execution-state manager, variants, conversations, the composition root."""
