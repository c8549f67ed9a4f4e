"""The typed vocabulary every layer shares: intents, plans, drafts, evidence, answers."""
