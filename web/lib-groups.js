// A group as the group pages draw it: a row of a groups table (the list,
// a group's subgroups) and the header of a group's own page.

import { clickable, h } from './lib-dom.js';
import { identities, num, timeEl } from './lib-format.js';
import { sparkline } from './lib-sparkline.js';

export function groupRow(g, href, dataset, win) {
  return clickable(h('tr', { dataset },
    h('td', { class: 'frames' }, h('a', { href }, culprit(g), identities(g.frames))),
    h('td', { class: 'num' }, num(g.reports)),
    h('td', { class: 'num' }, num(g.users)),
    h('td', {}, timeEl(g.first_seen)),
    h('td', {}, timeEl(g.last_seen)),
    h('td', { class: 'spark-cell' }, sparkline(g.daily, ...win))), href);
}

// The group's title (SPEC §10.5): its innermost frame in the app's own
// code, above the frames it is keyed by; nothing when it has none.
function culprit(g) {
  return g.culprit ? h('span', { class: 'culprit' }, g.culprit.frame) : null;
}

export const sparkHead = (win) => `Per UTC day, ${win[0]} → ${win[1]}`;

export function groupTable(id, win) {
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

export function groupHeader(g, level, win) {
  return h('div', { class: 'card group-head' },
    h('div', { class: 'frames' }, culprit(g), identities(g.frames)),
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
