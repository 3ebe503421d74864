"""pastcast."""
