// #/whitelist: the users who always upload; add, replace and remove them.

import { badge, h, title } from './lib-dom.js';
import { api, appPath, withQuery } from './lib-api.js';
import { timeEl } from './lib-format.js';
import { act, showError } from './lib-page.js';
import { current } from './lib-router.js';

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

export async function whitelistView(gen) {
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
