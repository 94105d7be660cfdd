// #/users?user_id=U&from=&to=: one user's stored reports, newest first
// (GET /api/v1/apps/{app}/reports?user_id=, SPEC §10.7), for "this user
// says the app froze": each row opens the report's stack.

import { h, title } from './lib-dom.js';
import { PAGE, api, appPath, withQuery } from './lib-api.js';
import { act } from './lib-page.js';
import { current, hashFor } from './lib-router.js';
import { reportRow } from './lib-reports.js';

function userForm(f) {
  const input = (id, name, label, type, attrs) => h('label', { for: id }, label,
    h('input', { id, name, type, value: f[name] || '', ...attrs }));
  const form = h('form', { id: 'user-form', class: 'filters' },
    input('user-id', 'user_id', 'User id', 'text', { required: true, spellcheck: 'false', maxlength: 256 }),
    input('user-from', 'from', 'From (UTC day)', 'date'),
    input('user-to', 'to', 'To (UTC day)', 'date'),
    h('div', { class: 'buttons' }, h('button', { type: 'submit', id: 'user-find' }, 'Find reports')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const chosen = {};
    for (const k of ['user_id', 'from', 'to']) if (form.elements[k].value.trim()) chosen[k] = form.elements[k].value.trim();
    location.hash = hashFor(['users'], chosen);
  });
  return form;
}

export async function userView(f, gen) {
  title(f.user_id ? `Reports of ${f.user_id}` : 'Find a user’s reports');
  const head = [h('h1', {}, 'Find a user’s reports'), userForm(f),
    h('p', { class: 'hint' }, 'Every stored report of one user id, newest first: for “the app froze for me”. Reports older than the retention are gone.')];
  if (!f.user_id) return h('div', {}, head);
  const tbody = h('tbody');
  const table = h('table', { id: 'user-reports', class: 'data cards', dataset: { userId: f.user_id } },
    h('thead', {}, h('tr', {}, ['Received (UTC)', 'App version', 'OS version', 'Device', 'Kind', 'Duration', 'Symbols']
      .map((t) => h('th', { class: t === 'Duration' ? 'num' : null }, t)))),
    tbody);
  const empty = h('p', { class: 'empty', hidden: true, id: 'user-reports-empty' }, `No stored reports of “${f.user_id}” on these days.`);
  const more = h('button', { type: 'button', id: 'user-reports-more', class: 'more' }, 'Load more');
  let cursor = null;
  const load = async () => {
    const data = await api('GET', withQuery(appPath('reports'),
      { user_id: f.user_id, from: f.from, to: f.to, limit: PAGE, cursor }));
    if (!current(gen)) return;
    for (const r of data.reports) tbody.append(reportRow(r, {}, false));
    cursor = data.next_cursor;
    more.hidden = cursor == null;
    empty.hidden = tbody.rows.length > 0;
    table.hidden = tbody.rows.length === 0;
  };
  more.addEventListener('click', () => act(more, load));
  await load();
  return h('div', {}, head, table, empty, more);
}
