// #/reports/ID: one report's stack view: its metadata, images, and every
// thread symbolized with the representative stack first.

import { badge, crumbs, h, title } from './lib-dom.js';
import { ApiError, api, reportPath, request } from './lib-api.js';
import { basename, duration, identities, imageName, kindLabel, num, timeEl } from './lib-format.js';
import { act } from './lib-page.js';
import { hashFor } from './lib-router.js';

// A Java frame (SPEC §13) has no address: a method id of the build's
// methodMapping.txt when it comes from Matrix's `stack`, with the time
// spent in it and its calls; none when it comes from a `threadStack`.
const isJava = (fr) => fr.image === 'java' && fr.address == null;

function javaHead(fr) {
  const calls = fr.count != null && fr.count !== 1 ? ` · ${num(fr.count)} calls` : '';
  return [fr.method_id != null ? h('span', { class: 'addr', title: 'method id in methodMapping.txt' }, `#${fr.method_id}`) : null,
    fr.ms != null ? h('span', { class: 'frame-ms', dataset: { ms: String(fr.ms) } }, `${duration(fr.ms)}${calls}`) : null];
}

function frameItem(fr, index) {
  const chain = fr.frames || [];
  const status = fr.status || 'unknown';
  const head = h('div', { class: 'frame-head' },
    h('span', { class: 'idx' }, String(index)),
    imageName(fr.image, 'image'),
    isJava(fr) ? javaHead(fr) : h('span', { class: 'addr' }, fr.address),
    fr.offset ? h('span', { class: 'offset' }, `+${fr.offset}`) : null,
    badge(status.replace(/_/g, ' '), `status-${status}`));
  let body;
  if (chain.length) {
    // One return address can stand for several inlined calls: all shown,
    // innermost first, as the symbolizer gives them.
    body = h('ul', { class: 'symbols' }, chain.map((s) => {
      let loc = null;
      if (s.file) loc = s.file + (s.line ? `:${s.line}` : '') + (s.column ? `:${s.column}` : '');
      return h('li', { class: s.inlined ? 'symbol inlined' : 'symbol', title: s.symbol || null },
        h('span', { class: 'fn' }, s.function || s.symbol || '?'),
        loc ? h('span', { class: 'loc' }, loc) : null,
        s.inlined ? badge('inlined', 'inlined-tag') : null);
    }));
  } else if (fr.symbol_hint && fr.symbol_hint !== '<redacted>') {
    // A Swift hint comes demangled (hint_function); the raw name on hover.
    body = h('div', { class: 'unsym' },
      h('span', { class: 'fn', title: fr.hint_function ? fr.symbol_hint : null },
        fr.hint_function || fr.symbol_hint),
      badge('device hint', 'muted-tag'));
  } else if (isJava(fr)) {
    // The identity grouping uses for an id no mapping names.
    body = h('div', { class: 'unsym muted' }, fr.method_id != null ? `java!#${fr.method_id}` : 'java!?');
  } else {
    // The same image+offset spelling grouping uses for such frames.
    body = h('div', { class: 'unsym muted' },
      fr.image ? `${basename(fr.image)}+${fr.offset}` : `?+${fr.address}`);
  }
  return h('li', { class: `frame status-${status}` }, head, body);
}

function threadBlock(name, frames, representative, tags) {
  return h('details', { class: representative ? 'thread representative' : 'thread', open: true },
    h('summary', {}, h('span', { class: 'thread-name' }, name), tags,
      h('span', { class: 'muted count' }, frames.length === 1 ? '1 frame' : `${frames.length} frames`)),
    frames.length
      ? h('ol', { class: 'stack', start: 0 }, frames.map(frameItem))
      : h('p', { class: 'empty' }, 'No frames.'));
}

function threadsOf(r) {
  const threads = r.threads || [];
  const stack = r.stack || {};
  const repIndex = Number.isInteger(stack.thread) ? stack.thread : -1;
  const repTag = badge(`representative · ${String(stack.source || '').replace(/_/g, ' ')}`, 'rep-tag');
  const blocks = [];
  // The representative stack comes first: it is the one the report is
  // grouped by. From samples it is no thread of its own.
  if (repIndex < 0 && stack.frames) {
    blocks.push(threadBlock('Heaviest sampled stack', stack.frames, true, [repTag]));
  }
  const order = threads.map((_, i) => i);
  if (repIndex >= 0 && repIndex < threads.length) {
    order.splice(repIndex, 1);
    order.unshift(repIndex);
  }
  for (const i of order) {
    const t = threads[i];
    const tags = [];
    if (i === repIndex) tags.push(repTag);
    if (t.main) tags.push(badge('main', 'main-tag'));
    blocks.push(threadBlock(t.name ? `Thread ${i}: ${t.name}` : `Thread ${i}`, t.frames || [], i === repIndex, tags));
  }
  return blocks;
}

// System images (the OS's own libraries) are marked: an app team has no
// dSYM for them, and they do not keep a report waiting for symbols.
function needBadge(im) {
  if (!im.needed) return '';
  return im.system ? badge('yes, system symbols', 'muted') : badge('yes, missing', 'warn');
}

function imagesTable(images) {
  const missing = images.filter((i) => i.status !== 'found');
  const system = missing.filter((i) => i.system).length;
  const table = h('table', { class: 'data images' },
    h('thead', {}, h('tr', {},
      ['Image', 'UUID', 'Arch', 'Load address', 'Size', 'Symbols', 'Frames need it'].map((t) => h('th', {}, t)))),
    h('tbody', {}, images.map((im) => h('tr', {
      class: im.system ? 'system' : im.needed ? 'needed' : null,
      dataset: { system: String(Boolean(im.system)) },
    },
      h('td', { class: 'mono path' }, im.name ?? '?', im.system ? [' ', badge('system', 'system-tag')] : null),
      h('td', { class: 'mono' }, im.uuid ?? '—'),
      h('td', { class: 'nowrap' }, im.arch ?? '—'),
      h('td', { class: 'mono nowrap' }, im.load_address),
      h('td', { class: 'num' }, num(im.size)),
      h('td', {}, badge(im.status, `status-${im.status}`)),
      h('td', {}, needBadge(im))))));
  return h('details', { class: 'images-box', open: images.length <= 30 || null },
    h('summary', {}, `${images.length} loaded, ${missing.length} without symbols` +
      (system ? ` (${system} of them system images)` : '')), table);
}

async function downloadTrace(id) {
  const resp = await request('GET', reportPath(id, 'trace'));
  const blob = new Blob([await resp.text()], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: `stallscope-report-${id}-trace.json`, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  // Revoked later: some browsers read the blob after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}

export async function reportView(id, f) {
  title(`Report ${id}`);
  if (!/^\d+$/.test(id)) throw new ApiError(404, 'not_found', `“${id}” is not a report id`);
  const r = await api('GET', reportPath(id));
  // The trace is built from the samples (SPEC §7): without them there is
  // nothing to download but an invented span.
  let trace = null;
  if (r.has_samples) {
    trace = h('button', { type: 'button', id: 'report-trace' }, 'Download trace (.json)');
    trace.addEventListener('click', () => act(trace, () => downloadTrace(id)));
  }
  const row = (label, value) => [h('dt', {}, label), h('dd', {}, value ?? '—')];
  const ver = (a, b) => (a ? (b ? `${a} (${b})` : a) : null);
  const groupLink = r.key1 && r.key2
    ? h('a', { href: hashFor(['groups', r.key1, r.key2], f), class: 'mono' }, `${r.key1} / ${r.key2}`)
    : null;
  return h('div', { id: 'report' },
    crumbs(['Groups', hashFor(['groups'], f)],
      ...(r.key1 ? [[r.key1, hashFor(['groups', r.key1], f)]] : []),
      ...(r.key2 ? [[r.key2, hashFor(['groups', r.key1, r.key2], f)]] : []),
      [`Report ${r.id}`]),
    h('div', { class: 'title-row' },
      h('h1', {}, `Report ${r.id}`), badge(kindLabel(r.kind), 'kind'),
      r.pending ? badge(r.source === 'matrix' ? 'waiting for a method mapping' : 'waiting for symbols', 'warn') : null,
      h('span', { class: 'spacer' }), trace),
    h('dl', { class: 'card meta' },
      row('Received', timeEl(r.received_at)),
      row('Client time', r.timestamp ? timeEl(r.timestamp) : null),
      row('Duration', duration(r.duration_ms)),
      row('User', r.user_id != null
        ? h('a', { href: hashFor(['users'], { user_id: r.user_id }), id: 'report-user', title: 'Every stored report of this user' }, r.user_id)
        : null),
      row('App version', ver(r.app_version, r.build)),
      row('OS', [r.os, ver(r.os_version, r.os_build)].filter(Boolean).join(' ') || null),
      row('Device', r.device),
      row('Format', r.source),
      row('Client report id', r.report_id),
      row('Samples', r.has_samples ? 'yes' : 'no'),
      row('Group', groupLink),
      row('Grouping frames', identities(r.frames))),
    h('h2', {}, 'Images'),
    imagesTable(r.images || []),
    h('h2', {}, 'Threads'),
    h('div', { class: 'threads' }, threadsOf(r)));
}
