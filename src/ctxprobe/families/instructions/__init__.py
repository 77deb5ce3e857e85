"""``instructions``: IFEval's verifiable instructions in a system prompt, under a growing load of user data."""
