// A group's call tree (GET …/groups/{key1}/tree, SPEC §10.4) as an
// icicle: the outermost frame on top, each frame as wide as the reports
// whose stack passes through it. Click a frame to zoom into it, one of the
// frames above it (the path it was reached by) to zoom back out; hover for
// its file:line and counts. SVG attributes only (x and width in percent),
// no inline styles: the page's CSP forbids them.

import { h, svg } from './lib-dom.js';
import { num } from './lib-format.js';

const ROW = 20;        // px per depth
const CHAR_PX = 7.5;   // a label's character, at most, at the flame's font size
const MAX_ROWS = 64;   // rows drawn below the focus; zoom in to see deeper

function tip(n) {
  const where = n.file ? `\n${n.file}${n.line ? `:${n.line}` : ''}` : '';
  return `${n.frame}${where}\n${num(n.count)} reports, ${num(n.self)} ending here`;
}

function bar(n, x, w, depth, px, onclick, cls) {
  const label = n.frame.length * CHAR_PX < (w / 100) * px ? n.frame
    : n.frame.slice(0, Math.max(0, Math.floor(((w / 100) * px) / CHAR_PX) - 1)) + '…';
  return svg('g', {
    class: `flame-node ${cls}`, onclick,
    dataset: { frame: n.frame, count: n.count, self: n.self, depth },
  },
  svg('title', {}, tip(n)),
  svg('rect', { x: `${x}%`, y: depth * ROW, width: `${w}%`, height: ROW - 1 }),
  (w / 100) * px >= 3 * CHAR_PX
    ? svg('text', { x: `${x + 0.3}%`, y: depth * ROW + ROW - 6 }, label) : '');
}

// FOCUS's descendants below it, each as wide as its share of FOCUS.
function drawBelow(out, focus, x, w, depth, px, zoom) {
  if (depth > MAX_ROWS || !focus.count) return depth - 1;
  let deepest = depth - 1;
  let at = x;
  for (const c of focus.children || []) {
    const cw = (w * c.count) / focus.count;
    out.push(bar(c, at, cw, depth, px, () => zoom(c), ''));
    deepest = Math.max(deepest, drawBelow(out, c, at, cw, depth + 1, px, zoom));
    at += cw;
  }
  return deepest;
}

export function flameGraph(tree) {
  const top = { frame: 'all reports', count: tree.reports, self: 0, children: tree.root.children };
  const box = h('div', { class: 'flame', id: 'flame' });
  const parents = new Map();
  const index = (n) => (n.children || []).forEach((c) => { parents.set(c, n); index(c); });
  index(top);
  const zoom = (focus) => {
    const px = box.clientWidth || 1000;
    const path = [];
    for (let n = focus; n; n = parents.get(n)) path.unshift(n);
    const nodes = path.map((n, i) => bar(n, 0, 100, i, px, () => zoom(n),
      n === focus ? 'flame-focus' : 'flame-path'));
    const deepest = drawBelow(nodes, focus, 0, 100, path.length, px, zoom);
    box.replaceChildren(svg('svg', {
      class: 'flame-svg', width: '100%', height: (deepest + 1) * ROW,
      role: 'img', 'aria-label': `Call tree of ${num(tree.reports)} reports`,
    }, ...nodes));
  };
  // Drawn once the box is in the page, when its width is known.
  requestAnimationFrame(() => zoom(top));
  return box;
}
