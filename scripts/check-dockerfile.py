#!/usr/bin/env python3
"""Runs the steps of the Dockerfile without Docker (CI has no daemon), then starts the
resulting image layout as a container would.

The build stage runs in the repository itself (its `COPY . .` into /src is the
identity) with /out mapped to a scratch directory; CARGO_TARGET_DIR from the caller's
environment replaces the Dockerfile's, so the build reuses the persistent cache. The
runtime stage's COPY instructions fill a scratch root (/opt/weir/... below it) and its
ENV, ENTRYPOINT and CMD are applied there: a JobManager and a TaskManager are started
from the laid-out binary and configuration (ports set to 0), a TaskManager registers,
and a job runs to FINISHED through the REST API. What cannot run here: pulling the base
images, USER (the steps run as the caller) and the image's size (see the note).
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def instructions(path):
    """The Dockerfile's instructions as (keyword, argument) pairs, continuations joined."""
    out, current = [], ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not current and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.endswith("\\"):
                current += line[:-1] + " "
                continue
            current += line
            keyword, _, arg = current.strip().partition(" ")
            out.append((keyword.upper(), arg.strip()))
            current = ""
    return out


def stages(instrs):
    result = []
    for keyword, arg in instrs:
        if keyword == "FROM":
            parts = arg.split()
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else str(len(result))
            result.append({"name": name, "base": parts[0], "steps": []})
        elif not result:
            sys.exit(f"{keyword} before FROM")
        else:
            result[-1]["steps"].append((keyword, arg))
    return result


def env_pairs(arg):
    if "=" in arg.split()[0]:
        return [tuple(tok.split("=", 1)) for tok in shlex.split(arg)]
    key, _, value = arg.partition(" ")
    return [(key, value.strip())]


def run_build(stage, out_dir):
    env = dict(os.environ)
    cache_target = os.environ.get("CARGO_TARGET_DIR")
    mapping = {"/src": ROOT, "/out": out_dir}

    def mapped(text):
        return re.sub(r"(?<![\w.])(/src|/out)(?=/|\b)", lambda m: mapping[m.group(1)], text)

    for keyword, arg in stage["steps"]:
        if keyword == "WORKDIR":
            if arg != "/src":
                sys.exit(f"the build stage must work in /src, not {arg}")
        elif keyword == "COPY":
            if arg != ". .":
                sys.exit(f"the build stage may only COPY . . (got {arg})")
        elif keyword == "ENV":
            for key, value in env_pairs(arg):
                env[key] = mapped(value)
            if cache_target:
                env["CARGO_TARGET_DIR"] = cache_target
        elif keyword == "RUN":
            command = mapped(arg)
            print(f"+ RUN {command}", flush=True)
            subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=ROOT, env=env, check=True)
        else:
            sys.exit(f"unexpected {keyword} in the build stage")


def lay_out_runtime(stage, build_out, root):
    env, entrypoint, cmd, workdir = {}, [], [], "/"

    def inside(path):
        return os.path.join(root, path.lstrip("/"))

    for keyword, arg in stage["steps"]:
        if keyword == "COPY":
            parts = arg.split()
            if parts[0].startswith("--from="):
                src = parts[1]
                if not src.startswith("/out/"):
                    sys.exit(f"COPY --from takes files from /out only (got {src})")
                source = os.path.join(build_out, src[len("/out/"):])
                dest = parts[2]
            else:
                source, dest = os.path.join(ROOT, parts[0]), parts[1]
            target = inside(dest)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            subprocess.run(["cp", source, target], check=True)
        elif keyword == "ENV":
            for key, value in env_pairs(arg):
                env[key] = ":".join(inside(p) if p.startswith("/opt/") else p for p in value.split(":"))
        elif keyword == "WORKDIR":
            workdir = inside(arg)
            os.makedirs(workdir, exist_ok=True)
        elif keyword == "ENTRYPOINT":
            entrypoint = json.loads(arg)
        elif keyword == "CMD":
            cmd = json.loads(arg)
        elif keyword in ("USER", "EXPOSE", "LABEL"):
            print(f"(not applied here: {keyword} {arg})")
        else:
            sys.exit(f"unexpected {keyword} in the runtime stage (it runs no commands)")
    return env, entrypoint, cmd, workdir


def start(argv, env, cwd):
    # The start-up line is the first line on stdout; logs (such as the warning that
    # internal connections are plaintext) go to stderr, shown as they come.
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=None, text=True)
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        sys.exit(f"{argv} exited without its start-up line")
    fields = dict(tok.split("=", 1) for tok in line.split() if "=" in tok)
    return proc, fields


def get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def main():
    dockerfile = os.path.join(ROOT, "Dockerfile")
    build, runtime = stages(instructions(dockerfile))
    with tempfile.TemporaryDirectory() as scratch:
        out_dir = os.path.join(scratch, "out")
        root = os.path.join(scratch, "root")
        run_build(build, out_dir)
        image_env, entrypoint, cmd, workdir = lay_out_runtime(runtime, out_dir, root)
        env = {"HOME": scratch, **image_env, "WEIR_PROPERTIES": "jobmanager.rpc.port: 0\nrest.port: 0\n"}
        exe = [p for p in (os.path.join(d, entrypoint[0]) for d in env["PATH"].split(":")) if os.path.isfile(p)]
        if not exe:
            sys.exit(f"ENTRYPOINT {entrypoint[0]} not found on the image's PATH")
        size = os.path.getsize(exe[0])
        print(f"binary: {size / 1e6:.1f} MB stripped")
        jm, jm_fields = start(exe + cmd, env, workdir)
        procs = [jm]
        try:
            rest = "http://" + jm_fields["rest"].replace("0.0.0.0", "127.0.0.1")
            rpc_port = jm_fields["rpc"].rsplit(":", 1)[1]
            tm_env = dict(env, WEIR_PROPERTIES=f"jobmanager.rpc.port: {rpc_port}\ntaskmanager.rpc.port: 0\ntaskmanager.data.port: 0\ntaskmanager.host: 127.0.0.1\n")
            tm, _ = start(exe + ["taskmanager"], tm_env, workdir)
            procs.append(tm)
            deadline = time.time() + 30
            while get(rest + "/overview")["slots-total"] != 2:
                if time.time() > deadline:
                    sys.exit("the TaskManager did not register")
                time.sleep(0.1)
            body = json.dumps({"program": "wordcount", "parallelism": 2}).encode()
            req = urllib.request.Request(rest + "/jobs", body, {"Content-Type": "application/json"})
            jid = json.loads(urllib.request.urlopen(req, timeout=5).read())["jobid"]
            while get(f"{rest}/jobs/{jid}")["state"] not in ("FINISHED", "FAILED", "CANCELED"):
                if time.time() > deadline:
                    sys.exit("the job did not end")
                time.sleep(0.1)
            state = get(f"{rest}/jobs/{jid}")["state"]
            if state != "FINISHED":
                sys.exit(f"the job ended {state}")
            print("image layout: JobManager and TaskManager started from the image's files; wordcount FINISHED")
        finally:
            for p in procs:
                p.kill()
                p.wait()


if __name__ == "__main__":
    main()
