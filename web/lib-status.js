// A level-1 group's status (SPEC §11.1) as the pages show it: its badge,
// what it means in words, which statuses the groups list shows, and its
// history's events read as sentences.

import { badge, h } from './lib-dom.js';
import { num, utc } from './lib-format.js';

export const STATUSES = ['open', 'regressed', 'resolved', 'ignored'];

// The list's choices of statuses, as they travel in the address
// (status=…): none means open and regressed, the ones needing attention.
export const STATUS_CHOICES = [
  ['', 'open and regressed'],
  ['all', 'every status'],
  ['open', 'open'],
  ['regressed', 'regressed'],
  ['resolved', 'resolved'],
  ['ignored', 'ignored'],
  ['resolved,ignored', 'resolved and ignored'],
];
const DEFAULT_SHOWN = 'open,regressed';

// The address's status= (absent, 'all' or statuses separated by commas)
// as the groups list's API query takes it: null for every status. An
// unknown value shows the default.
export function statusQuery(chosen) {
  if (chosen === 'all') return null;
  const picked = String(chosen || '').split(',').filter((s) => STATUSES.includes(s));
  return picked.length ? [...new Set(picked)].join(',') : DEFAULT_SHOWN;
}

// Whether the list as chosen leaves resolved or ignored groups out.
export const hidesClosed = (chosen) => {
  const q = statusQuery(chosen);
  return q != null && !(q.includes('resolved') && q.includes('ignored'));
};

// What the list shows, in words.
export function statusChoiceText(chosen) {
  const q = statusQuery(chosen);
  if (q == null) return 'every status';
  const known = STATUS_CHOICES.find(([v]) => v === q);
  if (known) return known[1];
  if (q === DEFAULT_SHOWN) return 'open and regressed';
  return q.split(',').join(', ');
}

// Open is the usual case: quiet in a list (no badge), plain on a page.
// Regressed stands out; resolved and ignored are clear but calm.
export function statusBadge(status, { quiet = true } = {}) {
  const s = status || 'open';
  if (s === 'open' && quiet) return null;
  return badge(s, `status-badge group-${s}`);
}

// What a status holds besides its name: the version, the end of an ignore.
export function statusDetail(g) {
  switch (g.status) {
    case 'resolved':
      return g.resolved_in
        ? `Resolved in ${g.resolved_in}: a report from ${g.resolved_in} or a later version reopens it as regressed.`
        : 'Resolved in any version: the next report reopens it as regressed.';
    case 'ignored':
      if (g.until) return `Ignored until ${utc(g.until)}.`;
      if (g.until_reports != null) return `Ignored for the next ${num(g.until_reports)} reports.`;
      return 'Ignored until someone reopens it.';
    case 'regressed':
      return g.resolved_in
        ? `Regressed: it was resolved in ${g.resolved_in} and came back.`
        : 'Regressed: it was resolved and came back.';
    default:
      return 'Open: not resolved or ignored.';
  }
}

const by = (e) => (e.cause === 'user' ? ' by a user' : '');

// An event of GET …/groups/{key1}/events as a sentence.
export function eventText(e) {
  switch (e.type) {
    case 'new_group':
      return e.version ? `New group: first report, in ${e.version}` : 'New group: first report';
    case 'regressed':
      return e.version ? `Regressed in ${e.version}` : 'Regressed';
    case 'spike':
      return `Spike: ${num(e.reports)} reports on ${e.day}`;
    case 'resolved':
      return `Resolved in ${e.version || 'any version'}${by(e)}`;
    case 'ignored':
      return `Ignored${by(e)}`;
    case 'open':
      if (e.cause === 'until') return 'Reopened: ignore period ended';
      if (e.cause === 'report') return 'Reopened: more reports than the ignore allowed';
      return `Reopened${by(e)}`;
    default:
      return `${e.type} (${e.status}, ${e.cause})`;
  }
}

export function eventItem(e) {
  return h('li', { class: `event event-${e.type}`, dataset: { type: e.type, status: e.status, cause: e.cause } },
    h('time', { datetime: e.at, title: e.at }, utc(e.at)),
    h('span', { class: 'event-text' }, eventText(e)));
}
