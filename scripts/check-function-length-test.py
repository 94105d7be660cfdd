#!/usr/bin/env python3
"""The function-length check's own test: it must fail on a function one line
over the limit, pass on one at the limit, and not be fooled by braces in
comments, strings, initialisers or preprocessor lines."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check-function-length.py")


def c_function(name, lines):
    """A function spanning exactly `lines` lines, name line to brace."""
    body = ["\tx++; /* { */"] * (lines - 3)
    return "\n".join([f"static int {name}(int x)", "{"] + body + ["}"]) + "\n"


def run(src, limit=10):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.c")
        with open(path, "w") as f:
            f.write(src)
        p = subprocess.run([sys.executable, CHECK, "--max", str(limit), path],
                           capture_output=True, text=True)
        return p.returncode, p.stdout


def expect(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


noise = ('static const char *s = "}{{";\n'
         "static const int t[] = { 1, 2, 3 };\n"
         "#define OPEN {\n"
         "// } stray\n")
rc, out = run(noise + c_function("at_limit", 10))
expect(rc == 0, f"a 10-line function passes at --max 10 ({out!r})")
rc, out = run(noise + c_function("short_one", 3) + c_function("too_long", 11))
expect(rc == 1, "an 11-line function fails at --max 10")
expect("t.c:8: too_long (11 lines)" in out, f"it is named with its line ({out!r})")
expect("short_one" not in out, "only the long one is reported")
print("check-function-length: self-test passed")
