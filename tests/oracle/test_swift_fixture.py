"""Swift frames (issue 40, SPEC §3.2, §3.6) on a real dSYM whose functions
carry Swift linkage names (tests/fixtures/src/swift_frames.c): every
__text address symbolized by `stallscope symbolicate` and by
llvm-symbolizer must agree on the inline chain, files and lines; where
LLVM 14 prints a Swift linkage name raw, we print its short form as
`function` (the table below, written from the SPEC's rules: no module
names, no return types, labels and argument types kept) and keep the
linkage name as `symbol`. The full forms (`swift demangle`'s) are checked
through `stallscope demangle --full`."""

import pytest

from conftest import (Slice, llvm_frames, llvm_symbolize, load_manifest, run_cli, symbolicate,
                      text_addresses)

# linkage name → (short form, full form)
SWIFT = {
    "$s5Feeds9FeedStoreC6sharedACvgZ":
        ("static FeedStore.shared.getter",
         "static Feeds.FeedStore.shared.getter : Feeds.FeedStore"),
    "$s5Feeds9FeedStoreC5itemsSaySSGvg":
        ("FeedStore.items.getter", "Feeds.FeedStore.items.getter : [Swift.String]"),
    "$s5Feeds9FeedStoreC3urlAC10Foundation3URLV_tcfc":
        ("FeedStore.init(url: URL)",
         "Feeds.FeedStore.init(url: Foundation.URL) -> Feeds.FeedStore"),
    "$s5Feeds18FeedViewControllerC6layout33_4A5F0B6E6F2E4C1D8E9A7B3C2D1E0F9ALLyyF":
        ("FeedViewController.layout()",
         "Feeds.FeedViewController.(layout in _4A5F0B6E6F2E4C1D8E9A7B3C2D1E0F9A)() -> ()"),
    "$s5Feeds18FeedViewControllerC6reload8animatedySb_tFyyXEfU_":
        ("closure #1 () in FeedViewController.reload(animated: Bool)",
         "closure #1 () -> () in Feeds.FeedViewController.reload(animated: Swift.Bool) -> ()"),
    "$s5Feeds18FeedViewControllerC6reload8animatedySb_tF":
        ("FeedViewController.reload(animated: Bool)",
         "Feeds.FeedViewController.reload(animated: Swift.Bool) -> ()"),
    "$s5Feeds18FeedViewControllerC11viewDidLoadyyF":
        ("FeedViewController.viewDidLoad()", "Feeds.FeedViewController.viewDidLoad() -> ()"),
    "$s5Feeds18FeedViewControllerC11viewDidLoadyyFTo":
        ("@objc FeedViewController.viewDidLoad()",
         "@objc Feeds.FeedViewController.viewDidLoad() -> ()"),
}


def swift_slices():
    out = []
    for e in load_manifest()["files"]:
        if e.get("role") == "swift":
            out += [Slice(e, sl, None) for sl in e["slices"]]
    return out


@pytest.mark.parametrize("sl", swift_slices(), ids=lambda s: s.id)
def test_swift_frames_read_as_swift_and_agree_with_llvm_elsewhere(sl):
    addrs = text_addresses(sl)
    theirs = llvm_symbolize(sl.path, addrs)
    ours = symbolicate(sl.path, addrs)
    seen, bad = set(), []
    for addr, o, t in zip(addrs, ours, theirs):
        want = llvm_frames(t)
        got = o["frames"]
        if len(got) != len(want):
            bad.append((hex(addr), got, want))
            continue
        for g, (name, file, line, _col) in zip(got, want):
            short = SWIFT[name][0] if name in SWIFT else name
            symbol_ok = g["symbol"] in (name, "_" + name) if name in SWIFT else True
            if (g["function"], g.get("file", ""), g.get("line", 0)) != (short, file, line) \
                    or not symbol_ok:
                bad.append((hex(addr), g, (short, file, line)))
            seen.add(name)
    assert not bad, bad[:5]
    # Every Swift function of the fixture was met, the inlined one too
    # (only in the DWARF: the symbol table has no entry for it).
    expected = set(SWIFT) if sl.has_dwarf else {n for n in SWIFT if "layout" not in n}
    assert expected <= seen, expected - seen


def test_full_forms():
    names = list(SWIFT)
    r = run_cli(["demangle", "--full", *names])
    assert r.returncode == 0
    assert r.stdout.split("\n")[:-1] == [SWIFT[n][1] for n in names]
    r = run_cli(["demangle", *names])
    assert r.stdout.split("\n")[:-1] == [SWIFT[n][0] for n in names]
