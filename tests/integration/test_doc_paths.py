"""Every repository path and `make` target that README.md and docs/**/*.md
name exists (scripts/check-doc-paths.py), including docs/ARCHITECTURE.md's
"Where to start for five common changes", so a doc cannot keep pointing at
a file that moved. Needs no server or database.

docs/journal/ is left out: a journal keeps what was measured and said at
the time, naming files as they were then (docs/journal/performance.md
names `schema/035`, a migration number never shipped, and files moved
since); it is history, not directions."""
import re
import subprocess
import sys

from conftest import REPO

SCRIPT = REPO / "scripts/check-doc-paths.py"
ARCHITECTURE = REPO / "docs/ARCHITECTURE.md"
CHANGES = ("A new report format", "A new API route", "A new aggregate",
           "A new dashboard view", "A new setting")


def check(*docs):
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(REPO), *map(str, docs)],
                          capture_output=True, text=True)


def named(out):
    """(paths, links, make targets) from the checker's summary line."""
    m = re.search(r"(\d+) paths, (\d+) links, (\d+) make targets named", out)
    assert m, out
    return tuple(int(x) for x in m.groups())


def test_every_path_and_make_target_the_docs_name_exists():
    p = check()
    assert p.returncode == 0, p.stdout + p.stderr
    paths, links, targets = named(p.stdout)
    # The docs name hundreds of paths and dozens of targets: a checker that
    # found none would pass for nothing.
    assert paths > 300 and links > 10 and targets > 10, p.stdout


def five_changes():
    text = ARCHITECTURE.read_text()
    section = text.split("## Where to start for five common changes", 1)[1].split("\n## ", 1)[0]
    lists = {}
    for change in CHANGES:
        body = section.split(f"**{change}**", 1)[1].split("\n**", 1)[0]
        lists[change] = re.findall(r"`((?:[\w.-]+/)+[\w.-]+)`", body)
    return lists


def test_the_five_common_changes_name_files_that_exist():
    for change, paths in five_changes().items():
        assert len(paths) >= 4, (change, paths)
        missing = [p for p in paths if not (REPO / p).exists()]
        assert not missing, (change, missing)


def test_a_doc_naming_a_missing_file_or_target_fails(tmp_path):
    good = tmp_path / "good.md"
    good.write_text("The handler is `server/api/ingest/ingest.c`, migration\n"
                    "`schema/047_claimed_arrivals.sql` (or schema/047), measured by\n"
                    "`bench/symbolicate.sh`; run `make test` or `make BUILD=x asan`.\n"
                    "Globs are not paths: `web/*.js`, `server/api/<resource>/`.\n")
    p = check(good)
    assert p.returncode == 0, p.stdout
    assert named(p.stdout) == (4, 0, 2), p.stdout

    bad = tmp_path / "bad.md"
    bad.write_text("The handler moved: `ingest/ingest.c`.\n"
                   "Run bench/gone.sh, see schema/999 and [the page](NOPE.md).\n"
                   "```\nmake no-such-target\n```\n")
    p = check(bad)
    assert p.returncode == 1, p.stdout
    for what in ("no such path: ingest/ingest.c", "no such path: bench/gone.sh",
                 "no such path: schema/999", "broken link: NOPE.md",
                 "no such make target: make no-such-target"):
        assert f"{bad}:" in p.stdout and what in p.stdout, (what, p.stdout)


def test_a_five_change_list_naming_a_moved_file_fails(tmp_path):
    text = ARCHITECTURE.read_text()
    section = text.split("## Where to start for five common changes", 1)[1].split("\n## ", 1)[0]
    doc = tmp_path / "ARCHITECTURE.md"
    doc.write_text(section)
    assert check(doc).returncode == 0
    doc.write_text(section.replace("server/api/ingest/ingest.c", "server/ingest.c"))
    p = check(doc)
    assert p.returncode == 1 and "no such path: server/ingest.c" in p.stdout, p.stdout


def test_the_journals_are_left_out_as_history():
    journal = REPO / "docs/journal/performance.md"
    docs = [d for d in (REPO / "docs").rglob("*.md") if "journal" not in d.parts]
    p = check()
    assert re.search(rf"^{len(docs) + 1} docs:", p.stdout, re.M), p.stdout
    # Checked on its own, the journal names what is gone: why it is left out.
    p = check(journal)
    assert p.returncode == 1 and "schema/035" in p.stdout, p.stdout


def test_performance_page_holds_the_figures_not_the_history():
    """docs/PERFORMANCE.md stays a page of current figures (issue 45: under
    250 lines, every table row with its date and command); the history
    goes to docs/journal/performance.md."""
    text = (REPO / "docs/PERFORMANCE.md").read_text()
    assert len(text.splitlines()) < 250
    rows = [line for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| what")]
    assert len(rows) > 20
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert re.search(r"20\d\d-\d\d-\d\d|the same (run|runs)|same run", row), row
        assert "`" in cells[-1] or cells[-1].startswith("the same"), row
