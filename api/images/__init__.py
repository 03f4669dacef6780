"""The images family (OpenAI-style): generations, edits (JSON or multipart) and file uploads."""
