// #/compare?base=&target=&from=&to=: a release against the one before (GET
// …/compare, SPEC §10.3): every group of either version, titled by its
// culprit, with its reports, stall time and rate in each, the difference
// of the rates with its 95% CI and p-value, new and worse first as the
// API orders them, and the verdict of the test behind them.

import { badge, clickable, h, title } from './lib-dom.js';
import { api, appPath, withQuery } from './lib-api.js';
import { num } from './lib-format.js';
import { dimensions, formFilters } from './lib-filters.js';
import { hashFor } from './lib-router.js';
import { groupTitle, newestFirst, pct, stallTime } from './lib-triage.js';

const VERDICTS = ['new', 'worse', 'better', 'same'];

// One version's side of a row: its rate (affected ÷ sampled), its reports
// and stall time.
function side(s, version) {
  return h('td', { class: 'num side', dataset: { rate: String(s.rate ?? ''), label: `Rate in ${version}` } },
    h('span', { class: 'rate' }, pct(s.rate)),
    h('span', { class: 'muted of' }, `${num(s.affected)} / ${num(s.sampled)}`),
    h('span', { class: 'muted of side-reports' }, `${num(s.reports)} reports`),
    h('span', { class: 'muted of side-stall' }, stallTime(s.stall_ms)));
}

// "+1.20%", "95% CI +0.40% … +2.00%", "p 0.004": target rate − base
// rate; the interval and p are null when a side has no sampled user-day.
const signed = (x) => (x == null ? '—' : `${x > 0 ? '+' : x < 0 ? '−' : ''}${pct(Math.abs(x))}`);
function diffCell(g) {
  const d = g.base.rate != null && g.target.rate != null ? g.target.rate - g.base.rate : null;
  const ci = g.diff_ci ? `95% CI ${signed(g.diff_ci[0])} … ${signed(g.diff_ci[1])}` : null;
  const p = g.p_value == null ? 'p —' : `p ${g.p_value < 0.001 ? '< 0.001' : g.p_value.toFixed(3)}`;
  return h('td', { class: 'num diff', dataset: { label: 'Difference', pValue: String(g.p_value ?? ''),
    ci: JSON.stringify(g.diff_ci ?? null) } },
  h('span', { class: 'rate' }, signed(d)),
  ci ? h('span', { class: 'muted of' }, ci) : null,
  h('span', { class: 'muted of p-value' }, p));
}

// A row opens its group filtered to the version that has it (the target,
// unless only the base does) over the compared days.
function compareRow(g, base, target, f) {
  const href = hashFor(['groups', g.key], { from: f.from, to: f.to,
    version: g.target.affected || !g.base.affected ? target : base });
  return clickable(h('tr', { dataset: { key1: g.key, verdict: g.verdict } },
    h('td', { class: 'frames' }, h('a', { href }, groupTitle(g))),
    side(g.base, base), side(g.target, target), diffCell(g),
    h('td', {}, badge(g.verdict, `verdict verdict-${g.verdict}`))), href);
}

function versionPicker(id, name, label, versions, chosen) {
  // A version from the address may have check-ins but no report yet.
  const listed = versions.includes(chosen) ? versions : [chosen, ...versions];
  return h('label', { for: id }, label,
    h('select', { id, name }, listed.map((v) => h('option', { value: v, selected: v === chosen }, v))));
}

// Every group's verdict, counted by the server whatever the page.
function tally(verdicts) {
  return VERDICTS.map((v) => `${num(verdicts[v])} ${v}`).join(', ');
}

// The first rows of a large app's comparison (18,000 groups at a million
// reports) and the rest on demand.
const PAGE = 200;

export async function compareView(f) {
  title('Compare releases');
  const versions = newestFirst((await dimensions()).versions.map((d) => d.value));
  if (versions.length < 2) {
    return h('div', {}, h('h1', {}, 'Compare releases'),
      h('p', { class: 'empty' }, 'Two app versions with reports are needed to compare them.'));
  }
  // Without a choice: the newest version against the one before it.
  const target = f.target || versions[0];
  const older = versions.slice(versions.indexOf(target) + 1);
  const base = f.base || older[0] || versions.find((v) => v !== target);
  const day = (id, name, label) => h('label', { for: id }, label,
    h('input', { id, name, type: 'date', value: f[name] || '' }));
  const form = h('form', { id: 'compare-form', class: 'filters' },
    versionPicker('compare-base', 'base', 'Base version', versions, base),
    versionPicker('compare-target', 'target', 'Target version', versions, target),
    day('compare-from', 'from', 'From (UTC day, optional)'),
    day('compare-to', 'to', 'To (UTC day, optional)'),
    h('div', { class: 'buttons' }, h('button', { type: 'submit', id: 'compare-apply' }, 'Compare')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = hashFor(['compare'], formFilters(f, form, ['base', 'target', 'from', 'to']));
  });
  // The server refuses a version against itself (400): said here instead.
  if (base === target) {
    return h('div', {}, h('h1', {}, 'Compare releases'), form,
      h('p', { class: 'empty', id: 'compare-same' }, `Choose two different versions: ${base} against itself compares nothing.`));
  }
  const query = { base, target, from: f.from, to: f.to, limit: PAGE };
  const data = await api('GET', withQuery(appPath('compare'), query));
  const rows = h('tbody', {}, data.groups.map((g) => compareRow(g, base, target, f)));
  const more = h('button', { type: 'button', id: 'compare-more', class: 'more', hidden: data.next_cursor == null }, 'Load more');
  let cursor = data.next_cursor;
  more.addEventListener('click', async () => {
    more.disabled = true;
    const next = await api('GET', withQuery(appPath('compare'), { ...query, cursor }));
    rows.append(...next.groups.map((g) => compareRow(g, base, target, f)));
    cursor = next.next_cursor;
    more.hidden = cursor == null;
    more.disabled = false;
  });
  const table = h('table', { id: 'compare', class: 'data compare cards', dataset: { base, target } },
    h('thead', {}, h('tr', {},
      h('th', {}, 'Culprit · frames (innermost first)'),
      h('th', { class: 'num', title: 'affected ÷ sampled user-days' }, `Rate in ${base}`),
      h('th', { class: 'num', title: 'affected ÷ sampled user-days' }, `Rate in ${target}`),
      h('th', { class: 'num', title: `rate in ${target} − rate in ${base}, its 95% confidence interval and the two-proportion test's p-value` }, 'Difference'),
      h('th', {}, 'Verdict'))),
    rows);
  return h('div', {},
    h('h1', {}, 'Compare releases'),
    form,
    h('p', { class: 'hint' }, `${target} against ${base}: ${tally(data.verdicts)}. A group is worse or better when a two-proportion test gives p < 0.01 and its rate grew 1.5 times or more (or fell to 2/3 or less); new when only ${target} has it, in at least 5 user-days.`),
    data.groups.length ? table : h('p', { class: 'empty' }, 'Neither version has a stall group.'),
    more);
}
