"""`import accl` gives the main thread's stack room to grow (docs/python.md,
"What a call costs"), and accl runs deep inputs on it."""

import resource
import subprocess
import sys

CHILD = """
import resource, sys
import accl
soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
e = accl.Engine(device="host")
# As long an expression as accl takes: its tree is walked recursively.
v = e.eval(" + ".join(["1"] * 10000))
print(soft, v)
"""


def run_child(env_extra, soft):
    def limit():
        _, hard = resource.getrlimit(resource.RLIMIT_STACK)
        resource.setrlimit(resource.RLIMIT_STACK, (soft, hard))

    env = {k: v for k, v in __import__("os").environ.items() if k != "ACCL_KEEP_STACK_LIMIT"}
    env.update(env_extra)
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, preexec_fn=limit, capture_output=True, text=True, check=True
    )
    soft_after, value = out.stdout.split()
    return int(soft_after), int(value)


def test_import_raises_the_stack_limit_and_deep_inputs_run():
    _, hard = resource.getrlimit(resource.RLIMIT_STACK)
    assert hard == resource.RLIM_INFINITY or hard >= 64 << 20
    assert run_child({}, 8 << 20) == (64 << 20, 10000)
    # Asked to keep it, or when it is larger already, it stays.
    assert run_child({"ACCL_KEEP_STACK_LIMIT": "1"}, 8 << 20) == (8 << 20, 10000)
    assert run_child({}, 128 << 20) == (128 << 20, 10000)
