"""Forecasting agents: prompts, output parsing and the belief notebook."""
