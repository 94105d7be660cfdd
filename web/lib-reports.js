// A report's row in a page of reports (a level-2 group's, a user's):
// when it came, who sent it (unless the page is one user's), its app
// version, OS version, device, kind, duration and whether it waits for
// symbols; the row opens the report's stack with the page's filters.

import { badge, clickable, h } from './lib-dom.js';
import { duration, kindLabel, timeEl } from './lib-format.js';
import { hashFor } from './lib-router.js';

// R a report summary of the API, F the filters the report's page keeps,
// USER whether to show the user column.
export function reportRow(r, f, user) {
  const href = hashFor(['reports', String(r.id)], f);
  const cell = (label, content, cls) => h('td', { class: cls, dataset: { label } }, content);
  return clickable(h('tr', { dataset: { reportId: String(r.id) } },
    cell('Received', h('a', { href }, timeEl(r.received_at))),
    user ? cell('User', r.user_id, 'mono') : null,
    cell('Version', r.app_version ?? '—'),
    cell('OS', r.os_version ?? '—'),
    cell('Device', r.device ?? '—'),
    cell('Kind', kindLabel(r.kind)),
    cell('Duration', duration(r.duration_ms), 'num'),
    h('td', {}, r.pending ? badge('waiting for symbols', 'warn') : badge('symbolicated', 'ok'))), href);
}
