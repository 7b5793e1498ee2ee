"""Gates, decisions and answers (reprolab/gates/, reprolab/cli/control.py)."""
