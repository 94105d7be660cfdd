// #/frames?from=&to=&version=&scene=: an Android app's frames per scene
// (GET …/frames, SPEC §13), from Matrix's Trace_FPS reports: how many
// frames fell in each drop level, the share frozen and the mean fps,
// per scene and app version, the worst scenes first.

import { h, title } from './lib-dom.js';
import { api, appPath, withQuery } from './lib-api.js';
import { num } from './lib-format.js';
import { dimensions, formFilters } from './lib-filters.js';
import { hashFor } from './lib-router.js';
import { compareVersions, newestFirst, pct } from './lib-triage.js';

// FrameTracer's drop levels (frames dropped in a row: < 3, ≥ 3, ≥ 9,
// ≥ 24, ≥ 42), as the reply names them.
const LEVELS = [
  ['best', 'Best', 'fewer than 3 frames dropped'],
  ['normal', 'Normal', '3 to 8 frames dropped'],
  ['middle', 'Middle', '9 to 23 frames dropped'],
  ['high', 'High', '24 to 41 frames dropped'],
  ['frozen', 'Frozen', '42 frames dropped or more'],
];

function framesForm(f, versions) {
  const input = (id, name, label, type) => h('label', { for: id }, label,
    h('input', { id, name, type, value: f[name] || '' }));
  const form = h('form', { id: 'frames-filters', class: 'filters' },
    input('frames-from', 'from', 'From (UTC day)', 'date'),
    input('frames-to', 'to', 'To (UTC day)', 'date'),
    h('label', { for: 'frames-version' }, 'App version',
      h('select', { id: 'frames-version', name: 'version' },
        h('option', { value: '' }, 'all'),
        versions.map((v) => h('option', { value: v, selected: v === f.version }, v)))),
    input('frames-scene', 'scene', 'Scene', 'search'),
    h('div', { class: 'buttons' },
      h('button', { type: 'submit', id: 'frames-apply' }, 'Apply'),
      h('a', { href: '#/frames', class: 'button-link' }, 'Clear')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const chosen = formFilters(f, form, ['from', 'to', 'version']);
    chosen.scene = form.elements.scene.value.trim() || null;
    location.hash = hashFor(['frames'], chosen);
  });
  return form;
}

// The frames of each level as one bar, in the levels' order.
function levelsBar(frames, total) {
  return h('span', { class: 'levels-bar', 'aria-hidden': 'true' }, LEVELS.map(([k]) => {
    const part = h('span', { class: `level level-${k}` });
    // The CSSOM, not a style attribute: the CSP forbids inline styles.
    part.style.width = `${total ? ((frames?.[k] || 0) / total) * 100 : 0}%`;
    return part;
  }));
}

// An activity by its class name, its package below in small print.
function sceneName(scene) {
  if (!scene) return h('span', { class: 'muted' }, '(not set)');
  const dot = scene.lastIndexOf('.');
  return [h('span', { class: 'scene-class', title: scene }, scene.slice(dot + 1)),
    dot > 0 ? h('span', { class: 'scene-package muted' }, scene.slice(0, dot)) : null];
}

const totalOf = (frames) => LEVELS.reduce((a, [k]) => a + (frames?.[k] || 0), 0);

function scenesTable(scenes) {
  const rows = scenes.slice().sort((a, b) => (b.frozen_share ?? 0) - (a.frozen_share ?? 0) ||
    String(a.scene).localeCompare(String(b.scene)) || compareVersions(b.app_version, a.app_version));
  return h('table', { id: 'frames', class: 'data cards' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Scene'), h('th', {}, 'Version'),
      h('th', { class: 'num', title: 'Trace_FPS reports counted' }, 'Reports'),
      h('th', { class: 'num' }, 'Frames'), h('th', {}, 'By drop level'),
      LEVELS.map(([, t, why]) => h('th', { class: 'num', title: why }, t)),
      h('th', { class: 'num' }, 'Frozen share'), h('th', { class: 'num' }, 'Mean fps'))),
    h('tbody', {}, rows.map((r) => {
      const total = totalOf(r.frames);
      const raw = Object.fromEntries(LEVELS.map(([k]) => [k, String(r.frames?.[k] ?? 0)]));
      return h('tr', { dataset: { scene: r.scene, version: r.app_version, elements: String(r.elements ?? ''),
        frozenShare: String(r.frozen_share ?? ''), meanFps: String(r.mean_fps ?? ''), ...raw } },
      h('td', { class: 'scene', dataset: { label: 'Scene' } }, sceneName(r.scene)),
      h('td', { dataset: { label: 'Version' } }, r.app_version ?? '—'),
      h('td', { class: 'num', dataset: { label: 'Reports' } }, num(r.elements)),
      h('td', { class: 'num', dataset: { label: 'Frames' } }, num(total)),
      h('td', { class: 'levels-cell', dataset: { label: 'By drop level' } }, levelsBar(r.frames, total)),
      LEVELS.map(([k, t]) => h('td', { class: `num level-count-${k}`, dataset: { label: t } }, num(r.frames?.[k] ?? 0))),
      h('td', { class: 'num frozen-share', dataset: { label: 'Frozen share' } }, pct(r.frozen_share)),
      h('td', { class: 'num mean-fps', dataset: { label: 'Mean fps' } }, r.mean_fps == null ? '—' : Number(r.mean_fps).toFixed(1)));
    })));
}

export async function framesView(f) {
  title('Frames');
  const q = { from: f.from, to: f.to, version: f.version, scene: f.scene };
  const [data, dims] = await Promise.all([api('GET', withQuery(appPath('frames'), q)), dimensions()]);
  const versions = newestFirst(dims.versions.map((d) => d.value));
  return h('div', {},
    h('h1', {}, 'Frames per scene'),
    framesForm(f, versions),
    h('p', { class: 'hint' }, 'From Matrix’s Trace_FPS reports: each frame falls in a level by how many frames were dropped with it. Worst scenes (largest frozen share) first.'),
    data.scenes?.length ? scenesTable(data.scenes)
      : h('p', { class: 'empty', id: 'frames-empty' }, 'No frame reports on these days.'));
}
