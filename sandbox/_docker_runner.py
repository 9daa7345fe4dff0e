"""Runs one job inside a sandbox container (sent as ``python -c``, after ``_verdict.py``; stdlib only).

argv[1] is the job as base64 JSON. The program runs in its own session with rlimits; the runner reads its
output up to the cap, enforces the wall-clock backstop, then kills every other process of the container's
user (``kill(-1)`` spares the runner and the container's init) and prints the result as one JSON line.
"""

import base64
import json
import math
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import time

job = json.loads(base64.b64decode(sys.argv[1]))
MAX_OUTPUT = int(sys.argv[2])
MAIN = {"python": "main.py", "bash": "main.sh"}
folder = "/tmp/job"
shutil.rmtree(folder, ignore_errors=True)
os.makedirs(folder, mode=0o700)
for name, content in {**job.get("files", {}), MAIN[job["language"]]: job["code"]}.items():
    os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
    with open(os.path.join(folder, name), "w") as handle:
        handle.write(content)
stdin_fd = os.memfd_create("stdin")
os.write(stdin_fd, job.get("stdin", "").encode())
os.lseek(stdin_fd, 0, os.SEEK_SET)
timeout = float(job["timeout"])


def limit() -> None:
    cpu = max(1, math.ceil(timeout))
    resource.setrlimit(resource.RLIMIT_AS, (job["memory_mb"] * 2**20,) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 2**20,) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


command = [sys.executable, "main.py"] if job["language"] == "python" else ["bash", "main.sh"]
environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": folder, "TMPDIR": folder, "LANG": "C.UTF-8"}
started = time.monotonic()
process = subprocess.Popen(
    command,
    cwd=folder,
    stdin=stdin_fd,
    stdout=subprocess.PIPE,
    stderr=subprocess.PIPE,
    env=environment,
    start_new_session=True,
    preexec_fn=limit,
)
buffers = {process.stdout: bytearray(), process.stderr: bytearray()}
selector = selectors.DefaultSelector()
for stream in buffers:
    selector.register(stream, selectors.EVENT_READ)
flag = None
deadline = started + float(job.get("wall_timeout") or timeout * 2 + 1)
while selector.get_map() and flag is None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        flag = "timeout"
        break
    for key, _ in selector.select(remaining):
        chunk = os.read(key.fd, 1 << 16)
        if not chunk:
            selector.unregister(key.fileobj)
            continue
        buffer = buffers[key.fileobj]
        room = MAX_OUTPUT - len(buffer)
        buffer += chunk[: max(room, 0)]
        if len(chunk) > room:
            flag = "output_limit"
if flag is not None:
    os.killpg(process.pid, signal.SIGKILL)
_, exit_status, usage = os.wait4(process.pid, 0)
for _ in range(3):  # whatever the job left behind; kill(-1) spares this process and the container's init
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
for entry in os.scandir("/tmp"):  # the next job in this container starts from an empty /tmp
    if entry.is_dir(follow_symlinks=False):
        shutil.rmtree(entry.path, ignore_errors=True)
    else:
        try:
            os.unlink(entry.path)
        except OSError:
            pass
cpu = usage.ru_utime + usage.ru_stime
stdout, stderr = bytes(buffers[process.stdout]), bytes(buffers[process.stderr])
status, code = verdict(exit_status, cpu, timeout, flag, stderr)  # noqa: F821 - prepended _verdict.py
print(
    json.dumps(
        {
            "status": status,
            "exit_code": code,
            "stdout": stdout.decode(errors="replace"),
            "stderr": stderr.decode(errors="replace"),
            "wall_s": round(time.monotonic() - started, 6),
            "cpu_s": round(cpu, 6),
        }
    )
)
