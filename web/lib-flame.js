// A group's call tree (GET …/groups/{key1}/tree, SPEC §10.4) as a flame
// graph drawn top down (an icicle): the outermost frames on top, each
// node as wide as the reports passing through it. Clicking a node zooms
// into it (its ancestors stay above, full width); clicking one of those
// zooms back out. Hover or focus says what a node is. An Android group's
// nodes also carry the milliseconds spent through them (SPEC §13): the
// graph can then be sized by time instead.

import { h } from './lib-dom.js';
import { api, appPath, plainMessage, withQuery } from './lib-api.js';
import { onlyFilters } from './lib-filters.js';
import { basename, duration, num } from './lib-format.js';

const ROW_PX = 22;
// Narrower than this share of the view a node is not drawn, nor anything
// under it: a big group's tree has thousands of nodes no one can read.
const MIN_SHARE = 0.001;

// The API's nodes with their parents and paths, under one root for all
// reports (the API's root has no count of its own).
function wrap(tree) {
  const top = tree.root?.children || [];
  const sum = top.reduce((a, c) => a + c.count, 0);
  const ms = top.some((c) => c.ms != null) ? top.reduce((a, c) => a + (c.ms || 0), 0) : null;
  const root = { node: { frame: '', function: 'all reports', count: Math.max(tree.reports || 0, sum), self: 0, ms }, path: [] };
  const adopt = (parent, children) => {
    parent.children = (children || []).map((n) => {
      const w = { node: n, parent, path: [...parent.path, n.frame] };
      adopt(w, n.children);
      return w;
    });
  };
  adopt(root, top);
  return root;
}

const label = (n) => n.function || n.frame || '?';

// What a node's width stands for: its reports, or its time ('ms').
const weight = (n, by) => (by === 'ms' ? n.ms || 0 : n.count);

function describe(w, total) {
  const n = w.node;
  const time = n.ms != null ? `, ${duration(n.ms)} through it` : '';
  if (!w.parent) return `All ${num(n.count)} reports of the group${time}.`;
  const where = n.file ? `${basename(n.file)}${n.line ? `:${n.line}` : ''}` : (n.image || 'no file');
  const share = total ? ` (${((n.count / total) * 100).toFixed(1)}%)` : '';
  return `${label(n)} — ${where} — in ${num(n.count)} reports${share}, innermost in ${num(n.self)}${time}`;
}

// One hue per function, so a function reads the same wherever it sits.
function hue(text) {
  let x = 0;
  for (const ch of text) x = (x * 31 + ch.codePointAt(0)) >>> 0;
  return `flame-h${x % 6}`;
}

function nodeEl(w, box, cls) {
  const n = w.node;
  const dataset = { path: JSON.stringify(w.path), count: String(n.count), self: String(n.self ?? 0) };
  if (n.ms != null) dataset.ms = String(n.ms);
  if (!w.parent) dataset.root = 'true';
  const el = h('button', { type: 'button', class: `flame-node ${cls}`, dataset },
    h('span', { class: 'flame-label' }, label(n)));
  // The CSSOM, not a style attribute: the CSP forbids inline styles.
  el.style.left = `${box.x * 100}%`;
  el.style.width = `${box.w * 100}%`;
  el.style.top = `${box.depth * ROW_PX}px`;
  return el;
}

// FOCUS's ancestors full width, then FOCUS's subtree scaled to the width
// by BY (weight).
function layout(focus, by) {
  const out = [];
  const chain = [];
  for (let a = focus; a; a = a.parent) chain.unshift(a);
  chain.forEach((a, depth) => out.push({ w: a, box: { x: 0, w: 1, depth }, cls: a === focus ? 'focus' : 'ancestor' }));
  const whole = weight(focus.node, by) || 1;
  const walk = (w, x, depth) => {
    let at = x;
    for (const c of w.children) {
      const share = weight(c.node, by) / whole;
      if (share >= MIN_SHARE) {
        out.push({ w: c, box: { x: at, w: share, depth }, cls: hue(label(c.node)) });
        walk(c, at, depth + 1);
      }
      at += share;
    }
  };
  walk(focus, 0, chain.length);
  return out;
}

function flameGraph(tree) {
  const root = wrap(tree);
  const total = root.node.count;
  const graph = h('div', { class: 'flame', id: 'flame', role: 'group', 'aria-label': 'Call tree, outermost frames on top' });
  const detail = h('p', { class: 'flame-detail', id: 'flame-detail', 'aria-live': 'polite' }, describe(root, total));
  const reset = h('button', { type: 'button', id: 'flame-reset', class: 'button-link', disabled: true }, 'Show all');
  let by = 'count';
  let focused = root;
  const show = (focus) => {
    focused = focus;
    const boxes = layout(focus, by);
    graph.replaceChildren(...boxes.map(({ w, box, cls }) => {
      const el = nodeEl(w, box, cls);
      el.title = describe(w, total);
      // The focused node zooms out a step; any other zooms to itself.
      el.addEventListener('click', () => show(w === focus && w.parent ? w.parent : w));
      const tell = () => { detail.textContent = describe(w, total); };
      el.addEventListener('mouseenter', tell);
      el.addEventListener('focus', tell);
      return el;
    }));
    graph.style.height = `${(Math.max(...boxes.map((b) => b.box.depth)) + 1) * ROW_PX}px`;
    graph.dataset.focus = JSON.stringify(focus.path);
    graph.dataset.size = by;
    reset.disabled = focus === root;
    detail.textContent = describe(focus, total);
  };
  reset.addEventListener('click', () => show(root));
  const timed = root.node.ms != null;
  const sizeBy = timed ? sizeSwitch((v) => { by = v; show(focused); }) : null;
  show(root);
  return h('div', { class: 'flame-box' },
    h('div', { class: 'flame-tools' }, detail, sizeBy, reset),
    graph,
    h('p', { class: 'hint' }, `Width is the share of ${timed ? 'reports passing through a frame, or of the time spent in it (Matrix’s method durations)' : 'reports passing through a frame'}; the outermost frame is on top. Click a frame to zoom into it, the top one to zoom out. Frames in under 0.1% of the view are left out.`));
}

// "Size by: reports | time", for trees whose nodes carry ms; ON(value)
// redraws.
function sizeSwitch(on) {
  const choice = (value, text, checked) => h('label', { class: 'flame-size-choice', for: `flame-size-${text}` },
    h('input', { type: 'radio', name: 'flame-size', id: `flame-size-${text}`, value, checked,
      onchange: (ev) => { if (ev.target.checked) on(value); } }), text);
  return h('fieldset', { class: 'flame-size', id: 'flame-size' },
    h('legend', {}, 'Size by'), choice('count', 'reports', true), choice('ms', 'time', false));
}

// The flame graph of group KEY1 (of its subgroup KEY2 when given) under
// the page's filters F, every one (SPEC §10.4): its root then counts the
// reports the page's header counts. It reads the retained reports: a
// failure leaves the rest of the page standing.
export async function treeSection(key1, f, key2) {
  let body;
  try {
    const tree = await api('GET', withQuery(appPath('groups', key1, 'tree'), { ...onlyFilters(f), level2: key2 }));
    body = tree.reports ? flameGraph(tree)
      : h('p', { class: 'empty', id: 'flame-empty' }, 'No retained report to draw the call tree from.');
  } catch (e) {
    body = h('p', { class: 'error', id: 'flame-error' }, plainMessage(e));
  }
  return h('div', {}, body);
}
