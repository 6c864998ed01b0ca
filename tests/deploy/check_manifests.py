#!/usr/bin/env python3
"""Checks deploy/kubernetes against litmus itself (tests/deploy/CMakeLists.txt: deploy.manifests).

Usage: check_manifests.py SOURCE_DIR LITMUS_BINARY FIXTURE_TRIAL [--kustomize]

Parses every YAML file under deploy/kubernetes (Python's yaml, Debian python3-yaml) and checks each
Job's litmus container, in the bases as written and in every overlay's patches:
  - args: `run` (or the litmus-sidecar wrapper) and only options that `litmus run --help` lists,
    each $(VAR) defined in the container's env;
  - env: only variables the docs say litmus reads (docs/run.md, docs/events.md, docs/s3.md,
    docs/deploy.md), or helpers used for $(VAR) expansion in args;
  - podFailurePolicy: exactly the non-zero exit codes of docs/run.md's exit-code table, each with
    the action its meaning calls for (issues found and client errors fail the index, internal
    errors are retried, stopped is ignored), on the litmus container, with restartPolicy Never;
  - resources: requests and limits of cpu and memory, the memory limit at least twice
    --prefetch-memory; no liveness probe and no network probe (litmus serves no port), exec
    probes on files in its --output-dir; terminationGracePeriodSeconds covering the event flush;
  - the user id is the image's (deploy/container/Containerfile), whose label defaults are the
    project's version and plugin ABI;
  - the native sidecar: an init container with restartPolicy Always, its preStop hook waiting on
    the trial it follows, read-only on the training container's trial volume, and the training
    container's LITMUS_STOP_FILE equal to litmus's message file;
  - every rule file of the ConfigMaps evaluates with the real litmus on a fixture trial (exit 0
    or 1: rule names and parameters are valid).
With --kustomize, also renders every kustomization with `kubectl kustomize` and applies the same
checks to the result (exit 77, skipped, when kubectl is missing), including the image tags, which
must be the project's version.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    sys.exit("check_manifests.py needs Python's yaml module: apt-get install python3-yaml (scripts/install-deps.sh)")

SKIP = 77
failures = []


def fail(where, message):
    failures.append("%s: %s" % (where, message))


def project_version(source):
    text = open(os.path.join(source, "CMakeLists.txt")).read()
    return re.search(r"project\(litmus VERSION ([0-9.]+)", text).group(1)


def exit_code_table(source):
    """{code: (meaning, status)} from docs/run.md's '## Exit codes' table."""
    text = open(os.path.join(source, "docs", "run.md")).read()
    section = text.split("## Exit codes", 1)[1]
    table = {}
    for line in section.splitlines():
        m = re.match(r"^\|\s*(\d+)\s*\|(.*)\|\s*(\w+)\s*\|$", line)
        if m:
            table[int(m.group(1))] = (m.group(2).strip(), m.group(3))
        elif table and not line.startswith("|"):
            break
    return table


def expected_action(meaning, status):
    """What Kubernetes should do with an exit code, from its documented meaning."""
    if status == "NoIssuesFound":
        return None  # success
    if status == "IssuesFound" or meaning.startswith("client error"):
        return {"FailIndex", "FailJob"}  # a verdict or a bad configuration: retrying cannot help
    if meaning.startswith("internal error"):
        return {"Count"}  # retried with backoff (and resumed)
    if status == "Stopped":
        return {"Ignore"}  # evicted or drained: replaced, resumes
    raise AssertionError("docs/run.md exit code with an unknown meaning: %r %r" % (meaning, status))


def run_options(litmus):
    out = subprocess.run([litmus, "run", "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", out))


def documented_env(source):
    text = ""
    for doc in ("run.md", "events.md", "s3.md", "deploy.md", "actions.md"):
        path = os.path.join(source, "docs", doc)
        if os.path.exists(path):
            text += open(path).read()
    return text


def image_uid(source):
    text = open(os.path.join(source, "deploy", "container", "Containerfile")).read()
    return int(re.search(r"useradd .*--uid (\d+)", text).group(1))


def parse_bytes(text):
    m = re.fullmatch(r"(\d+)([KMGT]?)i?", str(text))
    if not m:
        return None
    return int(m.group(1)) * 1024 ** " KMGT".index(m.group(2) or " ")


def value_of(args, option):
    for i, a in enumerate(args):
        if a == option and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(option + "="):
            return a.split("=", 1)[1]
    return None


def is_litmus(container):
    image = container.get("image", "")
    name = image.rsplit("/", 1)[-1].split(":")[0].split("@")[0]
    return name == "litmus"


def check_litmus_container(where, c, pod, ctx):
    args = list(c.get("args", []))
    command = c.get("command")
    sidecar = command == ["/usr/local/bin/litmus-sidecar"]
    if command is not None and not sidecar:
        fail(where, "command %r: use the image's entrypoint (litmus) or /usr/local/bin/litmus-sidecar" % command)
    if not sidecar:
        if not args or args[0] != "run":
            fail(where, "args must start with 'run', got %r" % args[:1])
        args = args[1:]
    env = {e["name"]: e for e in c.get("env", [])}
    for a in args:
        if a.startswith("--"):
            flag = a.split("=", 1)[0]
            if flag not in ctx["options"]:
                fail(where, "%s is not an option of `litmus run` (litmus run --help)" % flag)
        for var in re.findall(r"\$\((\w+)\)", a):
            if var not in env:
                fail(where, "args use $(%s), which the container's env does not define" % var)
    expansion_vars = {v for a in c.get("args", []) for v in re.findall(r"\$\((\w+)\)", a)}
    for name, e in env.items():
        if name in expansion_vars:
            continue
        if name not in ctx["documented_env"]:
            fail(where, "env %s is neither read by litmus (per docs/) nor used in args" % name)
        if name == "LITMUS_OUTPUT_LAYOUT" and e.get("value") not in ("local", "sagemaker"):
            fail(where, "LITMUS_OUTPUT_LAYOUT must be local or sagemaker")
    output_dir = value_of(args, "--output-dir")
    if output_dir is None:
        fail(where, "no --output-dir: give the output folder on a volume (resume, verdict)")
    elif not any(output_dir.startswith(m["mountPath"].rstrip("/") + "/") or output_dir == m["mountPath"]
                 for m in c.get("volumeMounts", []) if not m.get("readOnly")):
        fail(where, "--output-dir %s is not on a writable volume mount" % output_dir)

    # resources
    res = c.get("resources", {})
    for kind in ("requests", "limits"):
        for r in ("cpu", "memory"):
            if r not in res.get(kind, {}):
                fail(where, "resources.%s.%s missing" % (kind, r))
    prefetch = parse_bytes(value_of(args, "--prefetch-memory") or "256M")
    limit = parse_bytes(res.get("limits", {}).get("memory", "0"))
    if limit is not None and prefetch is not None and limit < 2 * prefetch:
        fail(where, "memory limit %s is less than twice --prefetch-memory" % res.get("limits", {}).get("memory"))

    # probes
    if "livenessProbe" in c:
        fail(where, "a liveness probe would kill a job that is only waiting for training")
    for kind in ("readinessProbe", "startupProbe"):
        probe = c.get(kind)
        if not probe:
            continue
        if "exec" not in probe:
            fail(where, "%s must be exec: litmus serves no port" % kind)
            continue
        cmd = probe["exec"]["command"]
        if not cmd[0].startswith("/"):
            fail(where, "%s command must be an absolute path" % kind)
        for word in cmd[1:]:
            if word.startswith("/") and output_dir and not word.startswith(output_dir + "/") and word != "-e":
                fail(where, "%s looks at %s, outside --output-dir %s" % (kind, word, output_dir))

    # the event flush fits the grace period
    grace = pod.get("terminationGracePeriodSeconds", 30)
    flush = float(env.get("LITMUS_EVENTS_FLUSH_TIMEOUT_S", {}).get("value", "10"))
    if grace < flush + 5 + 5:
        fail(where, "terminationGracePeriodSeconds %s does not cover the event flush (%s s + 5 s) and the stop" %
             (grace, flush))
    uid = pod.get("securityContext", {}).get("runAsUser")
    if uid is not None and uid != ctx["uid"]:
        fail(where, "runAsUser %s is not the image's user %s" % (uid, ctx["uid"]))
    return sidecar, args


def check_pod_failure_policy(where, job, litmus_name, ctx):
    spec = job["spec"]
    policy = spec.get("podFailurePolicy")
    if policy is None:
        fail(where, "no podFailurePolicy: litmus's exit codes would all be retried alike")
        return
    if spec["template"]["spec"].get("restartPolicy") != "Never":
        fail(where, "podFailurePolicy needs restartPolicy Never")
    seen = {}
    for rule in policy["rules"]:
        on = rule.get("onExitCodes")
        if not on:
            continue
        if on.get("containerName") != litmus_name:
            fail(where, "onExitCodes names container %r, not litmus's %r" % (on.get("containerName"), litmus_name))
        if on.get("operator") != "In":
            fail(where, "onExitCodes must list litmus's codes with operator In")
        for code in on.get("values", []):
            if code in seen:
                fail(where, "exit code %d in two rules" % code)
            seen[code] = rule["action"]
    for code, (meaning, status) in ctx["exit_codes"].items():
        want = expected_action(meaning, status)
        got = seen.get(code)
        if want is None:
            if got is not None:
                fail(where, "exit code %d (%s) must not be in podFailurePolicy" % (code, status))
        elif got not in want:
            fail(where, "exit code %d (%s, %s): action %s, expected %s" % (code, status, meaning, got, sorted(want)))
    for code in seen:
        if code not in ctx["exit_codes"]:
            fail(where, "exit code %d is not one of litmus's (docs/run.md)" % code)
    if "FailIndex" in seen.values() and "backoffLimitPerIndex" not in spec:
        fail(where, "FailIndex needs backoffLimitPerIndex")


def check_sidecar(where, pod, c, args):
    if c.get("restartPolicy") != "Always":
        fail(where, "a native sidecar needs restartPolicy Always")
    trial = value_of(args, "--trial")
    pre = c.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    if pre != ["/usr/local/bin/litmus-sidecar", "--wait-for-verdict", trial]:
        fail(where, "preStop must be litmus-sidecar --wait-for-verdict %s, got %r" % (trial, pre))
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    trial_mount = mounts.get(trial)
    if not trial_mount or not trial_mount.get("readOnly"):
        fail(where, "litmus must mount the trial %s read-only" % trial)
    message = value_of(args, "--message-file") or (value_of(args, "--output-dir") or "") + "/message"
    trainers = pod.get("containers", [])
    if not trainers:
        fail(where, "no training container")
    for t in trainers:
        tmounts = {m["mountPath"]: m["name"] for m in t.get("volumeMounts", [])}
        if trial_mount and tmounts.get(trial) != trial_mount["name"]:
            fail(where, "training container %s does not share the trial volume at %s" % (t["name"], trial))
        stop = {e["name"]: e.get("value") for e in t.get("env", [])}.get("LITMUS_STOP_FILE")
        if stop != message:
            fail(where, "training container %s: LITMUS_STOP_FILE %r is not litmus's message file %r" %
                 (t["name"], stop, message))
        writable_dirs = [p for p, m in tmounts.items()]
        if not any(message.startswith(p + "/") for p in writable_dirs):
            fail(where, "training container %s cannot see %s" % (t["name"], message))


def check_document(where, doc, ctx):
    if not isinstance(doc, dict) or doc.get("kind") not in ("Job", "Pod"):
        return 0
    pod = doc["spec"]["template"]["spec"] if doc["kind"] == "Job" else doc["spec"]
    n = 0
    for group in ("initContainers", "containers"):
        for c in pod.get(group, []):
            if not is_litmus(c):
                continue
            n += 1
            w = "%s %s/%s" % (where, doc["metadata"]["name"], c["name"])
            sidecar, args = check_litmus_container(w, c, pod, ctx)
            if group == "initContainers":
                check_sidecar(w, pod, c, args)
            elif doc["kind"] == "Job":
                check_pod_failure_policy(w, doc, c["name"], ctx)
            if ctx.get("version") and ":" in c["image"] and not c["image"].endswith(":" + ctx["version"]):
                fail(w, "image %s is not tagged with the project version %s" % (c["image"], ctx["version"]))
    return n


def check_rule_files(ctx, rule_files):
    for path in rule_files:
        with tempfile.TemporaryDirectory() as out:
            r = subprocess.run([ctx["litmus"], "run", "--config", path, "--trial", ctx["fixture"], "--output-dir", out,
                                "--poll-interval-ms", "10"], capture_output=True, text=True,
                               env=dict(os.environ, SMDEBUG_TRAINING_END_DELAY_REFRESH="0", LITMUS_OUTPUT_LAYOUT="local",
                                        S3_PATH="", LITMUS_RULE_PARAMETERS=""), timeout=300)
            if r.returncode not in (0, 1):
                fail(path, "litmus run --config on a fixture trial: exit %d: %s" % (r.returncode, r.stderr.strip()[-400:]))


def report(line):
    """Prints `line`, also into $DEPLOY_TEST_REPORT (set by CTest; .ci/run shows it)."""
    print(line)
    path = os.environ.get("DEPLOY_TEST_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def main():
    if os.environ.get("DEPLOY_TEST_REPORT"):
        open(os.environ["DEPLOY_TEST_REPORT"], "w").close()
    source, litmus, fixture = sys.argv[1:4]
    kustomize = "--kustomize" in sys.argv[4:]
    root = os.path.join(source, "deploy", "kubernetes")
    ctx = {"options": run_options(litmus), "exit_codes": exit_code_table(source),
           "documented_env": documented_env(source), "uid": image_uid(source), "litmus": litmus,
           "fixture": fixture}
    assert ctx["exit_codes"].keys() >= {0, 1, 2, 3, 143}, ctx["exit_codes"]
    # The image's label defaults (deploy/container/Containerfile) are the project's version and ABI.
    containerfile = open(os.path.join(source, "deploy", "container", "Containerfile")).read()
    abi_header = open(os.path.join(source, "plugin-sdk", "include", "litmus", "rule_abi.h")).read()
    abi = "%s.%s" % (re.search(r"#define LITMUS_ABI_MAJOR (\d+)", abi_header).group(1),
                     re.search(r"#define LITMUS_ABI_MINOR (\d+)", abi_header).group(1))
    for arg, want in (("LITMUS_VERSION", project_version(source)), ("LITMUS_PLUGIN_ABI", abi)):
        m = re.search(r"^ARG %s=(\S+)$" % arg, containerfile, re.M)
        if not m or m.group(1) != want:
            fail("deploy/container/Containerfile", "ARG %s=%s, expected %s" % (arg, m.group(1) if m else "?", want))
    # documented_env is text: turn it into the names it mentions.
    ctx["documented_env"] = set(re.findall(r"\b([A-Z][A-Z0-9_]{2,}|rule_stop_grace_time_secs)\b", ctx["documented_env"]))

    if kustomize:
        kubectl = shutil.which("kubectl")
        if not kubectl:
            report("SKIP: kubectl not found, so the overlays are not rendered (install kubectl >= 1.27: "
                   "Debian 12's kubernetes-client 1.20 is too old for these kustomize files)")
            return SKIP
        ctx["version"] = project_version(source)
        dirs = sorted(d for d, _, files in os.walk(root) if "kustomization.yaml" in files)
        jobs = 0
        for d in dirs:
            rel = os.path.relpath(d, source)
            r = subprocess.run([kubectl, "kustomize", d], capture_output=True, text=True)
            if r.returncode != 0:
                fail(rel, "kubectl kustomize failed: " + r.stderr.strip())
                continue
            docs = list(yaml.safe_load_all(r.stdout))
            jobs += sum(check_document(rel + " (rendered)", doc, ctx) for doc in docs)
            if not any(isinstance(doc, dict) and doc.get("kind") == "Job" for doc in docs):
                fail(rel, "renders no Job")
        report("rendered %d kustomizations with %s: %d litmus containers checked" % (len(dirs), kubectl, jobs))
    else:
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith((".yaml", ".yml")))
        containers = 0
        rule_files = []
        for path in files:
            rel = os.path.relpath(path, source)
            try:
                docs = list(yaml.safe_load_all(open(path)))
            except yaml.YAMLError as e:
                fail(rel, "not YAML: %s" % e)
                continue
            for doc in docs:
                containers += check_document(rel, doc, ctx)
                if isinstance(doc, dict) and "rules" in doc and "kind" not in doc:
                    rule_files.append(path)
                # An overlay's patches that replace a litmus container's args: checked as args too.
                if isinstance(doc, dict) and doc.get("kind") == "Kustomization":
                    for patch in doc.get("patches", []):
                        for op in yaml.safe_load(patch.get("patch", "[]")) or []:
                            if isinstance(op, dict) and op.get("path", "").endswith("/args") and op.get("op") in ("add", "replace"):
                                for a in op["value"][1:] if op["value"] and op["value"][0] == "run" else op["value"]:
                                    if a.startswith("--") and a.split("=")[0] not in ctx["options"]:
                                        fail(rel, "patch uses %s, not an option of `litmus run`" % a)
                            elif isinstance(op, dict) and op.get("path", "").endswith("/args/-"):
                                a = op["value"]
                                if isinstance(a, str) and a.startswith("--") and a.split("=")[0] not in ctx["options"]:
                                    fail(rel, "patch adds %s, not an option of `litmus run`" % a)
        check_rule_files(ctx, rule_files)
        report("parsed %d YAML files: %d litmus containers and %d rule files checked" %
              (len(files), containers, len(rule_files)))
    for f in failures:
        report("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
