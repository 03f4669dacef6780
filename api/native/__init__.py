"""The native (Gemini-style) family: ``/v1/models/{model}:generateContent`` and ``:streamGenerateContent``."""
