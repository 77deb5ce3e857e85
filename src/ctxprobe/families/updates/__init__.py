"""``updates``: proactive interference (PI-LLM): keys overwritten many times, the final values asked."""
