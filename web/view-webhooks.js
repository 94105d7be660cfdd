// #/webhooks: where the app's alerts go (SPEC §11.2): the webhooks with
// their events and format, a form that adds (or replaces) one, and per
// webhook a test send, delete, and its last delivery attempts with their
// errors.

import { badge, h, title } from './lib-dom.js';
import { api, appPath, request } from './lib-api.js';
import { timeEl } from './lib-format.js';
import { act, showError } from './lib-page.js';
import { current } from './lib-router.js';

const EVENTS = [
  ['new_group', 'New group', 'a level-1 group’s first report'],
  ['regressed', 'Regressed', 'a resolved group gets a report from its version or a later one'],
  ['spike', 'Spike', 'a group’s reports on a day reach 10 and 3 × its daily mean of the week before'],
];
const eventName = (type) => (EVENTS.find(([v]) => v === type) || [type, type])[1];
const SHOWN_DELIVERIES = 10; // the newest; the rest behind a button
const RESULTS = { delivered: 'ok', failed: 'warn', gave_up: 'bad' };

function deliveryRow(d) {
  return h('tr', { dataset: { eventId: d.event_id, type: d.type, result: d.result } },
    h('td', { dataset: { label: 'Time' } }, timeEl(d.at)),
    h('td', { dataset: { label: 'Event' } }, d.type === 'test' ? 'test' : eventName(d.type)),
    h('td', { class: 'num', dataset: { label: 'Attempt' } }, String(d.attempt ?? '—')),
    h('td', { dataset: { label: 'Result' } }, badge(d.result.replace('_', ' '), `delivery-${RESULTS[d.result] || 'warn'}`)),
    h('td', { class: 'num', dataset: { label: 'HTTP' } }, d.status ? String(d.status) : '—'),
    h('td', { class: 'delivery-error', dataset: { label: 'Error' } }, d.error || ''));
}

// The last attempts of webhook NAME, newest first; redrawn by refresh().
function deliveriesBox(name) {
  const tbody = h('tbody');
  const table = h('table', { class: 'data deliveries cards' },
    h('thead', {}, h('tr', {}, ['Time (UTC)', 'Event', 'Attempt', 'Result', 'HTTP status', 'Error']
      .map((t) => h('th', { class: t === 'Attempt' || t === 'HTTP status' ? 'num' : null }, t)))),
    tbody);
  const empty = h('p', { class: 'empty' }, 'No delivery attempts yet.');
  const all = h('button', { type: 'button', class: 'more deliveries-all', hidden: true }, '');
  let rows = [];
  let expanded = false;
  const draw = () => {
    tbody.replaceChildren(...(expanded ? rows : rows.slice(0, SHOWN_DELIVERIES)).map(deliveryRow));
    table.hidden = rows.length === 0;
    empty.hidden = rows.length > 0;
    all.hidden = expanded || rows.length <= SHOWN_DELIVERIES;
    all.textContent = `Show all ${rows.length}`;
  };
  all.addEventListener('click', () => { expanded = true; draw(); });
  const refresh = async () => {
    rows = (await api('GET', appPath('webhooks', name, 'deliveries'))).deliveries;
    draw();
  };
  return { el: h('div', { class: 'deliveries-box' }, h('h3', {}, 'Last deliveries'), table, empty, all), refresh };
}

async function webhookCard(w, reload) {
  const log = deliveriesBox(w.name);
  const result = h('p', { class: 'test-result', 'aria-live': 'polite' });
  const test = h('button', { type: 'button', class: 'webhook-test' }, 'Send test');
  test.addEventListener('click', () => act(test, async () => {
    result.textContent = '';
    result.className = 'test-result';
    try {
      const r = await api('POST', appPath('webhooks', w.name, 'test'));
      result.dataset.delivered = String(r.delivered);
      result.classList.add(r.delivered ? 'ok' : 'bad');
      result.textContent = r.delivered
        ? `Delivered: the receiver answered ${r.status}.`
        : `Not delivered${r.status ? ` (HTTP ${r.status})` : ''}: ${r.error || 'no reason given'}`;
    } finally {
      await log.refresh();
    }
  }));
  const del = h('button', { type: 'button', class: 'webhook-delete danger' }, 'Delete');
  del.addEventListener('click', () => {
    if (!window.confirm(`Delete the webhook “${w.name}”? Alerts stop going to ${w.url}.`)) return;
    act(del, async () => {
      try {
        await api('DELETE', appPath('webhooks', w.name));
      } finally {
        await reload(); // also after a 404: someone else removed it
      }
    });
  });
  const row = (label, value) => [h('dt', {}, label), h('dd', {}, value)];
  await log.refresh();
  return h('section', { class: 'card webhook', dataset: { name: w.name } },
    h('div', { class: 'title-row' }, h('h2', { class: 'webhook-name' }, w.name),
      badge(w.format, 'kind'), h('span', { class: 'spacer' }), test, del),
    h('dl', { class: 'meta' },
      row('URL', h('span', { class: 'mono webhook-url' }, w.url)),
      row('Events', h('span', { class: 'webhook-events' }, w.events.map(eventName).join(', '))),
      row('Format', w.format === 'slack' ? 'Slack ({"text": …})' : 'JSON'),
      row('Added', timeEl(w.created_at)),
      row('Changed', timeEl(w.updated_at))),
    result, log.el);
}

function addForm(onAdded) {
  const field = (id, name, label, attrs) => h('label', { for: id }, label,
    h('input', { id, name, required: true, spellcheck: 'false', ...attrs }));
  const status = h('p', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', id: 'webhook-submit' }, 'Save webhook');
  const form = h('form', { id: 'webhook-add', class: 'card form' },
    field('webhook-name', 'name', 'Name', { type: 'text', maxlength: 64, pattern: '[A-Za-z0-9._\\-]{1,64}',
      title: '1 to 64 letters, digits, “.”, “_” or “-”', placeholder: 'team-alerts' }),
    field('webhook-url', 'url', 'URL', { type: 'url', placeholder: 'https://hooks.example.com/stallscope' }),
    field('webhook-secret', 'secret', 'Secret', { type: 'password', autocomplete: 'new-password' }),
    h('span', { class: 'hint' }, 'Signs every request (X-Stallscope-Signature: sha256=HMAC of the body). It is never shown again.'),
    h('fieldset', { class: 'checks', id: 'webhook-events' }, h('legend', {}, 'Events'),
      EVENTS.map(([v, label, why]) => h('label', { class: 'check', title: why },
        h('input', { type: 'checkbox', name: 'events', value: v, checked: true }), label))),
    h('label', { for: 'webhook-format' }, 'Format',
      h('select', { id: 'webhook-format', name: 'format' },
        h('option', { value: 'json' }, 'JSON'), h('option', { value: 'slack' }, 'Slack'))),
    h('div', { class: 'buttons' }, submit),
    status);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const el = form.elements;
    const name = el.name.value.trim();
    const events = [...form.querySelectorAll('input[name="events"]:checked')].map((c) => c.value);
    if (events.length === 0) {
      showError('Choose at least one event.');
      return;
    }
    const body = { url: el.url.value.trim(), secret: el.secret.value, events, format: el.format.value };
    status.textContent = '';
    act(submit, async () => {
      const resp = await request('PUT', appPath('webhooks', name), body);
      form.reset();
      status.textContent = resp.status === 201 ? `Added ${name}.` : `Replaced ${name}.`;
      await onAdded();
    });
  });
  return form;
}

export async function webhooksView(gen) {
  title('Webhooks');
  const list = h('div', { id: 'webhooks', class: 'webhooks' });
  const empty = h('p', { class: 'empty', hidden: true }, 'No webhooks: alerts go nowhere yet.');
  const load = async () => {
    const data = await api('GET', appPath('webhooks'));
    const cards = await Promise.all(data.webhooks.map((w) => webhookCard(w, load)));
    if (!current(gen)) return;
    list.replaceChildren(...cards);
    empty.hidden = cards.length > 0;
  };
  await load();
  return h('div', {},
    h('h1', {}, 'Webhooks'),
    h('p', { class: 'hint' },
      'Alerts are POSTed to these URLs as they happen: a new group, a regression, a spike. ',
      'Each is retried for 24 hours until the receiver answers 2xx; receivers deduplicate by event_id. ',
      'Saving a name that exists replaces that webhook.'),
    list, empty,
    h('h2', {}, 'Add a webhook'),
    addForm(load));
}
