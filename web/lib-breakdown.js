// Who a group hits (GET …/groups/{key1}/breakdown, SPEC §10.6): its
// reports by app version, OS version, device and kind under the page's
// filters, the top 10 of each and the rest as "other". A value is a
// link that adds it to the filters. A failure leaves the rest of the
// page standing, as the call tree's does.

import { h } from './lib-dom.js';
import { api, appPath, plainMessage, withQuery } from './lib-api.js';
import { onlyFilters } from './lib-filters.js';
import { kindLabel, num } from './lib-format.js';
import { hashFor } from './lib-router.js';
import { pct } from './lib-triage.js';

// [the reply's dimension, the filter it sets, its heading]
const DIMS = [
  ['app_version', 'version', 'App version'],
  ['os_version', 'os_version', 'OS version'],
  ['device', 'device', 'Device'],
  ['kind', 'kind', 'Kind'],
];

function dimTable(rows, dim, filter, label, linkTo) {
  const body = rows.map((r) => {
    const other = r.value === null;
    const text = other ? 'other' : r.value === '' ? '(not set)' : dim === 'kind' ? kindLabel(r.value) : r.value;
    const bar = h('span', { class: 'share-bar' });
    // The CSSOM, not a style attribute: the CSP forbids inline styles.
    bar.style.width = `${Math.max(0, Math.min(1, r.share)) * 100}%`;
    return h('tr', { dataset: { value: other ? '' : r.value, other: String(other), share: String(r.share) } },
      h('td', { class: 'bd-value' }, other ? h('span', { class: 'muted' }, text)
        : h('a', { href: linkTo(filter, r.value), title: `Only ${label.toLowerCase()} ${text}` }, text)),
      h('td', { class: 'num bd-share' }, h('span', { class: 'share-well' }, bar), pct(r.share)),
      h('td', { class: 'num' }, num(r.reports)),
      h('td', { class: 'num' }, num(r.users)));
  });
  return h('div', { class: 'card breakdown-dim', dataset: { dim } },
    h('h3', {}, label),
    body.length
      ? h('table', { class: 'data breakdown', id: `breakdown-${dim.replace('_', '-')}` },
        h('thead', {}, h('tr', {}, h('th', {}, label), h('th', { class: 'num' }, 'Share'),
          h('th', { class: 'num' }, 'Reports'), h('th', { class: 'num' }, 'Users'))),
        h('tbody', {}, body))
      : h('p', { class: 'empty' }, 'No reports.'));
}

// The panel for group KEY1 (subgroup KEY2 when given) under filters F,
// whose links lead to PARTS with the value added.
export async function breakdownSection(key1, f, parts, key2) {
  let data;
  try {
    data = await api('GET', withQuery(appPath('groups', key1, 'breakdown'), { ...onlyFilters(f), level2: key2 }));
  } catch (e) {
    return [h('h2', {}, 'Who it hits'), h('p', { class: 'error', id: 'breakdown-error' }, plainMessage(e))];
  }
  const linkTo = (filter, value) => hashFor(parts, { ...f, [filter]: value });
  return [h('h2', {}, 'Who it hits'),
    h('div', { class: 'breakdown-grid', id: 'breakdown', dataset: { reports: String(data.reports), users: String(data.users) } },
      DIMS.map(([dim, filter, label]) => dimTable(data.by[dim], dim, filter, label, linkTo))),
    h('p', { class: 'hint' }, `${num(data.reports)} reports of ${num(data.users)} users under the filters above; the top 10 of each, the rest as “other”. Choose a value to add it to the filters.`)];
}
