// The app overview's chart: the stall rate (stalled ÷ sampled users) per
// app version per UTC day, one line per version, in SVG built here (the
// CSP allows no charting script from elsewhere).

import { h, svg } from './lib-dom.js';
import { num } from './lib-format.js';
import { dayRange } from './lib-sparkline.js';
import { pct } from './lib-triage.js';

const W = 720, H = 260, ML = 76, MR = 16, MT = 16, MB = 30;
const SERIES = 8; // colours in style.css, reused beyond that

// A day's rate, or null when nobody of that version was sampled.
export const stallRate = (d) => (d.sampled_users > 0 ? d.stalled_users / d.sampled_users : null);

// The smallest of 1, 2, 5 × 10^k at or above MAX, so the ticks read well.
function niceTop(max) {
  if (!(max > 0)) return 0.01;
  const p = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * p).find((t) => t >= max);
}

function axes(days, top, x, y) {
  const out = [];
  for (let k = 0; k <= 4; k++) {
    const v = (top * k) / 4;
    out.push(svg('line', { class: 'chart-grid', x1: ML, x2: W - MR, y1: y(v), y2: y(v) }),
      svg('text', { class: 'chart-tick', x: ML - 6, y: y(v) + 4, 'text-anchor': 'end' }, pct(v)));
  }
  const ticks = [...new Set([0, Math.floor((days.length - 1) / 2), days.length - 1])];
  for (const i of ticks) {
    const anchor = days.length === 1 ? 'middle' : i === 0 ? 'start' : i === days.length - 1 ? 'end' : 'middle';
    out.push(svg('text', { class: 'chart-tick', x: x(i), y: H - 8, 'text-anchor': anchor }, days[i]));
  }
  return out;
}

// ROWS: the stats reply's days; VERSIONS: the order of the lines.
export function rateChart(rows, versions) {
  const all = rows.map((r) => r.day).sort();
  const days = dayRange(all[0], all[all.length - 1]);
  const plotW = W - ML - MR, plotH = H - MT - MB;
  const x = (i) => (ML + (days.length === 1 ? plotW / 2 : (i * plotW) / (days.length - 1))).toFixed(1);
  const top = niceTop(Math.max(0, ...rows.map(stallRate).filter((r) => r != null)));
  const y = (r) => (MT + plotH * (1 - r / top)).toFixed(1);
  const chart = svg('svg', { class: 'chart', id: 'rate-chart', viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': 'Stall rate per app version per UTC day' }, ...axes(days, top, x, y));
  versions.forEach((v, s) => {
    const points = rows.filter((r) => r.version === v && stallRate(r) != null)
      .map((r) => ({ r, px: x(days.indexOf(r.day)), py: y(stallRate(r)) }));
    const cls = `series-${s % SERIES}`;
    if (points.length > 1) {
      chart.append(svg('polyline', { class: `chart-line ${cls}`, points: points.map((p) => `${p.px},${p.py}`).join(' ') }));
    }
    for (const { r, px, py } of points) {
      chart.append(svg('circle', { class: `chart-dot ${cls}`, cx: px, cy: py, r: 4,
        dataset: { day: r.day, version: v, rate: String(stallRate(r)) } },
      svg('title', {}, `${v}, ${r.day}: ${pct(stallRate(r))} (${num(r.stalled_users)} of ${num(r.sampled_users)} sampled users stalled; ${num(r.active_users)} active)`)));
    }
  });
  const legend = h('ul', { class: 'legend' }, versions.map((v, s) =>
    h('li', {}, h('span', { class: `swatch series-${s % SERIES}`, 'aria-hidden': 'true' }), v)));
  return h('figure', { class: 'card chart-box' }, chart, legend);
}
