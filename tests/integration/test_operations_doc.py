"""docs/OPERATIONS.md's settings table is the binary's own
(server/service/config.c): a setting added to the code without `make docs`
fails here."""
import re
import shutil
import subprocess
import sys

from conftest import BIN, REPO, run

SCRIPT = REPO / "scripts/settings-doc.py"
DOC = REPO / "docs/OPERATIONS.md"


def check(doc):
    return subprocess.run([sys.executable, str(SCRIPT), "--check", str(BIN), str(doc)],
                          capture_output=True, text=True)


def test_the_settings_table_is_the_binarys():
    p = check(DOC)
    assert p.returncode == 0, p.stdout + p.stderr
    documented = set(re.findall(r"^\| `(STALLSCOPE_\w+)` \|", DOC.read_text(), re.M))
    helped = {line.split()[0] for line in run([BIN, "serve", "--help"]).stdout.splitlines()
              if line.split() and line.split()[0].startswith("STALLSCOPE_")}
    assert helped and documented == helped


def test_a_setting_missing_from_the_doc_fails_and_make_docs_restores_it(tmp_path):
    doc = tmp_path / "OPERATIONS.md"
    shutil.copy(DOC, doc)
    text = doc.read_text()
    row = next(l for l in text.splitlines(True) if l.startswith("| `STALLSCOPE_FOLD_INTERVAL`"))
    doc.write_text(text.replace(row, ""))
    p = check(doc)
    assert p.returncode == 1 and "STALLSCOPE_FOLD_INTERVAL" in p.stdout
    # The one command that regenerates it, outside the markers untouched.
    run([sys.executable, SCRIPT, BIN, doc])
    assert doc.read_text() == text
