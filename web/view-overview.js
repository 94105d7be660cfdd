// #/overview?from=&to=&version=: the app's stall rate per version per UTC
// day (GET …/stats, SPEC §10.2) — the share of sampled users who had a
// stall, the number Android calls the ANR rate — with the users behind it.

import { h, title } from './lib-dom.js';
import { api, appPath, withQuery } from './lib-api.js';
import { num } from './lib-format.js';
import { dimensions } from './lib-filters.js';
import { hashFor } from './lib-router.js';
import { rateChart, stallRate } from './lib-chart.js';
import { compareVersions, newestFirst, pct, stallTime } from './lib-triage.js';

function overviewForm(f, versions) {
  const input = (id, name, label) => h('label', { for: id }, label,
    h('input', { id, name, type: 'date', value: f[name] || '' }));
  const form = h('form', { id: 'overview-filters', class: 'filters' },
    input('overview-from', 'from', 'From (UTC day)'),
    input('overview-to', 'to', 'To (UTC day)'),
    h('label', { for: 'overview-version' }, 'App version',
      h('select', { id: 'overview-version', name: 'version' },
        h('option', { value: '' }, 'all'),
        versions.map((v) => h('option', { value: v, selected: v === f.version }, v)))),
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', id: 'overview-apply' }, 'Apply'),
      h('a', { href: '#/overview', class: 'button-link' }, 'Clear')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const chosen = {};
    for (const k of ['from', 'to', 'version']) if (form.elements[k].value) chosen[k] = form.elements[k].value;
    location.hash = hashFor(['overview'], chosen);
  });
  return form;
}

function statsTable(rows) {
  const heads = ['Active users', 'Sampled users', 'Stalled users', 'Stall rate', 'Reports', 'Stall time'];
  const cells = (r) => [num(r.active_users), num(r.sampled_users), num(r.stalled_users),
    pct(stallRate(r)), num(r.reports), stallTime(r.stall_ms)];
  return h('table', { id: 'overview', class: 'data cards' },
    h('thead', {}, h('tr', {}, h('th', {}, 'UTC day'), h('th', {}, 'Version'),
      heads.map((t) => h('th', { class: 'num' }, t)))),
    h('tbody', {}, rows.map((r) => h('tr', { dataset: { day: r.day, version: r.version } },
      h('td', { class: 'nowrap' }, r.day), h('td', { dataset: { label: 'Version' } }, r.version),
      cells(r).map((v, i) => h('td', { class: 'num', dataset: { label: heads[i] } }, v))))));
}

export async function overviewView(f) {
  title('Overview');
  const q = { from: f.from, to: f.to, version: f.version };
  const [stats, dims] = await Promise.all([api('GET', withQuery(appPath('stats'), q)), dimensions()]);
  // Check-ins without a version are counted nowhere: every row has one.
  const rows = stats.days.slice().sort((a, b) => (a.day === b.day
    ? compareVersions(b.version, a.version) : a.day < b.day ? 1 : -1));
  const shown = newestFirst([...new Set(rows.map((r) => r.version))]);
  const versions = newestFirst(dims.versions.map((d) => d.value));
  return h('div', {},
    h('h1', {}, 'Overview'),
    overviewForm(f, versions),
    h('p', { class: 'hint' }, 'Stall rate: the share of sampled users (whitelisted users left out) with at least one stored report that day, per app version. Active users count every check-in and report, sampled or not.'),
    rows.length ? [rateChart(rows, shown), h('h2', {}, 'Per day and version, newest first'), statsTable(rows)]
      : h('p', { class: 'empty' }, 'No active users counted on these days yet.'));
}
