// #/groups/KEY1/KEY2: a level-2 group, its durations, its call tree as a
// flame graph, and its reports, newest first, paged.

import { crumbs, h, title } from './lib-dom.js';
import { PAGE, api, appPath, withQuery } from './lib-api.js';
import { act } from './lib-page.js';
import { current, hashFor } from './lib-router.js';
import { filterSummary, isFiltered, onlyFilters } from './lib-filters.js';
import { sparkWindow } from './lib-sparkline.js';
import { groupHeader } from './lib-groups.js';
import { treeSection } from './lib-flame.js';
import { breakdownSection } from './lib-breakdown.js';
import { culpritName, durationsSection } from './lib-triage.js';
import { reportRow } from './lib-reports.js';

export async function groupReportsView(key1, key2, f, gen) {
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
    for (const r of data.reports) tbody.append(reportRow(r, f, true));
    cursor = data.next_cursor;
    more.hidden = cursor == null;
  };
  more.addEventListener('click', () => act(more, load));
  // The level-2 group's own counters come with its parent's detail.
  const [detail, tree, breakdown] = await Promise.all([api('GET', withQuery(appPath('groups', key1), carried)),
    treeSection(key1, f, key2), breakdownSection(key1, f, ['groups', key1, key2], key2), load()]);
  const sub = detail.subgroups.find((s) => s.key === key2);
  title(`${culpritName(sub || detail.group)} (subgroup)`);
  return h('div', {},
    crumbs(['Groups', hashFor(['groups'], f)], [key1, hashFor(['groups', key1], f)], [key2]),
    h('h1', {}, 'Subgroup'),
    filterSummary(f, ['groups', key1, key2]),
    sub ? groupHeader(sub, 2, sparkWindow(f, [sub.daily]), f) : h('p', { class: 'mono' }, key2),
    breakdown,
    sub ? durationsSection(sub.duration_hist) : null,
    h('h2', {}, 'Where the time goes'),
    tree,
    h('h2', {}, 'Reports, newest first'),
    tbody.rows.length ? table : h('p', { class: 'empty' },
      isFiltered(f) ? 'No stored reports match these filters.' : 'No stored reports (they may have been purged by retention).'),
    more);
}
