#!/usr/bin/env python3
"""python_bench: the Python side of litmus against baselines measured in the same run (ratios).

On a trial of the 4 KiB benchmark shape (bench/make_trial: float32 gradients of 1024 elements):
  * reading every tensor at every step through the litmus Python package, with value() in a loop,
    with the batch call Tensor.values(steps) tensor by tensor (each array dropped before the next,
    and all kept), and with the file-major batch call Trial.values() (every tensor at once, each
    event file visited once; its arrays all live together), against a plain read of
    every event file (Python readinto of each whole file) and against the C++ reader alone
    (Trial._read_all_cpp: the same reads in either order with no Python object made, into
    buffers allocated beforehand); each pass opens the trial afresh (index parsing included);
  * `litmus run` with the SageMaker docs' CustomGradientRule in Python (--python-rule,
    tests/python/rules/custom_gradient_rule.py) against the C++ example plugin, every step
    evaluated (--keep-going).
Best of --repeat runs each, page cache warm. Targets (issue 19): Python rule <= 3x the C++
plugin; batch read <= 1.5x a plain read.

Usage: python3 bench/python_bench.py BUILD_DIR [smoke|full] [--repeat N] [--work-dir DIR] [--reads-only]
  smoke: 100 steps x 20 tensors (8 MB, seconds);  full: 2000 steps x 200 tensors (1.7 GB).
Run it with the python3 the package was built for (/usr/bin/python3 on Debian).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

SHAPES = {"smoke": ["--steps", "100", "--tensors", "20", "--elements", "1024", "--hot", "30", "--inf", "60"],
          "full": ["--steps", "2000", "--tensors", "200", "--elements", "1024", "--hot", "100,1000", "--nan", "500"]}


def best_of(repeat, fn):
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def event_files(trial):
    out = []
    for root, _, files in os.walk(os.path.join(trial, "events")):
        out += [os.path.join(root, f) for f in files if f.endswith(".tfevents")]
    return sorted(out)


def plain_read(files):
    buffer = bytearray(8 << 20)
    view = memoryview(buffer)
    total = 0
    for path in files:
        with open(path, "rb", buffering=0) as f:
            while True:
                n = f.readinto(view)
                if not n:
                    break
                total += n
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("size", nargs="?", default="smoke", choices=sorted(SHAPES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work-dir")
    parser.add_argument("--reads-only", action="store_true", help="skip the litmus run section")
    args = parser.parse_args()
    build = os.path.abspath(args.build_dir)
    sys.path.insert(0, os.path.join(build, "python"))
    import litmus

    source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    work = args.work_dir or tempfile.mkdtemp(prefix="litmus-python-bench.")
    os.makedirs(work, exist_ok=True)
    trial = os.path.join(work, "trial")
    try:
        subprocess.run([os.path.join(build, "bench", "make_trial"), trial] + SHAPES[args.size], check=True,
                       stdout=subprocess.DEVNULL)
        os.sync()
        files = event_files(trial)
        plain_read(files)  # warm the page cache
        os.environ["SMDEBUG_TRAINING_END_DELAY_REFRESH"] = "0"

        def value_loop():
            t = litmus.create_trial(trial)
            n = 0
            for name in t.tensor_names():
                tensor = t.tensor(name)
                for step in tensor.steps():
                    n += tensor.value(step).nbytes
            return n

        def batch():
            t = litmus.create_trial(trial)
            n = 0
            for name in t.tensor_names():
                tensor = t.tensor(name)
                n += tensor.values(tensor.steps()).nbytes
            return n

        def batch_kept():
            t = litmus.create_trial(trial)
            kept = []
            for name in t.tensor_names():
                tensor = t.tensor(name)
                kept.append(tensor.values(tensor.steps()))
            return sum(a.nbytes for a in kept)

        def file_major():
            t = litmus.create_trial(trial)
            return sum(a.nbytes for a in t.values().values())

        def cpp_best(file_major):
            # Opening the trial plus the reads alone: _read_all_cpp allocates (and touches) its
            # buffers before the reads start (file-major: every tensor's at once, 1.6 GB).
            best, result = float("inf"), None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                t = litmus.create_trial(trial)
                opened = time.perf_counter() - t0
                result, read_s, _ = t._read_all_cpp(file_major=file_major)
                best = min(best, opened + read_s)
                del t
            return best, result

        plain_s, file_bytes = best_of(args.repeat, lambda: plain_read(files))
        cpp_s, value_bytes = cpp_best(False)
        loop_s, loop_bytes = best_of(args.repeat, value_loop)
        batch_s, batch_bytes = best_of(args.repeat, batch)
        kept_s, kept_bytes = best_of(args.repeat, batch_kept)
        cpp_fm_s, cpp_fm_bytes = cpp_best(True)
        fm_s, fm_bytes = best_of(args.repeat, file_major)
        assert loop_bytes == batch_bytes == value_bytes == kept_bytes == cpp_fm_bytes == fm_bytes, (
            loop_bytes, batch_bytes, value_bytes, kept_bytes, cpp_fm_bytes, fm_bytes)
        mb = value_bytes / 1e6
        print("== Python reads, %s shape (%s): %.1f MB of values, %.1f MB of event files" % (
            args.size, " ".join(SHAPES[args.size]), mb, file_bytes / 1e6))
        print("  plain read of the event files: %8.3f s" % plain_s)
        print("  C++ reader alone:              %8.3f s  (%.2f x plain)" % (cpp_s, cpp_s / plain_s))
        print("  Python value() loop:           %8.3f s  (%.2f x plain, %.2f x C++ reader)" % (
            loop_s, loop_s / plain_s, loop_s / cpp_s))
        print("  Python values(steps) batch:    %8.3f s  (%.2f x plain, %.2f x C++ reader; target <= 1.5 x plain)"
              % (batch_s, batch_s / plain_s, batch_s / cpp_s))
        print("  ... every array kept:          %8.3f s  (%.2f x plain)" % (kept_s, kept_s / plain_s))
        print("  C++ reader alone, file-major:  %8.3f s  (%.2f x plain)" % (cpp_fm_s, cpp_fm_s / plain_s))
        print("  Python Trial.values() batch:   %8.3f s  (%.2f x plain, %.2f x C++ file-major, %.2f x values(steps)"
              " kept; target <= 1.5 x plain)" % (fm_s, fm_s / plain_s, fm_s / cpp_fm_s, fm_s / kept_s))
        if args.reads_only:
            return

        litmus_bin = os.path.join(build, "engine", "cli", "litmus")
        rule_file = os.path.join(source, "tests", "python", "rules", "custom_gradient_rule.py")
        cpp_plugin = os.path.join(build, "examples", "custom_rule", "custom_gradient_rule.so")

        def run(rule_args):
            out = os.path.join(work, "out")
            shutil.rmtree(out, ignore_errors=True)
            p = subprocess.run([litmus_bin, "run", "--trial", trial, "--rule", "CustomGradientRule", "--param",
                                "threshold=0.5", "--keep-going", "--logging-level", "error", "--output-dir", out,
                                "--message-file", os.path.join(out, "message"), "--failure-file",
                                os.path.join(out, "failure")] + rule_args,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode > 1:
                raise SystemExit("litmus run failed (%d): %s" % (p.returncode, p.stderr))
            return p.returncode

        cpp_run_s, cpp_code = best_of(args.repeat, lambda: run(["--plugin", cpp_plugin]))
        py_run_s, py_code = best_of(args.repeat, lambda: run(["--python-rule", rule_file]))
        assert cpp_code == py_code, (cpp_code, py_code)
        print("== litmus run, CustomGradientRule (threshold 0.5, --keep-going), %s shape" % args.size)
        print("  C++ plugin:            %8.3f s" % cpp_run_s)
        print("  Python (--python-rule): %7.3f s  (%.2f x C++; target <= 3)" % (py_run_s, py_run_s / cpp_run_s))
    finally:
        shutil.rmtree(trial, ignore_errors=True)
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
