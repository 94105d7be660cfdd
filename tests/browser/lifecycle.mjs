// Drives the dashboard's group lifecycle and webhooks (SPEC §11) in
// headless Chromium for tests/integration/test_dashboard_lifecycle.py:
// the groups list as it opens (open and regressed only, with their
// badges), a group resolved from its page in a picked version (the badge
// and the history change in place), the list again (the group hidden,
// then shown with its badge after one click, still after a reload), a
// regressed group's history, an ignored group reopened and ignored again
// (for 24 hours, then for 1,000 reports), then the Webhooks page: an
// existing webhook deleted (after the confirm), one added pointing at the
// test's receiver and tested (delivered, in the log), one pointing at a
// closed port and tested (the error shown). It asserts nothing itself: it
// prints what the pages showed as JSON, and the Python test compares that
// with the API and the receiver. Every view is measured for sideways
// scroll at 1280 px and at a phone's 390 px. The browser runs far from
// UTC: times must still read in UTC.
//
//   node lifecycle.mjs SCENARIO.json
// SCENARIO: {url, app, token, resolve_key, resolve_in, regressed_key, ignored_key,
//            hook: {name, url, secret, events: [type, …], format},
//            broken: {name, url, secret}, delete_name}
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { attr, launch, openPage, overflowOf, settled, step } from './common.mjs';

const s = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const seen = { dialogs: [] };

const browser = await launch(chromium);
try {
  const { page, measure } = await openPage(browser, seen, { timezoneId: 'Asia/Kolkata' });
  // Only the delete's confirm may ask; it is accepted.
  page.on('dialog', async (d) => { seen.dialogs.push({ type: d.type(), message: d.message() }); await d.accept(); });

  const go = async (hash, ready) => {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await settled(page);
    await page.waitForSelector(ready);
  };
  const listRows = () => page.$$eval('#groups tr[data-key1]', (rows) => rows.map((r) => ({
    key: r.dataset.key1, status: r.dataset.status ?? null,
    badges: [...r.querySelectorAll('.status-badge')].map((b) => b.textContent),
  })));
  const groupPage = async () => ({
    status: await page.getAttribute('#group-status', 'data-status'),
    badge: await page.innerText('#group-status'),
    detail: await page.innerText('#group-status-detail'),
    reopen_shown: await page.isVisible('#group-reopen'),
    history: await page.$$eval('#group-history li', (ls) => ls.map((l) => ({
      type: l.dataset.type, time: l.querySelector('time').textContent,
      datetime: l.querySelector('time').getAttribute('datetime'),
      text: l.querySelector('.event-text').textContent,
    }))),
  });

  await step('sign in', async () => {
    await page.goto(s.url + '/');
    await page.fill('#signin-app', s.app);
    await page.fill('#signin-token', s.token);
    await page.click('#signin-submit');
  });

  seen.list_default = await step('groups list, open and regressed', async () => {
    await settled(page);
    await page.waitForSelector('#groups tr[data-key1]');
    await measure('groups');
    return {
      hash: new URL(page.url()).hash, rows: await listRows(),
      line: await page.innerText('#groups-status-line'),
      select: await page.$eval('#filter-status', (e) => e.value),
    };
  });

  seen.group_before = await step('the group to resolve', async () => {
    await page.click(`#groups tr${attr('data-key1', s.resolve_key)} td.frames a`);
    await settled(page);
    await page.waitForSelector('#group-actions');
    await measure('group');
    return {
      hash: new URL(page.url()).hash, ...(await groupPage()),
      versions: await page.$$eval('#resolve-version option', (os) => os.map((o) => ({ value: o.value, text: o.textContent }))),
      chosen: await page.$eval('#resolve-version', (e) => e.value),
    };
  });

  seen.group_after = await step('resolve it in a picked version', async () => {
    // A mark the page keeps unless it reloads.
    await page.evaluate(() => { window.stayedOnPage = true; });
    await page.selectOption('#resolve-version', s.resolve_in);
    await page.click('#group-resolve');
    await page.waitForSelector('#group-status[data-status="resolved"]');
    await page.waitForSelector('#group-history li[data-type="resolved"]');
    return {
      ...(await groupPage()), note: await page.innerText('#group-status-note'),
      hash: new URL(page.url()).hash,
      stayed: await page.evaluate(() => window.stayedOnPage === true),
    };
  });

  seen.list_after = await step('the list hides it', async () => {
    await page.click('.crumbs a');
    await page.waitForFunction(() => location.hash.startsWith('#/groups') && !location.hash.includes('/', 3));
    await settled(page);
    await page.waitForSelector('#groups tr[data-key1], #view p.empty:not([hidden])');
    return { hash: new URL(page.url()).hash, rows: await listRows() };
  });

  seen.list_all = await step('one click shows resolved and ignored', async () => {
    await page.click('#groups-show-closed');
    await page.waitForFunction(() => location.hash.includes('status=all'));
    await settled(page);
    await page.waitForSelector(`#groups tr${attr('data-key1', s.resolve_key)}`);
    await measure('groups_all');
    return {
      hash: new URL(page.url()).hash, rows: await listRows(),
      line: await page.innerText('#groups-status-line'),
      select: await page.$eval('#filter-status', (e) => e.value),
    };
  });

  seen.list_reloaded = await step('the choice survives a reload', async () => {
    await page.reload();
    await settled(page);
    await page.waitForSelector(`#groups tr${attr('data-key1', s.resolve_key)}`);
    return { hash: new URL(page.url()).hash, rows: await listRows() };
  });

  seen.list_back = await step('the choice goes to a group and back', async () => {
    await page.click(`#groups tr${attr('data-key1', s.resolve_key)} td.frames a`);
    await settled(page);
    await page.waitForSelector('#group-actions');
    const groupHash = new URL(page.url()).hash;
    await page.click('.crumbs a');
    await settled(page);
    await page.waitForSelector(`#groups tr${attr('data-key1', s.resolve_key)}`);
    return { group_hash: groupHash, hash: new URL(page.url()).hash, rows: await listRows() };
  });

  seen.regressed = await step('a regressed group', async () => {
    await go(`#/groups/${s.regressed_key}`, '#group-history li');
    await measure('group_regressed');
    return groupPage();
  });

  seen.ignored = await step('reopen an ignored group, ignore it again', async () => {
    await go(`#/groups/${s.ignored_key}`, '#group-history li');
    const before = await groupPage();
    const waitFor = (status, events) => page.waitForFunction(([st, n]) =>
      document.getElementById('group-status').dataset.status === st &&
      document.querySelectorAll('#group-history li').length === n, [status, events]);
    await page.click('#group-reopen');
    await waitFor('open', before.history.length + 1);
    const reopened = await groupPage();
    const t0 = await page.evaluate(() => Date.now());
    await page.selectOption('#ignore-for', '24h');
    await page.click('#group-ignore');
    await waitFor('ignored', before.history.length + 2);
    const t1 = await page.evaluate(() => Date.now());
    const for24h = await groupPage();
    await page.selectOption('#ignore-for', '1000r');
    await page.click('#group-ignore');
    await page.waitForFunction(() => /1,000 reports/.test(document.getElementById('group-status-detail').textContent));
    return { before, reopened, for24h, clicked: [t0, t1], for1000: await groupPage() };
  });

  const card = (name) => `#webhooks section.webhook${attr('data-name', name)}`;
  const cardOf = (name) => page.$eval(card(name), (c) => ({
    name: c.dataset.name,
    url: c.querySelector('.webhook-url').textContent,
    events: c.querySelector('.webhook-events').textContent,
    format: c.querySelector('.badge.kind').textContent,
    result: c.querySelector('.test-result').textContent,
    delivered: c.querySelector('.test-result').dataset.delivered ?? null,
    deliveries: [...c.querySelectorAll('table.deliveries tbody tr')].map((r) => ({
      event_id: r.dataset.eventId, type: r.dataset.type, result: r.dataset.result,
      cells: [...r.querySelectorAll('td')].map((td) => td.textContent),
    })),
  }));

  seen.webhooks_before = await step('webhooks page', async () => {
    await page.click('#nav-webhooks');
    await settled(page);
    await page.waitForSelector(card(s.delete_name));
    await measure('webhooks');
    return page.$$eval('#webhooks section.webhook', (cs) => cs.map((c) => c.dataset.name));
  });

  seen.deleted = await step('delete a webhook', async () => {
    await page.click(`${card(s.delete_name)} button.webhook-delete`);
    await page.waitForSelector(card(s.delete_name), { state: 'detached' });
    return page.$$eval('#webhooks section.webhook', (cs) => cs.map((c) => c.dataset.name));
  });

  const add = async (w) => {
    await page.fill('#webhook-name', w.name);
    await page.fill('#webhook-url', w.url);
    await page.fill('#webhook-secret', w.secret);
    for (const box of await page.$$('#webhook-events input[type="checkbox"]')) {
      const want = (w.events || ['new_group', 'regressed', 'spike']).includes(await box.getAttribute('value'));
      if (want !== (await box.isChecked())) await box.click();
    }
    await page.selectOption('#webhook-format', w.format || 'json');
    await page.click('#webhook-submit');
    await page.waitForSelector(card(w.name));
    return page.innerText('#webhook-add .form-status');
  };
  const sendTest = async (name) => {
    await page.click(`${card(name)} button.webhook-test`);
    await page.waitForSelector(`${card(name)} .test-result[data-delivered]`);
    await page.waitForSelector(`${card(name)} table.deliveries tbody tr`);
  };

  seen.hook = await step('add a webhook and send a test', async () => {
    const added = await add(s.hook);
    const fresh = await cardOf(s.hook.name);
    await sendTest(s.hook.name);
    await measure('webhooks_tested');
    return { added, fresh, tested: await cardOf(s.hook.name),
      secret_cleared: (await page.inputValue('#webhook-secret')) === '' };
  });

  seen.broken = await step('a webhook nobody answers', async () => {
    await add(s.broken);
    await sendTest(s.broken.name);
    const errorCell = `${card(s.broken.name)} table.deliveries td.delivery-error`;
    return { ...(await cardOf(s.broken.name)), error_visible: await page.isVisible(errorCell) };
  });

  seen.phone = await step('phone width', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    const out = [];
    const views = [['#/groups', '#groups tr[data-key1]'],
      ['#/groups?status=all', `#groups tr${attr('data-key1', s.resolve_key)}`],
      [`#/groups/${s.resolve_key}`, '#group-history li'],
      [`#/groups/${s.regressed_key}`, '#group-history li'],
      ['#/webhooks', `${card(s.broken.name)} table.deliveries tbody tr`]];
    for (const [hash, ready] of views) {
      await go(hash, ready);
      out.push({ view: hash, ...(await overflowOf(page)) });
    }
    // The delivery error, as a phone shows it.
    const errorCell = `${card(s.broken.name)} table.deliveries td.delivery-error`;
    out.push({ view: 'error cell', visible: await page.isVisible(errorCell),
      ...(await overflowOf(page)) });
    return out;
  });
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(seen));
