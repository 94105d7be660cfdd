// What the triage pages share (SPEC §10): a group's title from its
// culprit, its rate and durations as they read, the "new in" badge, the
// duration histogram, and the version order.

import { badge, h } from './lib-dom.js';
import { basename, duration, identities, num } from './lib-format.js';

// Lower edges of duration_hist's buckets in ms (SPEC §10.1); the last one
// has no upper edge.
const HIST_EDGES = [0, 250, 500, 1000, 2000, 5000, 10000, 30000];

const edge = (ms) => (ms < 1000 ? `${ms}` : `${ms / 1000}`);
const unit = (ms) => (ms < 1000 ? 'ms' : 's');

// "250–500 ms", "0.5–1 s", "≥ 30 s": bucket I's range.
function bucketLabel(i) {
  const lo = HIST_EDGES[i];
  const hi = HIST_EDGES[i + 1];
  if (hi == null) return `≥ ${edge(lo)} ${unit(lo)}`;
  if (lo > 0 && lo < 1000 && hi >= 1000) return `${lo / 1000}–${edge(hi)} s`;
  return `${edge(lo)}–${edge(hi)} ${unit(hi)}`;
}

// The bucket where the cumulative count reaches 90% of the durations, or
// -1 without any. In integers: 0.9 × n is not exact in floating point.
export function p90Bucket(hist) {
  const counts = hist || [];
  const total = counts.reduce((a, b) => a + b, 0);
  let cum = 0;
  for (let i = 0; i < counts.length && total > 0; i++) {
    cum += counts[i];
    if (cum * 10 >= total * 9) return i;
  }
  return -1;
}

// A rate (a fraction, or null when nothing was sampled) as a percentage
// with three significant figures at most.
export function pct(rate) {
  if (rate == null) return '—';
  if (rate === 0) return '0%';
  const v = rate * 100;
  return `${v.toFixed(v >= 10 ? 1 : v >= 1 ? 2 : 3)}%`;
}

// Total blocked time: minutes and hours read better than 5400.0 s.
export function stallTime(ms) {
  if (ms == null || ms < 60000) return duration(ms);
  if (ms < 3600000) return `${(ms / 60000).toFixed(1)} min`;
  return `${(ms / 3600000).toFixed(1)} h`;
}

function newInBadge(g) {
  return g.new_in ? badge(`new in ${g.new_in}`, 'new-tag') : null;
}

// What names a group (SPEC §10.5): its culprit's function, else the
// culprit's frame, else (no frame in the app's own code) its innermost
// frame. For titles of tabs and headings.
export function culpritName(g) {
  const c = g.culprit;
  return (c && (c.function || c.frame)) || g.frames?.[0] || g.key;
}

// The culprit (SPEC §10.5) names a group, as in Sentry and Crashlytics:
// the innermost frames are often a system wait. Without one, the top
// frames do. Groups of one culprit would read alike: the innermost frame
// (frames[0], the first of the group's key) says which is which when it
// is not the culprit. The frames stay below: they are the group's key.
export function groupTitle(g) {
  const c = g.culprit;
  const name = c ? (c.function || c.frame) : null;
  const loc = c && c.file ? `${basename(c.file)}${c.line ? `:${c.line}` : ''}` : null;
  const inner = g.frames?.[0];
  return h('div', { class: 'group-title' },
    name ? h('span', { class: 'culprit' }, h('span', { class: 'fn' }, name),
      loc ? h('span', { class: 'loc', title: c.file }, loc) : null) : null,
    name && inner && inner !== c.frame
      ? h('span', { class: 'innermost', title: 'The innermost frame of the group: what sets it apart from other groups of this culprit' },
        h('span', { class: 'muted' }, 'innermost '), h('span', { class: 'mono' }, inner))
      : null,
    newInBadge(g),
    h('div', { class: name ? 'frames under' : 'frames' }, identities(g.frames)));
}

// Duration percentiles (SPEC §10.1): p50 · p90 · p99, each kept whole
// and the line free to wrap between them; a dash for a group without
// durations (the server sends null then).
export function percentiles(g) {
  const ms = [g.p50_ms, g.p90_ms, g.p99_ms];
  if (ms.every((v) => v == null)) return '—';
  return ms.flatMap((v, i) => [i ? ' · ' : null, h('span', { class: 'nowrap' }, duration(v))]).filter(Boolean);
}

// The 8 buckets as bars, tallest = most; each bar carries its count.
function durationHistogram(hist) {
  const counts = hist || HIST_EDGES.map(() => 0);
  const max = Math.max(1, ...counts);
  const p90 = p90Bucket(counts);
  return h('ol', { class: 'hist', id: 'duration-hist', 'aria-label': 'Reports per duration' },
    counts.map((n, i) => {
      const bar = h('span', { class: i === p90 ? 'hist-bar p90' : 'hist-bar' });
      // The CSSOM, not a style attribute: the CSP forbids inline styles.
      bar.style.height = `${(n / max) * 100}%`;
      return h('li', { dataset: { bucket: String(i), count: String(n) }, title: `${bucketLabel(i)}: ${num(n)} reports` },
        h('span', { class: 'hist-count' }, num(n)),
        h('span', { class: 'hist-well' }, bar),
        h('span', { class: 'hist-label' }, bucketLabel(i)));
    }));
}

// The histogram under its heading, as the group pages show it.
export function durationsSection(hist) {
  return [h('h2', {}, 'Durations'),
    h('div', { class: 'card' }, durationHistogram(hist),
      h('p', { class: 'hint' }, 'Reports per duration bucket; reports without a duration are in none. The highlighted bucket holds the 90th percentile.'))];
}

// A version's sort key (SPEC §10.3, as schema/functions/app_version_key
// orders them): dot-separated parts, each of digit runs (compared as
// numbers, leading zeros ignored) and other runs (compared as text, after
// every number); what ends first comes first.
function versionKey(v) {
  return String(v).split('.').map((part) => (part.match(/[0-9]+|[^0-9]+/g) || []).map((run) =>
    (/^[0-9]/.test(run) ? [0, run.replace(/^0+/, '')] : [1, run])));
}

function compareRun([ka, a], [kb, b]) {
  if (ka !== kb) return ka - kb;
  if (ka === 0 && a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareSeq(a, b, each) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = each(a[i], b[i]);
    if (c) return c;
  }
  return a.length - b.length;
}

export function compareVersions(a, b) {
  const c = compareSeq(versionKey(a), versionKey(b), (x, y) => compareSeq(x, y, compareRun));
  return c || (a < b ? -1 : a > b ? 1 : 0);
}

// VERSIONS (strings), newest first, without '' (reports without one).
export const newestFirst = (versions) =>
  versions.filter((v) => v !== '').sort(compareVersions).reverse();
