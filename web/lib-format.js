// How values read on the page: UTC times and days, numbers, durations,
// a stack's identities.

import { h } from './lib-dom.js';

// Times are shown in UTC, as the API, the logs and the day filters count
// them: a browser's own zone would put a report on another day than the
// filter that found it.
export function utc(iso) {
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

// A UTC day alone ('2026-01-31') stays a day: read as a time it would
// claim a midnight nobody saw.
const isDay = (v) => /^\d{4}-\d{2}-\d{2}$/.test(String(v));

// The one way a time or a day reads on every page, with the API's own
// value on hover.
export function timeEl(iso) {
  if (!iso) return '—';
  return h('time', { datetime: iso, title: iso }, isDay(iso) ? String(iso) : utc(iso));
}

export const basename = (path) => String(path).split('/').pop();

// An image by its file name, the full (on-device) path on hover.
export function imageName(path, cls) {
  if (path == null) return h('span', { class: cls }, '?');
  return h('span', { class: cls, title: String(path) }, basename(path));
}

export const num = (n) => (n == null ? '—' : Number(n).toLocaleString());

export function duration(ms) {
  if (ms == null) return '—';
  if (ms < 1000) return `${ms} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

// Identities ("Demo!slow_sort"), innermost first as the API sends them.
export function identities(frames) {
  if (!frames || frames.length === 0) return h('span', { class: 'muted' }, '(empty stack)');
  return h('ol', { class: 'idents' }, frames.map((f) => h('li', {}, f)));
}

// UTC days as the API writes them ('2026-01-31').
export const DAY_MS = 86400000;
export const dayOf = (ms) => new Date(ms).toISOString().slice(0, 10);
export const dayMs = (day) => Date.parse(day + 'T00:00:00Z');
export const todayUTC = () => dayOf(Date.now());

// Android's kinds (SPEC §13) in the order the kind filter offers them, as
// a reader says them; iOS kinds read as they are.
export const ANDROID_KINDS = [
  ['slow_method', 'slow method'],
  ['anr', 'ANR'],
  ['lag', 'lag'],
  ['slow_startup', 'slow startup'],
  ['thread_policy', 'thread policy'],
];
const KIND_LABELS = new Map(ANDROID_KINDS);
export const kindLabel = (kind) => KIND_LABELS.get(kind) ?? kind;
