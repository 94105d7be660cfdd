// #/config: the app's upload and grouping policy.

import { h, title } from './lib-dom.js';
import { api, appPath, session } from './lib-api.js';
import { act } from './lib-page.js';

const lines = (text) => text.split('\n').map((s) => s.trim()).filter(Boolean);
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

export async function configView() {
  title('Config');
  let cfg = await api('GET', appPath('config'));
  const field = (id, name, label, attrs, help) => h('label', { for: id }, label,
    h('input', { id, name, required: true, ...attrs }), help ? h('span', { class: 'hint' }, help) : null);
  const area = (id, name, label, help) => h('label', { for: id }, label,
    h('textarea', { id, name, rows: 3, spellcheck: 'false' }), h('span', { class: 'hint' }, help));
  const status = h('p', { class: 'form-status', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', id: 'config-submit' }, 'Save changes');
  const form = h('form', { id: 'config-form', class: 'card form' },
    field('config-sample-rate', 'sample_rate', 'Sample rate',
      { type: 'number', min: 0, max: 1, step: 'any' },
      'Share of users who upload on a given UTC day, 0 to 1 (0.05 = 5%).'),
    field('config-daily-quota', 'daily_quota', 'Daily quota',
      { type: 'number', min: 0, max: 1000000, step: 1 }, 'Reports per user per UTC day.'),
    field('config-retention-days', 'retention_days', 'Retention (days)',
      { type: 'number', min: 1, max: 3650, step: 1 }, 'Older reports are deleted; group counters keep their history.'),
    area('config-skip-images', 'skip_images', 'Grouping: skip frames in images',
      'One image name per line, e.g. libsystem_kernel.dylib.'),
    area('config-skip-prefixes', 'skip_prefixes', 'Grouping: skip functions starting with',
      'One prefix per line, e.g. mach_msg.'),
    h('div', { class: 'buttons' }, submit),
    status);
  const el = form.elements;
  const fill = () => {
    el.sample_rate.value = String(cfg.sample_rate);
    el.daily_quota.value = String(cfg.daily_quota);
    el.retention_days.value = String(cfg.retention_days);
    el.skip_images.value = (cfg.grouping_rules?.skip_images || []).join('\n');
    el.skip_prefixes.value = (cfg.grouping_rules?.skip_prefixes || []).join('\n');
  };
  fill();
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    // Only what changed is sent: PUT leaves the other fields alone, so two
    // people editing different settings do not undo each other.
    const body = {};
    const rate = Number(el.sample_rate.value);
    const quota = Number(el.daily_quota.value);
    const days = Number(el.retention_days.value);
    if (rate !== cfg.sample_rate) body.sample_rate = rate;
    if (quota !== cfg.daily_quota) body.daily_quota = quota;
    if (days !== cfg.retention_days) body.retention_days = days;
    const rules = cfg.grouping_rules || {};
    const images = lines(el.skip_images.value);
    const prefixes = lines(el.skip_prefixes.value);
    if (!sameList(images, rules.skip_images || []) || !sameList(prefixes, rules.skip_prefixes || [])) {
      body.grouping_rules = { skip_images: images, skip_prefixes: prefixes };
    }
    if (Object.keys(body).length === 0) {
      status.textContent = 'Nothing changed.';
      return;
    }
    status.textContent = '';
    act(submit, async () => {
      cfg = await api('PUT', appPath('config'), body);
      fill();
      status.textContent = `Saved: ${Object.keys(body).join(', ').replace(/_/g, ' ')}.`;
    });
  });
  return h('div', {},
    h('h1', {}, 'Config'),
    h('p', { class: 'hint' }, `Upload and grouping policy of ${session.app}. Changed grouping rules apply to reports grouped from then on; existing groups are not rebuilt.`),
    form);
}
