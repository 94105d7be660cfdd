// The per-day sparkline of a group, and the days a table's sparklines
// share.

import { h, svg } from './lib-dom.js';
import { DAY_MS, dayMs, dayOf, todayUTC } from './lib-format.js';

const SPARK_MIN_DAYS = 7;  // a group seen on one day still gets a week's axis
const SPARK_MAX_DAYS = 365;

// Every UTC day from FROM to TO inclusive, at most SPARK_MAX_DAYS (the
// sparkline would be unreadable beyond that anyway).
export function dayRange(from, to) {
  let start = dayMs(from);
  const end = dayMs(to);
  if (isNaN(start) || isNaN(end) || start > end) return [];
  start = Math.max(start, end - (SPARK_MAX_DAYS - 1) * DAY_MS);
  const days = [];
  for (let t = start; t <= end; t += DAY_MS) days.push(dayOf(t));
  return days;
}

// The API lists only days that had reports; the gaps are zeros.
export function sparkline(daily, from, to) {
  const days = dayRange(from, to);
  if (days.length === 0) return h('span', { class: 'muted' }, '—');
  const counts = new Map((daily || []).map((d) => [d.day, d.reports]));
  const values = days.map((d) => counts.get(d) || 0);
  const total = values.reduce((a, b) => a + b, 0);
  const max = Math.max(1, ...values);
  const W = 120, H = 24, step = W / days.length;
  const label = `${total.toLocaleString()} reports from ${days[0]} to ${days[days.length - 1]} (UTC days)`;
  const el = svg('svg', {
    class: 'spark', viewBox: `0 0 ${W} ${H}`, width: W, height: H,
    role: 'img', 'aria-label': label, preserveAspectRatio: 'none',
    dataset: { from: days[0], to: days[days.length - 1], days: days.length },
  }, svg('title', {}, label));
  el.append(svg('line', { class: 'spark-base', x1: 0, x2: W, y1: H - 0.5, y2: H - 0.5 }));
  values.forEach((n, i) => {
    if (!n) return;
    const bh = Math.max(1.5, (n / max) * (H - 1));
    el.append(svg('rect', {
      class: 'spark-bar', x: (i * step).toFixed(2), y: (H - bh).toFixed(2),
      width: Math.max(step - (step > 3 ? 1 : 0), 0.6).toFixed(2), height: bh.toFixed(2),
    }, svg('title', {}, `${days[i]}: ${n.toLocaleString()}`)));
  });
  return el;
}

// The days sparklines span: the chosen range (an open end is today, or the
// first day with reports), else the first to the last day with reports of
// the groups drawn together (one axis per table, so a column compares);
// at least SPARK_MIN_DAYS so one busy day is not a solid block.
export function sparkWindow(f, dailies) {
  const days = dailies.flatMap((daily) => (daily || []).filter((d) => d.reports > 0).map((d) => d.day)).sort();
  let from = f.from || days[0];
  const to = f.to || (f.from ? todayUTC() : days[days.length - 1]) || todayUTC();
  if (!from || (!f.from && dayMs(to) - dayMs(from) < (SPARK_MIN_DAYS - 1) * DAY_MS)) {
    from = dayOf(dayMs(to) - (SPARK_MIN_DAYS - 1) * DAY_MS);
  }
  return [from, to];
}
