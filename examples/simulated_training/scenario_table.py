#!/usr/bin/env python3
"""What each simulated_training scenario triggers under each built-in rule's defaults.

Writes one trial per scenario with simulated_training (default options), runs `litmus run` on it
with every built-in rule that reads what the example saves (one --config job per scenario, every
rule with its defaults) and prints the Markdown table of docs/examples.md.

  scenario_table.py BUILD_DIR                 print the table
  scenario_table.py BUILD_DIR --check FILE    exit 1 (with a diff) if FILE's table differs
  scenario_table.py BUILD_DIR --write FILE    replace FILE's table

The table sits in FILE between the lines `<!-- scenario-table:begin -->` and
`<!-- scenario-table:end -->`. Work files go to a temporary folder (--work-dir to keep them).
"""
import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile

SCENARIOS = ["healthy", "exploding", "vanishing", "flat"]
# The built-in rules whose inputs simulated_training writes (weights, biases, gradients, a loss;
# TRAIN and EVAL steps). docs/examples.md says why the others do not apply.
RULES = [
    "VanishingGradient", "ExplodingTensor", "AllZero", "TensorVariance", "UnchangedTensor",
    "WeightUpdateRatio", "LossNotDecreasing", "Overfit", "Overtraining", "PoorWeightInitialization",
]
BEGIN = "<!-- scenario-table:begin -->"
END = "<!-- scenario-table:end -->"


def run_scenario(build_dir, work, scenario):
    trial = os.path.join(work, scenario, "trial")
    out = os.path.join(work, scenario, "rule-output")
    subprocess.run([os.path.join(build_dir, "examples/simulated_training/simulated_training"), trial,
                    "--scenario", scenario], check=True, stdout=subprocess.DEVNULL)
    config = os.path.join(work, scenario, "job.yaml")
    with open(config, "w") as f:
        f.write(f"trial: {trial}\noutput_dir: {out}\nrules:\n")
        for rule in RULES:
            f.write(f"  - rule: {rule}\n")
    env = dict(os.environ, SMDEBUG_TRAINING_END_DELAY_REFRESH="0")
    done = subprocess.run([os.path.join(build_dir, "engine/cli/litmus"), "run", "--config", config,
                           "--output-dir", out,
                           "--message-file", os.path.join(work, scenario, "message"),
                           "--failure-file", os.path.join(work, scenario, "failure"),
                           "--poll-interval-ms", "10", "--logging-level", "error"],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"scenario_table: litmus run on {scenario} exited {done.returncode}:\n{done.stderr}")
    first = {}  # rule -> the first RuleEvaluationConditionMet event
    with open(os.path.join(out, "events.jsonl")) as f:
        for line in f:
            event = json.loads(line)
            if event.get("event") == "RuleEvaluationConditionMet":
                first.setdefault(event.get("rule"), event)
    cells = {}
    for rule in RULES:
        with open(os.path.join(out, "rule-reports", rule + ".json")) as f:
            report = json.load(f)
        event = first.get(rule)
        if event is not None:
            cells[rule] = f"**fires** at step {event['step']} ({event['mode']} {event['mode_step']})"
        elif report.get("RuleTriggered", 0):
            cells[rule] = "**fires**"
        else:
            cells[rule] = "no issue"
    return cells


def table(build_dir, work):
    results = {s: run_scenario(build_dir, work, s) for s in SCENARIOS}
    lines = ["| rule | " + " | ".join(SCENARIOS) + " |",
             "| --- |" + " --- |" * len(SCENARIOS)]
    for rule in RULES:
        lines.append(f"| [{rule}](rules/{rule}.md) | " +
                     " | ".join(results[s][rule] for s in SCENARIOS) + " |")
    return "\n".join(lines) + "\n"


def split_doc(path):
    with open(path) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit(f"scenario_table: {path} has no {BEGIN} ... {END} section")
    head, rest = text.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    return head, body.strip("\n") + "\n", tail


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build_dir")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", metavar="FILE")
    mode.add_argument("--write", metavar="FILE")
    parser.add_argument("--work-dir", help="keep the trials and job outputs here")
    args = parser.parse_args()
    work = args.work_dir or tempfile.mkdtemp(prefix="scenario-table-")
    if args.work_dir:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    try:
        generated = table(os.path.abspath(args.build_dir), work)
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    if args.check:
        _, documented, _ = split_doc(args.check)
        if documented != generated:
            sys.stdout.writelines(difflib.unified_diff(
                documented.splitlines(True), generated.splitlines(True),
                f"{args.check} (documented)", "simulated_training + litmus run (generated)"))
            print(f"\nThe table in {args.check} is not what the scenarios trigger; regenerate it with\n"
                  f"  {sys.argv[0]} BUILD_DIR --write {args.check}\nand explain the change on the page.")
            return 1
        print(f"{args.check}: the table matches what the scenarios trigger")
    elif args.write:
        head, _, tail = split_doc(args.write)
        with open(args.write, "w") as f:
            f.write(head + BEGIN + "\n" + generated + END + tail)
    else:
        sys.stdout.write(generated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
