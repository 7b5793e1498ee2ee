"""The ground floor and the run context: paper format, inputs, files, settings."""
