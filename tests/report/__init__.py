"""The report: its sections, prose, layout and honesty (reprolab/report/)."""
