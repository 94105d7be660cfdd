// The router: the page's address ('#/groups/KEY?from=…') names the view,
// app.js's table says which module renders it, and a view's answer lands
// only if the user is still on its page.

import { $, h } from './lib-dom.js';
import { signedIn } from './lib-api.js';
import { clearError, showApp, showError, showSignin } from './lib-page.js';

const enc = encodeURIComponent;

// '#/a/b?k=v': QUERY (an object) carries the filters from page to page, so
// a group opened from a filtered list keeps counting what the list counted.
export function hashFor(parts, query) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query || {})) if (v != null) qs.set(k, v);
  const s = qs.toString();
  return '#/' + parts.map(enc).join('/') + (s ? `?${s}` : '');
}

export function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const parts = path.split('/').filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  return { parts, query: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)) };
}

// Bumped on every navigation: a slow answer for a page the user already
// left must not overwrite the page they are on.
let generation = 0;

export const current = (gen) => gen === generation;

// (parts, query, gen) → a function rendering the view, or null for an
// address no view takes; set by startRouter.
let viewFor = () => null;

export async function route() {
  const gen = ++generation;
  const hash = location.hash;
  clearError();
  if (!signedIn()) {
    showSignin();
    return;
  }
  const { parts, query } = parseHash();
  if (parts.length === 0) {
    location.replace('#/groups');
    return;
  }
  showApp();
  const [head] = parts;
  for (const link of $('nav').querySelectorAll('a')) link.removeAttribute('aria-current');
  const section = head === 'reports' ? 'groups' : head;
  $(`nav-${section}`)?.setAttribute('aria-current', 'page');

  const render = viewFor(parts, query, gen);
  if (!render) {
    location.replace('#/groups');
    return;
  }
  let view;
  try {
    view = await render();
  } catch (e) {
    if (gen !== generation) return;
    view = h('div', { class: 'empty' });
    showError(e);
  }
  if (gen !== generation) return;
  $('view').replaceChildren(view);
  // Which route the view shows: tests wait on it, as old rows look alike.
  $('view').dataset.hash = hash;
}

export function startRouter(table) {
  viewFor = table;
  window.addEventListener('hashchange', route);
  route();
}
