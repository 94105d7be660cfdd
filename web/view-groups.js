// #/groups: the level-1 groups, filtered, sorted and paged; open and
// regressed ones unless the address asks for other statuses.

import { h, title } from './lib-dom.js';
import { PAGE, api, appPath, withQuery } from './lib-api.js';
import { act } from './lib-page.js';
import { current, hashFor } from './lib-router.js';
import { dimensions, filtersForm, isFiltered } from './lib-filters.js';
import { sparkWindow } from './lib-sparkline.js';
import { groupRow, groupTable, sparkHead } from './lib-groups.js';
import { hidesClosed, statusChoiceText, statusQuery } from './lib-status.js';
import { num } from './lib-format.js';
import { culpritName, stallTime } from './lib-triage.js';

// Which statuses are listed, and the one click that shows the others
// (or goes back to the default).
function statusLine(f) {
  const q = statusQuery(f.status);
  const shown = q == null ? 'groups of every status' : `${statusChoiceText(f.status)} groups`;
  const link = hidesClosed(f.status)
    ? h('a', { href: hashFor(['groups'], { ...f, status: 'all' }), id: 'groups-show-closed', class: 'toggle-link' },
      'Show resolved and ignored')
    : h('a', { href: hashFor(['groups'], { ...f, status: null }), id: 'groups-hide-closed', class: 'toggle-link' },
      'Hide resolved and ignored');
  return h('p', { class: 'status-line', id: 'groups-status-line' },
    h('span', {}, `Showing ${shown}. `), link);
}

// The loaded groups gathered under their culprit (SPEC §10.5): groups
// whose stacks differ below one culprit are one problem to a reader.
// Client side, over what the list loaded: reports and stall time summed,
// users the largest of the groups' (the same user may be in several).
function byCulprit(groups, f) {
  const gathered = new Map();
  for (const g of groups) {
    // A group without a culprit stands alone.
    const id = g.culprit ? `c:${g.culprit.frame}` : `g:${g.key}`;
    if (!gathered.has(id)) gathered.set(id, { first: g, groups: [] });
    gathered.get(id).groups.push(g);
  }
  const rows = [...gathered.values()].map(({ first, groups: gs }) => ({
    first, groups: gs,
    reports: gs.reduce((a, g) => a + (g.reports || 0), 0),
    users: Math.max(0, ...gs.map((g) => g.users || 0)),
    stall: gs.reduce((a, g) => a + (g.stall_ms || 0), 0),
  }));
  const tbody = h('tbody', {}, rows.map((r) => h('tr', { dataset: { culprit: r.first.culprit?.frame ?? '', groups: String(r.groups.length) } },
    h('td', { class: 'frames' },
      h('div', { class: 'group-title' }, h('span', { class: 'culprit' }, h('span', { class: 'fn' }, culpritName(r.first)))),
      h('ul', { class: 'culprit-groups' }, r.groups.map((g) => h('li', {},
        h('a', { href: hashFor(['groups', g.key], f), dataset: { key1: g.key } }, g.frames?.[0] ?? g.key),
        h('span', { class: 'muted' }, ` ${num(g.reports)} reports`))))),
    h('td', { class: 'num', dataset: { label: 'Groups' } }, num(r.groups.length)),
    h('td', { class: 'num', dataset: { label: 'Reports' } }, num(r.reports)),
    h('td', { class: 'num', dataset: { label: 'Users (most of one group)' } }, num(r.users)),
    h('td', { class: 'num', dataset: { label: 'Stall time' } }, stallTime(r.stall)))));
  return h('table', { id: 'by-culprit', class: 'data groups cards' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Culprit · its groups (innermost frame)'),
      h('th', { class: 'num' }, 'Groups'), h('th', { class: 'num' }, 'Reports'),
      h('th', { class: 'num', title: 'the most of any one of its groups: a user may be in several' }, 'Users (max)'),
      h('th', { class: 'num' }, 'Stall time'))),
    tbody);
}

// The list's API query from the address: a search of fewer than 3
// characters is not sent (the API refuses it); by= is the page's own.
function listQuery(f) {
  const { by, q, ...rest } = f;
  return { level: 1, ...rest, q: q && q.trim().length >= 3 ? q.trim() : null,
    sort: f.sort || 'stall_ms', status: statusQuery(f.status) };
}

// One group per row, or the groups gathered by culprit: a switch kept in
// the address (by=culprit).
function viewLine(f) {
  const gathering = f.by === 'culprit';
  return h('p', { class: 'status-line', id: 'groups-view-line' },
    h('span', {}, gathering ? 'Gathered by culprit. ' : 'One row per group. '),
    h('a', { href: hashFor(['groups'], { ...f, by: gathering ? null : 'culprit' }), id: 'groups-by-culprit', class: 'toggle-link' },
      gathering ? 'List every group' : 'Gather by culprit'));
}

export async function groupsView(f, gen) {
  title(f.by === 'culprit' ? 'Stall groups by culprit' : 'Stall groups');
  const gathering = f.by === 'culprit';
  const filtered = isFiltered(f);
  const { table, tbody, head } = groupTable('groups', sparkWindow(f, []));
  const more = h('button', { type: 'button', id: 'groups-more', class: 'more' }, 'Load more');
  const empty = h('p', { class: 'empty', hidden: true },
    f.q ? `No stall groups of these statuses (${statusChoiceText(f.status)}) have a frame whose function, file or image contains “${f.q}”.`
      : filtered ? `No stall groups of these statuses (${statusChoiceText(f.status)}) match these filters.`
      : f.status ? `No stall groups of these statuses (${statusChoiceText(f.status)}).`
        : 'No open or regressed stall groups: nothing reported yet, or everything is resolved or ignored.');
  const shown = [];
  let cursor = null;

  const gatheredBox = h('div', { id: 'by-culprit-box', hidden: !gathering });
  const load = async () => {
    const data = await api('GET', withQuery(appPath('groups'), { ...listQuery(f), limit: PAGE, cursor }));
    if (!current(gen)) return;
    shown.push(...data.groups);
    if (gathering) {
      gatheredBox.replaceChildren(
        h('p', { class: 'hint', id: 'by-culprit-note' },
          `Gathers the ${num(shown.length)} groups loaded so far under their culprit${data.next_cursor != null ? ' (load more to gather more)' : ''}: reports and stall time are summed, users are the most of any one group.`),
        byCulprit(shown, f));
    }
    // A later page may hold older days: every row is redrawn on one axis.
    const win = sparkWindow(f, shown.map((g) => g.daily));
    head.textContent = sparkHead(win);
    tbody.replaceChildren(...shown.map((g) =>
      groupRow(g, hashFor(['groups', g.key], f), { key1: g.key }, win, true, f)));
    cursor = data.next_cursor;
    more.hidden = cursor == null;
    empty.hidden = tbody.rows.length > 0;
    table.hidden = tbody.rows.length === 0 || gathering;
    gatheredBox.hidden = tbody.rows.length === 0 || !gathering;
  };
  more.addEventListener('click', () => act(more, load));
  const [dims] = await Promise.all([dimensions(f.from, f.to), load()]);
  return h('div', {},
    h('h1', {}, 'Stall groups'),
    h('p', { class: 'hint' }, filtered
      ? 'Counts are summed over the matching UTC days.'
      : 'Counts are all-time totals; choose days or filters to narrow them.'),
    filtersForm(f, dims), statusLine(f), viewLine(f), table, gatheredBox, empty, more);
}
