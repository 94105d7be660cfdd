// #/overview?from=&to=&version=: the app's stall rate per version per UTC
// day (GET …/stats, SPEC §10.2) — the share of sampled users who had a
// stall, the number Android calls the ANR rate — with the users behind it.
// An app with Matrix startups (Android, SPEC §13) also shows their p50
// and p90 per version, cold and warm apart.

import { h, title } from './lib-dom.js';
import { api, appPath, plainMessage, withQuery } from './lib-api.js';
import { duration, num } from './lib-format.js';
import { dimensions, formFilters } from './lib-filters.js';
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
    location.hash = hashFor(['overview'], formFilters(f, form, ['from', 'to', 'version']));
  });
  return form;
}

// Hang-free users and adoption (SPEC §10.2) of each day and version.
const EXTRA = [
  ['hang_free_users', 'Hang-free users', 'share of sampled users without a stored report that day (like crash-free users)'],
  ['adoption', 'Adoption', 'the version’s share of the day’s active users'],
];

function statsTable(rows) {
  const heads = ['Active users', 'Sampled users', 'Stalled users', 'Stall rate', 'Reports', 'Stall time'];
  const cells = (r) => [num(r.active_users), num(r.sampled_users), num(r.stalled_users),
    pct(stallRate(r)), num(r.reports), stallTime(r.stall_ms)];
  return h('table', { id: 'overview', class: 'data cards' },
    h('thead', {}, h('tr', {}, h('th', {}, 'UTC day'), h('th', {}, 'Version'),
      heads.map((t) => h('th', { class: 'num' }, t)),
      EXTRA.map(([, t, why]) => h('th', { class: 'num', title: why }, t)))),
    h('tbody', {}, rows.map((r) => h('tr', { dataset: { day: r.day, version: r.version } },
      h('td', { class: 'nowrap' }, r.day), h('td', { dataset: { label: 'Version' } }, r.version),
      cells(r).map((v, i) => h('td', { class: 'num', dataset: { label: heads[i] } }, v)),
      EXTRA.map(([k, t]) => h('td', { class: `num ${k.replace(/_/g, '-')}`, dataset: { label: t, value: String(r[k] ?? '') } }, pct(r[k])))))));
}

// Per version over the days shown: its latest day's hang-free users and
// adoption, newest version first.
function versionsTable(rows, versions) {
  const latest = versions.map((v) => rows.find((r) => r.version === v)).filter(Boolean);
  return [h('h2', {}, 'Per version, latest day'),
    h('table', { id: 'overview-versions', class: 'data cards' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Version'), h('th', {}, 'UTC day'),
        h('th', { class: 'num', title: EXTRA[0][2] }, 'Hang-free users'),
        h('th', { class: 'num', title: EXTRA[1][2] }, 'Adoption'))),
      h('tbody', {}, latest.map((r) => h('tr', { dataset: { version: r.version, day: r.day,
        hangFree: String(r.hang_free_users ?? ''), adoption: String(r.adoption ?? '') } },
      h('td', {}, r.version), h('td', { class: 'nowrap', dataset: { label: 'Day' } }, r.day),
      h('td', { class: 'num', dataset: { label: 'Hang-free users' } }, pct(r.hang_free_users)),
      h('td', { class: 'num', dataset: { label: 'Adoption' } }, pct(r.adoption))))))];
}

// GET …/startup's versions, newest first: starts, p50 and p90 of cold and
// of warm starts. A failure leaves the rest of the page standing.
async function startupSection(q) {
  let data;
  try {
    data = await api('GET', withQuery(appPath('startup'), q));
  } catch (e) {
    return h('p', { class: 'error', id: 'startup-error' }, plainMessage(e));
  }
  if (!data.versions?.length) return null;
  const rows = data.versions.slice().sort((a, b) => compareVersions(b.app_version, a.app_version));
  const heads = ['Cold starts', 'Cold p50', 'Cold p90', 'Warm starts', 'Warm p50', 'Warm p90'];
  const figures = (s) => [num(s?.count ?? 0), duration(s?.p50_ms), duration(s?.p90_ms)];
  const raw = (s) => [s?.count ?? 0, s?.p50_ms ?? '', s?.p90_ms ?? ''].map(String);
  return [h('h2', {}, 'Startup per version'),
    h('table', { id: 'overview-startup', class: 'data cards' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Version'), heads.map((t) => h('th', { class: 'num' }, t)))),
      h('tbody', {}, rows.map((r) => {
        const [cold, warm] = [figures(r.cold), figures(r.warm)];
        const [rc, rw] = [raw(r.cold), raw(r.warm)];
        return h('tr', { dataset: { version: r.app_version,
          coldCount: rc[0], coldP50: rc[1], coldP90: rc[2], warmCount: rw[0], warmP50: rw[1], warmP90: rw[2] } },
        h('td', {}, r.app_version),
        [...cold, ...warm].map((v, i) => h('td', { class: 'num', dataset: { label: heads[i] } }, v)));
      }))),
    h('p', { class: 'hint' }, 'Matrix’s Trace_StartUp reports (startup_duration) on the days chosen; a cold start launches the process, a warm one an activity of a running process.')];
}

export async function overviewView(f) {
  title('Overview');
  const q = { from: f.from, to: f.to, version: f.version };
  const [stats, dims, startup] = await Promise.all([api('GET', withQuery(appPath('stats'), q)), dimensions(),
    startupSection(q)]);
  // Check-ins without a version are counted nowhere: every row has one.
  const rows = stats.days.slice().sort((a, b) => (a.day === b.day
    ? compareVersions(b.version, a.version) : a.day < b.day ? 1 : -1));
  const shown = newestFirst([...new Set(rows.map((r) => r.version))]);
  const versions = newestFirst(dims.versions.map((d) => d.value));
  return h('div', {},
    h('h1', {}, 'Overview'),
    overviewForm(f, versions),
    h('p', { class: 'hint' }, 'Stall rate: the share of sampled users (whitelisted users left out) with at least one stored report that day, per app version. Active users count every check-in and report, sampled or not.'),
    rows.length ? [rateChart(rows, shown), versionsTable(rows, shown),
      h('h2', {}, 'Per day and version, newest first'), statsTable(rows)]
      : h('p', { class: 'empty' }, 'No active users counted on these days yet.'),
    startup);
}
