"""Errors a user can act on: each names the file, the field and what would be valid."""


class ReproLabError(Exception):
    """Base class for errors that are reported to the user without a traceback."""


class InputFileError(ReproLabError):
    """A file the user or an earlier step provided is missing, unreadable or invalid."""

    def __init__(self, path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class OutputFileError(ReproLabError):
    """An artifact cannot be written (read-only or full file system); whatever was
    at its path before is left as it was."""

    def __init__(self, path, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class GateError(ReproLabError):
    """A human gate is waiting for an answer, or its answer cannot be accepted."""


class StageBlockedError(ReproLabError):
    """A stage cannot run: a dependency failed or a limit was reached."""


class UnsafeRunFile(InputFileError):
    """A file a simulation left is not read: it is a link, not a regular file, or not
    inside the run folder (`reprolab.run_files`); nothing was read through it."""


class RunFileTooLarge(InputFileError):
    """A file a simulation left is over a reader's cap (bytes, rows, columns, elements,
    rank or pixels; `reprolab.run_files`); it was not read."""
