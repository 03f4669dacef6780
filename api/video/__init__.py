"""The video family: protocol A (ark, Ark-style errors), protocol B (dashscope, DashScope-style) and
protocol C (generic)."""
