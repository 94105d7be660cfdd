// #/missing: the images frames fall in that have no symbols, the app's
// own first, then the system's; for an Android app (SPEC §13) the builds
// whose reports wait for a methodMapping.txt, and the mappings uploaded.

import { h, title } from './lib-dom.js';
import { PAGE, api, appPath, withQuery } from './lib-api.js';
import { imageName, num, timeEl } from './lib-format.js';
import { appDimensions, isAndroid } from './lib-platform.js';
import { act } from './lib-page.js';
import { current } from './lib-router.js';

// A build's missing methodMapping.txt names its version and build: the
// mapping is per build, and no UUID is in a Matrix report.
const isMapping = (m) => m.kind === 'method_mapping';
// A missing mapping's row names the versions of its waiting reports; an
// uploaded one its own.
const versionOf = (m) => m.app_version ?? (m.app_versions?.length ? m.app_versions.join(', ') : null);
const buildOf = (m) => `${versionOf(m) ?? '—'} (build ${m.build ?? '—'})`;

function missingRow(m) {
  const mapping = isMapping(m);
  return h('tr', { dataset: { uuid: m.uuid, kind: m.kind ?? 'image', ...(mapping ? { version: versionOf(m), build: m.build } : {}) } },
    h('td', { class: 'mono uuid', title: m.uuid, dataset: { label: 'UUID' } }, m.uuid ?? '—'),
    h('td', { class: 'mono path', dataset: { label: 'Image' } },
      mapping ? h('span', { class: 'image-name' }, m.name) : imageName(m.path ?? m.name, 'image-name')),
    h('td', { class: 'nowrap', dataset: { label: 'Arch' } }, mapping ? 'Java' : m.arch ?? '—'),
    h('td', { class: 'num', dataset: { label: 'Reports' } }, num(m.reports)),
    h('td', { dataset: { label: 'Last seen' } }, timeEl(m.last_seen)),
    h('td', { class: 'app-versions', dataset: { label: 'Versions' } },
      mapping ? buildOf(m) : m.app_versions?.length ? m.app_versions.join(', ') : '—'));
}

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
    for (const m of data.missing) tbody.append(missingRow(m));
    cursor = data.next_cursor;
    more.hidden = cursor == null;
    empty.hidden = tbody.rows.length > 0;
    table.hidden = tbody.rows.length === 0;
  };
  more.addEventListener('click', () => act(more, load));
  await load();
  return [table, empty, more];
}

// The method mappings uploaded (GET …/method-mappings), newest first.
async function mappingsSection() {
  const data = await api('GET', appPath('method-mappings'));
  const rows = data.mappings || [];
  return [h('h2', {}, 'Method mappings uploaded'),
    rows.length ? h('table', { id: 'mappings', class: 'data missing cards' },
      h('thead', {}, h('tr', {}, ['Version (build)', 'Methods', 'Size', 'Uploaded (UTC)', 'UUID'].map((t, i) =>
        h('th', { class: i === 1 || i === 2 ? 'num' : null }, t)))),
      h('tbody', {}, rows.map((m) => h('tr', { dataset: { version: m.app_version, build: m.build, methods: String(m.methods) } },
        h('td', { dataset: { label: 'Version' } }, buildOf(m)),
        h('td', { class: 'num', dataset: { label: 'Methods' } }, num(m.methods)),
        h('td', { class: 'num', dataset: { label: 'Size' } }, `${num(Math.ceil((m.file_size || 0) / 1024))} KiB`),
        h('td', { dataset: { label: 'Uploaded' } }, timeEl(m.created_at)),
        h('td', { class: 'mono uuid', dataset: { label: 'UUID' } }, m.uuid ?? '—')))))
      : h('p', { class: 'empty', id: 'mappings-empty' }, 'No method mapping uploaded yet.')];
}

export async function missingView(gen) {
  const android = isAndroid(await appDimensions());
  const heading = android ? 'Missing mappings and dSYMs' : 'Missing dSYMs';
  title(heading);
  const [app, system, mappings] = await Promise.all([missingSection('app', gen), missingSection('system', gen),
    android ? mappingsSection() : null]);
  return h('div', {},
    h('h1', {}, heading),
    h('p', { class: 'hint' },
      'The app’s own images that frames of stored reports fall in and that have no debug file, most affected first. ',
      'Upload them to ', h('code', {}, `POST ${appPath('dsyms')}`),
      ' with the upload token; waiting reports are re-symbolized within seconds.'),
    android ? h('p', { class: 'hint' },
      'An Android build’s methodMapping.txt (Matrix’s gradle plugin writes it under build/outputs/mapping/) names the method ids of its reports: upload it to ',
      h('code', {}, `POST ${appPath('method-mappings')}?app_version=V&build=B`),
      ' with the upload token; the build’s waiting reports are resolved within seconds.') : null,
    app,
    mappings,
    h('h2', {}, 'System images'),
    h('p', { class: 'hint' },
      'Libraries of the OS: they do not keep reports waiting for symbols. ',
      'Load their symbols once for every app with ', h('code', {}, 'stallscope system-symbols import DIR'),
      ' (a folder of extracted system frameworks).'),
    system);
}
