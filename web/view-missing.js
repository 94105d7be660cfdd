// #/missing: the images frames fall in that have no symbols, the app's
// own first, then the system's.

import { h, title } from './lib-dom.js';
import { PAGE, api, appPath, withQuery } from './lib-api.js';
import { imageName, num, timeEl } from './lib-format.js';
import { act } from './lib-page.js';
import { current } from './lib-router.js';

// One ranked list of GET …/dsyms/missing?images=WHICH, paged by its cursor.
// An image reads by its file name (the on-device path on hover); its UUID
// wraps on a phone rather than scrolling, the whole of it on hover; the
// app versions its waiting reports came from, newest first.
async function missingSection(which, gen) {
  const id = which === 'app' ? 'missing' : 'missing-system';
  const tbody = h('tbody');
  const table = h('table', { id, class: 'data missing cards' },
    h('thead', {}, h('tr', {},
      h('th', {}, 'UUID'), h('th', {}, 'Image'), h('th', {}, 'Arch'),
      h('th', { class: 'num' }, 'Affected reports'), h('th', {}, 'Last seen (UTC)'), h('th', {}, 'App versions'))),
    tbody);
  const empty = h('p', { class: 'empty', hidden: true }, which === 'app'
    ? 'Nothing missing: every app image that frames fall in has a debug file.'
    : 'No system image lacks symbols.');
  const more = h('button', { type: 'button', id: `${id}-more`, class: 'more' }, 'More');
  let cursor = null;
  const load = async () => {
    const data = await api('GET', withQuery(appPath('dsyms', 'missing'), { images: which, limit: PAGE, cursor }));
    if (!current(gen)) return;
    for (const m of data.missing) {
      tbody.append(h('tr', { dataset: { uuid: m.uuid } },
        h('td', { class: 'mono uuid', title: m.uuid, dataset: { label: 'UUID' } }, m.uuid),
        h('td', { class: 'mono path', dataset: { label: 'Image' } }, imageName(m.path ?? m.name, 'image-name')),
        h('td', { class: 'nowrap', dataset: { label: 'Arch' } }, m.arch ?? '—'),
        h('td', { class: 'num', dataset: { label: 'Reports' } }, num(m.reports)),
        h('td', { dataset: { label: 'Last seen' } }, timeEl(m.last_seen)),
        h('td', { class: 'app-versions', dataset: { label: 'Versions' } }, m.app_versions.length ? m.app_versions.join(', ') : '—')));
    }
    cursor = data.next_cursor;
    more.hidden = cursor == null;
    empty.hidden = tbody.rows.length > 0;
    table.hidden = tbody.rows.length === 0;
  };
  more.addEventListener('click', () => act(more, load));
  await load();
  return [table, empty, more];
}

export async function missingView(gen) {
  title('Missing dSYMs');
  const [app, system] = await Promise.all([missingSection('app', gen), missingSection('system', gen)]);
  return h('div', {},
    h('h1', {}, 'Missing dSYMs'),
    h('p', { class: 'hint' },
      'The app’s own images that frames of stored reports fall in and that have no debug file, most affected first. ',
      'Upload them to ', h('code', {}, `POST ${appPath('dsyms')}`),
      ' with the upload token; waiting reports are re-symbolized within seconds.'),
    app,
    h('h2', {}, 'System images'),
    h('p', { class: 'hint' },
      'Libraries of the OS: they do not keep reports waiting for symbols. ',
      'Load their symbols once for every app with ', h('code', {}, 'stallscope system-symbols import DIR'),
      ' (a folder of extracted system frameworks).'),
    system);
}
