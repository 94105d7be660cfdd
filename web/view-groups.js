// #/groups: the level-1 groups, filtered, sorted and paged.

import { h, title } from './lib-dom.js';
import { PAGE, api, appPath, withQuery } from './lib-api.js';
import { act } from './lib-page.js';
import { current, hashFor } from './lib-router.js';
import { dimensions, filtersForm, isFiltered } from './lib-filters.js';
import { sparkWindow } from './lib-sparkline.js';
import { groupRow, groupTable, sparkHead } from './lib-groups.js';

export async function groupsView(f, gen) {
  title('Groups');
  const filtered = isFiltered(f);
  const { table, tbody, head } = groupTable('groups', sparkWindow(f, []));
  const more = h('button', { type: 'button', id: 'groups-more', class: 'more' }, 'Load more');
  const empty = h('p', { class: 'empty', hidden: true },
    filtered ? 'No stalls match these filters.' : 'No stalls reported yet.');
  const shown = [];
  let cursor = null;

  const load = async () => {
    const data = await api('GET', withQuery(appPath('groups'),
      { level: 1, ...f, sort: f.sort || 'stall_ms', limit: PAGE, cursor }));
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
