"""Sandbox routes for this protocol (registered with ``app.route`` when imported)."""
