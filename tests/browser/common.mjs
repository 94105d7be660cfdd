// What the dashboard's browser scripts share: how Chromium is started,
// how a walk's steps fail, what is watched on every page and how a page's
// sideways overflow is measured.

export function launch(chromium) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--headless'],
  });
}

// The page scrolls sideways exactly when the document is wider than the
// viewport; the widest element past the right edge names the culprit.
export function overflowOf(page) {
  return page.evaluate(() => {
    const root = document.documentElement;
    let culprit = null;
    let right = root.clientWidth;
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect().right + window.scrollX;
      if (r > right + 0.5) {
        right = r;
        culprit = `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}.${el.className?.baseVal ?? el.className}`;
      }
    }
    return { scroll_width: root.scrollWidth, client_width: root.clientWidth, culprit };
  });
}

// Resolves once the view shows the page's current route: after a filter is
// applied the previous list's rows are still there for a moment.
export function settled(page) {
  return page.waitForFunction(() => document.getElementById('view').dataset.hash === location.hash);
}

// Runs one named step of a walk: a failure says which step, in one line.
export async function step(name, fn) {
  try {
    return await fn();
  } catch (e) {
    throw new Error(`step "${name}": ${e.message.split('\n')[0]}`);
  }
}

// A CSS attribute selector with the value quoted for CSS.
export const attr = (name, value) => `[${name}="${String(value).replace(/["\\]/g, '\\$&')}"]`;

// Records into SEEN what should never happen on PAGE: console errors (a
// CSP violation shows only there), uncaught exceptions, failed requests.
export function watch(page, seen) {
  Object.assign(seen, { console_errors: [], page_errors: [], failed_requests: [] });
  page.on('console', (m) => {
    if (m.type() === 'error') seen.console_errors.push(m.text());
  });
  page.on('pageerror', (e) => seen.page_errors.push(String(e)));
  page.on('response', (r) => {
    if (r.status() >= 400) seen.failed_requests.push({ url: r.url(), status: r.status() });
  });
}

// A page at 1280 px, watched, and MEASURE(view), which records the
// page's sideways overflow under that name in SEEN.overflow. OPTIONS are
// playwright's for the page's context (a time zone, say).
export async function openPage(browser, seen, options) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, ...options });
  page.setDefaultTimeout(20000);
  watch(page, seen);
  seen.overflow = [];
  const measure = async (view) => seen.overflow.push({ view, ...(await overflowOf(page)) });
  return { page, measure };
}
