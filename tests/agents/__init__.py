"""The agents and the calling machinery (agents/)."""
