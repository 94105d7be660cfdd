#!/usr/bin/env python3
"""Deterministic generator of realistic Swift mangled names (Swift 5, `$s`).

Usage:  python3 bench/swift_names.py N [SEED]   > names.txt

Prints N distinct mangled names, one per line, always the same N for the same
arguments (seeded PRNG, default seed 1). Used by the demangler benchmark to
give C functions Swift linkage names, e.g.
    void f123(void) __asm__("$s5Feeds18FeedViewControllerC6reload8animatedySb_tF");
so every name uses only [A-Za-z0-9_$] (safe inside a quoted asm label).

The names have the shapes and length spread of a real iOS app: a few modules
(and `main`), classes/structs/enums with nested types, methods with argument
labels and typed arguments (Int, String, Bool, Double, [String], [String : Any],
Int?, Foundation and UIKit types, types of the same module), static members,
getters/setters/modify/didSet/willSet, allocating and initializing inits,
deinit, closures (and closures in closures) in methods, async/throws methods,
generic methods and their specializations, @objc thunks, partial apply
forwarders, and private discriminators (`33_<hex>LL`) on some declarations.
The templates mirror the app-shaped names in tests/golden/swift/short.txt.

The mangler below is a small, faithful subset of Swift's (ASTMangler /
lib/Demangling/ManglingUtils.h): identifier substitutions (`AA`, `AC`, ...,
merged as `AaC`, repeated as `A2C`), word substitutions inside identifiers
(`0...`), standard type substitutions (`Si`, `SS`, `S2i`, ...), so each name
is what the compiler would emit. Validation: the first 60,000 names for the
default seed (and 20,000 each for seeds 2, 3, 7) were each demangled and
re-mangled by Swift 6.3.1's own Demangler/Remangler (the identical string came
back: valid and canonical) and printed in the short form (SPEC 3.6) without
failure. Change the templates or vocabulary only with that check redone.
"""

import random
import sys

# --------------------------------------------------------------------------
# Mangler


def _is_upper(c):
    return 'A' <= c <= 'Z'


def _is_word_start(c):
    return c != '' and not c.isdigit() and c != '_'


def _is_word_end(c, prev):
    if c == '' or c == '_':
        return True
    return (not _is_upper(prev)) and _is_upper(c)


class Mangler:
    MAX_WORDS = 26

    def __init__(self):
        self.buf = []          # list of str pieces; use text() to read
        self.text_ = ''
        self.words = []        # [start, length] into the buffer
        self.subs = {}         # key -> index
        self.nsubs = 0
        # substitution merging state (ManglingUtils.h SubstitutionMerging)
        self.last_pos = 0
        self.last_size = 0
        self.last_num = 0
        self.last_std = False

    # buffer helpers
    def emit(self, s):
        self.text_ += s

    def text(self):
        return self.text_

    def reset(self, n):
        self.text_ = self.text_[:n]

    # substitutions
    def _try_merge(self, subst, is_std):
        buf = self.text_
        if (self.last_num > 0 and len(buf) == self.last_pos + self.last_size
                and self.last_std == is_std):
            tail = buf[len(buf) - self.last_size:]
            last = tail.lstrip('0123456789')
            if last != subst and not is_std:
                self.last_pos = len(buf)
                self.last_num = 1
                self.reset(len(buf) - 1)
                self.emit(chr(ord(last[-1]) - ord('A') + ord('a')) + subst)
                self.last_size = 1
                return True
            if last == subst:
                self.last_num += 1
                self.reset(self.last_pos)
                self.emit(str(self.last_num) + subst)
                self.last_size = len(self.text_) - self.last_pos
                return True
        self.last_pos = len(buf) + 1
        self.last_size = len(subst)
        self.last_num = 1
        self.last_std = is_std
        return False

    def _subst_ref(self, idx):
        if idx >= 26:
            n = idx - 26
            self.emit('A' + ('_' if n == 0 else str(n - 1) + '_'))
            return
        c = chr(ord('A') + idx)
        if not self._try_merge(c, False):
            self.emit('A' + c)

    def try_subst(self, key):
        idx = self.subs.get(key)
        if idx is None:
            return False
        self._subst_ref(idx)
        return True

    def add_subst(self, key):
        if key not in self.subs:
            self.subs[key] = self.nsubs
            self.nsubs += 1

    def std(self, code):
        """A standard substitution: 'i' -> Si, 'S' -> SS, 'a' -> Sa, ..."""
        if not self._try_merge(code, True):
            self.emit('S' + code)

    # identifiers (Mangle::mangleIdentifier)
    def _mangle_ident_words(self, ident):
        words_in_buffer = len(self.words)
        repl = []
        word_start = None
        n = len(ident)
        for pos in range(n + 1):
            ch = ident[pos] if pos < n else ''
            if word_start is not None and _is_word_end(ch, ident[pos - 1]):
                word = ident[word_start:pos]
                idx = -1
                for i in range(0, words_in_buffer):
                    s, l = self.words[i]
                    if self.text_[s:s + l] == word:
                        idx = i
                        break
                if idx < 0:
                    for i in range(words_in_buffer, len(self.words)):
                        s, l = self.words[i]
                        if ident[s:s + l] == word:
                            idx = i
                            break
                if idx >= 0:
                    repl.append((word_start, idx))
                elif len(word) >= 2 and len(self.words) < self.MAX_WORDS:
                    self.words.append([word_start, len(word)])
                word_start = None
            if word_start is None and _is_word_start(ch):
                word_start = pos
        if repl:
            self.emit('0')
        repl.append((n, -1))
        pos = 0
        wib = words_in_buffer
        end = len(repl)
        for k, (spos, widx) in enumerate(repl):
            if pos < spos:
                self.emit(str(spos - pos))
                first = True
                while True:
                    if wib < len(self.words) and self.words[wib][0] == pos:
                        self.words[wib][0] = len(self.text_)
                        wib += 1
                    if first and ident[pos].isdigit():
                        raise ValueError('digit after word substitution')
                    self.emit(ident[pos])
                    pos += 1
                    first = False
                    if pos >= spos:
                        break
            if widx >= 0:
                pos += self.words[widx][1]
                if k < end - 2:
                    self.emit(chr(ord('a') + widx))
                else:
                    self.emit(chr(ord('A') + widx))
                    if pos == n:
                        self.emit('0')
        return bool(repl[:-1])

    def ident(self, s):
        key = ('id', s)
        if self.try_subst(key):
            return
        self._mangle_ident_words(s)
        self.add_subst(key)


# --------------------------------------------------------------------------
# A tiny type language:
#   ('std', code)                   Int 'i', String 'S', Bool 'b', Double 'd',
#                                   Float 'f', UInt 'u'
#   ('array', T) ('dict', K, V) ('opt', T) ('any',) ('void',)
#   ('nom', module, (names,), kind)  kind: C class, V struct, O enum;
#                                   module 'So' = imported ObjC (__C)
#   ('fn', [params], result, attrs) function type, attrs like 'Yb'
#   ('gp',)                         generic parameter A (x)


def mangle_type(m, t):
    k = t[0]
    if k == 'std':
        m.std(t[1])
    elif k == 'void':
        m.emit('y')
    elif k == 'any':
        m.emit('yp')
    elif k == 'gp':
        m.emit('x')
    elif k == 'array':
        key = ('type', t)
        if m.try_subst(key):
            return
        m.std('a')
        m.emit('y')
        mangle_type(m, t[1])
        m.emit('G')
        m.add_subst(key)
    elif k == 'dict':
        key = ('type', t)
        if m.try_subst(key):
            return
        m.std('D')
        m.emit('y')
        mangle_type(m, t[1])
        mangle_type(m, t[2])
        m.emit('G')
        m.add_subst(key)
    elif k == 'opt':
        key = ('type', t)
        if m.try_subst(key):
            return
        mangle_type(m, t[1])
        m.emit('Sg')
        m.add_subst(key)
    elif k == 'nom':
        mangle_nominal(m, t[1], t[2], t[3])
    elif k == 'fn':
        mangle_type(m, t[2])
        mangle_params(m, t[1])
        m.emit(t[3])
        m.emit('c')
    else:
        raise ValueError(t)


def mangle_nominal(m, module, names, kind, discr=None):
    """module.names[0].names[1]... ; every level but the last is a class
    (kind 'C'); the last has KIND. DISCR puts a private discriminator on the
    innermost name."""
    key = ('type', module, tuple(names), kind)
    if m.try_subst(key):
        return
    if len(names) > 1:
        mangle_nominal(m, module, names[:-1], 'C')
    elif module == 'So':
        m.emit('So')
    else:
        m.ident(module)
    m.ident(names[-1])
    if discr and len(names) == 1:
        m.ident(discr)
        m.emit('LL')
    m.emit(kind)
    m.add_subst(key)


def mangle_params(m, params, labelled=False):
    """PARAMS: list of types. A single unlabelled parameter is mangled bare;
    labelled or several parameters form a tuple ('_' after the first, 't')."""
    if not params:
        m.emit('y')
        return
    if len(params) == 1 and not labelled:
        mangle_type(m, params[0])
        return
    for i, p in enumerate(params):
        mangle_type(m, p)
        if i == 0:
            m.emit('_')
    m.emit('t')


def mangle_labels(m, labels):
    """The label list of a function or init entity: nothing when there are
    no parameters, 'y' (empty list) when no parameter has a label, else one
    identifier or '_' per parameter. True when labels were mangled."""
    if not labels:
        return False
    if not any(labels):
        m.emit('y')
        return False
    for l in labels:
        if l:
            m.ident(l)
        else:
            m.emit('_')
    return True


# --------------------------------------------------------------------------
# Vocabulary

MODULES = ['Feeds', 'Profile', 'Checkout', 'Networking', 'Onboarding',
           'Settings', 'MediaKit', 'Messaging', 'DesignSystem', 'Analytics',
           'Search', 'Payments', 'main']

PREFIXES = ['Feed', 'Story', 'Profile', 'Cart', 'Order', 'Message', 'Thread',
            'Photo', 'Video', 'Comment', 'Account', 'Session', 'Search',
            'Payment', 'Product', 'Review', 'Badge', 'Avatar', 'Inbox',
            'Timeline', 'Player', 'Upload', 'Download', 'Image', 'Chat',
            'Notification', 'Settings', 'Onboarding', 'Checkout', 'Wallet']
CLASS_SUFFIXES = ['ViewController', 'View', 'Cell', 'Manager', 'Service',
                  'Store', 'Coordinator', 'Presenter', 'Loader', 'Cache',
                  'Client', 'Router', 'Controller', 'DataSource', 'Interactor']
STRUCT_SUFFIXES = ['Model', 'Item', 'ViewModel', 'State', 'Request',
                   'Response', 'Config', 'Style', 'Row', 'Section']
ENUM_SUFFIXES = ['Kind', 'Action', 'Event', 'Error', 'Route', 'Mode']
NESTED = ['Layout', 'Constants', 'Section', 'State', 'Builder', 'Context',
          'Delegate', 'Handler', 'Storage', 'Snapshot']

VERBS = ['load', 'reload', 'update', 'configure', 'fetch', 'refresh',
         'present', 'dismiss', 'handle', 'apply', 'render', 'prepare',
         'register', 'select', 'scroll', 'start', 'stop', 'cancel', 'save',
         'delete', 'insert', 'observe', 'track', 'show', 'hide', 'bind',
         'decode', 'encode', 'validate', 'submit', 'retry', 'open', 'close',
         'layout', 'animate', 'resolve', 'merge', 'sync', 'prefetch', 'reset']
OBJECTS = ['', 'Data', 'Items', 'Layout', 'Content', 'Header', 'Footer',
           'Image', 'Cells', 'State', 'Badge', 'Title', 'Avatar', 'Page',
           'Feed', 'Cache', 'Session', 'Token', 'Section', 'Selection',
           'Results', 'Comments', 'Thumbnail', 'Subviews', 'Constraints']
UIKIT_METHODS = [
    ('viewDidLoad', [], []), ('viewWillAppear', [None], [('std', 'b')]),
    ('viewDidAppear', [None], [('std', 'b')]),
    ('viewWillDisappear', [None], [('std', 'b')]),
    ('viewDidLayoutSubviews', [], []), ('layoutSubviews', [], []),
    ('prepareForReuse', [], []), ('awakeFromNib', [], []),
]
LABELS = ['animated', 'at', 'for', 'with', 'from', 'to', 'by', 'in', 'of',
          'completion', 'index', 'id', 'identifier', 'url', 'item', 'items',
          'model', 'state', 'options', 'query', 'page', 'limit', 'offset',
          'force', 'delay', 'duration', 'userInfo', 'context', 'handler',
          'indexPath', 'section', 'size', 'color', 'title', 'text', 'user']
PROPS = ['title', 'items', 'isLoading', 'viewModel', 'dataSource', 'delegate',
         'state', 'selectedIndex', 'contentInset', 'headerView', 'token',
         'count', 'isEnabled', 'sections', 'userInfo', 'cache', 'session',
         'configuration', 'layout', 'error', 'progress', 'identifier',
         'imageView', 'titleLabel', 'isExpanded', 'badgeCount', 'snapshot']

STD = [('std', 'i'), ('std', 'S'), ('std', 'b'), ('std', 'd'), ('std', 'f'),
       ('std', 'u')]
FOUNDATION = [('nom', 'Foundation', ('URL',), 'V'),
              ('nom', 'Foundation', ('Data',), 'V'),
              ('nom', 'Foundation', ('Date',), 'V'),
              ('nom', 'Foundation', ('IndexPath',), 'V'),
              ('nom', 'Foundation', ('UUID',), 'V')]
OBJC = [('nom', 'So', ('UIView',), 'C'), ('nom', 'So', ('UIImage',), 'C'),
        ('nom', 'So', ('UITableView',), 'C'),
        ('nom', 'So', ('UICollectionView',), 'C'),
        ('nom', 'So', ('UIViewController',), 'C'),
        ('nom', 'So', ('NSURLRequest',), 'C'),
        ('nom', 'So', ('UIColor',), 'C'), ('nom', 'So', ('CGRect',), 'V'),
        ('nom', 'So', ('CGSize',), 'V'), ('nom', 'So', ('NSError',), 'C')]


class App:
    """A fixed, seeded universe of modules and types."""

    def __init__(self, rng):
        self.types = []    # (module, [names], kind, discr or None)
        hexes = '0123456789ABCDEF'
        for mod in MODULES:
            n = rng.randint(25, 60)
            seen = set()
            for _ in range(n):
                p = rng.choice(PREFIXES)
                r = rng.random()
                if r < 0.6:
                    name, kind = p + rng.choice(CLASS_SUFFIXES), 'C'
                elif r < 0.88:
                    name, kind = p + rng.choice(STRUCT_SUFFIXES), 'V'
                else:
                    name, kind = p + rng.choice(ENUM_SUFFIXES), 'O'
                if name in seen or name == mod:
                    continue
                seen.add(name)
                discr = None
                if rng.random() < 0.12:
                    discr = '_' + ''.join(rng.choice(hexes) for _ in range(32))
                self.types.append((mod, (name,), kind, discr))
                if kind == 'C' and discr is None and rng.random() < 0.25:
                    nested = rng.choice(NESTED)
                    self.types.append((mod, (name, nested),
                                       rng.choice('VOC'), None))


def rand_arg_type(rng, app, mod):
    r = rng.random()
    if r < 0.40:
        return rng.choice(STD)
    if r < 0.50:
        return ('array', rng.choice(STD[:2] + [rng.choice(FOUNDATION[:3])]))
    if r < 0.55:
        return ('dict', ('std', 'S'), rng.choice([('any',), ('std', 'i'),
                                                   ('std', 'S')]))
    if r < 0.63:
        return ('opt', rng.choice(STD[:3] + [rng.choice(OBJC[:2])]))
    if r < 0.73:
        return rng.choice(FOUNDATION)
    if r < 0.83:
        return rng.choice(OBJC)
    # a type of the same module (no private ones: they need a discriminator)
    cands = [t for t in app.types_by_mod[mod] if t[3] is None]
    t = rng.choice(cands)
    return ('nom', t[0], t[1], t[2])


def method_name(rng):
    v = rng.choice(VERBS)
    o = rng.choice(OBJECTS)
    return v + o


def gen_one(rng, app):
    mod, names, kind, discr = rng.choice(app.types)
    ctx_t = ('nom', mod, names, kind)
    m = Mangler()
    m.emit('$s')
    mangle_nominal(m, mod, names, kind, discr if len(names) == 1 else None)
    shape = rng.random()

    def func_tail(nargs_max=3, allow_generic=True):
        """name labels result params effects F [Z]; returns a closure to
        mangle closures in it."""
        uikit = kind == 'C' and rng.random() < 0.12
        if uikit:
            name, labels, params = rng.choice(UIKIT_METHODS)
            labels = list(labels)
        else:
            name = method_name(rng)
            n = rng.choice([0, 0, 1, 1, 1, 2, 2, 3][:nargs_max * 2 + 2])
            labels = []
            for i in range(n):
                if i == 0 and rng.random() < 0.3:
                    labels.append(None)
                else:
                    labels.append(rng.choice(LABELS))
            params = [rand_arg_type(rng, app, mod) for _ in range(n)]
            if n and rng.random() < 0.15:
                params[-1] = ('fn', rng.choice([[], [('std', 'b')],
                                                [rand_arg_type(rng, app, mod)]]),
                              ('void',), rng.choice(['', '', 'Yb']))
                labels[-1] = 'completion'
        generic = allow_generic and rng.random() < 0.08 and len(params) >= 1
        if generic:
            params[0] = ('gp',)
        m.ident(name)
        if rng.random() < 0.06 and discr is None:
            d = '_' + ''.join(rng.choice('0123456789ABCDEF') for _ in range(32))
            m.ident(d)
            m.emit('LL')
        labelled = mangle_labels(m, labels)
        r = rng.random()
        if uikit or r < 0.6:
            result = ('void',)
        elif r < 0.8:
            result = rand_arg_type(rng, app, mod)
        else:
            result = ('opt', rng.choice(STD[:2]))
        mangle_type(m, result)
        mangle_params(m, params, labelled)
        is_async = rng.random() < 0.15
        if is_async:
            m.emit('Ya')
        if rng.random() < 0.15:
            m.emit('K')
        if generic:
            m.emit(rng.choice(['l', 'SQRzl', 'SeRzl']))
        m.emit('F')
        if rng.random() < 0.1:
            m.emit('Z')
        return generic, len(params), is_async

    if shape < 0.40:
        generic, nparams, is_async = func_tail()
        r = rng.random()
        if generic and r < 0.5:
            mangle_type(m, rng.choice(STD[:2] + [ctx_t] if kind != 'O' else STD[:2]))
            m.emit('_Tg5')
        elif r < 0.08 and kind == 'C' and not generic:
            m.emit('To')
        elif r < 0.11:
            m.emit('Tm')
        elif r < 0.14:
            # function signature specialization: parameters unchanged,
            # self dead
            m.emit('Tf4' + 'n' * nparams + 'd_n')
        elif is_async and r < 0.4:
            m.emit(rng.choice(['TQ0_', 'TY0_', 'TQ1_', 'TY1_']))
    elif shape < 0.62:
        # closure(s) in a method
        func_tail(nargs_max=2, allow_generic=False)
        depth = 1 if rng.random() < 0.8 else 2
        for d in range(depth):
            cp = rng.choice([[], [], [('std', 'b')], [rand_arg_type(rng, app, mod)]])
            cr = ('void',) if rng.random() < 0.85 else ('std', 'b')
            mangle_type(m, cr)
            mangle_params(m, cp)
            m.emit(rng.choice(['', '', '', 'Ya', 'YaYb', 'ScMYc']))
            m.emit('c')
            idx = rng.choice([0, 0, 0, 1, 2])
            m.emit('fU' + ('_' if idx == 0 else str(idx - 1) + '_'))
        if rng.random() < 0.15:
            m.emit('TA')
    elif shape < 0.85:
        # property accessor
        m.ident(rng.choice(PROPS))
        t = rand_arg_type(rng, app, mod)
        mangle_type(m, t)
        acc = rng.choice('gggggssMWw')
        m.emit('v' + acc)
        if acc in 'gs' and rng.random() < 0.08:
            m.emit('Z')
        elif acc in 'gs' and kind == 'C' and rng.random() < 0.05:
            m.emit('To')
    elif shape < 0.97:
        # initializer
        n = rng.choice([0, 1, 1, 2, 3])
        labels = [rng.choice(LABELS) for _ in range(n)]
        params = [rand_arg_type(rng, app, mod) for _ in range(n)]
        mangle_labels(m, labels)
        res = ctx_t if rng.random() < 0.9 else ('opt', ctx_t)
        mangle_type(m, res)
        mangle_params(m, params, bool(n))
        if rng.random() < 0.1:
            m.emit('K')
        m.emit('c')
        m.emit('fC' if kind != 'C' or rng.random() < 0.5 else 'fc')
    else:
        if kind == 'C':
            m.emit(rng.choice(['fD', 'fd']))
        else:
            m.ident('description')
            m.std('S')
            m.emit('vg')
    return m.text()


def generate(n, seed=1):
    rng = random.Random(seed)
    app = App(rng)
    app.types_by_mod = {}
    for t in app.types:
        app.types_by_mod.setdefault(t[0], []).append(t)
    out, seen = [], set()
    while len(out) < n:
        try:
            s = gen_one(rng, app)
        except ValueError:
            continue
        if s in seen:
            continue
        seen.add(s)
        out.append(s)
    return out


def main():
    if len(sys.argv) < 2:
        sys.stderr.write('usage: swift_names.py N [SEED]\n')
        sys.exit(2)
    n = int(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    sys.stdout.write('\n'.join(generate(n, seed)) + ('\n' if n else ''))


if __name__ == '__main__':
    main()
