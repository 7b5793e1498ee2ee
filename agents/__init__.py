"""The agent layer: one module per agent role, its output model and its context."""
