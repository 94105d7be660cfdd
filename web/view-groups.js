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

export async function groupsView(f, gen) {
  title('Groups');
  const filtered = isFiltered(f);
  const { table, tbody, head } = groupTable('groups', sparkWindow(f, []));
  const more = h('button', { type: 'button', id: 'groups-more', class: 'more' }, 'Load more');
  const empty = h('p', { class: 'empty', hidden: true },
    filtered ? `No stall groups of these statuses (${statusChoiceText(f.status)}) match these filters.`
      : f.status ? `No stall groups of these statuses (${statusChoiceText(f.status)}).`
        : 'No open or regressed stall groups: nothing reported yet, or everything is resolved or ignored.');
  const shown = [];
  let cursor = null;

  const load = async () => {
    const data = await api('GET', withQuery(appPath('groups'),
      { level: 1, ...f, sort: f.sort || 'stall_ms', status: statusQuery(f.status), limit: PAGE, cursor }));
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
    filtersForm(f, dims), statusLine(f), table, empty, more);
}
