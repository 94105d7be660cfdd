// Drives the dashboard in headless Chromium the way a user would, for
// tests/integration/test_dashboard.py: signs in, filters the groups and
// opens a group from the filtered list, follows a group down to a report's
// stack, opens the missing dSYMs, adds and removes whitelist entries. It
// asserts nothing itself: it prints what the pages showed as JSON on
// stdout, and the Python test compares that with what it posted, the API
// and llvm-symbolizer. Any step that cannot be done (an element that never
// shows) fails with a message naming it. The browser runs in a zone far
// from UTC, so a time shown in the browser's zone would not match.
//
//   node dashboard.mjs SCENARIO.json
// SCENARIO: {url, app, token, key1, key2, report_id, missing_uuid, missing_total,
//            whitelist_add, whitelist_remove, filter: {from, to, version},
//            no_device_label,
//            filtered_report_id, sample_rate}
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { attr, launch, openPage, overflowOf, settled, step } from './common.mjs';

const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const seen = { dialogs: [] };


const browser = await launch(chromium);
try {
  // Every view is measured at 1280 px once it has shown.
  const { page, measure } = await openPage(browser, seen, { timezoneId: 'America/Los_Angeles' });
  // A dialog would mean markup from a report ran as script.
  page.on('dialog', async (d) => { seen.dialogs.push(d.message()); await d.dismiss(); });

  await step('sign in', async () => {
    await page.goto(s.url + '/');
    await page.fill('#signin-app', s.app);
    await page.fill('#signin-token', s.token);
    await page.click('#signin-submit');
  });
  seen.tz = await page.innerText('#tz');

  const groupRow = `#groups tr${attr('data-key1', s.key1)}`;
  const rowsOf = (table, key) => page.$$eval(`#${table} tr[data-${key}]`, (rows, k) =>
    rows.map((r) => ({ key: r.getAttribute(`data-${k}`), text: r.innerText })), key);
  const sparkOf = (selector) => page.$eval(`${selector} svg.spark`, (el) =>
    ({ from: el.dataset.from, to: el.dataset.to, days: Number(el.dataset.days) }));
  // What a group page and its subgroup's reports show, after the group
  // row was clicked in the list as it stands.
  const groupHeader = async () => ({
    hash: new URL(page.url()).hash,
    reports: await page.innerText('#group-reports'),
    users: await page.innerText('#group-users'),
    spark: await sparkOf('#group-spark'),
    summary: await page.innerText('#filter-summary'),
  });

  seen.groups = await step('groups list', async () => {
    await page.waitForSelector(groupRow);
    await measure('groups');
    return rowsOf('groups', 'key1');
  });

  seen.pick_lists = await step('filter pick lists', async () => {
    const options = (id) => page.$$eval(`#${id} option`, (os) => os.map((o) => ({ value: o.value, text: o.textContent })));
    return {
      version: await options('filter-version'),
      os_version: await options('filter-os-version'),
      device: await options('filter-device'),
      kind: await options('filter-kind'),
    };
  });

  seen.no_device = await step('the reports without a device', async () => {
    await page.selectOption('#filter-device', { label: s.no_device_label });
    await page.click('#filters-apply');
    await page.waitForFunction(() => /[?&]device=(&|$)/.test(location.hash));
    await settled(page);
    const rows = await rowsOf('groups', 'key1');
    await page.click('#view a.button-link'); // Clear
    await page.waitForFunction(() => location.hash === '#/groups');
    await settled(page);
    return rows;
  });

  const subRow = `#subgroups tr${attr('data-key2', s.key2)}`;
  seen.filtered = await step('a group opened from a filtered list', async () => {
    await page.fill('#filter-from', s.filter.from);
    await page.fill('#filter-to', s.filter.to);
    await page.selectOption('#filter-version', s.filter.version);
    await page.click('#filters-apply');
    await page.waitForFunction((v) => location.hash.includes(`version=${v}`), s.filter.version);
    await settled(page);
    await page.waitForSelector(groupRow);
    await measure('groups, filtered');
    const list = await rowsOf('groups', 'key1');
    await page.click(groupRow);
    await page.waitForSelector(subRow);
    await measure('group, filtered');
    const group = { ...(await groupHeader()), subgroups: await rowsOf('subgroups', 'key2') };
    await page.click(subRow);
    await page.waitForSelector(`#reports tr${attr('data-report-id', s.filtered_report_id)}`);
    await measure('reports, filtered');
    const reports = { ...(await groupHeader()), rows: await rowsOf('reports', 'report-id') };
    await page.click(`#reports tr${attr('data-report-id', s.filtered_report_id)}`);
    await page.waitForSelector('#report li.frame');
    const crumbs = await page.$$eval('#report .crumbs a', (as) => as.map((a) => a.getAttribute('href')));
    // Back to the list through the breadcrumb: the filters are still set.
    await page.click('.crumbs a >> nth=0');
    await settled(page);
    await page.waitForSelector(groupRow);
    const back = { hash: new URL(page.url()).hash, version: await page.inputValue('#filter-version') };
    await page.click('#view a.button-link'); // Clear
    await page.waitForFunction(() => location.hash === '#/groups');
    await settled(page);
    await page.waitForSelector(groupRow);
    return { list, group, reports, crumbs, back };
  });

  seen.group = await step('group drill-down', async () => {
    await page.click(groupRow);
    await page.waitForSelector(subRow);
    await measure('group');
    await page.waitForSelector('#flame .flame-node');
    const flame = await page.$$eval('#flame .flame-node', (els) => els.map((e) => ({
      path: JSON.parse(e.dataset.path), count: Number(e.dataset.count),
      self: Number(e.dataset.self),
    })));
    return { ...(await groupHeader()), subgroups: await rowsOf('subgroups', 'key2'), flame };
  });

  const reportRow = `#reports tr${attr('data-report-id', s.report_id)}`;
  seen.reports = await step('reports of the level-2 group', async () => {
    await page.click(subRow);
    await page.waitForSelector(reportRow);
    await measure('reports');
    return (await rowsOf('reports', 'report-id')).map((r) => ({ id: r.key, text: r.text }));
  });

  seen.report = await step('stack view', async () => {
    await page.click(reportRow);
    await page.waitForSelector('#report li.frame');
    await measure('report');
    return {
      hash: new URL(page.url()).hash,
      text: await page.innerText('#report'),
      received: await page.innerText('#report dl.meta time'),
      representative_frames: await page.$$eval('#report .representative li.frame',
        (fs) => fs.map((f) => f.innerText)),
      system_images: await page.$$eval('#report table.images tr[data-system="true"] td:first-child',
        (tds) => tds.map((td) => td.innerText)),
      app_images: await page.$$eval('#report table.images tr[data-system="false"] td:first-child',
        (tds) => tds.map((td) => td.innerText)),
    };
  });

  // Offered only for a report with samples (the trace is built from them).
  seen.trace = await step('trace download', async () => {
    if (!(await page.$('#report-trace'))) return { offered: false };
    const [download] = await Promise.all([page.waitForEvent('download'),
      page.click('#report-trace')]);
    return {
      offered: true,
      name: download.suggestedFilename(),
      json: JSON.parse(readFileSync(await download.path(), 'utf8')),
    };
  });

  seen.missing = await step('missing dSYMs', async () => {
    await page.click('#nav-missing');
    await page.waitForSelector(`#missing tr${attr('data-uuid', s.missing_uuid)}`);
    await measure('missing dSYMs');
    const rows = async (id) => (await rowsOf(id, 'uuid')).map((r) => ({ uuid: r.key, text: r.text }));
    const firstPage = await rows('missing');
    await page.click('#missing-more');
    await page.waitForFunction((n) => document.querySelectorAll('#missing tr[data-uuid]').length >= n,
      s.missing_total);
    return { first_page: firstPage, app: await rows('missing'), system: await rows('missing-system') };
  });

  seen.whitelist = await step('whitelist', async () => {
    await page.click('#nav-whitelist');
    await page.waitForSelector(`#whitelist tr${attr('data-user-id', s.whitelist_remove)}`);
    await measure('whitelist');
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
    await measure('config');
    await page.fill('#config-sample-rate', String(s.sample_rate));
    await page.click('#config-submit');
    await page.waitForFunction(() => /Saved/.test(document.querySelector('.form-status')?.textContent));
    return { status: await page.innerText('.form-status') };
  });

  seen.phone = await step('phone width', async () => {
    // Wide tables may scroll inside their box there, the page may not.
    await page.setViewportSize({ width: 390, height: 800 });
    const views = [['#/groups', groupRow], [`#/groups/${s.key1}`, subRow],
      [`#/groups/${s.key1}/${s.key2}`, reportRow], [`#/reports/${s.report_id}`, '#report li.frame'],
      ['#/missing', '#missing tr[data-uuid]'], ['#/whitelist', '#whitelist-add'], ['#/config', '#config-form']];
    const out = [];
    for (const [hash, ready] of views) {
      await page.evaluate((h) => { location.hash = h; }, hash);
      await settled(page);
      await page.waitForSelector(ready);
      out.push({ view: hash, ...(await overflowOf(page)) });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    return out;
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
