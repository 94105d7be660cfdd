// The filters the group pages share: day range and pick lists of the
// dimensions (GET …/dimensions), how they travel in the address, and the
// line saying which apply.

import { h } from './lib-dom.js';
import { api, appPath, withQuery } from './lib-api.js';
import { ANDROID_KINDS, kindLabel, num } from './lib-format.js';
import { showError } from './lib-page.js';
import { hashFor } from './lib-router.js';
import { STATUS_CHOICES, statusChoiceText, statusQuery } from './lib-status.js';
import { compareVersions } from './lib-triage.js';

// Pick lists from GET …/dimensions: [select name, dimensions key, label].
const DIMENSIONS = [
  ['version', 'versions', 'App version'],
  ['os_version', 'os_versions', 'OS version'],
  ['device', 'devices', 'Device'],
  ['kind', 'kinds', 'Kind'],
];
// The filters every group page takes: they travel in the hash from the
// list to a group, its subgroups, its reports and a report (with the
// list's sort and statuses, for the way back), and go to the API with
// each call.
export const FILTERS = ['from', 'to', ...DIMENSIONS.map(([name]) => name)];
// The list's own choices ride along too, for the way back: its sort, its
// statuses, its search (q, SPEC §10.7) and its grouping by culprit (by).
export const LIST_PARAMS = [...FILTERS, 'sort', 'status', 'q', 'by'];
const isDimension = (k) => DIMENSIONS.some(([name]) => name === k);

// A filter object holds only what is chosen. A dimension may be chosen as
// '' (reports without that field), so it counts when present at all.
export function paramsOf(query, names) {
  const f = {};
  for (const k of names) {
    if (query.get(k) || (isDimension(k) && query.has(k))) f[k] = query.get(k);
  }
  return f;
}

// The top navigation keeps the filters of the page it is on: a day range
// or a device chosen on the groups list still holds on the overview and
// back. QUERY: the current address's.
export function keepFiltersInNav(query) {
  const carried = onlyFilters(paramsOf(query, FILTERS));
  for (const link of document.querySelectorAll('#nav a[id^="nav-"], header .brand')) {
    const section = link.id ? link.id.slice('nav-'.length) : 'groups';
    link.setAttribute('href', hashFor([section], carried));
  }
}

export const onlyFilters = (f) => Object.fromEntries(FILTERS.filter((k) => f[k] != null).map((k) => [k, f[k]]));
// Where a page's own form leads (the overview's, the comparison's): the
// filters of the address, as the top navigation carries them, with the
// form's fields NAMES as it holds them (an empty one left out).
export function formFilters(f, form, names) {
  const chosen = onlyFilters(f);
  for (const k of names) chosen[k] = form.elements[k].value || null;
  return chosen;
}

export const isFiltered = (f) => FILTERS.some((k) => f[k] != null);
const shownValue = (v, name) => (v === '' ? '(not set)' : name === 'kind' ? kindLabel(v) : v);

// An Android app's kind filter offers all of Android's kinds, in their
// order, those without reports on the days too; other kinds follow.
function kindValues(values) {
  const counted = new Map(values.map((d) => [d.value, d]));
  if (!ANDROID_KINDS.some(([k]) => counted.has(k))) return values;
  const own = ANDROID_KINDS.map(([k]) => counted.get(k) || { value: k, reports: 0 });
  return [...own, ...values.filter((d) => !ANDROID_KINDS.some(([k]) => k === d.value))];
}

// "all", then every known value with its report count; a value taken from
// the hash that the range no longer holds stays choosable, marked so. The
// real value is each option's data-v ("all" has none): '' is a value too.
function fillSelect(select, values, chosen) {
  const options = [h('option', { value: '' }, 'all')];
  const option = (v, text) => h('option', { value: v, dataset: { v } }, text);
  // Versions newest first in the version order (SPEC §10.3), '' last;
  // the other dimensions as the API ranks them, by reports.
  const listed = select.name === 'version'
    ? (values || []).slice().sort((a, b) => (a.value === '') - (b.value === '') || compareVersions(b.value, a.value))
    : select.name === 'kind' ? kindValues(values || []) : values || [];
  for (const d of listed) options.push(option(d.value, `${shownValue(d.value, select.name)} (${num(d.reports)})`));
  let pick = chosen == null ? options[0] : options.find((o) => o.dataset.v === chosen);
  if (!pick) options.push(pick = option(chosen, `${shownValue(chosen, select.name)} (no reports)`));
  select.replaceChildren(...options);
  pick.selected = true;
}

// The choice that shows what the address asks for ('open,regressed' is
// the default's), or one more option for a set the list does not offer.
function pickStatus(select, chosen) {
  const q = statusQuery(chosen);
  const match = STATUS_CHOICES.find(([v]) => statusQuery(v) === q);
  if (match) {
    select.value = match[0];
    return;
  }
  select.append(h('option', { value: q }, statusChoiceText(chosen)));
  select.value = q;
}

const chosenIn = (select) => select.selectedOptions[0]?.dataset.v;

export async function dimensions(from, to) {
  return api('GET', withQuery(appPath('dimensions'), { from: from || null, to: to || null }));
}

export function filtersForm(f, dims) {
  const input = (id, name, label, type) => h('label', { for: id }, label,
    h('input', { id, name, type, value: f[name] || '' }));
  const select = (id, name, label, options) => h('label', { for: id }, label,
    h('select', { id, name }, options.map(([value, text]) =>
      h('option', { value, selected: (f[name] || '') === value }, text))));
  const pick = (name, label) => h('label', { for: `filter-${name.replace('_', '-')}` }, label,
    h('select', { id: `filter-${name.replace('_', '-')}`, name }));
  const form = h('form', { id: 'groups-filters', class: 'filters' },
    // SPEC §10.7: a frame's function, file or image, 3 characters at least.
    h('label', { for: 'filter-q' }, 'Search frames',
      h('input', { id: 'filter-q', name: 'q', type: 'search', value: f.q || '', minlength: 3,
        placeholder: 'function, file or image', title: 'At least 3 characters, any case' })),
    input('filter-from', 'from', 'From (UTC day)', 'date'),
    input('filter-to', 'to', 'To (UTC day)', 'date'),
    DIMENSIONS.map(([name, , label]) => pick(name, label)),
    // The dashboard's default is the blocked time (the API's is count).
    select('filter-sort', 'sort', 'Sort by',
      [['', 'stall time'], ['count', 'reports'], ['users', 'users'], ['last_seen', 'last seen']]),
    // Resolved and ignored groups are left out unless asked for.
    select('filter-status', 'status', 'Status', STATUS_CHOICES),
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', id: 'filters-apply' }, 'Apply'),
      h('a', { href: '#/groups', class: 'button-link' }, 'Clear')));
  const el = form.elements;
  const fill = (d, chosen) => {
    for (const [name, key] of DIMENSIONS) fillSelect(el[name], d[key], chosen(name));
  };
  fill(dims, (name) => f[name]);
  pickStatus(el.status, f.status);
  // The pick lists follow the days being chosen, before Apply; only the
  // answer for the latest days counts.
  let asked = 0;
  const refill = async () => {
    const mine = ++asked;
    try {
      const d = await dimensions(el.from.value, el.to.value);
      if (mine === asked) fill(d, (name) => chosenIn(el[name]));
    } catch (e) {
      showError(e);
    }
  };
  el.from.addEventListener('change', refill);
  el.to.addEventListener('change', refill);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const chosen = {};
    for (const k of ['from', 'to', 'sort', 'status']) if (el[k].value) chosen[k] = el[k].value;
    if (el.q.value.trim()) chosen.q = el.q.value.trim();
    chosen.by = f.by;
    for (const [name] of DIMENSIONS) chosen[name] = chosenIn(el[name]);
    location.hash = hashFor(['groups'], chosen);
  });
  return form;
}

// What the numbers below count, with a way back to all time.
export function filterSummary(f, parts) {
  if (!isFiltered(f)) return h('p', { class: 'hint', id: 'filter-summary' }, 'All-time counts, no filters.');
  const said = [];
  if (f.from || f.to) said.push(`UTC days ${f.from || 'first'} → ${f.to || 'today'}`);
  for (const [name, , label] of DIMENSIONS) {
    if (f[name] != null) said.push(`${label.toLowerCase()} ${shownValue(f[name], name)}`);
  }
  return h('p', { class: 'filter-summary', id: 'filter-summary' },
    h('span', {}, `Filtered: ${said.join(', ')}. `),
    h('a', { href: hashFor(parts, { sort: f.sort, status: f.status }), id: 'filter-clear' }, 'Show all time'));
}
