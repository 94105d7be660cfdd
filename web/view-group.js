// #/groups/KEY1: a level-1 group, its durations, its call tree as a flame
// graph, and its level-2 subgroups.

import { crumbs, h, title } from './lib-dom.js';
import { api, appPath, plainMessage, withQuery } from './lib-api.js';
import { hashFor } from './lib-router.js';
import { filterSummary, onlyFilters } from './lib-filters.js';
import { flameGraph } from './lib-flame.js';
import { sparkWindow } from './lib-sparkline.js';
import { groupHeader, groupRow, groupTable } from './lib-groups.js';
import { durationHistogram } from './lib-triage.js';

// The tree takes the days and the version only (SPEC §10.4); it reads the
// retained reports, so a failure leaves the rest of the page standing.
async function treeSection(key1, f) {
  const q = { from: f.from, to: f.to, version: f.version };
  try {
    const tree = await api('GET', withQuery(appPath('groups', key1, 'tree'), q));
    if (!tree.reports) return h('p', { class: 'empty', id: 'flame-empty' }, 'No retained report to draw the call tree from.');
    return flameGraph(tree);
  } catch (e) {
    return h('p', { class: 'error', id: 'flame-error' }, plainMessage(e));
  }
}

export async function groupView(key1, f) {
  title(`Group ${key1}`);
  const [data, tree] = await Promise.all([
    api('GET', withQuery(appPath('groups', key1), onlyFilters(f))), treeSection(key1, f)]);
  // The subgroups share their group's axis: they hold its reports.
  const win = sparkWindow(f, [data.group.daily]);
  const { table, tbody } = groupTable('subgroups', win);
  for (const s of data.subgroups) {
    tbody.append(groupRow(s, hashFor(['groups', key1, s.key], f), { key2: s.key }, win));
  }
  const narrowed = f.os_version != null || f.device != null || f.kind != null;
  return h('div', {},
    crumbs(['Groups', hashFor(['groups'], f)], [key1]),
    h('h1', {}, 'Group'),
    filterSummary(f, ['groups', key1]),
    groupHeader(data.group, 1, win),
    h('h2', {}, 'Durations'),
    h('div', { class: 'card' }, durationHistogram(data.group.duration_hist),
      h('p', { class: 'hint' }, 'Reports per duration bucket; reports without a duration are in none. The highlighted bucket holds the 90th percentile.')),
    h('h2', {}, 'Where the time goes'),
    narrowed ? h('p', { class: 'hint' }, 'The call tree follows the days and version chosen, not the OS version, device or kind.') : null,
    tree,
    h('h2', {}, `Subgroups (${data.subgroups.length})`),
    data.subgroups.length ? table : h('p', { class: 'empty' }, 'No subgroups with reports.'));
}
