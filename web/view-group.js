// #/groups/KEY1: a level-1 group, its status and what changes it, its
// durations, its call tree as a flame graph, its level-2 subgroups and
// its history.

import { crumbs, h, title } from './lib-dom.js';
import { api, appPath, withQuery } from './lib-api.js';
import { hashFor } from './lib-router.js';
import { dimensions, filterSummary, onlyFilters } from './lib-filters.js';
import { groupEvents, lifecycleParts } from './lib-lifecycle.js';
import { treeSection } from './lib-flame.js';
import { sparkWindow } from './lib-sparkline.js';
import { groupHeader, groupRow, groupTable } from './lib-groups.js';
import { breakdownSection } from './lib-breakdown.js';
import { culpritName, durationsSection, newestFirst } from './lib-triage.js';

export async function groupView(key1, f) {
  title(`Group ${key1}`);
  const [data, tree, breakdown, dims, events] = await Promise.all([
    api('GET', withQuery(appPath('groups', key1), onlyFilters(f))), treeSection(key1, f),
    breakdownSection(key1, f, ['groups', key1]), dimensions(), groupEvents(key1)]);
  // The tab reads as the page's title does: by the culprit.
  title(culpritName(data.group));
  // The versions to resolve in: every one with reports, newest first.
  const status = lifecycleParts(key1, data.group, newestFirst(dims.versions.map((d) => d.value)), events);
  // The subgroups share their group's axis: they hold its reports.
  const win = sparkWindow(f, [data.group.daily]);
  const { table, tbody } = groupTable('subgroups', win);
  for (const s of data.subgroups) {
    tbody.append(groupRow(s, hashFor(['groups', key1, s.key], f), { key2: s.key }, win, false, f));
  }
  return h('div', {},
    crumbs(['Groups', hashFor(['groups'], f)], [key1]),
    h('div', { class: 'title-row' }, h('h1', {}, 'Group'), status.badge),
    status.panel,
    filterSummary(f, ['groups', key1]),
    groupHeader(data.group, 1, win, f),
    breakdown,
    durationsSection(data.group.duration_hist),
    h('h2', {}, 'Where the time goes'),
    tree,
    h('h2', {}, `Subgroups (${data.subgroups.length})`),
    data.subgroups.length ? table : h('p', { class: 'empty' }, 'No subgroups with reports.'),
    status.history);
}
