// Drives the dashboard in headless Chromium the way a user would, for
// tests/integration/test_dashboard.py: signs in, follows a group down to a
// report's stack, opens the missing dSYMs, adds and removes whitelist
// entries. It asserts nothing itself: it prints what the pages showed as
// JSON on stdout, and the Python test compares that with the API and with
// llvm-symbolizer. Any step that cannot be done (an element that never
// shows) fails with a message naming it.
//
//   node dashboard.mjs SCENARIO.json
// SCENARIO: {url, app, token, key1, key2, report_id, missing_uuid,
//            whitelist_add, whitelist_remove, other_version, sample_rate}
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const STEP_MS = 15000;
const seen = { console_errors: [], page_errors: [], dialogs: [], failed_requests: [] };

// CSS attribute selectors with the value quoted for CSS.
const attr = (name, value) => `[${name}="${String(value).replace(/["\\]/g, '\\$&')}"]`;

async function step(name, fn) {
  try {
    return await fn();
  } catch (e) {
    throw new Error(`step "${name}": ${e.message.split('\n')[0]}`);
  }
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--headless'],
});
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(STEP_MS);
  page.on('console', (m) => { if (m.type() === 'error') seen.console_errors.push(m.text()); });
  page.on('pageerror', (e) => seen.page_errors.push(String(e)));
  page.on('response', (r) => {
    if (r.status() >= 400) seen.failed_requests.push({ url: r.url(), status: r.status() });
  });
  // A dialog would mean markup from a report ran as script.
  page.on('dialog', async (d) => { seen.dialogs.push(d.message()); await d.dismiss(); });

  await step('sign in', async () => {
    await page.goto(s.url + '/');
    await page.fill('#signin-app', s.app);
    await page.fill('#signin-token', s.token);
    await page.click('#signin-submit');
  });

  const groupRow = `#groups tr${attr('data-key1', s.key1)}`;
  seen.groups = await step('groups list', async () => {
    await page.waitForSelector(groupRow);
    return page.$$eval('#groups tr[data-key1]', (rows) =>
      rows.map((r) => ({ key1: r.dataset.key1, text: r.innerText })));
  });

  seen.filtered = await step('an app version filter', async () => {
    await page.fill('#filter-version', s.other_version);
    await page.click('#filters-apply');
    await page.waitForFunction((v) => location.hash.includes(`version=${v}`), s.other_version);
    await page.waitForSelector('#view p.empty:not([hidden])');
    const rows = (await page.$$('#groups tr[data-key1]')).length;
    await page.fill('#filter-version', '');
    await page.click('#filters-apply');
    await page.waitForSelector(groupRow);
    return { rows };
  });

  const subRow = `#subgroups tr${attr('data-key2', s.key2)}`;
  seen.group = await step('group drill-down', async () => {
    await page.click(groupRow);
    await page.waitForSelector(subRow);
    return {
      hash: new URL(page.url()).hash,
      subgroups: await page.$$eval('#subgroups tr[data-key2]', (rows) =>
        rows.map((r) => ({ key2: r.dataset.key2, text: r.innerText }))),
    };
  });

  const reportRow = `#reports tr${attr('data-report-id', s.report_id)}`;
  seen.reports = await step('reports of the level-2 group', async () => {
    await page.click(subRow);
    await page.waitForSelector(reportRow);
    return page.$$eval('#reports tr[data-report-id]', (rows) =>
      rows.map((r) => ({ id: r.dataset.reportId, text: r.innerText })));
  });

  seen.report = await step('stack view', async () => {
    await page.click(reportRow);
    await page.waitForSelector('#report li.frame');
    return {
      hash: new URL(page.url()).hash,
      text: await page.innerText('#report'),
      representative_frames: await page.$$eval('#report .representative li.frame',
        (fs) => fs.map((f) => f.innerText)),
    };
  });

  seen.trace = await step('trace download', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'),
      page.click('#report-trace')]);
    return {
      name: download.suggestedFilename(),
      json: JSON.parse(readFileSync(await download.path(), 'utf8')),
    };
  });

  seen.missing = await step('missing dSYMs', async () => {
    await page.click('#nav-missing');
    await page.waitForSelector(`#missing tr${attr('data-uuid', s.missing_uuid)}`);
    return page.$$eval('#missing tr[data-uuid]', (rows) =>
      rows.map((r) => ({ uuid: r.dataset.uuid, text: r.innerText })));
  });

  seen.whitelist = await step('whitelist', async () => {
    await page.click('#nav-whitelist');
    await page.waitForSelector(`#whitelist tr${attr('data-user-id', s.whitelist_remove)}`);
    await page.fill('#whitelist-user', s.whitelist_add);
    await page.fill('#whitelist-note', 'added from the dashboard');
    await page.click('#whitelist-add [type=submit]');
    await page.waitForSelector(`#whitelist tr${attr('data-user-id', s.whitelist_add)}`);
    const gone = `#whitelist tr${attr('data-user-id', s.whitelist_remove)}`;
    await page.click(`${gone} button.whitelist-delete`);
    await page.waitForSelector(gone, { state: 'detached' });
    return page.$$eval('#whitelist tr[data-user-id]', (rows) => rows.map((r) => r.dataset.userId));
  });

  seen.config = await step('config', async () => {
    await page.click('#nav-config');
    await page.waitForSelector('#config-sample-rate');
    await page.fill('#config-sample-rate', String(s.sample_rate));
    await page.click('#config-submit');
    await page.waitForFunction(() => /Saved/.test(document.querySelector('.form-status')?.textContent));
    return { status: await page.innerText('.form-status') };
  });

  seen.reload = await step('reload keeps the route and the sign-in', async () => {
    // A new hash alone is a same-document navigation: reload for real, so
    // the page must find its session and route again from scratch.
    await page.goto(`${s.url}/#/reports/${s.report_id}`);
    await page.reload();
    await page.waitForSelector('#report li.frame');
    return { frames: (await page.$$('#report li.frame')).length };
  });

  // Everything so far should have gone without a failed request or a
  // console error (a CSP violation shows only there); the wrong token's
  // 401 is logged as one.
  seen.failed_before_bad_token = seen.failed_requests.length;
  seen.console_errors_before_bad_token = seen.console_errors.length;
  seen.bad_token = await step('a wrong token shows the sign-in again', async () => {
    await page.click('#signout');
    await page.fill('#signin-app', s.app);
    await page.fill('#signin-token', 'not-a-token');
    await page.click('#signin-submit');
    await page.waitForSelector('#error:not(:empty)');
    return {
      error: await page.innerText('#error'),
      signin_visible: await page.isVisible('#signin'),
    };
  });
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(seen));
