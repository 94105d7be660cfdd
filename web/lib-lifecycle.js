// A group page's status (SPEC §11.1): the badge by its title, the
// actions that change it — resolve in a version, ignore for a while or
// for a number of reports, reopen — and its history, newest first. An
// action updates all three in place (PATCH …/groups/{key1}, then GET
// …/events), without reloading the page.

import { h } from './lib-dom.js';
import { api, appPath } from './lib-api.js';
import { act } from './lib-page.js';
import { eventItem, statusBadge, statusDetail } from './lib-status.js';

const HOUR = 3600000;

// The ignore choices: [value, label, a time span in ms or a report count].
const IGNORE_FOR = [
  ['1h', 'for 1 hour', { ms: HOUR }],
  ['24h', 'for 24 hours', { ms: 24 * HOUR }],
  ['7d', 'for 7 days', { ms: 7 * 24 * HOUR }],
  ['30d', 'for 30 days', { ms: 30 * 24 * HOUR }],
  ['10r', 'for the next 10 reports', { reports: 10 }],
  ['100r', 'for the next 100 reports', { reports: 100 }],
  ['1000r', 'for the next 1,000 reports', { reports: 1000 }],
  ['ever', 'until reopened by hand', {}],
];

function ignoreBody(choice) {
  const [, , span] = IGNORE_FOR.find(([v]) => v === choice) || IGNORE_FOR[0];
  const body = { status: 'ignored' };
  // To the second, in UTC: RFC 3339 as the API takes it.
  if (span.ms) body.until = new Date(Date.now() + span.ms).toISOString().replace(/\.\d+Z$/, 'Z');
  if (span.reports) body.until_reports = span.reports;
  return body;
}

const labelled = (id, label, control) => h('label', { for: id }, label, control);

function resolveForm(versions, onSubmit) {
  // The newest version first and chosen; '' resolves in any version.
  const pick = h('select', { id: 'resolve-version', name: 'version' },
    versions.map((v, i) => h('option', { value: v, selected: i === 0 }, v)),
    h('option', { value: '' }, 'any version'));
  const button = h('button', { type: 'submit', id: 'group-resolve' }, 'Resolve');
  const form = h('form', { id: 'resolve-form', class: 'action-form' },
    labelled('resolve-version', 'Resolved in version', pick), button);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const body = { status: 'resolved' };
    if (pick.value) body.resolved_in = pick.value;
    onSubmit(button, body);
  });
  return form;
}

function ignoreForm(onSubmit) {
  const pick = h('select', { id: 'ignore-for', name: 'for' },
    IGNORE_FOR.map(([v, label]) => h('option', { value: v }, label)));
  const button = h('button', { type: 'submit', id: 'group-ignore', class: 'secondary' }, 'Ignore');
  const form = h('form', { id: 'ignore-form', class: 'action-form' },
    labelled('ignore-for', 'Ignore', pick), button);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    onSubmit(button, ignoreBody(pick.value));
  });
  return form;
}

// What a change did, for the line under the actions.
function saidOf(s) {
  if (s.status === 'resolved') return `Resolved in ${s.resolved_in || 'any version'}.`;
  if (s.status === 'ignored') return 'Ignored.';
  return 'Reopened.';
}

// The history of KEY1: GET …/events' list, newest first.
export const groupEvents = async (key1) => (await api('GET', appPath('groups', key1, 'events'))).events;

// KEY1's status parts for its page, from GROUP (its GET reply's group),
// VERSIONS (the app's, newest first) and EVENTS (groupEvents'):
// {badge, panel, history}.
export function lifecycleParts(key1, group, versions, events) {
  let state = group;
  const badgeBox = h('span', { id: 'group-status', class: 'status-box' });
  const detail = h('p', { id: 'group-status-detail', class: 'status-detail' });
  const note = h('p', { id: 'group-status-note', class: 'form-status', 'aria-live': 'polite' });
  const list = h('ol', { id: 'group-history', class: 'history' });
  const none = h('p', { class: 'empty', hidden: true }, 'No changes yet.');
  const reopen = h('button', { type: 'button', id: 'group-reopen', class: 'secondary' }, 'Reopen');

  const show = () => {
    badgeBox.replaceChildren(statusBadge(state.status, { quiet: false }));
    badgeBox.dataset.status = state.status || 'open';
    detail.textContent = statusDetail(state);
    reopen.hidden = (state.status || 'open') === 'open';
  };
  const showHistory = (shown) => {
    list.replaceChildren(...shown.map(eventItem));
    none.hidden = shown.length > 0;
    list.hidden = shown.length === 0;
  };
  const change = (button, body) => act(button, async () => {
    note.textContent = '';
    state = await api('PATCH', appPath('groups', key1), body);
    show();
    note.textContent = saidOf(state);
    showHistory(await groupEvents(key1));
  });
  reopen.addEventListener('click', () => change(reopen, { status: 'open' }));

  show();
  showHistory(events);
  const panel = h('div', { class: 'card status-actions', id: 'group-actions' },
    detail,
    h('div', { class: 'actions' }, resolveForm(versions, change), ignoreForm(change),
      h('div', { class: 'action-form' }, reopen)),
    note,
    h('p', { class: 'hint' },
      'A resolved group that gets a report from its version or a later one becomes regressed (any report, resolved in any version); older versions leave it resolved. An ignored group reopens when its time or its reports run out.'));
  const history = [h('h2', {}, 'History'), h('div', { class: 'card history-box' }, list, none,
    h('p', { class: 'hint' }, 'Newest first: new group, spikes, regressions and every change of status.'))];
  return { badge: badgeBox, panel, history };
}
