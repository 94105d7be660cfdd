// stallscope dashboard: a small single-page app over the JSON API
// (SPEC §7). No framework and no build step; every piece of data reaches
// the page through textContent or attributes, never through HTML parsing,
// and the server's CSP forbids inline scripts and styles anyway.

const STORE_APP = 'stallscope.app';
const STORE_TOKEN = 'stallscope.token';
const PAGE = 50;           // rows per page of groups, reports and missing images
const SPARK_MIN_DAYS = 7;  // a group seen on one day still gets a week's axis
const SPARK_MAX_DAYS = 365;

const $ = (id) => document.getElementById(id);

let session = {
  app: localStorage.getItem(STORE_APP) || '',
  token: localStorage.getItem(STORE_TOKEN) || '',
};

// ---------------------------------------------------------------- DOM

// h('tr', {class: 'x', dataset: {key1}, onclick: fn}, child, …): strings
// become text nodes, so data can never turn into markup.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  for (const c of children.flat(Infinity)) {
    if (c != null && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  for (const c of children) el.append(c);
  return el;
}

const enc = encodeURIComponent;

// '#/a/b?k=v': QUERY (an object) carries the filters from page to page, so
// a group opened from a filtered list keeps counting what the list counted.
function hashFor(parts, query) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query || {})) if (v != null) qs.set(k, v);
  const s = qs.toString();
  return '#/' + parts.map(enc).join('/') + (s ? `?${s}` : '');
}

// ---------------------------------------------------------- formatting

// Times are shown in UTC, as the API, the logs and the day filters count
// them: a browser's own zone would put a report on another day than the
// filter that found it.
function utc(iso) {
  const d = new Date(iso);
  return isNaN(d) ? String(iso) : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

function timeEl(iso) {
  if (!iso) return '—';
  return h('time', { datetime: iso, title: iso }, utc(iso));
}

const basename = (path) => String(path).split('/').pop();

const num = (n) => (n == null ? '—' : Number(n).toLocaleString());

function duration(ms) {
  if (ms == null) return '—';
  if (ms < 1000) return `${ms} ms`;
  return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

function badge(text, cls) {
  return h('span', { class: `badge ${cls || ''}`.trim() }, text);
}

// Identities ("Demo!slow_sort"), innermost first as the API sends them.
function identities(frames) {
  if (!frames || frames.length === 0) return h('span', { class: 'muted' }, '(empty stack)');
  return h('ol', { class: 'idents' }, frames.map((f) => h('li', {}, f)));
}

// ---------------------------------------------------------------- days

const DAY_MS = 86400000;
const dayOf = (ms) => new Date(ms).toISOString().slice(0, 10);
const dayMs = (day) => Date.parse(day + 'T00:00:00Z');
const todayUTC = () => dayOf(Date.now());

// Every UTC day from FROM to TO inclusive, at most SPARK_MAX_DAYS (the
// sparkline would be unreadable beyond that anyway).
function dayRange(from, to) {
  let start = dayMs(from);
  const end = dayMs(to);
  if (isNaN(start) || isNaN(end) || start > end) return [];
  start = Math.max(start, end - (SPARK_MAX_DAYS - 1) * DAY_MS);
  const days = [];
  for (let t = start; t <= end; t += DAY_MS) days.push(dayOf(t));
  return days;
}

// The API lists only days that had reports; the gaps are zeros.
function sparkline(daily, from, to) {
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

// ----------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let inflight = 0;
function busy(delta) {
  inflight += delta;
  $('loading').hidden = inflight === 0;
  $('view').setAttribute('aria-busy', String(inflight > 0));
}

// The Response of a successful call; anything else becomes an ApiError
// carrying the server's {"error":{"code","message"}}.
async function request(method, path, body) {
  const init = { method, cache: 'no-store', headers: { Authorization: `Bearer ${session.token}` } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let resp;
  busy(+1);
  try {
    resp = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'network', 'Cannot reach the server.');
  } finally {
    busy(-1);
  }
  if (resp.ok) return resp;
  let err = {};
  try {
    err = (await resp.json()).error || {};
  } catch { /* not JSON: a proxy's page, say */ }
  throw new ApiError(resp.status, err.code || `http_${resp.status}`, err.message || resp.statusText);
}

async function api(method, path, body) {
  const resp = await request(method, path, body);
  if (resp.status === 204) return null;
  busy(+1);
  try {
    return await resp.json();
  } finally {
    busy(-1);
  }
}

function appPath(...parts) {
  return `/api/v1/apps/${enc(session.app)}` + parts.map((p) => '/' + enc(p)).join('');
}

// PARAMS' null and undefined values are left out; '' is sent (a filter on
// a dimension's '' matches reports without that field).
function withQuery(path, params) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v != null) qs.set(k, v);
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

// Errors that mean "these credentials do not work here": back to sign-in.
function isAuthError(e) {
  return e instanceof ApiError &&
    (e.status === 401 || e.status === 403 || e.code === 'unknown_app');
}

function plainMessage(e) {
  if (!(e instanceof ApiError)) return `Something went wrong in the page: ${e.message || e}`;
  const detail = e.message ? ` (${e.message})` : '';
  switch (e.code) {
    case 'network': return 'Cannot reach the stallscope server. Check that it is running and try again.';
    case 'unauthorized': return 'The admin token was not accepted. Please sign in again.';
    case 'forbidden': return `This token does not give access to the app “${session.app}”.`;
    case 'unknown_app': return `There is no app with bundle id “${session.app}”.`;
    case 'not_found': return `Not found${detail}. It may have been deleted or purged by retention.`;
    case 'database_unavailable':
    case 'shutting_down': return 'The server is temporarily unavailable. Try again in a moment.';
    case 'bad_query':
    case 'bad_field':
    case 'bad_json':
    case 'bad_cursor': return `The server refused the request${detail}.`;
    default: return `The server answered ${e.status || 'with an error'}${detail}.`;
  }
}

function showError(e) {
  if (isAuthError(e)) {
    showSignin(plainMessage(e));
    return;
  }
  const box = $('error');
  box.textContent = typeof e === 'string' ? e : plainMessage(e);
  box.hidden = false;
}

function clearError() {
  $('error').textContent = '';
  $('error').hidden = true;
}

// Runs an action triggered from within a view (load more, delete, save):
// the button is disabled meanwhile and failures land in #error.
async function act(button, fn) {
  button.disabled = true;
  clearError();
  try {
    await fn();
  } catch (e) {
    showError(e);
  } finally {
    button.disabled = false;
  }
}

// ------------------------------------------------------------- session

function signedIn() {
  return Boolean(session.app && session.token);
}

function showSignin(message) {
  $('signin-view').hidden = false;
  $('view').hidden = true;
  $('nav').hidden = true;
  $('session').hidden = true;
  // Prefill only: what the user is typing wins over the stored bundle id.
  if (!$('signin-app').value) $('signin-app').value = session.app;
  if (message) {
    $('error').textContent = message;
    $('error').hidden = false;
  }
  document.title = 'Sign in · stallscope';
  ($('signin-app').value ? $('signin-token') : $('signin-app')).focus();
}

function showApp() {
  $('signin-view').hidden = true;
  $('view').hidden = false;
  $('nav').hidden = false;
  $('session').hidden = false;
  $('session-app').textContent = session.app;
}

async function onSignin(ev) {
  ev.preventDefault();
  const app = $('signin-app').value.trim();
  const token = $('signin-token').value.trim();
  if (!app || !token) return;
  const previous = session;
  session = { app, token };
  clearError();
  const button = $('signin-submit');
  button.disabled = true;
  try {
    // Checks both the bundle id and the token before keeping them.
    await api('GET', appPath('config'));
  } catch (e) {
    const message = plainMessage(e); // names the bundle id just tried
    session = previous;
    showSignin(message);
    return;
  } finally {
    button.disabled = false;
  }
  localStorage.setItem(STORE_APP, app);
  localStorage.setItem(STORE_TOKEN, token);
  $('signin-token').value = '';
  if (parseHash().parts.length === 0) location.hash = '#/groups';
  else route();
}

function onSignout() {
  localStorage.removeItem(STORE_APP);
  localStorage.removeItem(STORE_TOKEN);
  session = { app: session.app, token: '' }; // keep the bundle id prefilled
  $('view').replaceChildren();
  clearError();
  showSignin();
}

// ------------------------------------------------------------- routing

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const parts = path.split('/').filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  return { parts, query: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)) };
}

// Bumped on every navigation: a slow answer for a page the user already
// left must not overwrite the page they are on.
let generation = 0;

async function route() {
  const gen = ++generation;
  const hash = location.hash;
  clearError();
  if (!signedIn()) {
    showSignin();
    return;
  }
  const { parts, query } = parseHash();
  if (parts.length === 0) {
    location.replace('#/groups');
    return;
  }
  showApp();
  const [head, a, b, ...rest] = parts;
  for (const link of $('nav').querySelectorAll('a')) link.removeAttribute('aria-current');
  const section = head === 'reports' ? 'groups' : head;
  $(`nav-${section}`)?.setAttribute('aria-current', 'page');

  let render = null;
  const f = paramsOf(query, LIST_PARAMS);
  if (head === 'groups' && rest.length === 0) {
    if (!a) render = () => groupsView(f, gen);
    else if (!b) render = () => groupView(a, f);
    else render = () => groupReportsView(a, b, f, gen);
  } else if (head === 'reports' && a && !b) render = () => reportView(a, f);
  else if (head === 'missing' && !a) render = () => missingView(gen);
  else if (head === 'whitelist' && !a) render = () => whitelistView(gen);
  else if (head === 'config' && !a) render = () => configView();

  if (!render) {
    location.replace('#/groups');
    return;
  }
  let view;
  try {
    view = await render();
  } catch (e) {
    if (gen !== generation) return;
    view = h('div', { class: 'empty' });
    showError(e);
  }
  if (gen !== generation) return;
  $('view').replaceChildren(view);
  // Which route the view shows: tests wait on it, as old rows look alike.
  $('view').dataset.hash = hash;
}

const current = (gen) => gen === generation;

// A row that opens HREF when clicked anywhere (the first cell holds a
// real link for keyboards and middle clicks).
function clickable(tr, href) {
  tr.classList.add('clickable');
  tr.addEventListener('click', (ev) => {
    if (ev.target.closest('a, button, input')) return;
    if (String(window.getSelection() || '')) return; // selecting text, not navigating
    location.hash = href;
  });
  return tr;
}

function crumbs(...items) {
  return h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' },
    items.map(([label, href], i) => [
      i ? h('span', { class: 'sep', 'aria-hidden': 'true' }, '›') : null,
      href ? h('a', { href }, label) : h('span', {}, label),
    ]));
}

function title(text) {
  document.title = `${text} · stallscope`;
}

// ----------------------------------------------------------- groups list

// Pick lists from GET …/dimensions: [select name, dimensions key, label].
const DIMENSIONS = [
  ['version', 'versions', 'App version'],
  ['os_version', 'os_versions', 'OS version'],
  ['device', 'devices', 'Device'],
  ['kind', 'kinds', 'Kind'],
];
// The filters every group page takes: they travel in the hash from the
// list to a group, its subgroups, its reports and a report (with the
// list's sort, for the way back), and go to the API with each call.
const FILTERS = ['from', 'to', ...DIMENSIONS.map(([name]) => name)];
const LIST_PARAMS = [...FILTERS, 'sort'];
const isDimension = (k) => DIMENSIONS.some(([name]) => name === k);

// A filter object holds only what is chosen. A dimension may be chosen as
// '' (reports without that field), so it counts when present at all.
function paramsOf(query, names) {
  const f = {};
  for (const k of names) {
    if (query.get(k) || (isDimension(k) && query.has(k))) f[k] = query.get(k);
  }
  return f;
}

const onlyFilters = (f) => Object.fromEntries(FILTERS.filter((k) => f[k] != null).map((k) => [k, f[k]]));
const isFiltered = (f) => FILTERS.some((k) => f[k] != null);
const shownValue = (v) => (v === '' ? '(not set)' : v);

// "all", then every known value with its report count; a value taken from
// the hash that the range no longer holds stays choosable, marked so. The
// real value is each option's data-v ("all" has none): '' is a value too.
function fillSelect(select, values, chosen) {
  const options = [h('option', { value: '' }, 'all')];
  const option = (v, text) => h('option', { value: v, dataset: { v } }, text);
  for (const d of values || []) options.push(option(d.value, `${shownValue(d.value)} (${num(d.reports)})`));
  let pick = chosen == null ? options[0] : options.find((o) => o.dataset.v === chosen);
  if (!pick) options.push(pick = option(chosen, `${shownValue(chosen)} (no reports)`));
  select.replaceChildren(...options);
  pick.selected = true;
}

const chosenIn = (select) => select.selectedOptions[0]?.dataset.v;

async function dimensions(from, to) {
  return api('GET', withQuery(appPath('dimensions'), { from: from || null, to: to || null }));
}

function filtersForm(f, dims) {
  const input = (id, name, label, type) => h('label', { for: id }, label,
    h('input', { id, name, type, value: f[name] || '' }));
  const select = (id, name, label, options) => h('label', { for: id }, label,
    h('select', { id, name }, options.map(([value, text]) =>
      h('option', { value, selected: (f[name] || '') === value }, text))));
  const pick = (name, label) => h('label', { for: `filter-${name.replace('_', '-')}` }, label,
    h('select', { id: `filter-${name.replace('_', '-')}`, name }));
  const form = h('form', { id: 'groups-filters', class: 'filters' },
    input('filter-from', 'from', 'From (UTC day)', 'date'),
    input('filter-to', 'to', 'To (UTC day)', 'date'),
    DIMENSIONS.map(([name, , label]) => pick(name, label)),
    select('filter-sort', 'sort', 'Sort by', [['', 'reports'], ['users', 'users'], ['last_seen', 'last seen']]),
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', id: 'filters-apply' }, 'Apply'),
      h('a', { href: '#/groups', class: 'button-link' }, 'Clear')));
  const el = form.elements;
  const fill = (d, chosen) => {
    for (const [name, key] of DIMENSIONS) fillSelect(el[name], d[key], chosen(name));
  };
  fill(dims, (name) => f[name]);
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
    for (const k of ['from', 'to', 'sort']) if (el[k].value) chosen[k] = el[k].value;
    for (const [name] of DIMENSIONS) chosen[name] = chosenIn(el[name]);
    location.hash = hashFor(['groups'], chosen);
  });
  return form;
}

// The days sparklines span: the chosen range (an open end is today, or the
// first day with reports), else the first to the last day with reports of
// the groups drawn together (one axis per table, so a column compares);
// at least SPARK_MIN_DAYS so one busy day is not a solid block.
function sparkWindow(f, dailies) {
  const days = dailies.flatMap((daily) => (daily || []).filter((d) => d.reports > 0).map((d) => d.day)).sort();
  let from = f.from || days[0];
  const to = f.to || (f.from ? todayUTC() : days[days.length - 1]) || todayUTC();
  if (!from || (!f.from && dayMs(to) - dayMs(from) < (SPARK_MIN_DAYS - 1) * DAY_MS)) {
    from = dayOf(dayMs(to) - (SPARK_MIN_DAYS - 1) * DAY_MS);
  }
  return [from, to];
}

function groupRow(g, href, dataset, win) {
  return clickable(h('tr', { dataset },
    h('td', { class: 'frames' }, h('a', { href }, identities(g.frames))),
    h('td', { class: 'num' }, num(g.reports)),
    h('td', { class: 'num' }, num(g.users)),
    h('td', {}, timeEl(g.first_seen)),
    h('td', {}, timeEl(g.last_seen)),
    h('td', { class: 'spark-cell' }, sparkline(g.daily, ...win))), href);
}

const sparkHead = (win) => `Per UTC day, ${win[0]} → ${win[1]}`;

function groupTable(id, win) {
  const tbody = h('tbody');
  const head = h('th', { class: 'spark-cell' }, sparkHead(win));
  const table = h('table', { id, class: 'data groups' },
    h('thead', {}, h('tr', {},
      h('th', {}, 'Frames (innermost first)'), h('th', { class: 'num' }, 'Reports'),
      h('th', { class: 'num' }, 'Users'), h('th', {}, 'First seen (UTC)'), h('th', {}, 'Last seen (UTC)'),
      head)),
    tbody);
  return { table, tbody, head };
}

async function groupsView(f, gen) {
  title('Groups');
  const filtered = isFiltered(f);
  const { table, tbody, head } = groupTable('groups', sparkWindow(f, []));
  const more = h('button', { type: 'button', id: 'groups-more', class: 'more' }, 'Load more');
  const empty = h('p', { class: 'empty', hidden: true },
    filtered ? 'No stalls match these filters.' : 'No stalls reported yet.');
  const shown = [];
  let cursor = null;

  const load = async () => {
    const data = await api('GET', withQuery(appPath('groups'), { level: 1, ...f, limit: PAGE, cursor }));
    if (!current(gen)) return;
    shown.push(...data.groups);
    // A later page may hold older days: every row is redrawn on one axis.
    const win = sparkWindow(f, shown.map((g) => g.daily));
    head.textContent = sparkHead(win);
    tbody.replaceChildren(...shown.map((g) =>
      groupRow(g, hashFor(['groups', g.key], f), { key1: g.key }, win)));
    cursor = data.next_cursor;
    more.hidden = cursor == null;
    empty.hidden = tbody.rows.length > 0;
    table.hidden = tbody.rows.length === 0;
  };
  more.addEventListener('click', () => act(more, load));
  const [dims] = await Promise.all([dimensions(f.from, f.to), load()]);
  return h('div', {},
    h('h1', {}, 'Stall groups'),
    h('p', { class: 'hint' }, filtered
      ? 'Counts are summed over the matching UTC days.'
      : 'Counts are all-time totals; choose days or filters to narrow them.'),
    filtersForm(f, dims), table, empty, more);
}

// ---------------------------------------------------------- group detail

// What the numbers below count, with a way back to all time.
function filterSummary(f, parts) {
  if (!isFiltered(f)) return h('p', { class: 'hint', id: 'filter-summary' }, 'All-time counts, no filters.');
  const said = [];
  if (f.from || f.to) said.push(`UTC days ${f.from || 'first'} → ${f.to || 'today'}`);
  for (const [name, , label] of DIMENSIONS) {
    if (f[name] != null) said.push(`${label.toLowerCase()} ${shownValue(f[name])}`);
  }
  return h('p', { class: 'filter-summary', id: 'filter-summary' },
    h('span', {}, `Filtered: ${said.join(', ')}. `),
    h('a', { href: hashFor(parts, { sort: f.sort }), id: 'filter-clear' }, 'Show all time'));
}

function groupHeader(g, level, win) {
  return h('div', { class: 'card group-head' },
    h('div', { class: 'frames' }, identities(g.frames)),
    h('dl', { class: 'stats' },
      h('dt', {}, 'Key'), h('dd', { class: 'mono' }, g.key),
      h('dt', {}, 'Reports'), h('dd', { id: 'group-reports' }, num(g.reports)),
      h('dt', {}, 'Users'), h('dd', { id: 'group-users' }, num(g.users)),
      h('dt', {}, 'First seen'), h('dd', {}, timeEl(g.first_seen)),
      h('dt', {}, 'Last seen'), h('dd', {}, timeEl(g.last_seen)),
      h('dt', {}, 'Per UTC day'), h('dd', { id: 'group-spark' }, sparkline(g.daily, ...win))),
    h('p', { class: 'hint' }, level === 1
      ? 'Grouped by the innermost two frames; subgroups by the innermost four.'
      : 'Grouped by the innermost four frames.'));
}

async function groupView(key1, f) {
  title(`Group ${key1}`);
  const data = await api('GET', withQuery(appPath('groups', key1), onlyFilters(f)));
  // The subgroups share their group's axis: they hold its reports.
  const win = sparkWindow(f, [data.group.daily]);
  const { table, tbody } = groupTable('subgroups', win);
  for (const s of data.subgroups) {
    tbody.append(groupRow(s, hashFor(['groups', key1, s.key], f), { key2: s.key }, win));
  }
  return h('div', {},
    crumbs(['Groups', hashFor(['groups'], f)], [key1]),
    h('h1', {}, 'Group'),
    filterSummary(f, ['groups', key1]),
    groupHeader(data.group, 1, win),
    h('h2', {}, `Subgroups (${data.subgroups.length})`),
    data.subgroups.length ? table : h('p', { class: 'empty' }, 'No subgroups with reports.'));
}

// ---------------------------------------------------- reports of a group

function reportRow(r, f) {
  const href = hashFor(['reports', String(r.id)], f);
  return clickable(h('tr', { dataset: { reportId: String(r.id) } },
    h('td', {}, h('a', { href }, timeEl(r.received_at))),
    h('td', { class: 'mono' }, r.user_id ?? '—'),
    h('td', {}, r.app_version ?? '—'),
    h('td', {}, r.os_version ?? '—'),
    h('td', {}, r.device ?? '—'),
    h('td', {}, r.kind ?? '—'),
    h('td', { class: 'num' }, duration(r.duration_ms)),
    h('td', {}, r.pending ? badge('waiting for symbols', 'warn') : badge('symbolicated', 'ok'))), href);
}

async function groupReportsView(key1, key2, f, gen) {
  title(`Reports of ${key2}`);
  const carried = onlyFilters(f);
  const tbody = h('tbody');
  const table = h('table', { id: 'reports', class: 'data' },
    h('thead', {}, h('tr', {},
      ['Received (UTC)', 'User', 'App version', 'OS version', 'Device', 'Kind', 'Duration', 'Symbols']
        .map((t) => h('th', { class: t === 'Duration' ? 'num' : null }, t)))),
    tbody);
  const more = h('button', { type: 'button', id: 'reports-more', class: 'more' }, 'Load more');
  let cursor = null;
  const load = async () => {
    const data = await api('GET', withQuery(appPath('groups', key1, key2, 'reports'),
      { ...carried, limit: PAGE, cursor }));
    if (!current(gen)) return;
    for (const r of data.reports) tbody.append(reportRow(r, f));
    cursor = data.next_cursor;
    more.hidden = cursor == null;
  };
  more.addEventListener('click', () => act(more, load));
  // The level-2 group's own counters come with its parent's detail.
  const [detail] = await Promise.all([api('GET', withQuery(appPath('groups', key1), carried)), load()]);
  const sub = detail.subgroups.find((s) => s.key === key2);
  return h('div', {},
    crumbs(['Groups', hashFor(['groups'], f)], [key1, hashFor(['groups', key1], f)], [key2]),
    h('h1', {}, 'Subgroup'),
    filterSummary(f, ['groups', key1, key2]),
    sub ? groupHeader(sub, 2, sparkWindow(f, [sub.daily])) : h('p', { class: 'mono' }, key2),
    h('h2', {}, 'Reports, newest first'),
    tbody.rows.length ? table : h('p', { class: 'empty' },
      isFiltered(f) ? 'No stored reports match these filters.' : 'No stored reports (they may have been purged by retention).'),
    more);
}

// ---------------------------------------------------------- report view

function frameItem(fr, index) {
  const chain = fr.frames || [];
  const status = fr.status || 'unknown';
  const head = h('div', { class: 'frame-head' },
    h('span', { class: 'idx' }, String(index)),
    h('span', { class: 'image' }, fr.image ?? '?'),
    h('span', { class: 'addr' }, fr.address),
    fr.offset ? h('span', { class: 'offset' }, `+${fr.offset}`) : null,
    badge(status.replace(/_/g, ' '), `status-${status}`));
  let body;
  if (chain.length) {
    // One return address can stand for several inlined calls: all shown,
    // innermost first, as the symbolizer gives them.
    body = h('ul', { class: 'symbols' }, chain.map((s) => {
      let loc = null;
      if (s.file) loc = s.file + (s.line ? `:${s.line}` : '') + (s.column ? `:${s.column}` : '');
      return h('li', { class: s.inlined ? 'symbol inlined' : 'symbol', title: s.symbol || null },
        h('span', { class: 'fn' }, s.function || s.symbol || '?'),
        loc ? h('span', { class: 'loc' }, loc) : null,
        s.inlined ? badge('inlined', 'inlined-tag') : null);
    }));
  } else if (fr.symbol_hint && fr.symbol_hint !== '<redacted>') {
    body = h('div', { class: 'unsym' }, h('span', { class: 'fn' }, fr.symbol_hint), badge('device hint', 'muted-tag'));
  } else {
    // The same image+offset spelling grouping uses for such frames.
    body = h('div', { class: 'unsym muted' },
      fr.image ? `${basename(fr.image)}+${fr.offset}` : `?+${fr.address}`);
  }
  return h('li', { class: `frame status-${status}` }, head, body);
}

function threadBlock(name, frames, representative, tags) {
  return h('details', { class: representative ? 'thread representative' : 'thread', open: true },
    h('summary', {}, h('span', { class: 'thread-name' }, name), tags,
      h('span', { class: 'muted count' }, frames.length === 1 ? '1 frame' : `${frames.length} frames`)),
    frames.length
      ? h('ol', { class: 'stack', start: 0 }, frames.map(frameItem))
      : h('p', { class: 'empty' }, 'No frames.'));
}

function threadsOf(r) {
  const threads = r.threads || [];
  const stack = r.stack || {};
  const repIndex = Number.isInteger(stack.thread) ? stack.thread : -1;
  const repTag = badge(`representative · ${String(stack.source || '').replace(/_/g, ' ')}`, 'rep-tag');
  const blocks = [];
  // The representative stack comes first: it is the one the report is
  // grouped by. From samples it is no thread of its own.
  if (repIndex < 0 && stack.frames) {
    blocks.push(threadBlock('Heaviest sampled stack', stack.frames, true, [repTag]));
  }
  const order = threads.map((_, i) => i);
  if (repIndex >= 0 && repIndex < threads.length) {
    order.splice(repIndex, 1);
    order.unshift(repIndex);
  }
  for (const i of order) {
    const t = threads[i];
    const tags = [];
    if (i === repIndex) tags.push(repTag);
    if (t.main) tags.push(badge('main', 'main-tag'));
    blocks.push(threadBlock(t.name ? `Thread ${i}: ${t.name}` : `Thread ${i}`, t.frames || [], i === repIndex, tags));
  }
  return blocks;
}

// System images (the OS's own libraries) are marked: an app team has no
// dSYM for them, and they do not keep a report waiting for symbols.
function needBadge(im) {
  if (!im.needed) return '';
  return im.system ? badge('yes, system symbols', 'muted') : badge('yes, missing', 'warn');
}

function imagesTable(images) {
  const missing = images.filter((i) => i.status !== 'found');
  const system = missing.filter((i) => i.system).length;
  const table = h('table', { class: 'data images' },
    h('thead', {}, h('tr', {},
      ['Image', 'UUID', 'Arch', 'Load address', 'Size', 'Symbols', 'Frames need it'].map((t) => h('th', {}, t)))),
    h('tbody', {}, images.map((im) => h('tr', {
      class: im.system ? 'system' : im.needed ? 'needed' : null,
      dataset: { system: String(Boolean(im.system)) },
    },
      h('td', { class: 'mono path' }, im.name ?? '?', im.system ? [' ', badge('system', 'system-tag')] : null),
      h('td', { class: 'mono' }, im.uuid ?? '—'),
      h('td', { class: 'nowrap' }, im.arch ?? '—'),
      h('td', { class: 'mono nowrap' }, im.load_address),
      h('td', { class: 'num' }, num(im.size)),
      h('td', {}, badge(im.status, `status-${im.status}`)),
      h('td', {}, needBadge(im))))));
  return h('details', { class: 'images-box', open: images.length <= 30 || null },
    h('summary', {}, `${images.length} loaded, ${missing.length} without symbols` +
      (system ? ` (${system} of them system images)` : '')), table);
}

async function downloadTrace(id) {
  const resp = await request('GET', `/api/v1/reports/${enc(id)}/trace`);
  const blob = new Blob([await resp.text()], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: `stallscope-report-${id}-trace.json`, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  // Revoked later: some browsers read the blob after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}

async function reportView(id, f) {
  title(`Report ${id}`);
  if (!/^\d+$/.test(id)) throw new ApiError(404, 'not_found', `“${id}” is not a report id`);
  const r = await api('GET', `/api/v1/reports/${enc(id)}`);
  const trace = h('button', { type: 'button', id: 'report-trace' }, 'Download trace (.json)');
  trace.addEventListener('click', () => act(trace, () => downloadTrace(id)));
  const row = (label, value) => [h('dt', {}, label), h('dd', {}, value ?? '—')];
  const ver = (a, b) => (a ? (b ? `${a} (${b})` : a) : null);
  const groupLink = r.key1 && r.key2
    ? h('a', { href: hashFor(['groups', r.key1, r.key2], f), class: 'mono' }, `${r.key1} / ${r.key2}`)
    : null;
  return h('div', { id: 'report' },
    crumbs(['Groups', hashFor(['groups'], f)],
      ...(r.key1 ? [[r.key1, hashFor(['groups', r.key1], f)]] : []),
      ...(r.key2 ? [[r.key2, hashFor(['groups', r.key1, r.key2], f)]] : []),
      [`Report ${r.id}`]),
    h('div', { class: 'title-row' },
      h('h1', {}, `Report ${r.id}`), badge(r.kind || 'stall', 'kind'),
      r.pending ? badge('waiting for symbols', 'warn') : null,
      h('span', { class: 'spacer' }), trace),
    h('dl', { class: 'card meta' },
      row('Received', timeEl(r.received_at)),
      row('Client time', r.timestamp ? timeEl(r.timestamp) : null),
      row('Duration', duration(r.duration_ms)),
      row('User', r.user_id),
      row('App version', ver(r.app_version, r.build)),
      row('OS', [r.os, ver(r.os_version, r.os_build)].filter(Boolean).join(' ') || null),
      row('Device', r.device),
      row('Format', r.source),
      row('Client report id', r.report_id),
      row('Samples', r.has_samples ? 'yes' : 'no'),
      row('Group', groupLink),
      row('Grouping frames', identities(r.frames))),
    h('h2', {}, 'Images'),
    imagesTable(r.images || []),
    h('h2', {}, 'Threads'),
    h('div', { class: 'threads' }, threadsOf(r)));
}

// ------------------------------------------------------- missing dSYMs

// One ranked list of GET …/dsyms/missing?images=WHICH, paged by its cursor.
async function missingSection(which, gen) {
  const id = which === 'app' ? 'missing' : 'missing-system';
  const tbody = h('tbody');
  const table = h('table', { id, class: 'data missing' },
    h('thead', {}, h('tr', {},
      h('th', {}, 'UUID'), h('th', {}, 'Image'), h('th', {}, 'Arch'),
      h('th', { class: 'num' }, 'Affected reports'), h('th', {}, 'Last seen (UTC day)'))),
    tbody);
  const empty = h('p', { class: 'empty', hidden: true }, which === 'app'
    ? 'Nothing missing: every app image that frames fall in has a debug file.'
    : 'No system image lacks symbols.');
  const more = h('button', { type: 'button', id: `${id}-more`, class: 'more' }, 'More');
  let cursor = null;
  const load = async () => {
    const data = await api('GET', withQuery(appPath('dsyms', 'missing'), { images: which, limit: PAGE, cursor }));
    if (!current(gen)) return;
    for (const m of data.missing) {
      tbody.append(h('tr', { dataset: { uuid: m.uuid } },
        h('td', { class: 'mono uuid' }, m.uuid),
        h('td', { class: 'mono path' }, m.name ?? '?'),
        h('td', { class: 'nowrap' }, m.arch ?? '—'),
        h('td', { class: 'num' }, num(m.reports)),
        h('td', {}, m.last_seen ?? '—')));
    }
    cursor = data.next_cursor;
    more.hidden = cursor == null;
    empty.hidden = tbody.rows.length > 0;
    table.hidden = tbody.rows.length === 0;
  };
  more.addEventListener('click', () => act(more, load));
  await load();
  return [table, empty, more];
}

async function missingView(gen) {
  title('Missing dSYMs');
  const [app, system] = await Promise.all([missingSection('app', gen), missingSection('system', gen)]);
  return h('div', {},
    h('h1', {}, 'Missing dSYMs'),
    h('p', { class: 'hint' },
      'The app’s own images that frames of stored reports fall in and that have no debug file, most affected first. ',
      'Upload them to ', h('code', {}, `POST ${appPath('dsyms')}`),
      ' with the upload token; waiting reports are re-symbolized within seconds.'),
    app,
    h('h2', {}, 'System images'),
    h('p', { class: 'hint' },
      'Libraries of the OS: they do not keep reports waiting for symbols. ',
      'Load their symbols once for every app with ', h('code', {}, 'stallscope system-symbols import DIR'),
      ' (a folder of extracted system frameworks).'),
    system);
}

// ----------------------------------------------------------- whitelist

function whitelistRow(w, reload) {
  const del = h('button', { type: 'button', class: 'whitelist-delete' }, 'Delete');
  del.addEventListener('click', () => act(del, async () => {
    try {
      await api('DELETE', appPath('whitelist', w.user_id));
    } finally {
      await reload(); // also after a 404: someone else removed it
    }
  }));
  const expired = w.expires_at && Date.parse(w.expires_at) <= Date.now();
  return h('tr', { dataset: { userId: w.user_id } },
    h('td', { class: 'mono' }, w.user_id),
    h('td', {}, w.note ?? ''),
    h('td', {}, w.expires_at ? [timeEl(w.expires_at), expired ? badge('expired', 'warn') : null] : 'never'),
    h('td', {}, timeEl(w.created_at)),
    h('td', {}, del));
}

async function whitelistView(gen) {
  title('Whitelist');
  const tbody = h('tbody');
  const table = h('table', { id: 'whitelist', class: 'data' },
    h('thead', {}, h('tr', {},
      ['User id', 'Note', 'Expires', 'Added', ''].map((t) => h('th', {}, t)))),
    tbody);
  const empty = h('p', { class: 'empty', hidden: true }, 'Nobody is whitelisted.');
  const more = h('button', { type: 'button', id: 'whitelist-more', class: 'more' }, 'Load more');
  let cursor = null;
  const load = async (first) => {
    const data = await api('GET', withQuery(appPath('whitelist'), { cursor: first ? null : cursor }));
    if (!current(gen)) return;
    if (first) tbody.replaceChildren();
    for (const w of data.whitelist) tbody.append(whitelistRow(w, () => load(true)));
    cursor = data.next_cursor;
    more.hidden = cursor == null;
    empty.hidden = tbody.rows.length > 0;
    table.hidden = tbody.rows.length === 0;
  };
  more.addEventListener('click', () => act(more, () => load(false)));

  const status = h('p', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', id: 'whitelist-submit' }, 'Add');
  const form = h('form', { id: 'whitelist-add', class: 'card form inline-form' },
    h('label', { for: 'whitelist-user' }, 'User id',
      h('input', { id: 'whitelist-user', name: 'user', type: 'text', required: true, maxlength: 256, spellcheck: 'false' })),
    h('label', { for: 'whitelist-note' }, 'Note',
      h('input', { id: 'whitelist-note', name: 'note', type: 'text', maxlength: 4096 })),
    h('label', { for: 'whitelist-expires' }, 'Expires (UTC, optional)',
      h('input', { id: 'whitelist-expires', name: 'expires', type: 'datetime-local' })),
    h('div', { class: 'buttons' }, submit),
    status);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const user = form.elements.user.value.trim();
    const note = form.elements.note.value.trim();
    const expires = form.elements.expires.value;
    if (!user) return;
    const body = {};
    if (note) body.note = note;
    if (expires) {
      // datetime-local has no zone: read as UTC, like every time shown here.
      const t = new Date(`${expires}Z`);
      if (isNaN(t)) {
        showError('The expiry is not a valid date and time.');
        return;
      }
      body.expires_at = t.toISOString();
    }
    status.textContent = '';
    act(submit, async () => {
      await api('PUT', appPath('whitelist', user), body);
      form.reset();
      status.textContent = `Whitelisted ${user}.`;
      await load(true);
    });
  });

  await load(true);
  return h('div', {},
    h('h1', {}, 'Whitelist'),
    h('p', { class: 'hint' }, 'Whitelisted users always upload, without sampling or daily quota, until their entry expires. Adding an existing user replaces their entry.'),
    form, table, empty, more);
}

// -------------------------------------------------------------- config

const lines = (text) => text.split('\n').map((s) => s.trim()).filter(Boolean);
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

async function configView() {
  title('Config');
  let cfg = await api('GET', appPath('config'));
  const field = (id, name, label, attrs, help) => h('label', { for: id }, label,
    h('input', { id, name, required: true, ...attrs }), help ? h('span', { class: 'hint' }, help) : null);
  const area = (id, name, label, help) => h('label', { for: id }, label,
    h('textarea', { id, name, rows: 3, spellcheck: 'false' }), h('span', { class: 'hint' }, help));
  const status = h('p', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', id: 'config-submit' }, 'Save changes');
  const form = h('form', { id: 'config-form', class: 'card form' },
    field('config-sample-rate', 'sample_rate', 'Sample rate',
      { type: 'number', min: 0, max: 1, step: 'any' },
      'Share of users who upload on a given UTC day, 0 to 1 (0.05 = 5%).'),
    field('config-daily-quota', 'daily_quota', 'Daily quota',
      { type: 'number', min: 0, max: 1000000, step: 1 }, 'Reports per user per UTC day.'),
    field('config-retention-days', 'retention_days', 'Retention (days)',
      { type: 'number', min: 1, max: 3650, step: 1 }, 'Older reports are deleted; group counters keep their history.'),
    area('config-skip-images', 'skip_images', 'Grouping: skip frames in images',
      'One image name per line, e.g. libsystem_kernel.dylib.'),
    area('config-skip-prefixes', 'skip_prefixes', 'Grouping: skip functions starting with',
      'One prefix per line, e.g. mach_msg.'),
    h('div', { class: 'buttons' }, submit),
    status);
  const el = form.elements;
  const fill = () => {
    el.sample_rate.value = String(cfg.sample_rate);
    el.daily_quota.value = String(cfg.daily_quota);
    el.retention_days.value = String(cfg.retention_days);
    el.skip_images.value = (cfg.grouping_rules?.skip_images || []).join('\n');
    el.skip_prefixes.value = (cfg.grouping_rules?.skip_prefixes || []).join('\n');
  };
  fill();
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    // Only what changed is sent: PUT leaves the other fields alone, so two
    // people editing different settings do not undo each other.
    const body = {};
    const rate = Number(el.sample_rate.value);
    const quota = Number(el.daily_quota.value);
    const days = Number(el.retention_days.value);
    if (rate !== cfg.sample_rate) body.sample_rate = rate;
    if (quota !== cfg.daily_quota) body.daily_quota = quota;
    if (days !== cfg.retention_days) body.retention_days = days;
    const rules = cfg.grouping_rules || {};
    const images = lines(el.skip_images.value);
    const prefixes = lines(el.skip_prefixes.value);
    if (!sameList(images, rules.skip_images || []) || !sameList(prefixes, rules.skip_prefixes || [])) {
      body.grouping_rules = { skip_images: images, skip_prefixes: prefixes };
    }
    if (Object.keys(body).length === 0) {
      status.textContent = 'Nothing changed.';
      return;
    }
    status.textContent = '';
    act(submit, async () => {
      cfg = await api('PUT', appPath('config'), body);
      fill();
      status.textContent = `Saved: ${Object.keys(body).join(', ').replace(/_/g, ' ')}.`;
    });
  });
  return h('div', {},
    h('h1', {}, 'Config'),
    h('p', { class: 'hint' }, `Upload and grouping policy of ${session.app}. Changed grouping rules apply to reports grouped from then on; existing groups are not rebuilt.`),
    form);
}

// ---------------------------------------------------------------- start

$('signin').addEventListener('submit', onSignin);
$('signout').addEventListener('click', onSignout);
window.addEventListener('hashchange', route);
route();
