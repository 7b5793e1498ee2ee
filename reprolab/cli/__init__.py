"""The `reprolab` command.

`demo` runs the bundled example papers offline (one campaign: an index links the reports);
`run` runs the pipeline with a config;
`status` shows each paper's stages, what waits on you and how to answer;
`approve` / `reject` / `edit` / `answer` answer a gate; `invalidate` marks a stage to be
redone (with its dependents) by the next run of the same command. What those
commands do to the files is in `control`; `doctor` checks a site before a long run.

May import: anything in `reprolab` (it is the top, beside the workflow); nothing
imports this package but the `reprolab` console script.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

NOTHING_TO_DO = "Nothing to be done"
DESCRIPTION = """Reproduce computational-photonics papers with Meep, stage by stage.

Start with `reprolab doctor`, then `reprolab demo` (the bundled examples, offline);
a paper of your own: `reprolab new-paper PAPER.pdf --id ID`, `reprolab check FOLDER`,
then `reprolab run --configfile CONFIG`. `reprolab status` shows what runs and what
waits on you. Documentation: README.md and docs/ in the checkout."""


def snakemake_command(configfile: str, cores: int, extra: list[str]) -> list[str]:
    exe = Path(sys.executable).with_name("snakemake")
    return [
        str(exe) if exe.exists() else "snakemake",
        "--cores",
        str(cores),
        "--configfile",
        configfile,
        "--keep-going",
        "--show-failed-logs",
        *extra,
    ]


def with_config_value(extra: list[str], item: str) -> list[str]:
    """Snakemake's options with `item` (KEY=VALUE) added to its --config. `--config`
    takes every word after it, so a bare `--config KEY=VALUE` would swallow the
    targets: the value joins the user's own --config, else goes in as `--config=...`."""
    if "--config" in extra:
        at = extra.index("--config") + 1
        return [*extra[:at], item, *extra[at:]]
    return [f"--config={item}", *extra]


def load_config(configfile: str) -> dict:
    """config/config.yaml overlaid with the given file, as Snakemake merges them."""
    config = {}
    for path in dict.fromkeys(["config/config.yaml", configfile]):
        if Path(path).is_file():
            config.update(yaml.safe_load(Path(path).read_text()) or {})
    return config


def report_paths(configfile: str) -> list[Path]:
    from reprolab.settings import paper_entries

    config = load_config(configfile)
    out = Path(config.get("outputs_dir", "outputs"))
    return [out / pid / f"REPRODUCTION_REPORT_{pid}.md" for pid in paper_entries(config)]


def campaign_index_path(configfile: str) -> Path | None:
    """outputs/REPORTS_INDEX.md where the config lists two or more papers."""
    from reprolab.report.index import INDEX_NAME

    reports = report_paths(configfile)
    return reports[0].parents[1] / f"{INDEX_NAME}.md" if len(reports) > 1 else None


def report_line(out_dir: Path) -> str:
    """The paper's report as it stands: a final report only when it is current."""
    from reprolab.report import partial

    state, path = partial.report_state(out_dir)
    if state == "final":
        html = path.with_suffix(".html")
        also = f" (and {html.resolve()})" if html.is_file() else ""
        return f"reprolab: report: {path.resolve()}{also}"
    if state == "partial":
        stale = partial.final_path(out_dir)
        older = f" (the full report {stale} is from an earlier run)" if stale.is_file() else ""
        return f"reprolab: PARTIAL report (did not finish): {path.resolve()}{older}"
    return f"reprolab: no report yet for {out_dir.name} (see messages above)"


class QuietConsole:
    """Verbosity quiet: one line per finished step, errors, waits (the [reprolab]
    lines with their indented continuation) and the report path; Snakemake's rule
    dumps are not shown."""

    def __init__(self):
        self.jobs: dict[str, str] = {}
        self.current: list[str] = []
        self.keep_indented = False
        self.keep_next = False
        self.last = ""

    def __call__(self, line: str) -> str | None:
        shown = self.filter(line)
        self.last = line if not line.startswith("    ") else self.last
        return shown

    def filter(self, line: str) -> str | None:
        text = line.rstrip("\n")
        rule = re.match(r"^(?:local)?(?:rule|checkpoint) (\w+):$", text)
        if rule:
            self.current = [rule.group(1), ""]
        elif self.current and text.strip().startswith("jobid:"):
            self.jobs[text.split(":", 1)[1].strip()] = self.current[0]
            self.current.append(text.split(":", 1)[1].strip())
        elif self.current and text.strip().startswith("wildcards:") and len(self.current) > 2:
            wildcards = text.split(":", 1)[1].strip()
            self.jobs[self.current[2]] = f"{self.current[0]} ({wildcards})"
        done = re.search(r"Finished jobid: (\w+)", text)
        if done:
            return f"done: {self.jobs.get(done.group(1), 'job ' + done.group(1))}\n"
        keep_next, self.keep_next = self.keep_next, False
        if text.startswith(("[reprolab]", "reprolab:")):
            self.keep_indented = True
            return line
        if self.keep_indented and text.startswith("  "):
            return line
        self.keep_indented = False
        if text.startswith("Error in rule"):
            return line  # its log line follows; the [reprolab] line above says why
        if self.current and text.strip().startswith("log:") and "Error" in self.last:
            return line
        if re.match(r"^(RuleException|CalledProcessError)\b", text):
            return None  # Snakemake's wrapping of a failed step: said above
        if re.match(r"^\w*(Error|Exception)\b", text):
            self.keep_next = True  # Snakemake puts the message on the next line
            return line
        return line if keep_next and text.strip() else None


def make_console(verbosity: str, configfile: str):
    """(line filter, screen, ticker or None) for a verbosity: quiet (finished steps,
    errors, waits), normal (progress: steps with n of N, running simulations), verbose
    (Snakemake's own output)."""
    from reprolab.cli import progress

    tty = sys.stdout.isatty()
    screen = progress.Screen(sys.stdout, tty)
    if verbosity == "quiet":
        return QuietConsole(), screen, None
    if verbosity == "verbose":
        return (lambda line: line), screen, None
    outputs = Path(load_config(configfile).get("outputs_dir", "outputs"))
    console = progress.ProgressConsole(outputs, tty)
    ticker = progress.Ticker(console, screen)
    ticker.start()
    return console, screen, ticker


def run_pipeline(
    configfile: str, cores: int, extra: list[str], verbosity: str | None = None
) -> int:
    if not Path("Snakefile").is_file():
        print("reprolab: run this from the ReproLab checkout (no Snakefile here)", file=sys.stderr)
        return 2
    verbosity = verbosity or load_config(configfile).get("verbosity", "normal")
    if verbosity != "normal":  # the steps read it (verbose: every agent call is printed)
        extra = with_config_value(extra, f"verbosity={verbosity}")
    cmd = snakemake_command(configfile, cores, extra)
    if verbosity == "normal":
        print(
            f"reprolab: running the pipeline ({configfile}, {cores} cores); one line per "
            "step (--verbosity verbose: Snakemake's own output)",
            flush=True,
        )
    else:
        print("reprolab: running", " ".join(cmd), flush=True)
    from reprolab.cli import control

    console, screen, ticker = make_console(verbosity, configfile)
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ.copy()
    )
    nothing = False
    with control.run_in_progress(configfile):
        for line in proc.stdout:
            shown = console(line)
            if shown is not None:
                screen.write(shown)
            nothing = nothing or NOTHING_TO_DO in line
        code = proc.wait()
    if ticker is not None:
        ticker.stop()
    if nothing:
        print(
            "reprolab: nothing to do: every result is up to date "
            "(no agent call replayed, no simulation run)."
        )
    debug = (load_config(configfile).get("debug") or {}).get("enabled", False)
    for report in report_paths(configfile):
        summary = report.parent / "debug_summary.json"
        if debug and summary.is_file():  # debug mode writes a summary, not a report
            print(f"reprolab: debug summary: {summary.resolve()}")
        else:
            print(report_line(report.parent))
    index = campaign_index_path(configfile)
    if index is not None and index.is_file():
        print(f"reprolab: index of the campaign's reports: {index.resolve()}")
    if code != 0:
        # The exact command, so a hint never drops the user's --configfile or options.
        print(
            f"reprolab: after answering or fixing what is above, run again: {shlex.join(sys.argv)}"
        )
    return code


VERBOSITY = ["quiet", "normal", "verbose"]
VERBOSITY_HELP = (
    "console output: quiet (finished steps, errors, waits), normal (each step's start "
    "and end with n of N, running simulations refreshed), verbose (Snakemake's own "
    "output, every agent call); default: the config's verbosity, else normal"
)
CORES_HELP = "cores the steps and local simulations may use at once (default 2)"
CONFIG_HELP = "the run's config file, over config/config.yaml (default config/config.yaml)"


def main(argv: list[str] | None = None) -> int:
    from reprolab import __version__
    from reprolab.cli import control, doctor, unlock
    from reprolab.errors import ReproLabError

    parser = argparse.ArgumentParser(
        prog="reprolab", description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"reprolab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser("demo", help="reproduce the bundled example papers offline")
    demo.add_argument("--cores", type=int, default=2, help=CORES_HELP)
    demo.add_argument("--verbosity", choices=VERBOSITY, help=VERBOSITY_HELP)
    run = sub.add_parser("run", help="run the pipeline with a config file")
    run.add_argument("--configfile", default="config/config.yaml", help=CONFIG_HELP)
    run.add_argument("--cores", type=int, default=2, help=CORES_HELP)
    run.add_argument("--verbosity", choices=VERBOSITY, help=VERBOSITY_HELP)
    run.add_argument(
        "snakemake_args", nargs=argparse.REMAINDER, help="passed on to Snakemake as they are"
    )
    control.add_commands(sub)
    doctor.add_command(sub)  # `reprolab doctor`: the site checked before a long run
    unlock.add_command(sub)  # `reprolab unlock`: this outputs folder's lock only
    from reprolab.cli import paper_tools  # check, check-recordings, new-paper, paper-schema

    paper_tools.add_commands(sub)
    args = parser.parse_args(argv)
    if args.command == "demo":
        return run_pipeline("config/demo.yaml", args.cores, [], args.verbosity)
    if args.command == "run":
        return run_pipeline(args.configfile, args.cores, args.snakemake_args, args.verbosity)
    if args.command in paper_tools.COMMANDS:
        return paper_tools.run(args)
    if args.command == "doctor":
        return doctor.run(args, load_config(args.configfile))
    if args.command == "unlock":
        return unlock.run(args, load_config(args.configfile))
    try:
        return control.run_command(args, load_config(args.configfile))
    except ReproLabError as exc:
        print(f"reprolab: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
