// A group as the group pages draw it: a row of a groups table (the list,
// a group's subgroups) and the header of a group's own page, titled by
// its culprit, with what triage asks of it (SPEC §10): blocked time,
// affected users and their rate, the p50, p90 and p99 durations.

import { clickable, h } from './lib-dom.js';
import { duration, num, timeEl } from './lib-format.js';
import { sparkline } from './lib-sparkline.js';
import { statusBadge } from './lib-status.js';
import { groupTitle, p90Bucket, pct, percentiles, stallTime } from './lib-triage.js';

// The raw values ride along as data attributes: the page rounds them.
const triageData = (g) => ({
  stallMs: String(g.stall_ms ?? ''), affected: String(g.affected ?? ''),
  rate: String(g.rate ?? ''), p90: String(p90Bucket(g.duration_hist)),
  p50Ms: String(g.p50_ms ?? ''), p90Ms: String(g.p90_ms ?? ''), p99Ms: String(g.p99_ms ?? ''),
  rateBasis: g.rate_basis,
});

// Under an OS version or device filter the rate's denominator may be every
// device's users (SPEC §10.2: check-ins that did not say which): say so
// beside it rather than let it pass for the filtered rate.
const allDevices = (g, f) => g.rate_basis === 'all_devices' && (f.os_version != null || f.device != null);
function rateEl(g, f) {
  const note = allDevices(g, f)
    ? h('span', { class: 'rate-basis', title: 'The check-ins did not say their OS version or device: the rate is divided by the sampled users of all devices.' },
      '÷ all devices’ users')
    : null;
  return note ? [pct(g.rate), note] : pct(g.rate);
}

export const sparkHead = (win) => `Per UTC day, ${win[0]} → ${win[1]}`;

const HEADS = [
  ['Reports', 'reports stored'],
  ['Users', 'distinct users with a report'],
  ['Affected', 'sampled user-days with a report (whitelisted users left out)'],
  ['Rate', 'affected ÷ sampled user-days of the same days and version'],
  ['Stall time', 'summed durations of the reports'],
  ['p50 · p90 · p99', 'percentiles of the reports’ durations', 'percentiles'],
];

// The title with the group's status beside its culprit, when it is not
// open (SPEC §11.1); a subgroup's row, WITH_STATUS false, shows none.
function rowTitle(g, withStatus) {
  const t = groupTitle(g);
  const b = withStatus ? statusBadge(g.status) : null;
  if (b) t.insertBefore(b, t.querySelector('.frames'));
  return t;
}

// F: the page's filters (what the rate is divided by depends on them).
export function groupRow(g, href, dataset, win, withStatus, f) {
  const values = [num(g.reports), num(g.users), num(g.affected), rateEl(g, f),
    stallTime(g.stall_ms), percentiles(g)];
  const status = withStatus && g.status ? { status: g.status } : {};
  return clickable(h('tr', { dataset: { ...dataset, ...triageData(g), ...status } },
    h('td', { class: 'frames' }, h('a', { href }, rowTitle(g, withStatus))),
    values.map((v, i) => h('td', { class: ['num', HEADS[i][2]].filter(Boolean).join(' '), dataset: { label: HEADS[i][0] } }, v)),
    h('td', { dataset: { label: 'Last seen' } }, timeEl(g.last_seen)),
    h('td', { class: 'spark-cell' }, sparkline(g.daily, ...win))), href);
}

export function groupTable(id, win) {
  const tbody = h('tbody');
  const head = h('th', { class: 'spark-cell' }, sparkHead(win));
  const table = h('table', { id, class: 'data groups cards' },
    h('thead', {}, h('tr', {},
      h('th', {}, 'Culprit · frames (innermost first)'),
      HEADS.map(([t, why, cls]) => h('th', { class: ['num', cls].filter(Boolean).join(' '), title: why }, t)),
      h('th', {}, 'Last seen (UTC)'), head)),
    tbody);
  return { table, tbody, head };
}

const versions = (g) => (g.first_version
  ? (g.first_version === g.last_version ? g.first_version : `${g.first_version} → ${g.last_version}`)
  : null);

export function groupHeader(g, level, win, f) {
  const stat = (label, id, value) => [h('dt', {}, label), h('dd', { id }, value ?? '—')];
  return h('div', { class: 'card group-head' },
    groupTitle(g),
    h('dl', { class: 'stats' },
      stat('Key', null, h('span', { class: 'mono' }, g.key)),
      stat('Reports', 'group-reports', num(g.reports)),
      stat('Users', 'group-users', num(g.users)),
      stat('Affected user-days', 'group-affected', num(g.affected)),
      stat('Rate', 'group-rate', rateEl(g, f)),
      stat('Stall time', 'group-stall', stallTime(g.stall_ms)),
      stat('Longest', 'group-max', duration(g.max_duration_ms)),
      stat('Duration p50 · p90 · p99', 'group-percentiles', percentiles(g)),
      stat('Versions', 'group-versions', versions(g)),
      stat('First seen', null, timeEl(g.first_seen)),
      stat('Last seen', null, timeEl(g.last_seen)),
      stat('Per UTC day', 'group-spark', sparkline(g.daily, ...win))),
    h('p', { class: 'hint' }, level === 1
      ? 'Grouped by the innermost two frames; subgroups by the innermost four.'
      : 'Grouped by the innermost four frames.'));
}
