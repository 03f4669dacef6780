"""The text formats: chat completions and responses (OpenAI-style errors), messages (its own)."""
