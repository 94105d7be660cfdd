// The small DOM helper every module builds the page with. Strings become
// text nodes or attribute values, never markup: reports are untrusted
// input, and the server's CSP forbids inline scripts and styles anyway.

export const $ = (id) => document.getElementById(id);

// h('tr', {class: 'x', dataset: {key1}, onclick: fn}, child, …): strings
// become text nodes, so data can never turn into markup.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  for (const c of children.flat(Infinity)) {
    if (c != null && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  setAttrs(el, attrs);
  for (const c of children) el.append(c);
  return el;
}

export function badge(text, cls) {
  return h('span', { class: `badge ${cls || ''}`.trim() }, text);
}

// A row that opens HREF when clicked anywhere (the first cell holds a
// real link for keyboards and middle clicks).
export function clickable(tr, href) {
  tr.classList.add('clickable');
  tr.addEventListener('click', (ev) => {
    if (ev.target.closest('a, button, input')) return;
    if (String(window.getSelection() || '')) return; // selecting text, not navigating
    location.hash = href;
  });
  return tr;
}

export function crumbs(...items) {
  return h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' },
    items.map(([label, href], i) => [
      i ? h('span', { class: 'sep', 'aria-hidden': 'true' }, '›') : null,
      href ? h('a', { href }, label) : h('span', {}, label),
    ]));
}

// The browser tab's title: what the page shows, then the app signed in
// to (the header shows it), so tabs of two apps tell apart.
export function title(text) {
  const app = $('session-app')?.textContent;
  document.title = `${text}${app ? ` · ${app}` : ''} · stallscope`;
}
