// What the dashboard's browser scripts share: how Chromium is started and
// how a page's sideways overflow is measured.

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
